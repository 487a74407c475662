package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// cannedPeers is an output of peers/bench.py (abridged iteration times): a kernel cell in four variants,
// the snnTorch LIF row, and a failed Open Neuromorphic row.
const cannedPeers = `{
 "tool": "peers/bench.py", "date": "2026-11-23T18:51:57Z", "python": "3.11.7",
 "torch": "2.15.0+cu132", "snntorch": "1.0.0", "threads": 2, "iters": 3, "warmup": 1, "isolated": true,
 "machine": {"os": "linux", "arch": "x86_64", "cpus": 2, "cpu": "AMD EPYC", "memory": "24684096 kB"},
 "load_average_start": [13.45, 12.42, 10.51], "load_average_end": [11.64, 14.17, 14.96],
 "iteration": "forward + loss + backward",
 "rows": [
  {"suite": "kernel", "model": "fsts", "width": 128, "m": 2, "variant": "torch-loop", "batch": 128, "time": 250,
   "inputs": 140, "classes": 35, "layers": 2, "iters": 3, "warmup": 1, "seed": 1, "first_s": 0.4, "compile_s": 0.13,
   "median_ms": 273.0, "iter_ms": [280.5, 273.0, 270.1], "initial_loss": 3.5553, "spike_rates": [0.012, 0.004],
   "peak_rss_mib": 812.5, "error": ""},
  {"suite": "kernel", "model": "fsts", "width": 128, "m": 2, "variant": "torch-compile", "batch": 128, "time": 250,
   "inputs": 140, "classes": 35, "layers": 2, "iters": 3, "warmup": 1, "seed": 1, "first_s": 14.1, "compile_s": 13.96,
   "median_ms": 140.0, "iter_ms": [141, 140, 139], "initial_loss": 3.5553, "spike_rates": [0.012, 0.004],
   "peak_rss_mib": 950, "error": ""},
  {"suite": "kernel", "model": "fsts", "width": 128, "m": 2, "variant": "released-loop", "batch": 128, "time": 250,
   "inputs": 140, "classes": 35, "layers": 2, "iters": 3, "warmup": 1, "seed": 1, "dropout": 0.3, "readout": "sum",
   "first_s": 0.5, "compile_s": 0.2, "median_ms": 320.0, "iter_ms": [320, 321, 319], "initial_loss": 3.61,
   "spike_rates": [0.012, 0.004], "peak_rss_mib": 830, "error": ""},
  {"suite": "kernel", "model": "fsts", "width": 128, "m": 2, "variant": "torch-compile-whole", "batch": 128, "time": 250,
   "inputs": 140, "classes": 35, "layers": 2, "iters": 3, "warmup": 1, "seed": 1, "dropout": 0.3, "readout": "sum",
   "first_s": 420.05, "compile_s": 420.0, "median_ms": 50.0, "iter_ms": [50, 51, 49], "initial_loss": 3.58,
   "spike_rates": [0.012, 0.004], "peak_rss_mib": 2100, "error": ""},
  {"suite": "kernel", "model": "lif", "width": 64, "m": 0, "variant": "snntorch", "batch": 128, "time": 250,
   "inputs": 140, "classes": 35, "layers": 2, "iters": 3, "warmup": 1, "seed": 1, "first_s": 0.2, "compile_s": 0.05,
   "median_ms": 146.0, "iter_ms": [146, 146, 147], "initial_loss": null, "spike_rates": [0.02, 0.001],
   "peak_rss_mib": 700, "error": ""},
  {"suite": "open-neuromorphic", "model": "fs", "width": 16384, "m": 0, "variant": "torch-loop", "batch": 16, "time": 500,
   "inputs": 16384, "classes": 0, "layers": 1, "iters": 3, "warmup": 1, "seed": 1, "first_s": 0, "compile_s": 0,
   "median_ms": 0, "iter_ms": [], "initial_loss": null, "spike_rates": [], "peak_rss_mib": 0,
   "error": "row process exited with status -9 (killed: out of memory?)"}
 ]
}`

func TestParsePeers(t *testing.T) {
	replace := func(old, new string) string { return strings.Replace(cannedPeers, old, new, 1) }
	for _, tc := range []struct {
		name    string
		json    string
		wantErr string // "" means valid
	}{
		{"canned output", cannedPeers, ""},
		{"not JSON", "peers bench: [1/3] ...", "not one JSON object"},
		{"two objects", cannedPeers + cannedPeers, "not one JSON object"},
		{"another tool", replace(`"tool": "peers/bench.py"`, `"tool": "fits bench"`), "tool"},
		{"no rows", `{"tool": "peers/bench.py", "rows": []}`, "no rows"},
		{"unknown suite", replace(`"suite": "kernel"`, `"suite": "gpu"`), "suite"},
		{"unknown model", replace(`"model": "fsts"`, `"model": "alif"`), "model"},
		{"unknown variant", replace(`"variant": "torch-loop"`, `"variant": "jax"`), "variant"},
		{"a variant's name with other case", replace(`"variant": "released-loop"`, `"variant": "Released-Loop"`), "variant"},
		{"a measured row without a median", replace(`"median_ms": 273.0`, `"median_ms": 0`), "no median"},
		{"a string where a number belongs", replace(`"width": 128`, `"width": "128"`), "not one JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := parsePeers([]byte(tc.json))
			if !succeeds(t, err, tc.wantErr) {
				return
			}
			if out.Torch != "2.15.0+cu132" || out.SnnTorch == nil || *out.SnnTorch != "1.0.0" || out.Threads != 2 || !out.Isolated || out.Machine.CPUs != 2 {
				t.Errorf("header not parsed: %+v", out)
			}
			if !reflect.DeepEqual(out.LoadAverageStart, []float64{13.45, 12.42, 10.51}) || len(out.LoadAverageEnd) != 3 {
				t.Errorf("load averages not parsed: %v, %v", out.LoadAverageStart, out.LoadAverageEnd)
			}
			if len(out.Rows) != 6 {
				t.Fatalf("%d rows, want 6", len(out.Rows))
			}
			if r, ok := out.find(SuiteKernel, "fsts", 128, 2, peerReleased); !ok || r.MedianMs != 320 || r.Dropout != 0.3 || r.Readout != "sum" {
				t.Errorf("released-loop row: %+v (found %v)", r, ok)
			}
			if r, ok := out.find(SuiteKernel, "fsts", 128, 2, peerCompiledWhole); !ok || r.MedianMs != 50 || r.CompileS != 420 {
				t.Errorf("torch-compile-whole row: %+v (found %v)", r, ok)
			}
			loop, ok := out.find(SuiteKernel, "fsts", 128, 2, peerLoop)
			if !ok || loop.MedianMs != 273 || loop.FirstS != 0.4 || loop.InitialLoss == nil || *loop.InitialLoss != 3.5553 ||
				!reflect.DeepEqual(loop.IterMs, []float64{280.5, 273, 270.1}) || !reflect.DeepEqual(loop.SpikeRates, []float64{0.012, 0.004}) {
				t.Errorf("torch-loop row: %+v (found %v)", loop, ok)
			}
			if snn, ok := out.find(SuiteKernel, "lif", 64, 0, peerSnnTorch); !ok || snn.InitialLoss != nil {
				t.Errorf("snnTorch row with a null loss: %+v (found %v)", snn, ok)
			}
			if _, ok := out.find(SuiteON, "fs", 16384, 0, peerLoop); ok {
				t.Error("find returned a failed row")
			}
			if _, ok := out.find(SuiteKernel, "fsts", 128, 1, peerLoop); ok {
				t.Error("find returned a row of another order")
			}
			compiled, _ := out.find(SuiteKernel, "fsts", 128, 2, peerCompiled)
			if s := compiled.speedupOver(100); s == nil || *s != 1.4 {
				t.Errorf("speedup over 100 ms of a 140 ms peer: %v, want 1.4", s)
			}
			if s := out.Rows[5].speedupOver(100); s != nil {
				t.Errorf("a failed row has no speedup, got %v", *s)
			}
			if s := compiled.speedupOver(0); s != nil {
				t.Errorf("no speedup over a missing time, got %v", *s)
			}
		})
	}
}

func TestPeersRequestArgs(t *testing.T) {
	threads := "--threads=" + strconv.Itoa(runtime.NumCPU())
	for _, tc := range []struct {
		name string
		req  peerRequest
		want []string
	}{
		{"defaults", peerRequest{Cells: []PeerCell{{128, 2}}, Warmup: -1, Classes: -1},
			[]string{"--cells=128:2", "--on-n=", threads}},
		{"everything", peerRequest{
			Cells: []PeerCell{{64, 0}, {512, 2}}, ONNeurons: []int{1024, 4096}, ONOrders: []int{2}, NoONLIF: true,
			Variants: []string{peerLoop, peerCompiled, peerReleased, peerCompiledWhole}, WholeCells: []PeerCell{{64, 0}},
			Dropout: peerPtr(0.3), Readout: "mean", Iters: 5, Warmup: 0, Threads: 2,
			Batch: 4, Time: 40, Inputs: 7, Classes: 0, Seed: 3, Shared: true},
			[]string{"--cells=64:0,512:2", "--on-n=1024,4096", "--threads=2", "--on-m=2", "--on-lif=false",
				"--variants=torch-loop,torch-compile,released-loop,torch-compile-whole", "--whole-cells=64:0",
				"--dropout=0.3", "--readout=mean", "--iters=5", "--warmup=0", "--batch=4", "--time=40", "--inputs=7",
				"--seed=3", "--classes=0", "--isolate=false"}},
		{"whole iteration compiled nowhere, no dropout", peerRequest{Cells: []PeerCell{{16, 0}}, WholeCells: []PeerCell{},
			Dropout: peerPtr(0.0), Threads: 1, Warmup: -1, Classes: -1},
			[]string{"--cells=16:0", "--on-n=", "--threads=1", "--whole-cells=", "--dropout=0"}},
		{"whole iteration compiled everywhere", peerRequest{Cells: []PeerCell{{16, 0}}, WholeAll: true,
			WholeCells: []PeerCell{{64, 0}}, Threads: 1, Warmup: -1, Classes: -1},
			[]string{"--cells=16:0", "--on-n=", "--threads=1", "--whole-cells=all"}},
		{"Open Neuromorphic only, LIF only", peerRequest{ONNeurons: []int{2048}, ONOrders: []int{}, Threads: 1, Warmup: -1, Classes: -1},
			[]string{"--cells=", "--on-n=2048", "--threads=1", "--on-m="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.req.args(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("args\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestPeersRequestFor expands grids into cells and checks that the peers get the same shapes.
func TestPeersRequestFor(t *testing.T) {
	meanReadout := func(cells []Cell) []Cell {
		for i := range cells {
			cells[i].Readout = "mean"
		}
		return cells
	}
	for _, tc := range []struct {
		name  string
		cells []Cell
		want  peerRequest
	}{
		{"kernel table, two variants per cell", Grid{Suite: SuiteKernel, Sizes: []int{64, 512}, Orders: []int{0, 2}, LIF: true,
			Variants: []Variant{Stepwise, Chunked}, Classes: -1, Dropout: -1, Iters: 3, Warmup: 1}.Cells(),
			peerRequest{Cells: []PeerCell{{64, 0}, {64, 2}, {512, 0}, {512, 2}}, Iters: 3, Warmup: 1, Threads: 2, Classes: -1,
				Dropout: peerPtr(0.3), Readout: "sum"}},
		{"kernel with shape overrides", Grid{Suite: SuiteKernel, Sizes: []int{8}, Orders: []int{1}, Variants: []Variant{Chunked},
			Batch: 4, Time: 40, Inputs: 7, Classes: 0, Dropout: -1, Iters: 2}.Cells(),
			peerRequest{Cells: []PeerCell{{8, 1}}, Iters: 2, Warmup: 0, Threads: 2, Batch: 4, Time: 40, Inputs: 7, Classes: 0,
				Dropout: peerPtr(0.3), Readout: "sum"}},
		{"kernel with the old semantics (no dropout, mean readout)", meanReadout(Grid{Suite: SuiteKernel, Sizes: []int{16},
			Orders: []int{0}, Variants: []Variant{Fused}, Classes: -1, Dropout: 0, Iters: 1}.Cells()),
			peerRequest{Cells: []PeerCell{{16, 0}}, Iters: 1, Warmup: 0, Threads: 2, Classes: -1, Dropout: peerPtr(0.0), Readout: "mean"}},
		{"Open Neuromorphic with LIF", Grid{Suite: SuiteON, Sizes: []int{1024}, Orders: []int{0, 2}, LIF: true,
			Variants: []Variant{Chunked}, Classes: -1, Dropout: -1, Iters: 2, Warmup: 1}.Cells(),
			peerRequest{ONNeurons: []int{1024}, ONOrders: []int{0, 2}, Iters: 2, Warmup: 1, Threads: 2, Classes: -1, Dropout: peerPtr(0.0)}},
		{"Open Neuromorphic without LIF", Grid{Suite: SuiteON, Sizes: []int{512, 1024}, Orders: []int{2},
			Variants: []Variant{Chunked}, Classes: -1, Dropout: -1, Iters: 1}.Cells(),
			peerRequest{ONNeurons: []int{512, 1024}, ONOrders: []int{2}, NoONLIF: true, Iters: 1, Warmup: 0, Threads: 2, Classes: -1,
				Dropout: peerPtr(0.0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := peerRequestFor(tc.cells, 2); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("request\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// fakePeers writes a stand-in for the virtualenv's interpreter under a temporary root: a shell script
// that records its arguments, prints stderrLine on stderr and stdout on stdout, and exits with status.
func fakePeers(t *testing.T, stdout, stderrLine string, status int) string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{".venv-peers/bin", "peers"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "peers/bench.py"), []byte("# stand-in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "out.json"), []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n" +
		"echo \"$@\" > \"" + filepath.Join(root, "args.txt") + "\"\n" +
		"echo '" + stderrLine + "' >&2\n" +
		"cat \"" + filepath.Join(root, "out.json") + "\"\n" +
		"exit " + strconv.Itoa(status) + "\n"
	if err := os.WriteFile(filepath.Join(root, PeersPython), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRunPeers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in interpreter is a shell script")
	}
	req := peerRequest{Cells: []PeerCell{{128, 2}}, Threads: 2, Iters: 3, Warmup: -1, Classes: -1}
	for _, tc := range []struct {
		name    string
		stdout  string
		status  int
		wantErr string
		rows    int
	}{
		{"all rows measured", cannedPeers, 0, "", 6},
		{"some rows failed (status 1, JSON printed)", cannedPeers, 1, "", 6},
		{"bad arguments (status 2)", "", 2, "bench.py: --cells: 12 is not W:M", 0},
		{"crash without output", "", 1, "not one JSON object", 0},
		{"killed", "", 137, "exit status 137", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderrLine := "peers bench: progress"
			if tc.status == 2 {
				stderrLine = "bench.py: --cells: 12 is not W:M (e.g. 128:2)"
			}
			req.Root = fakePeers(t, tc.stdout, stderrLine, tc.status)
			var stderr bytes.Buffer
			out, err := runPeers(context.Background(), req, &stderr)
			if !strings.Contains(stderr.String(), stderrLine) {
				t.Errorf("stderr not passed through: %q", stderr.String())
			}
			if !succeeds(t, err, tc.wantErr) {
				return
			}
			if len(out.Rows) != tc.rows {
				t.Errorf("%d rows, want %d", len(out.Rows), tc.rows)
			}
			args, err := os.ReadFile(filepath.Join(req.Root, "args.txt"))
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(req.Root, peersScript) + " --cells=128:2 --on-n= --threads=2 --iters=3"
			if got := strings.TrimSpace(string(args)); got != want {
				t.Errorf("command line\n got %q\nwant %q", got, want)
			}
		})
	}

	t.Run("not set up", func(t *testing.T) {
		req.Root = t.TempDir()
		_, err := runPeers(context.Background(), req, &bytes.Buffer{})
		if !errors.Is(err, ErrPeersNotSetUp) {
			t.Fatalf("error %v, want ErrPeersNotSetUp", err)
		}
	})
	t.Run("nothing to measure", func(t *testing.T) {
		empty := peerRequest{Root: fakePeers(t, cannedPeers, "", 0)}
		if _, err := runPeers(context.Background(), empty, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no kernel cell") {
			t.Fatalf("error %v, want one about nothing to measure", err)
		}
	})
}

func peerPtr(v float64) *float64 { return &v }

func TestParsePeerWhole(t *testing.T) {
	for _, tc := range []struct {
		in      string
		cells   []PeerCell
		all     bool
		wantErr string
	}{
		{DefaultPeerWhole, []PeerCell{{64, 0}, {512, 0}}, false, ""},
		{" 16:0 , 16:2 ", []PeerCell{{16, 0}, {16, 2}}, false, ""},
		{"all", nil, true, ""},
		{"none", []PeerCell{}, false, ""},
		{"", []PeerCell{}, false, ""},
		{"64", nil, false, "not W:M"},
		{"64:x", nil, false, "not W:M"},
		{"0:0", nil, false, "needs 1 <= W"},
		{"64:9", nil, false, "0 <= M <= 8"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			cells, all, err := ParsePeerWhole(tc.in)
			if !succeeds(t, err, tc.wantErr) {
				return
			}
			if all != tc.all || !reflect.DeepEqual(cells, tc.cells) {
				t.Errorf("got %v, all %v; want %v, all %v", cells, all, tc.cells, tc.all)
			}
		})
	}
}

// TestPeerSpeedupColumns fills our rows' peer times from the canned peers and checks the JSON fields and
// the text table's columns of the released loop and the whole-iteration torch.compile.
func TestPeerSpeedupColumns(t *testing.T) {
	po, err := parsePeers([]byte(cannedPeers))
	if err != nil {
		t.Fatal(err)
	}
	cell := Cell{Suite: SuiteKernel, Model: "fsts", Width: 128, M: 2, Variant: "fused", Batch: 128, Time: 250,
		Inputs: 140, Classes: 35, Dropout: 0.3, Readout: "sum", Iters: 3, Warmup: 1}
	other := cell
	other.Width = 64 // no peer measured this network
	rows := []Row{
		{Cell: cell, Measurement: Measurement{MedianMs: 40}},
		{Cell: other, Measurement: Measurement{MedianMs: 10}},
	}
	fillPeerSpeedups(rows, po.Rows)
	for _, tc := range []struct {
		name      string
		got, want *float64
	}{
		{"torch_loop_ms", rows[0].TorchLoopMs, peerPtr(273)},
		{"speedup_vs_torch_loop", rows[0].SpeedupVsTorchLoop, peerPtr(273.0 / 40)},
		{"torch_compile_ms", rows[0].TorchCompileMs, peerPtr(140)},
		{"released_loop_ms", rows[0].ReleasedLoopMs, peerPtr(320)},
		{"speedup_vs_released_loop", rows[0].SpeedupVsReleasedLoop, peerPtr(8)},
		{"torch_compile_whole_ms", rows[0].TorchCompileWholeMs, peerPtr(50)},
		{"torch_compile_whole_compile_s", rows[0].TorchCompileWholeCompileS, peerPtr(420)},
		{"speedup_vs_torch_compile_whole", rows[0].SpeedupVsTorchCompileWhole, peerPtr(1.25)},
		{"speedup_vs_snntorch (no LIF row of this network)", rows[0].SpeedupVsSnnTorch, nil},
		{"released_loop_ms of an unmeasured network", rows[1].ReleasedLoopMs, nil},
		{"speedup_vs_torch_compile_whole of an unmeasured network", rows[1].SpeedupVsTorchCompileWhole, nil},
	} {
		if (tc.got == nil) != (tc.want == nil) || (tc.got != nil && *tc.got != *tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, orDash(tc.got, "%.4f"), orDash(tc.want, "%.4f"))
		}
	}

	js, err := json.Marshal(Report{Rows: rows, Peers: po.Rows})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"released_loop_ms":320`, `"torch_compile_whole_ms":50`, `"torch_compile_whole_compile_s":420`,
		`"speedup_vs_released_loop":8`, `"speedup_vs_torch_compile_whole":1.25`, `"torch_loop_ms":273`,
		`"variant":"torch-compile-whole"`, `"dropout":0.3`, `"readout":"sum"`} {
		if !strings.Contains(string(js), field) {
			t.Errorf("JSON lacks %s", field)
		}
	}

	var text bytes.Buffer
	Report{Suite: SuiteKernel, Rows: rows, Peers: po.Rows}.WriteText(&text)
	lines := strings.Split(text.String(), "\n")
	var header, row string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "vs torch loop"):
			header = l
		case strings.Contains(l, "fsts") && strings.Contains(l, " 128 ") && strings.Contains(l, "fused"):
			row = l
		}
	}
	for _, col := range []string{"vs released loop", "vs torch.compile whole"} {
		if !strings.Contains(header, col) {
			t.Errorf("table header lacks %q: %q", col, header)
		}
	}
	if !strings.Contains(row, "8.00x") || !strings.Contains(row, "1.25x") {
		t.Errorf("table row lacks the released-loop (8.00x) and whole-compile (1.25x) ratios: %q", row)
	}
	if !strings.Contains(text.String(), "torch-compile-whole median 50.0 ms, compile 420.0 s") {
		t.Errorf("peer list lacks the whole-compile row:\n%s", text.String())
	}
}

// TestPeersBenchPyReleasedLoop runs peers/bench.py (when .venv-peers is set up) on a tiny kernel network
// without dropout: the paper's loop, the released code's loop and the compiled step are the same
// network with the same weights, so their initial losses and spike rates agree (the first layer's are not
// zero; the second layer is nearly silent at initialization at such sizes, as in ours); the rows record the
// dropout and the default sum readout.
func TestPeersBenchPyReleasedLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python and imports torch")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, PeersPython)); err != nil {
		t.Skip("the PyTorch peers are not set up (make peers-setup)")
	}
	req := peerRequest{Root: root, Cells: []PeerCell{{12, 0}, {12, 2}}, Variants: []string{peerLoop, peerReleased},
		Iters: 1, Warmup: 0, Threads: 1, Batch: 4, Time: 30, Inputs: 10, Classes: 5, Seed: 2, Shared: true,
		Dropout: peerPtr(0)}
	var stderr bytes.Buffer
	out, err := runPeers(context.Background(), req, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if len(out.Rows) != 4 {
		t.Fatalf("%d rows, want 4 (two variants of two cells)", len(out.Rows))
	}
	for _, m := range []int{0, 2} {
		model := "fs"
		if m > 0 {
			model = "fsts"
		}
		loop, ok1 := out.find(SuiteKernel, model, 12, m, peerLoop)
		rel, ok2 := out.find(SuiteKernel, model, 12, m, peerReleased)
		if !ok1 || !ok2 || loop.InitialLoss == nil || rel.InitialLoss == nil {
			t.Fatalf("M=%d: rows missing or without a loss: %+v, %+v", m, loop, rel)
		}
		if d := *loop.InitialLoss - *rel.InitialLoss; d > 1e-5 || d < -1e-5 {
			t.Errorf("M=%d: initial loss %v in the loop, %v in the released loop", m, *loop.InitialLoss, *rel.InitialLoss)
		}
		if !reflect.DeepEqual(loop.SpikeRates, rel.SpikeRates) || len(loop.SpikeRates) != 2 || !(loop.SpikeRates[0] > 0) {
			t.Errorf("M=%d: spike rates %v in the loop, %v in the released loop (want equal and nonzero)", m, loop.SpikeRates, rel.SpikeRates)
		}
		if loop.Dropout != 0 || loop.Readout != "sum" {
			t.Errorf("M=%d: dropout %v, readout %q; want 0 and sum", m, loop.Dropout, loop.Readout)
		}
	}
}

// succeeds fails t unless err mentions wantErr (when non-empty) or is nil (when empty); it reports
// whether the call succeeded as wanted, so that the caller goes on to check its result.
func succeeds(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want one mentioning %q", err, wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

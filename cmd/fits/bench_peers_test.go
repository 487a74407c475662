package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// cannedPeers is an output of peers/bench.py (abridged iteration times): a kernel cell in two variants,
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
		{"a measured row without a median", replace(`"median_ms": 273.0`, `"median_ms": 0`), "no median"},
		{"a string where a number belongs", replace(`"width": 128`, `"width": "128"`), "not one JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := parsePeers([]byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Torch != "2.15.0+cu132" || out.SnnTorch == nil || *out.SnnTorch != "1.0.0" || out.Threads != 2 || !out.Isolated || out.Machine.CPUs != 2 {
				t.Errorf("header not parsed: %+v", out)
			}
			if !reflect.DeepEqual(out.LoadAverageStart, []float64{13.45, 12.42, 10.51}) || len(out.LoadAverageEnd) != 3 {
				t.Errorf("load averages not parsed: %v, %v", out.LoadAverageStart, out.LoadAverageEnd)
			}
			if len(out.Rows) != 4 {
				t.Fatalf("%d rows, want 4", len(out.Rows))
			}
			loop, ok := out.find(suiteKernel, "fsts", 128, 2, peerLoop)
			if !ok || loop.MedianMs != 273 || loop.FirstS != 0.4 || loop.InitialLoss == nil || *loop.InitialLoss != 3.5553 ||
				!reflect.DeepEqual(loop.IterMs, []float64{280.5, 273, 270.1}) || !reflect.DeepEqual(loop.SpikeRates, []float64{0.012, 0.004}) {
				t.Errorf("torch-loop row: %+v (found %v)", loop, ok)
			}
			if snn, ok := out.find(suiteKernel, "lif", 64, 0, peerSnnTorch); !ok || snn.InitialLoss != nil {
				t.Errorf("snnTorch row with a null loss: %+v (found %v)", snn, ok)
			}
			if _, ok := out.find(suiteON, "fs", 16384, 0, peerLoop); ok {
				t.Error("find returned a failed row")
			}
			if _, ok := out.find(suiteKernel, "fsts", 128, 1, peerLoop); ok {
				t.Error("find returned a row of another order")
			}
			compiled, _ := out.find(suiteKernel, "fsts", 128, 2, peerCompiled)
			if s := compiled.speedupOver(100); s == nil || *s != 1.4 {
				t.Errorf("speedup over 100 ms of a 140 ms peer: %v, want 1.4", s)
			}
			if s := out.Rows[3].speedupOver(100); s != nil {
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
		req  peersRequest
		want []string
	}{
		{"defaults", peersRequest{Cells: []peersCell{{128, 2}}, Warmup: -1, Classes: -1},
			[]string{"--cells=128:2", "--on-n=", threads}},
		{"everything", peersRequest{
			Cells: []peersCell{{64, 0}, {512, 2}}, ONNeurons: []int{1024, 4096}, ONOrders: []int{2}, NoONLIF: true,
			Variants: []string{peerLoop, peerCompiled}, Iters: 5, Warmup: 0, Threads: 2,
			Batch: 4, Time: 40, Inputs: 7, Classes: 0, Seed: 3, Shared: true},
			[]string{"--cells=64:0,512:2", "--on-n=1024,4096", "--threads=2", "--on-m=2", "--on-lif=false",
				"--variants=torch-loop,torch-compile", "--iters=5", "--warmup=0", "--batch=4", "--time=40", "--inputs=7",
				"--seed=3", "--classes=0", "--isolate=false"}},
		{"Open Neuromorphic only, LIF only", peersRequest{ONNeurons: []int{2048}, ONOrders: []int{}, Threads: 1, Warmup: -1, Classes: -1},
			[]string{"--cells=", "--on-n=2048", "--threads=1", "--on-m="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.req.args(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("args\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestPeersRequestFor expands fits bench flags into cells and checks that the peers get the same shapes.
func TestPeersRequestFor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		suite string
		flags func() ([]benchCell, error)
		want  peersRequest
	}{
		{"kernel table, two variants per cell", suiteKernel, func() ([]benchCell, error) {
			return benchCells(suiteKernel, "64,512", "", "0,2", true, "stepwise,chunked", 0, 0, 0, 0, -1, 3, 1)
		}, peersRequest{Cells: []peersCell{{64, 0}, {64, 2}, {512, 0}, {512, 2}}, Iters: 3, Warmup: 1, Threads: 2, Classes: -1}},
		{"kernel with shape overrides", suiteKernel, func() ([]benchCell, error) {
			return benchCells(suiteKernel, "8", "", "1", true, "chunked", 0, 4, 40, 7, 0, 2, 0)
		}, peersRequest{Cells: []peersCell{{8, 1}}, Iters: 2, Warmup: 0, Threads: 2, Batch: 4, Time: 40, Inputs: 7, Classes: 0}},
		{"Open Neuromorphic with LIF", suiteON, func() ([]benchCell, error) {
			return benchCells(suiteON, "", "1024", "0,2", true, "chunked", 0, 0, 0, 0, -1, 2, 1)
		}, peersRequest{ONNeurons: []int{1024}, ONOrders: []int{0, 2}, Iters: 2, Warmup: 1, Threads: 2, Classes: -1}},
		{"Open Neuromorphic without LIF", suiteON, func() ([]benchCell, error) {
			return benchCells(suiteON, "", "512,1024", "2", false, "chunked", 0, 0, 0, 0, -1, 1, 0)
		}, peersRequest{ONNeurons: []int{512, 1024}, ONOrders: []int{2}, NoONLIF: true, Iters: 1, Warmup: 0, Threads: 2, Classes: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells, err := tc.flags()
			if err != nil {
				t.Fatal(err)
			}
			if got := peersRequestFor(cells, 2); !reflect.DeepEqual(got, tc.want) {
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
	if err := os.WriteFile(filepath.Join(root, peersPython), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRunPeers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in interpreter is a shell script")
	}
	req := peersRequest{Cells: []peersCell{{128, 2}}, Threads: 2, Iters: 3, Warmup: -1, Classes: -1}
	for _, tc := range []struct {
		name    string
		stdout  string
		status  int
		wantErr string
		rows    int
	}{
		{"all rows measured", cannedPeers, 0, "", 4},
		{"some rows failed (status 1, JSON printed)", cannedPeers, 1, "", 4},
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
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
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
		if !errors.Is(err, errPeersNotSetUp) {
			t.Fatalf("error %v, want errPeersNotSetUp", err)
		}
	})
	t.Run("nothing to measure", func(t *testing.T) {
		empty := peersRequest{Root: fakePeers(t, cannedPeers, "", 0)}
		if _, err := runPeers(context.Background(), empty, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no kernel cell") {
			t.Fatalf("error %v, want one about nothing to measure", err)
		}
	})
}

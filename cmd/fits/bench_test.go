package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/bench"
	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/fused"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

func TestBenchBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--suite=fast"}, "--suite"},
		{[]string{"bench", "--width=0"}, "--width"},
		{[]string{"bench", "--width=64,x"}, "--width"},
		{[]string{"bench", "--width=1.5"}, "--width"},
		{[]string{"bench", "--m=-1"}, "--m"},
		{[]string{"bench", "--m=9"}, "--m"},
		{[]string{"bench", "--variant=nosuch"}, "unknown variant"},
		{[]string{"bench", "--variant=,"}, "no variant"},
		{[]string{"bench", "--iters=0"}, "--iters"},
		{[]string{"bench", "--kernel-iters=-1"}, "--kernel-iters"},
		{[]string{"bench", "--warmup=-1"}, "--warmup"},
		{[]string{"bench", "--batch=-4"}, "--batch"},
		{[]string{"bench", "--time=-1"}, "--time"},
		{[]string{"bench", "--inputs=-1"}, "--inputs"},
		{[]string{"bench", "--classes=1"}, "--classes"},
		{[]string{"bench", "--classes=-2"}, "--classes"},
		{[]string{"bench", "--chunk=-1"}, "--chunk"},
		{[]string{"bench", "--chunk=7"}, "does not divide"},
		{[]string{"bench", "--time=40", "--chunk=3"}, "does not divide"},
		{[]string{"bench", "--neurons=1024"}, "--neurons is for"},
		{[]string{"bench", "--suite=open-neuromorphic", "--width=64"}, "--width is for"},
		{[]string{"bench", "--suite=open-neuromorphic", "--neurons=0"}, "--neurons"},
		{[]string{"bench", "--iters=two"}, "invalid value"},
		{[]string{"bench", "extra"}, "unexpected argument"},
		{[]string{"bench", "--internal-cell={"}, "--internal-cell"},
		{[]string{"bench", `--internal-cell={"suite":"kernel","model":"nope","width":8,"m":0,"variant":"unrolled","batch":2,"time":4,"inputs":3,"classes":2,"iters":1,"warmup":0}`}, "model"},
		{[]string{"bench", "--isolate=false", "--backend=nope:x", "--width=8", "--time=4", "--batch=2"}, "--backend"},
		{[]string{"bench", "--suite=training", "--datasets=cifar"}, "--datasets"},
		{[]string{"bench", "--suite=training", "--m=3"}, "--m"},
		{[]string{"bench", "--suite=training", "--width=100"}, "Table A.4 has W"},
		{[]string{"bench", "--suite=training", "--epochs=0"}, "--epochs"},
		{[]string{"bench", "--suite=training", "--data-dir=/nonexistent/fits-data"}, "--data-dir"},
		{[]string{"bench", "--suite=training", "--engine=warp"}, "--engine"},
	} {
		checkBadInput(t, tc.args, tc.want)
	}
}

func TestBenchCellsExpansion(t *testing.T) {
	cells, err := benchCells(suiteKernel, "", "", "", true, "stepwise,unrolled", 0, 0, 0, 0, -1, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4*3*2 {
		t.Fatalf("%d kernel cells, want 24", len(cells))
	}
	c := cells[0]
	if c.Batch != 128 || c.Time != 250 || c.Inputs != 140 || c.Classes != 35 || c.Model != "fs" || c.Width != 64 || c.Iters != 3 {
		t.Errorf("first kernel cell %+v", c)
	}
	if last := cells[len(cells)-1]; last.Model != "fsts" || last.M != 2 || last.Width != 512 || last.Variant != "unrolled" {
		t.Errorf("last kernel cell %+v", last)
	}
	on, err := benchCells(suiteON, "", "2048", "", true, "unrolled", 0, 0, 0, 0, -1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(on) != 3 || on[0].Model != "lif" || on[1].Model != "fs" || on[2].Model != "fsts" || on[2].M != 2 {
		t.Fatalf("open-neuromorphic cells %+v", on)
	}
	if on[0].Batch != 16 || on[0].Time != 500 || on[0].Inputs != 2048 || on[0].Classes != 0 {
		t.Errorf("open-neuromorphic cell %+v", on[0])
	}
	noLIF, err := benchCells(suiteON, "", "", "2", false, "chunked", 20, 0, 0, 0, -1, 1, 0)
	if err != nil || len(noLIF) != 1 || noLIF[0].Width != 16384 || noLIF[0].Chunk != 20 {
		t.Errorf("--lif=false --m=2: %+v, %v", noLIF, err)
	}
}

func TestFillSpeedups(t *testing.T) {
	rows := []benchRow{
		{benchCell: benchCell{Model: "fs", Width: 64, Variant: "stepwise"}},
		{benchCell: benchCell{Model: "fs", Width: 64, Variant: "unrolled"}},
		{benchCell: benchCell{Model: "fs", Width: 128, Variant: "unrolled"}},
	}
	rows[0].MedianMs, rows[1].MedianMs, rows[2].MedianMs = 1000, 40, 50
	fillSpeedups(rows)
	if rows[0].SpeedupVsStepwise == nil || *rows[0].SpeedupVsStepwise != 1 {
		t.Errorf("stepwise vs itself: %v", rows[0].SpeedupVsStepwise)
	}
	if rows[1].SpeedupVsStepwise == nil || *rows[1].SpeedupVsStepwise != 25 {
		t.Errorf("unrolled: %v, want 25", rows[1].SpeedupVsStepwise)
	}
	if rows[2].SpeedupVsStepwise != nil {
		t.Errorf("a cell without a stepwise row got a speedup %v", *rows[2].SpeedupVsStepwise)
	}
	b, err := json.Marshal(rows[1])
	if err != nil || !strings.Contains(string(b), `"variant":"unrolled"`) || !strings.Contains(string(b), `"median_ms":40`) {
		t.Errorf("row JSON %s, %v", b, err)
	}
}

// TestBenchTinyJSON runs one tiny cell in process and checks the JSON contract.
func TestBenchTinyJSON(t *testing.T) {
	status, stdout, stderr := runCLI("bench", "--isolate=false", "--json", "--width=4", "--m=0", "--variant=unrolled",
		"--batch=2", "--time=5", "--inputs=3", "--classes=2", "--iters=2", "--warmup=0")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout is not one JSON line: %q", stdout)
	}
	var out benchOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Rows) != 1 || out.Backend == "" || out.Suite != "kernel" {
		t.Fatalf("output %+v", out)
	}
	r := out.Rows[0]
	if r.Error != "" || r.MedianMs <= 0 || len(r.IterMs) != 2 || r.FirstS <= 0 || r.CompileS < 0 {
		t.Errorf("row %+v", r)
	}
	if r.PaperPyTorchMs != nil {
		t.Error("a reduced shape must not be compared with the paper's cell")
	}
	if !strings.Contains(stderr, "fits bench: [1/1]") {
		t.Errorf("no progress line on stderr: %q", stderr)
	}
}

// TestPeerSpeedups checks that each of our rows gets the PyTorch times of its own network only, and the
// ratio their ms / our ms.
func TestPeerSpeedups(t *testing.T) {
	rows := []benchRow{
		{benchCell: benchCell{Suite: suiteKernel, Model: "fsts", Width: 128, M: 2, Variant: "chunked"}, Measurement: bench.Measurement{MedianMs: 100}},
		{benchCell: benchCell{Suite: suiteKernel, Model: "fs", Width: 128, M: 0, Variant: "chunked"}, Measurement: bench.Measurement{MedianMs: 50}},
		{benchCell: benchCell{Suite: suiteON, Model: "lif", Width: 64, Variant: "stepwise"}, Measurement: bench.Measurement{MedianMs: 10}},
	}
	peers := []peersRow{
		{Suite: suiteKernel, Model: "fsts", Width: 128, M: 2, Variant: peerLoop, MedianMs: 300},
		{Suite: suiteKernel, Model: "fsts", Width: 128, M: 2, Variant: peerCompiled, MedianMs: 150},
		{Suite: suiteKernel, Model: "fs", Width: 128, M: 0, Variant: peerCompiled, MedianMs: 25, Error: "boom"},
		{Suite: suiteON, Model: "lif", Width: 64, Variant: peerSnnTorch, MedianMs: 40},
	}
	fillPeerSpeedups(rows, peers)
	if r := rows[0]; r.SpeedupVsTorchLoop == nil || *r.SpeedupVsTorchLoop != 3 || *r.SpeedupVsTorchCompile != 1.5 || r.SpeedupVsSnnTorch != nil || *r.TorchCompileMs != 150 {
		t.Errorf("fsts row: %+v", r)
	}
	if r := rows[1]; r.SpeedupVsTorchCompile != nil || r.TorchLoopMs != nil {
		t.Errorf("fs row took a failed or missing peer: %+v", r)
	}
	if r := rows[2]; r.SpeedupVsSnnTorch == nil || *r.SpeedupVsSnnTorch != 4 || r.SpeedupVsTorchLoop != nil {
		t.Errorf("lif row: %+v", r)
	}
	a := benchCell{Suite: suiteKernel, Model: "fs", Width: 64, Variant: "chunked", Chunk: 5}
	b := a
	b.Variant, b.Chunk = "stepwise", 0
	if !sameNetwork(a, b) {
		t.Error("variants of one network are not the same network")
	}
	b.Width = 128
	if sameNetwork(a, b) {
		t.Error("different widths are the same network")
	}
}

func TestBenchWithKinds(t *testing.T) {
	cells, err := benchCells(suiteKernel, "64", "", "", false, "chunked,stepwise", 0, 0, 0, 0, -1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := withKinds(cells, "lif,cadlif,fsts", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, fmt.Sprintf("%s/M%d/%s", c.Model, c.M, c.Variant))
	}
	want := "lif/M0/chunked cadlif/M0/chunked fsts/M1/chunked fsts/M2/chunked lif/M0/stepwise cadlif/M0/stepwise fsts/M1/stepwise fsts/M2/stepwise"
	if strings.Join(names, " ") != want {
		t.Errorf("cells %v, want %s", names, want)
	}
	if _, err := withKinds(cells, "nosuch", ""); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestBenchFusedKernelJSON runs one tiny fused cell and checks the host kernel's section of the JSON: the
// cell's hidden layer timed with every ISA this build and CPU run, the default ISA's speed-up over the
// scalar code, and the machine's kernel ISA; a run without the fused variant has no such section.
func TestBenchFusedKernelJSON(t *testing.T) {
	args := []string{"bench", "--isolate=false", "--json", "--width=12", "--m=1", "--batch=2", "--time=5", "--inputs=3",
		"--classes=2", "--iters=1", "--warmup=0", "--kernel-iters=2"}
	status, stdout, stderr := runCLI(append(args, "--variant=fused")...)
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	var out benchOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Machine.FusedISA != fused.ActiveISA().String() {
		t.Errorf("machine's fused_isa %q, the kernel runs %v", out.Machine.FusedISA, fused.ActiveISA())
	}
	if len(out.FusedKernel) != 1 {
		t.Fatalf("%d host kernel measurements, want 1: %+v", len(out.FusedKernel), out.FusedKernel)
	}
	k := out.FusedKernel[0]
	if k.Width != 12 || k.M != 1 || k.Batch != 2 || k.Time != 5 || !k.Adapt {
		t.Errorf("kernel layer %+v, want the cell's: B = 2, T = 5, W = 12, M = 1 with adaptation", k.KernelLayer)
	}
	supported := 0
	for _, isa := range fused.ISAs() {
		if isa.Supported() {
			supported++
		}
	}
	if len(k.Timings) != supported || k.Timings[0].ISA != "scalar" || k.DefaultISA != fused.ActiveISA().String() {
		t.Errorf("timings %+v with default %q, want one per supported ISA from scalar on", k.Timings, k.DefaultISA)
	}
	if !(k.ForwardVsScalar > 0) || !(k.BackwardVsScalar > 0) {
		t.Errorf("vector/scalar ratios %g, %g", k.ForwardVsScalar, k.BackwardVsScalar)
	}
	if !strings.Contains(stdout, `"forward_vector_vs_scalar"`) {
		t.Error("no forward_vector_vs_scalar in the JSON")
	}
	status, stdout, stderr = runCLI(append(args, "--variant=unrolled")...)
	if status != 0 {
		t.Fatalf("unrolled: status %d, stderr %q", status, stderr)
	}
	if strings.Contains(stdout, "fused_kernel") {
		t.Error("a run without the fused variant has a fused_kernel section")
	}
}

// TestTrainingSuiteCells checks the training suite's cells against Table A.4 (every dataset, M and W maps to
// a catalog experiment with the table's minutes beside it; sMNIST is the Table A.9 recipe without a paper
// time) and the arithmetic of its estimate from a run's result.
func TestTrainingSuiteCells(t *testing.T) {
	cells, err := bench.TrainingCells([]string{"shd", "ssc", "gsc", "smnist"}, []int{0, 1, 2}, paper.Widths())
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 37 {
		t.Fatalf("%d cells, want 36 of Table A.4 and sMNIST", len(cells))
	}
	for _, c := range cells {
		e, err := experiment.Lookup(c.Experiment)
		if err != nil {
			t.Errorf("cell %+v: %v", c, err)
			continue
		}
		if c.Dataset != "smnist" && !slices.Contains(e.Tables, "Table A.4") {
			t.Errorf("cell %+v: experiment %s is not in Table A.4 but in %v", c, c.Experiment, e.Tables)
		}
		if p := bench.PaperTrainingMinutes(c); (p == nil) != (c.Dataset == "smnist") {
			t.Errorf("cell %+v: paper minutes %v", c, p)
		}
	}
	if c := cells[4]; c.Experiment != "shd-val/fsts-m1/w64" || *bench.PaperTrainingMinutes(c) != 6.0 {
		t.Errorf("cell 4 = %+v (%v), want shd-val/fsts-m1/w64 at 6.0 min", c, bench.PaperTrainingMinutes(c))
	}
	var row bench.TrainingRow
	r := train.Result{CompileSeconds: 3, WallSeconds: 40, Epochs: []train.Epoch{{Seconds: 13}, {Seconds: 10}, {Seconds: 12}}}
	if err := row.FillFromResult(r); err != nil {
		t.Fatal(err)
	}
	// Epochs without compile: 10, 10, 12 -> median 10; setup 40 - 35 = 5; (1000 + 3 + 5) / 60.
	if row.EpochSeconds != 10 || row.SetupSeconds != 5 || math.Abs(row.Minutes100-1008.0/60) > 1e-12 {
		t.Errorf("row = %+v", row)
	}
	if err := row.FillFromResult(train.Result{}); err == nil {
		t.Error("a result without epochs gave no error")
	}
}

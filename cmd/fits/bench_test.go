package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/bench"
	"github.com/fits-snn/fits/fits/fused"
)

func TestBenchBadInput(t *testing.T) {
	checkBadInputs(t, []badCase{
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
		{[]string{"bench", "--model=nosuch"}, "nosuch"},
		{[]string{"bench", "--model=fsts", "--m=0"}, "no kind to time"},
		{[]string{"bench", "--dropout=1"}, "--dropout"},
		{[]string{"bench", "--variant=unrolled", "--peer-whole=64"}, "--peer-whole"},
	})
}

// TestBenchTinyJSON runs one tiny cell, in this process and in a cell's process of its own (the test binary
// acts as fits there, TestMain), and checks the JSON contract and the progress lines.
func TestBenchTinyJSON(t *testing.T) {
	for _, isolate := range []bool{false, true} {
		status, stdout, stderr := runCLI("bench", fmt.Sprintf("--isolate=%v", isolate), "--json", "--width=4", "--m=0",
			"--variant=unrolled", "--batch=2", "--time=5", "--inputs=3", "--classes=2", "--iters=2", "--warmup=0")
		if status != 0 {
			t.Fatalf("isolate %v: status %d, stderr %q", isolate, status, stderr)
		}
		if strings.Count(stdout, "\n") != 1 {
			t.Fatalf("isolate %v: stdout is not one JSON line: %q", isolate, stdout)
		}
		var out bench.Report
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Rows) != 1 || out.Backend == "" || out.Suite != "kernel" || out.Isolated != isolate {
			t.Fatalf("isolate %v: output %+v", isolate, out)
		}
		r := out.Rows[0]
		if r.Error != "" || r.MedianMs <= 0 || len(r.IterMs) != 2 || r.FirstS <= 0 || r.CompileS < 0 || r.PeakRSSMiB <= 0 {
			t.Errorf("isolate %v: row %+v", isolate, r)
		}
		if r.PaperPyTorchMs != nil {
			t.Error("a reduced shape must not be compared with the paper's cell")
		}
		for _, line := range []string{"fits bench: [1/1] fs W=4 M=0 unrolled: iteration 2/2\n", "fits bench: [1/1] fs W=4 M=0 unrolled: median "} {
			if !strings.Contains(stderr, line) {
				t.Errorf("isolate %v: no progress line %q on stderr: %q", isolate, line, stderr)
			}
		}
	}
	// A cell's process that finds its input bad exits with status 2, and so does fits bench, its last line
	// the child's message.
	status, stdout, stderr := runCLI("bench", "--backend=nope:x", "--width=4", "--m=0", "--variant=unrolled", "--batch=2",
		"--time=5", "--inputs=3", "--iters=1", "--warmup=0")
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); status != 2 || stdout != "" ||
		!strings.HasPrefix(lines[len(lines)-1], "fits bench: --backend: unknown backend") {
		t.Errorf("bad backend in the cell's process: status %d, stdout %q, stderr %q", status, stdout, stderr)
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
	var out bench.Report
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

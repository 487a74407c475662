package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/neuron"
)

// TestGridCells expands the kernel and open-neuromorphic grids: each size, model and variant, at the suite's
// shape unless overridden.
func TestGridCells(t *testing.T) {
	cells := Grid{Suite: SuiteKernel, Sizes: []int{64, 128, 256, 512}, Orders: []int{0, 1, 2}, LIF: true,
		Variants: []Variant{Stepwise, Unrolled}, Classes: -1, Dropout: -1, Iters: 3, Warmup: 1}.Cells()
	if len(cells) != 4*3*2 {
		t.Fatalf("%d kernel cells, want 24", len(cells))
	}
	c := cells[0]
	if c.Batch != 128 || c.Time != 250 || c.Inputs != 140 || c.Classes != 35 || c.Model != "fs" || c.Width != 64 || c.Iters != 3 ||
		c.Dropout != KernelDropout || c.Readout != "sum" {
		t.Errorf("first kernel cell %+v", c)
	}
	if last := cells[len(cells)-1]; last.Model != "fsts" || last.M != 2 || last.Width != 512 || last.Variant != "unrolled" {
		t.Errorf("last kernel cell %+v", last)
	}
	on := Grid{Suite: SuiteON, Sizes: []int{2048}, Orders: []int{0, 2}, LIF: true, Variants: []Variant{Unrolled},
		Classes: -1, Dropout: -1, Iters: 1}.Cells()
	if len(on) != 3 || on[0].Model != "lif" || on[1].Model != "fs" || on[2].Model != "fsts" || on[2].M != 2 {
		t.Fatalf("open-neuromorphic cells %+v", on)
	}
	if on[0].Batch != 16 || on[0].Time != 500 || on[0].Inputs != 2048 || on[0].Classes != 0 || on[0].Dropout != 0 {
		t.Errorf("open-neuromorphic cell %+v", on[0])
	}
	noLIF := Grid{Suite: SuiteON, Sizes: []int{16384}, Orders: []int{2}, Variants: []Variant{Chunked, Unrolled}, Chunk: 20,
		Batch: 4, Time: 40, Inputs: 7, Classes: 3, Dropout: 0.1, Iters: 1}.Cells()
	if len(noLIF) != 2 || noLIF[0].Width != 16384 || noLIF[0].Chunk != 20 || noLIF[1].Chunk != 0 {
		t.Fatalf("LIF false, M = 2: %+v", noLIF)
	}
	if c := noLIF[0]; c.Batch != 4 || c.Time != 40 || c.Inputs != 7 || c.Classes != 3 || c.Dropout != 0.1 {
		t.Errorf("overridden shape: %+v", c)
	}
	if s, err := noLIF[0].Spec(); err != nil || s.Batch != 4 || s.Widths[0] != 16384 || s.Neuron.Order != 2 {
		t.Errorf("cell's network %+v, %v", s, err)
	}
}

// TestCellSpec checks that an unknown kind or an invalid network is an input error naming the problem.
func TestCellSpec(t *testing.T) {
	c := Grid{Suite: SuiteKernel, Sizes: []int{8}, Orders: []int{1}, Variants: []Variant{Fused}, Classes: -1, Dropout: -1, Iters: 1}.Cells()[0]
	for _, tc := range []struct {
		name string
		edit func(*Cell)
		want string
	}{
		{"unknown kind", func(c *Cell) { c.Model = "nope" }, "model"},
		{"one class", func(c *Cell) { c.Classes = 1 }, "classes"},
		{"bad readout", func(c *Cell) { c.Readout = "max-over-time" }, "readout"},
	} {
		bad := c
		tc.edit(&bad)
		_, err := bad.Spec()
		var input *InputError
		if !errors.As(err, &input) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want an input error mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := DecodeCell(`{"suite":"kernel","model":"fs","extra":1}`); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Errorf("a cell with an unknown field: %v", err)
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DecodeCell(string(js)); err != nil || back != c {
		t.Errorf("cell %+v came back as %+v, %v", c, back, err)
	}
}

func TestFillSpeedups(t *testing.T) {
	rows := []Row{
		{Cell: Cell{Model: "fs", Width: 64, Variant: "stepwise"}},
		{Cell: Cell{Model: "fs", Width: 64, Variant: "unrolled"}},
		{Cell: Cell{Model: "fs", Width: 128, Variant: "unrolled"}},
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

// TestPeerSpeedups checks that each of our rows gets the PyTorch times of its own network only, and the
// ratio their ms / our ms.
func TestPeerSpeedups(t *testing.T) {
	rows := []Row{
		{Cell: Cell{Suite: SuiteKernel, Model: "fsts", Width: 128, M: 2, Variant: "chunked"}, Measurement: Measurement{MedianMs: 100}},
		{Cell: Cell{Suite: SuiteKernel, Model: "fs", Width: 128, M: 0, Variant: "chunked"}, Measurement: Measurement{MedianMs: 50}},
		{Cell: Cell{Suite: SuiteON, Model: "lif", Width: 64, Variant: "stepwise"}, Measurement: Measurement{MedianMs: 10}},
	}
	peers := []PeerRow{
		{Suite: SuiteKernel, Model: "fsts", Width: 128, M: 2, Variant: peerLoop, MedianMs: 300},
		{Suite: SuiteKernel, Model: "fsts", Width: 128, M: 2, Variant: peerCompiled, MedianMs: 150},
		{Suite: SuiteKernel, Model: "fs", Width: 128, M: 0, Variant: peerCompiled, MedianMs: 25, Error: "boom"},
		{Suite: SuiteON, Model: "lif", Width: 64, Variant: peerSnnTorch, MedianMs: 40},
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
	a := Cell{Suite: SuiteKernel, Model: "fs", Width: 64, Variant: "chunked", Chunk: 5}
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

func TestWithKinds(t *testing.T) {
	cells := Grid{Suite: SuiteKernel, Sizes: []int{64}, Orders: []int{0, 1, 2}, Variants: []Variant{Chunked, Stepwise},
		Classes: -1, Dropout: -1, Iters: 1}.Cells()
	got := WithKinds(cells, []neuron.Kind{neuron.LIF, neuron.CAdLIF, neuron.FSTS}, []int{1, 2})
	var names []string
	for _, c := range got {
		names = append(names, fmt.Sprintf("%s/M%d/%s", c.Model, c.M, c.Variant))
	}
	want := "lif/M0/chunked cadlif/M0/chunked fsts/M1/chunked fsts/M2/chunked lif/M0/stepwise cadlif/M0/stepwise fsts/M1/stepwise fsts/M2/stepwise"
	if strings.Join(names, " ") != want {
		t.Errorf("cells %v, want %s", names, want)
	}
	if got := WithKinds(cells, []neuron.Kind{neuron.FSTS}, []int{0}); len(got) != 0 {
		t.Errorf("a TS kind without an order >= 1 gave cells %+v", got)
	}
}

package nb

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/neuron"
)

// sscNeuron returns the SSC constants of Table A.1 (τm = 0.04 s, τa = 0.2 s, Δt = 4 ms) for a kind.
func sscNeuron(kind neuron.Kind, m int) neuron.Config {
	c := neuron.DefaultConfig(kind, m)
	c.TauM, c.TauA, c.Dt, c.FMinHz, c.FMaxHz = 0.04, 0.2, 0.004, 1, 50
	return c
}

func TestNeuronOfAndResponses(t *testing.T) {
	cfg := sscNeuron(neuron.FSTS, 1)
	l := analysis.Layer{Index: 1, Neuron: cfg, Neurons: 3,
		InitialHz: []float64{1, 7, 50}, TargetHz: []float64{1.2, 7, 20},
		Beta: [][]float64{{0.1, 0.2, -0.5}}, Lambda: [][]float64{{0.3, 0.4, 0.6}}}
	before, after, err := NeuronOf(l, 2)
	if err != nil {
		t.Fatal(err)
	}
	if before.FHz != 50 || after.FHz != 20 || after.Beta[0] != -0.5 || after.Lambda[0] != 0.6 {
		t.Errorf("before %+v after %+v", before, after)
	}
	if before.Beta[0] != math.Tanh(cfg.BetaHatInit) || math.Abs(before.Lambda[0]-1/(1+math.Exp(3))) > 1e-12 {
		t.Errorf("initial TS %+v", before)
	}
	if got := MostShifted(l); got != 2 {
		t.Errorf("MostShifted = %d, want 2 (50 → 20 Hz)", got)
	}
	if _, _, err := NeuronOf(l, 3); err == nil {
		t.Error("neuron 3 of 3 accepted")
	}

	// Without TS the closed loop is the FS module alone: its peak is the realized DT target, and the DT-
	// exact parameterization puts that peak at f* itself.
	fs := sscNeuron(neuron.FS, 0)
	r, err := ResponsesOf(fs, NeuronParams{FHz: 20}, 4000)
	if err != nil {
		t.Fatal(err)
	}
	c := fs.Constants()
	k, _ := c.KappaForTargetHz(20)
	dt, _ := c.DTTargetHz(k)
	if math.Abs(r.PeakHz-dt) > 0.01*dt || math.Abs(dt-20) < 0.1 {
		t.Errorf("peak %g Hz, realized DT target %g Hz (want the peak at the DT target, which differs from 20 Hz)", r.PeakHz, dt)
	}
	for _, d := range r.TSDelayMs {
		if d != 0 {
			t.Fatalf("TS delay %g ms without TS", d)
		}
	}
	fs.DTExact = true
	r, err = ResponsesOf(fs, NeuronParams{FHz: 20}, 4000)
	if err != nil || math.Abs(r.PeakHz-20) > 0.2 {
		t.Errorf("DT-exact peak %g Hz, want 20 (%v)", r.PeakHz, err)
	}

	fig, err := InspectorFigure("run · layer 2 · neuron 2", cfg, before, after)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels[0]) != 3 || !strings.Contains(fig.Panels[0][2].Title.Text, "TS module alone") {
		t.Errorf("panels %d", len(fig.Panels[0]))
	}
	checkRenders(t, fig, "after training (f* = 20.00 Hz)", "group delay (ms)")
	fig, err = InspectorFigure("fs", sscNeuron(neuron.FS, 0), NeuronParams{FHz: 5}, NeuronParams{FHz: 6})
	if err != nil || len(fig.Panels[0]) != 2 {
		t.Errorf("FS-only inspector: %v", err)
	}
}

func TestNeuronRaster(t *testing.T) {
	spikes := func(on ...int) [][]float32 {
		x := make([][]float32, 10)
		for k := range x {
			x[k] = make([]float32, 3)
		}
		for _, k := range on {
			x[k][1] = 1
		}
		x[0][0] = 1
		return x
	}
	a := &analysis.Activity{Split: analysis.SplitTest, Index: []int{4, 7}, Dt: 0.004, Labels: []int{2, 5}, Predicted: []int{2, 5},
		Hidden: []analysis.Trains{{spikes(1, 3), spikes(5)}}}
	fig, err := NeuronRaster(a, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkRenders(t, fig, "spikes (3)", "#7 (class 5)", "neuron 1")
	if _, err := NeuronRaster(a, 1, 0); err == nil {
		t.Error("layer 2 of 1 accepted")
	}
	if _, err := NeuronRaster(a, 0, 3); err == nil {
		t.Error("neuron 3 of 3 accepted")
	}
}

func TestInspector(t *testing.T) {
	t.Setenv("FITS_INSPECT_RUN", "")
	if got := InspectedRun("/runs/quick"); got != "/runs/quick/shd-best/fsts-m1/w128/seed-1" {
		t.Errorf("InspectedRun = %q", got)
	}
	t.Setenv("FITS_INSPECT_RUN", "/elsewhere/run")
	if got := InspectedRun("/runs/quick"); got != "/elsewhere/run" {
		t.Errorf("InspectedRun with FITS_INSPECT_RUN = %q", got)
	}

	// Two layers of 3 FS + TS neurons (M = 1): the most shifted neuron is #2 in layer 1 and #0 in layer 2.
	cfg := sscNeuron(neuron.FSTS, 1)
	layer := func(i int, learned []float64) analysis.Layer {
		return analysis.Layer{Index: i, Neuron: cfg, Neurons: 3, InitialHz: []float64{1, 7, 50}, TargetHz: learned,
			Beta: [][]float64{{0.1, 0.2, -0.5}}, Lambda: [][]float64{{0.3, 0.4, 0.6}}}
	}
	in := &Inspector{Title: "shd fsts M=1 W=3 seed 1", Layers: []analysis.Layer{layer(0, []float64{1.1, 7, 20}), layer(1, []float64{3, 7, 50})}, Activity: activity()}
	if li, n := in.MostShifted(); li != 1 || n != 0 {
		t.Errorf("MostShifted = layer %d neuron %d, want 1, 0", li, n)
	}
	rows := in.layersTable().Tables[0].Rows
	if want := []string{"1", "3", "1.0 – 50.0", "#2: 50.00 → 20.00", "-0.067", "0.433"}; len(rows) != 2 || !slices.Equal(rows[0], want) {
		t.Errorf("layers %q, want the first %q", rows, want)
	}
	out, err := in.Neuron(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	params := out.Tables[0]
	wantRows := [][]string{{"f* (Hz)", "1.000", "3.000", "+2.000"}, {"β1", "0.0000", "0.1000", "+0.1000"}, {"λ1", "0.0474", "0.3000", "+0.2526"}}
	for i, w := range wantRows {
		if !slices.Equal(params.Rows[i], w) {
			t.Errorf("row %q, want %q", params.Rows[i], w)
		}
	}
	if !strings.Contains(params.Caption, "shd fsts M=1 W=3 seed 1 · layer 2 · neuron 0") || len(out.Figures) != 2 ||
		out.Figures[0].Name != "13_neuron_inspector" || out.Figures[1].Name != "13_neuron_raster" {
		t.Errorf("caption %q, figures %d", params.Caption, len(out.Figures))
	}
	in.Activity = nil
	if out, err := in.Neuron(0, 2); err != nil || len(out.Figures) != 1 {
		t.Errorf("without spikes: %v, %+v", err, out)
	}
	for _, bad := range [][2]int{{2, 0}, {-1, 0}, {0, 3}} {
		if _, err := in.Neuron(bad[0], bad[1]); err == nil {
			t.Errorf("layer %d neuron %d accepted", bad[0], bad[1])
		}
	}
	for name, f := range map[string]func() error{
		"NewInspector":       func() error { _, err := NewInspector(nil, 8); return err },
		"InspectLayers":      func() error { _, err := InspectLayers(nil); return err },
		"InspectMostShifted": func() error { _, err := InspectMostShifted(nil, 8); return err },
	} {
		if err := f(); !errors.Is(err, ErrNoRuns) {
			t.Errorf("%s without a run: %v", name, err)
		}
	}
}

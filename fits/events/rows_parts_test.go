package events_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/events"
)

// TestAccumulateRowsAddsUpToGradientsRecorded: AccumulateRows over parts of the rows that cover them in
// order gives GradientsRecorded's weight gradient to the bit (each entry summed over the rows in the same
// order) and the bias gradient summed row by row; rows outside the recording and arrays of the wrong size
// are refused.
func TestAccumulateRowsAddsUpToGradientsRecorded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []events.Shape{{Rows: 40, In: 33, Out: 17}, {Rows: 64, In: 128, Out: 256}} {
		x := sparse(rng, s.Rows, s.In, 0.1)
		w, b, cot := normal(rng, s.In*s.Out), normal(rng, s.Out), normal(rng, s.Rows*s.Out)
		var rec events.Recorded
		if err := events.ForwardRecord(s, x, w, b, make([]float32, s.Rows*s.Out), &rec); err != nil {
			t.Fatal(err)
		}
		wantW, _, err := events.GradientsRecorded(s, &rec, cot)
		if err != nil {
			t.Fatal(err)
		}
		wantB := make([]float32, s.Out)
		for r := range s.Rows {
			for j := range s.Out {
				wantB[j] += cot[r*s.Out+j]
			}
		}
		gw, gb := make([]float32, s.In*s.Out), make([]float32, s.Out)
		for _, part := range [][2]int{{0, 7}, {7, 8}, {8, 8}, {8, s.Rows}} {
			if err := rec.AccumulateRows(part[0], part[1], cot[part[0]*s.Out:part[1]*s.Out], gw, gb); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(gw, wantW) || !slices.Equal(gb, wantB) {
			t.Errorf("%+v: the parts' gradients differ from GradientsRecorded's", s)
		}
		for _, bad := range [][2]int{{-1, 3}, {3, s.Rows + 1}, {5, 4}} {
			if err := rec.AccumulateRows(bad[0], bad[1], nil, gw, gb); err == nil {
				t.Errorf("%+v: rows %v accepted", s, bad)
			}
		}
		if err := rec.AccumulateRows(0, 2, cot[:s.Out], gw, gb); err == nil {
			t.Errorf("%+v: a cotangent of one row for two accepted", s)
		}
	}
}

// TestSelectedInputCotangentRows: the rows computed part by part on the calling goroutine are
// SelectedInputCotangent's to the bit.
func TestSelectedInputCotangentRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := events.Shape{Rows: 30, In: 70, Out: 40}
	stride := events.BitStride(s.In)
	cot, w := normal(rng, s.Rows*s.Out), normal(rng, s.In*s.Out)
	sel := make([]uint64, s.Rows*stride)
	for i := range sel {
		sel[i] = rng.Uint64() & rng.Uint64()
	}
	for r := range s.Rows { // the positions past In are not entries
		sel[r*stride+stride-1] &= 1<<(s.In%64) - 1
	}
	want := make([]float32, s.Rows*s.In)
	if err := events.SelectedInputCotangent(s, cot, w, sel, want); err != nil {
		t.Fatal(err)
	}
	got := normal(rng, s.Rows*s.In)
	for _, part := range [][2]int{{0, 11}, {11, s.Rows}} {
		p := events.Shape{Rows: part[1] - part[0], In: s.In, Out: s.Out}
		if err := events.SelectedInputCotangentRows(p, cot[part[0]*s.Out:part[1]*s.Out], w, sel[part[0]*stride:part[1]*stride], got[part[0]*s.In:part[1]*s.In]); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, want) {
		t.Error("the rows computed in parts differ from SelectedInputCotangent's")
	}
	if err := events.SelectedInputCotangentRows(s, cot, w, sel[1:], got); err == nil {
		t.Error("a short selection accepted")
	}
}

// TestForwardRowsAndRecordInput: RecordInput records what ForwardRecord records (the same weight gradient
// follows), and ForwardRows over parts of the rows gives ForwardRecord's y to the bit; rows outside the
// recording and arrays of the wrong size are refused.
func TestForwardRowsAndRecordInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	s := events.Shape{Rows: 50, In: 70, Out: 33}
	x := sparse(rng, s.Rows, s.In, 0.15)
	w, b, cot := normal(rng, s.In*s.Out), normal(rng, s.Out), normal(rng, s.Rows*s.Out)
	want := make([]float32, s.Rows*s.Out)
	var recorded, input events.Recorded
	if err := events.ForwardRecord(s, x, w, b, want, &recorded); err != nil {
		t.Fatal(err)
	}
	if err := events.RecordInput(s, x, &input); err != nil {
		t.Fatal(err)
	}
	if input.Shape() != s || input.Events() != recorded.Events() {
		t.Fatalf("RecordInput holds %d events of shape %+v, ForwardRecord %d", input.Events(), input.Shape(), recorded.Events())
	}
	gw1, _, err1 := events.GradientsRecorded(s, &recorded, cot)
	gw2, _, err2 := events.GradientsRecorded(s, &input, cot)
	if err1 != nil || err2 != nil || !slices.Equal(gw1, gw2) {
		t.Fatalf("the weight gradients of the two recordings differ (%v, %v)", err1, err2)
	}
	got := make([]float32, s.Rows*s.Out)
	for _, part := range [][2]int{{0, 13}, {13, 13}, {13, s.Rows}} {
		if err := input.ForwardRows(part[0], part[1], w, b, got[part[0]*s.Out:part[1]*s.Out]); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, want) {
		t.Error("ForwardRows differs from ForwardRecord")
	}
	if err := input.ForwardRows(40, s.Rows+1, w, b, make([]float32, 11*s.Out)); err == nil {
		t.Error("rows past the recording accepted")
	}
	if err := input.ForwardRows(0, 2, w, b, make([]float32, s.Out)); err == nil {
		t.Error("a y of one row for two accepted")
	}
	if err := events.RecordInput(s, x[1:], &input); err == nil {
		t.Error("a short x accepted")
	}
}

// BenchmarkForwardRows times ForwardRows over one sMNIST batch element's rows of the second layer's
// synapse: 784 rows of 256 inputs at the first layer's trained firing rate (7 %), 256 outputs.
func BenchmarkForwardRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	s := events.Shape{Rows: 784, In: 256, Out: 256}
	x := sparse(rng, s.Rows, s.In, 0.07)
	for i, v := range x {
		if v != 0 {
			x[i] = 1
		}
	}
	w, bias := normal(rng, s.In*s.Out), normal(rng, s.Out)
	var rec events.Recorded
	if err := events.RecordInput(s, x, &rec); err != nil {
		b.Fatal(err)
	}
	y := make([]float32, s.Rows*s.Out)
	for b.Loop() {
		if err := rec.ForwardRows(0, s.Rows, w, bias, y); err != nil {
			b.Fatal(err)
		}
	}
}

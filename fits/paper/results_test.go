package paper

import (
	"math"
	"slices"
	"testing"
)

// near reports |a − b| ≤ tol.
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol+1e-9 }

func benchmark(t *testing.T, label, dataset, method string) BenchmarkRow {
	t.Helper()
	for _, r := range BenchmarkRows(label) {
		if r.Dataset == dataset && r.Method == method {
			return r
		}
	}
	t.Fatalf("%s has no row %s / %s", label, dataset, method)
	return BenchmarkRow{}
}

func ablationCell(t *testing.T, label, model string, order, width int) AblationCell {
	t.Helper()
	for _, c := range AblationCells(label) {
		if c.Model == model && c.Order == order && c.Width == width {
			return c
		}
	}
	t.Fatalf("%s has no cell %s M=%d W=%d", label, model, order, width)
	return AblationCell{}
}

// TestTranscriptionAgreesWithTheText holds the transcribed tables against the numbers the paper's prose
// quotes: Section 4.3 (main results), Section 5.2 (energy), Section 5.3 (CT-DT), Appendix C.4 (sMNIST
// and DVS Gesture).
func TestTranscriptionAgreesWithTheText(t *testing.T) {
	// Section 4.3: "On SHD, FiTS achieves 95.31 ± 0.21% under the best-test protocol and 94.38 ± 0.12%
	// under the 20% validation-split protocol. On SSC and GSC, it achieves 78.23 ± 0.16% and
	// 94.48 ± 0.12%"; "improves over the plain LIF baseline from 80.22 ± 0.16% to 94.48 ± 0.12%" (GSC).
	for _, tc := range []struct {
		label, dataset, method string
		mean, std              float64
	}{
		{Table1, "SHD", "FiTS (ours)", 95.31, 0.21},
		{Table1, "SHD*", "FiTS (ours)", 94.38, 0.12},
		{Table1, "SSC", "FiTS (ours)", 78.23, 0.16},
		{Table2, "GSC", "FiTS (ours)", 94.48, 0.12},
		{Table2, "GSC", "Plain LIF (ours)", 80.22, 0.16},
	} {
		r := benchmark(t, tc.label, tc.dataset, tc.method)
		if !r.Ours || !r.Acc.HasStd || r.Acc.Mean != tc.mean || r.Acc.Std != tc.std {
			t.Errorf("%s %s %s: %+v, the text says %.2f ± %.2f", tc.label, tc.dataset, tc.method, r, tc.mean, tc.std)
		}
	}
	// Section 5.2: "FS+TS (M = 2) reduces the linear cost from 6.1 to 2.7 μJ, while increasing the
	// neuron-internal cost from 2.8 to 17.6 μJ. The total estimated cost increases from 8.9 to 20.3 μJ."
	e := EnergyTable()
	lif, m2 := e[0], e[len(e)-1]
	if lif.Model != "lif" || m2.Model != "fsts" || m2.Order != 2 ||
		lif.LayerUJ != 6.1 || m2.LayerUJ != 2.7 || lif.NeuronUJ != 2.8 || m2.NeuronUJ != 17.6 ||
		lif.TotalUJ != 8.9 || m2.TotalUJ != 20.3 {
		t.Errorf("Table 4 first and last rows %+v, %+v disagree with Section 5.2", lif, m2)
	}
	if EnergyACpJ != 0.9 || EnergyMACpJ != 4.6 {
		t.Errorf("E_AC = %v pJ, E_MAC = %v pJ; Section 5.2 uses 0.9 and 4.6", EnergyACpJ, EnergyMACpJ)
	}
	// Section 5.3: "reduces the mean absolute error from 0.7605 Hz to 0.0019 Hz and the maximum error
	// from 7.4020 Hz to 0.0038 Hz".
	c := CTDTTable()
	if c[0].MAEHz != 0.7605 || c[1].MAEHz != 0.0019 || c[0].MaxHz != 7.4020 || c[1].MaxHz != 0.0038 {
		t.Errorf("Table 5 %+v disagrees with Section 5.3", c)
	}
	// Appendix C.4: "FiTS reaches 98.28% accuracy with 0.07 M parameters using the M = 1, width-256
	// model"; DVS: "FS-only improves accuracy by 2.71 percentage points, and adding TS further improves
	// the result to 90.35%".
	s := benchmark(t, TableA9, "sMNIST", "FiTS (ours, M = 1, W = 256)")
	if s.Acc.Mean != 98.28 || s.ParamsM != 0.07 {
		t.Errorf("Table A.9 FiTS row %+v", s)
	}
	d := TableA10Rows()
	if !near(d[1].Acc.Mean-d[0].Acc.Mean, 2.71, 0) || d[3].Acc.Mean != 90.35 {
		t.Errorf("Table A.10: FS-only − LIF = %.2f (text: 2.71), FS+TS (M = 2) %.2f (text: 90.35)", d[1].Acc.Mean-d[0].Acc.Mean, d[3].Acc.Mean)
	}
}

// TestTablesAgreeWithEachOther checks the numbers the paper prints twice: Table 1/2's own rows against
// the ablation cells they come from, Table A.7 against Table 3, Table A.8's unperturbed column against
// Table 3's FS row, Table 4's totals and Table A.8's paired changes against their parts.
func TestTablesAgreeWithEachOther(t *testing.T) {
	for _, tc := range []struct {
		label, dataset, method string
		cellTable, model       string
		order, width           int
	}{
		{Table1, "SHD*", "Plain LIF (ours)", TableA6, "lif", 0, 256},
		{Table1, "SHD*", "FiTS (ours)", TableA6, "fsts", 2, 256},
		{Table1, "SSC", "Plain LIF (ours)", Table3, "lif", 0, 512},
		{Table1, "SSC", "FiTS (ours)", Table3, "fsts", 2, 512},
		{Table2, "GSC", "Plain LIF (ours)", TableA5, "lif", 0, 512},
		{Table2, "GSC", "FiTS (ours)", TableA5, "fsts", 1, 512},
	} {
		r := benchmark(t, tc.label, tc.dataset, tc.method)
		c := ablationCell(t, tc.cellTable, tc.model, tc.order, tc.width)
		if r.Acc != c.Acc {
			t.Errorf("%s %s %s = %s, %s %s M=%d W=%d = %s", tc.label, tc.dataset, tc.method, r.Acc, tc.cellTable, tc.model, tc.order, tc.width, c.Acc)
		}
	}
	t3, a7 := AblationCells(Table3), AblationCells(TableA7)
	if len(t3) != 24 || len(a7) != 36 || len(AblationCells(TableA5)) != 24 || len(AblationCells(TableA6)) != 24 {
		t.Fatalf("ablation cells: %d, %d, %d, %d", len(t3), len(a7), len(AblationCells(TableA5)), len(AblationCells(TableA6)))
	}
	for i, c := range t3 {
		if a7[i].Row != c.Row || a7[i].Width != c.Width || a7[i].Acc != c.Acc {
			t.Errorf("Table A.7 cell %d %+v differs from Table 3's %+v", i, a7[i], c)
		}
	}
	for _, p := range Perturbations() {
		fs := ablationCell(t, Table3, "fs", 0, p.Width)
		if p.Full != fs.Acc {
			t.Errorf("Table A.8 W=%d full %s, Table 3 FS %s", p.Width, p.Full, fs.Acc)
		}
		// Paired means equal the difference of the means up to the rounding of the three printed values.
		if !near(p.Reset.Mean-p.Full.Mean, p.ResetChange.Mean, 0.015) || !near(p.Shuffle.Mean-p.Full.Mean, p.ShuffleChange.Mean, 0.015) {
			t.Errorf("Table A.8 W=%d: changes %+v / %+v inconsistent with %v, %v, %v", p.Width, p.ResetChange, p.ShuffleChange, p.Full, p.Reset, p.Shuffle)
		}
	}
	for _, e := range EnergyTable() {
		if !near(e.LayerUJ+e.NeuronUJ, e.TotalUJ, 0.05) {
			t.Errorf("Table 4 %s: %.1f + %.1f ≠ %.1f", e.Row, e.LayerUJ, e.NeuronUJ, e.TotalUJ)
		}
	}
}

func TestTableShapes(t *testing.T) {
	count := map[string]int{}
	for _, r := range Table1Rows() {
		count[r.Dataset]++
		if r.Recurrent == nil || r.Delays == nil || r.Resolution == "" || r.ParamsM <= 0 {
			t.Errorf("Table 1 row %+v misses a column", r)
		}
	}
	if count["SHD"] != 11 || count["SHD*"] != 4 || count["SSC"] != 11 {
		t.Errorf("Table 1 blocks %v, the paper has SHD 11, SHD* 4, SSC 11", count)
	}
	if n := len(Table2Rows()); n != 6 {
		t.Errorf("Table 2 has %d rows, want 6", n)
	}
	if n, m := len(TableA9Rows()), len(TableA10Rows()); n != 7 || m != 4 {
		t.Errorf("Tables A.9/A.10 have %d/%d rows, want 7/4", n, m)
	}
	if BenchmarkRows(Table3) != nil || AblationCells(Table1) != nil {
		t.Error("BenchmarkRows/AblationCells answer for the wrong table")
	}
	// Table A.2: every cell has a learning rate and a dropout in [0.15, 0.65].
	lr := LRDropoutTable()
	if len(lr) != 36 || len(TrainingTimes()) != 36 {
		t.Fatalf("Table A.2 has %d cells, Table A.4 %d; want 36", len(lr), len(TrainingTimes()))
	}
	minP, maxP := 1.0, 0.0
	for _, c := range lr {
		minP, maxP = math.Min(minP, c.Dropout), math.Max(maxP, c.Dropout)
		if !(c.LR > 0 && c.LR <= 0.02) {
			t.Errorf("Table A.2 %+v: learning rate outside (0, 0.02]", c)
		}
	}
	if minP != 0.15 || maxP != 0.65 {
		t.Errorf("Table A.2 dropout spans [%v, %v], the paper [0.15, 0.65]", minP, maxP)
	}
	for _, tc := range []struct {
		dataset   string
		m, w      int
		lr, p     float64
		wantFound bool
	}{
		{"SHD", 2, 512, 2e-2, 0.2, true},
		{"SHD*", 0, 128, 6.5e-3, 0.4, true},
		{"SSC", 1, 64, 1.25e-3, 0.2, true},
		{"GSC", 1, 512, 3e-3, 0.65, true},
		{"SSC", 3, 64, 0, 0, false},
		{"SSC", 0, 96, 0, 0, false},
		{"DVS", 0, 64, 0, 0, false},
	} {
		c, ok := LRDropoutFor(tc.dataset, tc.m, tc.w)
		if ok != tc.wantFound || c.LR != tc.lr || c.Dropout != tc.p {
			t.Errorf("LRDropoutFor(%s, %d, %d) = %+v, %v", tc.dataset, tc.m, tc.w, c, ok)
		}
	}
	if c, ok := NeuronConstantsFor("SHD*"); !ok || c.TauM != 0.04 || c.FMaxHz != 50 {
		t.Errorf("NeuronConstantsFor(SHD*) = %+v, %v", c, ok)
	}
	if c, ok := NeuronConstantsFor("GSC"); !ok || c.TauA != 0.5 || c.Dt != 0.01 || c.FMaxHz != 30 {
		t.Errorf("NeuronConstantsFor(GSC) = %+v, %v", c, ok)
	}
	labels := Labels()
	if len(labels) != 20 || labels[0] != Table1 || labels[14] != TableA10 || !slices.Contains(labels, Figure2) {
		t.Errorf("Labels() = %v", labels)
	}
}

func TestScoreString(t *testing.T) {
	for _, tc := range []struct {
		s    Score
		want string
	}{
		{ms(95.31, 0.21), "95.31 ± 0.21"},
		{m1(92.1), "92.1"},
		{m2(83.08), "83.08"},
		{ms(89.30, 1.20), "89.30 ± 1.20"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.s, got, tc.want)
		}
	}
}

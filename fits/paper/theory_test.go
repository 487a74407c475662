package paper

import (
	"math"
	"testing"
)

func TestTheoryRowsMatchThePaper(t *testing.T) {
	rows, err := TheoryRows()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 6 {
		t.Fatalf("only %d rows", len(rows))
	}
	for _, r := range rows {
		if math.IsNaN(r.Ours) || math.IsInf(r.Ours, 0) {
			t.Errorf("%s: ours is %v", r.Quantity, r.Ours)
		}
		switch r.Where {
		case "App. A.2", "App. A.6", "App. B.1":
			// Exact closed forms: ours must round to the printed value.
			if !r.Match() {
				t.Errorf("%s: paper %.*f, ours %.*f", r.Quantity, r.Digits, r.Paper, r.Digits+3, r.Ours)
			}
		}
	}
}

func TestCTDTAlignment(t *testing.T) {
	rows, err := TheoryRows()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Quantity] = r
	}
	// The closed form must be far closer to the realized DT target than the CT target is (the paper's
	// point in Table 5), and within the paper's own reported worst case.
	ct := byName["CT f* vs realized DT f*: max error"].Ours
	cf := byName["closed-form DT f* vs realized DT f*: max error"].Ours
	if !(ct > 0.1) {
		t.Errorf("CT vs DT max gap %v Hz: expected a visible discretization gap over [1, 50] Hz", ct)
	}
	if !(cf < 1e-6) {
		t.Errorf("closed form vs sweep max gap %v Hz, want < 1e-6", cf)
	}
}

func TestRowMatch(t *testing.T) {
	cases := []struct {
		paper, ours float64
		digits      int
		tol         float64
		want        bool
	}{
		{13.8, 13.79, 1, 0, true},
		{13.8, 13.86, 1, 0, false},
		{1.98, 1.9746, 2, 0, false},
		{1.98, 1.9746, 2, 0.01, true},
		{0.047, 0.0474, 3, 0, true},
		{0.047, 0.0486, 3, 0, false},
	}
	for _, c := range cases {
		if got := (Row{Paper: c.paper, Ours: c.ours, Digits: c.digits, Tol: c.tol}).Match(); got != c.want {
			t.Errorf("Match(paper %v, ours %v, %d digits) = %v, want %v", c.paper, c.ours, c.digits, got, c.want)
		}
	}
}

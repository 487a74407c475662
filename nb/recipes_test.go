package nb

import (
	"slices"
	"testing"

	"github.com/fits-snn/fits/fits/paper"
)

func TestNeuronConstantsTable(t *testing.T) {
	tab, err := NeuronConstantsTable()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"SHD", "0.04 / 0.04", "0.2 / 0.2", "0.004", "[1, 50] / [1, 50]"},
		{"SSC", "0.04 / 0.04", "0.2 / 0.2", "0.004", "[1, 50] / [1, 50]"},
		{"GSC", "0.1 / 0.1", "0.5 / 0.5", "0.01", "[1, 30] / [1, 30]"},
	}
	if len(tab.Rows) != len(want) {
		t.Fatalf("%d rows", len(tab.Rows))
	}
	for i := range want {
		if !slices.Equal(tab.Rows[i], want[i]) {
			t.Errorf("row %q, want %q", tab.Rows[i], want[i])
		}
	}
}

func TestLRDropoutTable(t *testing.T) {
	tab, err := LRDropoutTable()
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != len(paper.LRDropoutTable()) {
		t.Fatalf("%d rows, want one per cell of Table A.2", len(tab.Rows))
	}
	for _, r := range tab.Rows {
		if r[len(r)-1] != "yes" {
			t.Errorf("the full recipe differs from Table A.2: %q", r)
		}
	}
	if want := []string{"SSC", "2", "512", "0.00045, 0.55", "ssc/fsts-m2/w512", "0.00045, 0.55", "yes"}; !containsRow(tab.Rows, want) {
		t.Errorf("no row %q", want)
	}
}

func containsRow(rows [][]string, want []string) bool {
	return slices.ContainsFunc(rows, func(r []string) bool { return slices.Equal(r, want) })
}

package nb

import (
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/theory"
)

func TestTableMarkdown(t *testing.T) {
	tab := Table{Caption: "cap", Header: []string{"a", "b"}, Rows: [][]string{{"1", "x|y"}, {"2"}}}
	got := tab.Markdown()
	want := "**cap**\n\n| a | b |\n| --- | --- |\n| 1 | x\\|y |\n| 2 |  |\n"
	if got != want {
		t.Errorf("Markdown() =\n%q\nwant\n%q", got, want)
	}
}

func TestTableHTMLEscapes(t *testing.T) {
	tab := Table{Caption: "<b>", Header: []string{"h&"}, Rows: [][]string{{"<script>"}}}
	got := tab.HTML()
	for _, bad := range []string{"<script>", "<b>", "h&<"} {
		if strings.Contains(got, bad) {
			t.Errorf("HTML() contains unescaped %q: %s", bad, got)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "&lt;b&gt;", "h&amp;", "<th", "<td"} {
		if !strings.Contains(got, want) {
			t.Errorf("HTML() lacks %q: %s", want, got)
		}
	}
}

func TestComparisonAgrees(t *testing.T) {
	tests := []struct {
		c    Comparison
		want bool
	}{
		{Comparison{Paper: 13.8, Ours: 13.7818, Digits: 1}, true},
		{Comparison{Paper: 1.98, Ours: 1.9746, Digits: 2}, true}, // the paper rounds 1.9746 up
		{Comparison{Paper: 77.2, Ours: 77.19, Digits: 1}, true},
		{Comparison{Paper: 13.8, Ours: 14.1, Digits: 1}, false},
		{Comparison{Paper: 1.98, Ours: 1.95, Digits: 2}, false},
	}
	for _, tc := range tests {
		if got := tc.c.Agrees(); got != tc.want {
			t.Errorf("%+v.Agrees() = %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestPaperComparisonsAgreeAtSSC(t *testing.T) {
	cs, err := PaperComparisons(theory.SSC)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 {
		t.Fatalf("%d comparisons, want 3", len(cs))
	}
	for _, c := range cs {
		if !c.Agrees() {
			t.Errorf("%s: ours %g, paper %g", c.Quantity, c.Ours, c.Paper)
		}
	}
	tab := ComparisonTable("paper vs ours", cs)
	if md := tab.Markdown(); strings.Contains(md, "NO") || !strings.Contains(md, "13.8") || !strings.Contains(md, "77.2") || !strings.Contains(md, "1.98") {
		t.Errorf("comparison table:\n%s", md)
	}
	// At other constants the limits move and no longer match the paper's SSC numbers.
	cs, err = PaperComparisons(theory.GSC)
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Agrees() && cs[1].Agrees() {
		t.Error("GSC limits agree with the paper's SSC limits; the comparison cannot tell constants apart")
	}
}

func TestJuryAndCTDTTables(t *testing.T) {
	j, err := JuryTable(theory.SSC)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Rows) != 2 || j.Rows[0][2] != "13.782" || j.Rows[1][2] != "77.194" {
		t.Errorf("Jury table rows %q", j.Rows)
	}
	c, err := CTDTTable(theory.SSC, []float64{5, 40, 70})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 3 {
		t.Fatalf("%d rows", len(c.Rows))
	}
	for _, r := range c.Rows {
		if len(r) != len(c.Header) {
			t.Errorf("row %q has %d cells, header %d", r, len(r), len(c.Header))
		}
		for _, cell := range r {
			if cell == "n/a" {
				t.Errorf("row %q: a target below the semi-implicit limit must have every value", r)
			}
		}
		// The closed form and the sweep agree to the printed precision (to 1e-3 Hz).
		if r[2] != r[3] {
			t.Errorf("closed form %s Hz, sweep %s Hz", r[2], r[3])
		}
	}
	if _, err := CTDTTable(theory.SSC, []float64{-1}); err == nil {
		t.Error("negative target accepted")
	}
}

func TestPoleExampleTable(t *testing.T) {
	tab, err := PoleExampleTable()
	if err != nil {
		t.Fatal(err)
	}
	md := tab.Markdown()
	for _, want := range []string{"| complex poles | false |", "1.9746", "≈ 1.98"} {
		if !strings.Contains(md, want) {
			t.Errorf("pole table lacks %q:\n%s", want, md)
		}
	}
}

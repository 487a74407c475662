package nb

import (
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
)

func TestResultTable(t *testing.T) {
	tr, err := experiment.Aggregate(t.TempDir(), "Table A.10", experiment.Full)
	if err != nil {
		t.Fatal(err)
	}
	tab := ResultTable(tr)
	if len(tab.Rows) != 4 || len(tab.Header) != len(tab.Rows[0]) || !strings.Contains(tab.Caption, "Table A.10") {
		t.Fatalf("table %+v", tab)
	}
	html := tab.HTML()
	for _, want := range []string{"Plain LIF", "87.01 ± 1.34", "— (0/5)", "0.0726 M"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	notes := ResultNotes(tr)
	if strings.Count(notes, "\n- ") != len(tr.Notes)-1 || !strings.Contains(notes, "final-epoch") {
		t.Errorf("notes %q", notes)
	}
}

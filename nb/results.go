package nb

import (
	"fmt"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
)

// ResultTable returns an aggregated table of fits/experiment (our runs beside the paper's published
// numbers, see experiment.Aggregate) as a notebook table: the same header and rows as its Markdown.
func ResultTable(t *experiment.TableResult) Table {
	return Table{
		Caption: fmt.Sprintf("%s · %s (ours: %s mode; cells: %s)", t.Label, t.Caption, t.Mode, t.Quantity),
		Header:  t.Header(),
		Rows:    t.Body(),
	}
}

// ResultNotes returns the notes of an aggregated table (protocol, statistics, stand-in data, skipped
// runs) as a Markdown list, to show under ResultTable.
func ResultNotes(t *experiment.TableResult) string {
	var b strings.Builder
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	return b.String()
}

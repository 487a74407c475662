package sweep

import (
	"errors"
	"os"
	"slices"

	"github.com/fits-snn/fits/fits/experiment"
)

// TableFiles are the files Collect wrote for one table.
type TableFiles struct {
	Label    string `json:"label"`
	Markdown string `json:"markdown"`
	CSV      string `json:"csv"`
	// Table is the aggregated table (not encoded).
	Table *experiment.TableResult `json:"-"`
}

// Collect reads the state of every run of g from its directory (Inspect), rewrites the index
// ROOT/sweep.json with it — unless a local sweep is running in the root, which keeps the index itself —
// and aggregates each of tables over whatever has finished (experiment.Aggregate), writing its Markdown
// and CSV beside the index (experiment.WriteTable: ROOT/table-3.md, ROOT/table-3.csv, ...). With no
// tables it aggregates every table the grid's experiments feed that result.json files fill
// (experiment.AggregatedTables).
func Collect(g *Grid, tables []string) (*Index, []TableFiles, error) {
	if err := checkMode(g); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(g.Root, 0o755); err != nil {
		return nil, nil, err
	}
	if len(tables) == 0 {
		feeds, err := g.Tables()
		if err != nil {
			return nil, nil, err
		}
		for _, l := range experiment.AggregatedTables() {
			if slices.Contains(feeds, l) {
				tables = append(tables, l)
			}
		}
	}
	idx, err := refreshIndex(g)
	if err != nil {
		return nil, nil, err
	}
	var out []TableFiles
	for _, label := range tables {
		t, err := experiment.Aggregate(g.Root, label, g.Mode)
		if err != nil {
			return idx, out, err
		}
		paths, err := experiment.WriteTable(g.Root, t)
		if err != nil {
			return idx, out, err
		}
		out = append(out, TableFiles{Label: t.Label, Markdown: paths[0], CSV: paths[1], Table: t})
	}
	return idx, out, nil
}

// refreshIndex builds the index of g from the run directories and writes it, unless a local sweep running
// in the root holds it.
func refreshIndex(g *Grid) (*Index, error) {
	recs := make([]Record, len(g.Runs))
	for i, r := range g.Runs {
		recs[i] = newRecord(g.Root, r, Inspect(r))
	}
	idx := newIndex(g, recs)
	unlock, err := lockRoot(g.Root)
	switch {
	case errors.Is(err, ErrLocked):
		return idx, nil
	case err != nil:
		return nil, err
	}
	defer unlock()
	return idx, idx.Write()
}

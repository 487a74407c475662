package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/internal/atomicfile"
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
// and aggregates each of tables over whatever has finished (experiment.Aggregate), writing
// ROOT/table-LABEL.md and ROOT/table-LABEL.csv.
func Collect(g *Grid, tables []string) (*Index, []TableFiles, error) {
	if err := checkMode(g); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(g.Root, 0o755); err != nil {
		return nil, nil, err
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
		base := filepath.Join(g.Root, TableFileBase(label))
		f := TableFiles{Label: label, Markdown: base + ".md", CSV: base + ".csv", Table: t}
		if err := atomicfile.WriteFile(f.Markdown, []byte(t.Markdown())); err != nil {
			return idx, out, err
		}
		if err := atomicfile.WriteFile(f.CSV, []byte(t.CSV())); err != nil {
			return idx, out, err
		}
		out = append(out, f)
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

// TableFileBase is the file name (without extension) of a table's aggregate: "table-" and the label with
// every character other than letters, digits, '.', '_' and '-' replaced by '-' (a leading "Table " of
// the label is dropped), e.g. "A.5" -> "table-A.5".
func TableFileBase(label string) string {
	s := strings.TrimSpace(label)
	if len(s) > 6 && strings.EqualFold(s[:6], "table ") {
		s = s[6:]
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '-'
	}, s)
	return "table-" + s
}

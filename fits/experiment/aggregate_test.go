package experiment

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// writeRun writes a fabricated result.json for one seed of an experiment with fits/train's own writer:
// every epoch of the mode's recipe, each with test (and validation) accuracy acc, so that every protocol
// selects acc. epochs < 0 writes all the recipe's epochs; otherwise that many (an unfinished run).
func writeRun(t *testing.T, root, id string, mode Mode, seed int64, acc, wallSeconds float64, epochs int, edit func(*train.Config)) {
	t.Helper()
	e, err := Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := e.Config(mode, seed)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&cfg)
	}
	if epochs < 0 {
		epochs = cfg.Epochs
	}
	r := &train.Result{Dataset: cfg.Dataset, Model: cfg.Model, M: cfg.M, Width: cfg.Width, Seed: seed,
		ParameterCount: 1000 * cfg.Width, Protocol: cfg.Protocol, Config: cfg, WallSeconds: wallSeconds,
		BestTestAcc: acc, FinalTestAcc: acc, BestEpoch: epochs}
	for i := range epochs {
		ep := train.Epoch{Epoch: i + 1, TestAcc: acc}
		if cfg.Protocol == train.ValSplit || cfg.Protocol == train.OfficialVal {
			v := acc
			ep.ValAcc = &v
		}
		r.Epochs = append(r.Epochs, ep)
	}
	if cfg.Protocol == train.ValSplit || cfg.Protocol == train.OfficialVal {
		v, ta := acc, acc
		r.BestValAcc, r.TestAccAtBestVal = &v, &ta
	}
	dir := RunDir(root, id, seed)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := train.WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
}

// findCell returns the cell of a row label and column.
func findCell(t *testing.T, tr *TableResult, group, row, column string) Cell {
	t.Helper()
	for _, r := range tr.Rows {
		if r.Label != row || (group != "" && r.Group != group) {
			continue
		}
		for _, c := range r.Cells {
			if c.Column == column {
				return c
			}
		}
	}
	t.Fatalf("%s has no cell %s/%s/%s", tr.Label, group, row, column)
	return Cell{}
}

func TestStat(t *testing.T) {
	s := newStat([]float64{1, 2, 3, 4})
	if s.N != 4 || s.Mean != 2.5 || s.Median != 2.5 || s.Std == nil || math.Abs(*s.Std-math.Sqrt(5.0/3)) > 1e-12 {
		t.Errorf("stat of 1..4: %+v (want mean 2.5, median 2.5, sample std √(5/3))", s)
	}
	if s := newStat([]float64{7}); s.Std != nil || s.Mean != 7 || s.Median != 7 {
		t.Errorf("stat of one value: %+v", s)
	}
	if s := newStat([]float64{5, 1, 3}); s.Median != 3 {
		t.Errorf("median of 5, 1, 3 = %v", s.Median)
	}
	if newStat(nil) != nil {
		t.Error("stat of nothing is not nil")
	}
}

func TestAggregateAblationFull(t *testing.T) {
	root := t.TempDir()
	accs := []float64{0.78, 0.79, 0.77, 0.785, 0.775}
	for i, a := range accs {
		writeRun(t, root, "ssc/fsts-m2/w512", Full, int64(i+1), a, 3600, -1, nil)
	}
	writeRun(t, root, "ssc/lif/w64", Full, 1, 0.60, 60, -1, nil)
	writeRun(t, root, "ssc/lif/w64", Full, 2, 0.62, 60, -1, nil)
	writeRun(t, root, "ssc/lif/w64", Full, 3, 0.90, 60, 40, nil) // unfinished: 40 of 100 epochs
	writeRun(t, root, "ssc/lif/w64", Full, 4, 0.99, 60, -1, func(c *train.Config) { c.Dataset = "synthetic" })
	if err := os.MkdirAll(RunDir(root, "ssc/lif/w64", 5), 0o755); err != nil { // started, no result.json
		t.Fatal(err)
	}
	tr, err := Aggregate(root, "table3", Full)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Label != paper.Table3 || len(tr.Rows) != 6 || !slices.Equal(tr.Columns, []string{"64", "128", "256", "512"}) {
		t.Fatalf("table %s: %d rows, columns %v", tr.Label, len(tr.Rows), tr.Columns)
	}
	c := findCell(t, tr, "", "FS + TS (M = 2)", "512")
	mean, std := 0.0, 0.0
	for _, a := range accs {
		mean += 100 * a / 5
	}
	for _, a := range accs {
		std += (100*a - mean) * (100*a - mean) / 4
	}
	std = math.Sqrt(std)
	if c.Ours == nil || math.Abs(c.Ours.Mean-mean) > 1e-9 || math.Abs(*c.Ours.Std-std) > 1e-9 || c.Ours.N != 5 ||
		c.Expected != 5 || !slices.Equal(c.Seeds, []int64{1, 2, 3, 4, 5}) || c.Paper.Mean != 78.23 ||
		c.Diff == nil || math.Abs(*c.Diff-(mean-78.23)) > 1e-9 || c.Params != 512000 || c.WallMinutes.Median != 60 {
		t.Errorf("M = 2, W = 512 cell: %+v (ours %+v), want mean %v, std %v", c, c.Ours, mean, std)
	}
	lif := findCell(t, tr, "", "Plain LIF", "64")
	if lif.Ours == nil || lif.Ours.N != 2 || math.Abs(lif.Ours.Mean-61) > 1e-9 || !slices.Equal(lif.Seeds, []int64{1, 2}) {
		t.Errorf("LIF W = 64: %+v, want the two finished seeds only", lif)
	}
	notes := strings.Join(tr.Notes, "\n")
	for _, want := range []string{"seed-3: skipped (40 of 100 epochs)", "seed-4: skipped (dataset synthetic, the recipe's is ssc)", "n − 1"} {
		if !strings.Contains(notes, filepath.FromSlash(want)) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "seed-5") {
		t.Errorf("a run without result.json is reported as skipped:\n%s", notes)
	}
	empty := findCell(t, tr, "", "FS (Frozen target frequency)", "256")
	if empty.Ours != nil || empty.Diff != nil || empty.Expected != 5 || len(empty.Seeds) != 0 {
		t.Errorf("cell without runs: %+v", empty)
	}

	// Rendering: the Markdown table has the header's width on every line; the CSV has one line per cell.
	md := tr.Markdown()
	h := tr.Header()
	if len(h) != 1+3*4 || h[1] != "W = 64 (paper)" || h[3] != "W = 64 Δ" {
		t.Errorf("header %v", h)
	}
	for _, want := range []string{"**Table 3 · Factorized ablation on SSC", "| FS + TS (M = 2) |", "78.23 ± 0.16", "(5/5)", "61.00 ± 1.41 (2/5)", "— (0/5)"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "|") && strings.Count(line, " |") != len(h) {
			t.Errorf("Markdown line with %d cells, header has %d: %q", strings.Count(line, " |"), len(h), line)
		}
	}
	recs, err := csv.NewReader(strings.NewReader(tr.CSV())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+24 || !slices.Equal(recs[0], CSVHeader) {
		t.Fatalf("CSV has %d records, header %v", len(recs), recs[0])
	}
	found := false
	for _, r := range recs[1:] {
		if r[4] == "ssc/fsts-m2/w512" {
			found = true
			if r[5] != "78.23" || r[6] != "0.16" || r[10] != "5" || r[11] != "5" || r[14] != "512000" {
				t.Errorf("CSV record %v", r)
			}
		}
	}
	if !found {
		t.Error("CSV lacks the M = 2, W = 512 cell")
	}

	// WriteTable writes exactly Markdown and CSV.
	out := filepath.Join(t.TempDir(), "tables")
	paths, err := WriteTable(out, tr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(paths, []string{filepath.Join(out, "table-3.md"), filepath.Join(out, "table-3.csv")}) {
		t.Errorf("WriteTable paths %v", paths)
	}
	for i, want := range []string{md, tr.CSV()} {
		b, err := os.ReadFile(paths[i])
		if err != nil || string(b) != want {
			t.Errorf("%s: %v, content differs from the renderer's", paths[i], err)
		}
	}
}

func TestAggregateComparisonTable(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, "shd-best/fsts-m1/w128", Full, 1, 0.95, 400, -1, nil)
	writeRun(t, root, "ssc/fsts-m2/w512", Full, 1, 0.78, 4000, -1, nil)
	tr, err := Aggregate(root, "Table 1", Full)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rows) != 26 || !tr.HasParams || !slices.Equal(tr.InfoHeaders, []string{"Rec.", "Del.", "Res."}) {
		t.Fatalf("Table 1: %d rows, params %v, info %v", len(tr.Rows), tr.HasParams, tr.InfoHeaders)
	}
	fits := findCell(t, tr, "SHD", "FiTS (ours)", "Acc.")
	if fits.Experiment != "shd-best/fsts-m1/w128" || fits.Ours == nil || math.Abs(fits.Ours.Mean-95) > 1e-9 || fits.Ours.Std != nil ||
		fits.PaperParamsM != 0.04 || fits.Params != 128000 || math.Abs(*fits.Diff-(95-95.31)) > 1e-9 {
		t.Errorf("SHD FiTS cell %+v", fits)
	}
	base := findCell(t, tr, "SSC", "DelRec (rec. delays only)", "Acc.")
	if base.Experiment != "" || base.Ours != nil || base.Paper.Mean != 82.58 || base.PaperParamsM != 0.37 {
		t.Errorf("baseline cell %+v", base)
	}
	md := tr.Markdown()
	for _, want := range []string{"| Dataset | Method | Rec. | Del. | Res. | # Params (paper) | # Params (ours) |",
		"| SHD | FiTS (ours) | no | no | 4 ms | 0.04 M | 0.1280 M | 95.31 ± 0.21 | 95.00 (1/5) | -0.31 |",
		"| SSC | DelRec (rec. delays only) | yes | yes | 5.6 ms | 0.37 M | — | 82.58 ± 0.08 | baseline | — |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestAggregateQuickAndTrainingTime(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, "ssc/fs/w512", Quick, 1, 1.0, 30, -1, nil)
	// A full-recipe run in a quick root is skipped, not mixed in.
	writeRun(t, root, "ssc/lif/w512", Full, 1, 0.69, 3000, 0, nil)
	tr, err := Aggregate(root, "3", Quick)
	if err != nil {
		t.Fatal(err)
	}
	c := findCell(t, tr, "", "FS (Learnable target frequency)", "512")
	if c.Ours == nil || c.Ours.Mean != 100 || c.Diff != nil || c.Expected != 3 {
		t.Errorf("quick cell %+v: want 100 %% over 1 of 3 seeds, no difference", c)
	}
	if nq := findCell(t, tr, "", "FS (Learnable target frequency)", "64"); nq.Expected != 0 || nq.Ours != nil {
		t.Errorf("cell without a quick stand-in: %+v", nq)
	}
	md := tr.Markdown()
	if strings.Contains(md, " Δ |") || !strings.Contains(md, "no quick run") || !strings.Contains(md, "not SSC") ||
		!strings.Contains(md, "no difference is computed") || !strings.Contains(md, "ssc/lif/w512") {
		t.Errorf("quick Markdown:\n%s", md)
	}

	// Table A.4: medians of wall minutes beside the paper's minutes.
	for i, s := range []float64{600, 900, 1200} {
		writeRun(t, root, "gsc/fsts-m1/w64", Full, int64(i+1), 0.9, s, -1, nil)
	}
	tt, err := Aggregate(root, "A.4", Full)
	if err != nil {
		t.Fatal(err)
	}
	g := findCell(t, tt, "GSC", "M = 1", "64")
	if g.Ours == nil || g.Ours.Median != 15 || g.Paper.Mean != 21.0 || *g.Diff != 15-21.0 {
		t.Errorf("Table A.4 GSC M = 1 W = 64: %+v", g)
	}
	if !strings.Contains(tt.Markdown(), "| GSC | M = 1 | 21.0 | 15.0 (3/5) | -6.00 |") {
		t.Errorf("Table A.4 Markdown:\n%s", tt.Markdown())
	}
	if len(tt.Rows) != 9 {
		t.Errorf("Table A.4 has %d rows, want 9", len(tt.Rows))
	}
}

func TestAggregateErrors(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		label string
		mode  Mode
		root  string
		want  string
	}{
		{"Table 4", Full, root, "not aggregated"},
		{"Figure 2", Full, root, "Table A.10"},
		{"Table 9", Full, root, "unknown table"},
		{"Table 3", "slow", root, "unknown mode"},
		{"Table 3", Full, filepath.Join(root, "missing"), "runs folder"},
	} {
		_, err := Aggregate(tc.root, tc.label, tc.mode)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Aggregate(%s, %s): %v, want an error mentioning %q", tc.label, tc.mode, err, tc.want)
		}
	}
	if _, err := Aggregate(root, "Table 5", Full); !errors.Is(err, ErrNotAggregated) {
		t.Errorf("Table 5: %v, want ErrNotAggregated", err)
	}
	// Every aggregated table builds on an empty folder, and names only catalog experiments.
	for _, l := range AggregatedTables() {
		for _, mode := range Modes() {
			tr, err := Aggregate(root, l, mode)
			if err != nil {
				t.Errorf("%s %s: %v", l, mode, err)
				continue
			}
			for _, r := range tr.Rows {
				if len(r.Cells) != len(tr.Columns) {
					t.Errorf("%s row %s: %d cells for %d columns", l, r.Label, len(r.Cells), len(tr.Columns))
				}
			}
			if got := len(tr.Body()[0]); got != len(tr.Header()) {
				t.Errorf("%s: body rows of %d cells, header of %d", l, got, len(tr.Header()))
			}
		}
	}
	if got := Stem("Table A.10"); got != "table-a10" {
		t.Errorf("Stem = %q", got)
	}
}

// TestAggregateShipped: in full mode a seed the runs root lacks comes from the shipped results folder
// (and is named as shipped); the root's own run of a seed wins over the shipped one; in quick mode the
// stand-in cell is kept and the notes name the shipped real-data run.
func TestAggregateShipped(t *testing.T) {
	const id = "smnist/fsts-m1/w256"
	root, shipped := t.TempDir(), t.TempDir()
	writeRun(t, shipped, id, Full, 0, 0.9828, 7200, -1, nil)
	writeRun(t, shipped, id, Full, 1, 0.97, 7200, 40, nil) // unfinished: skipped

	tr, err := Aggregate(root, "A.9", Full, shipped)
	if err != nil {
		t.Fatal(err)
	}
	c := findCell(t, tr, "", "FiTS (ours, M = 1, W = 256)", "Acc.")
	if c.Ours == nil || c.Ours.N != 1 || math.Abs(c.Ours.Mean-98.28) > 1e-9 || !slices.Equal(c.Shipped, []int64{0}) || !slices.Equal(c.Seeds, []int64{0}) {
		t.Fatalf("full mode with a shipped run: cell %+v", c)
	}
	notes := strings.Join(tr.Notes, "\n")
	if !strings.Contains(notes, "read from the shipped results") || !strings.Contains(notes, "40 of 100 epochs") {
		t.Errorf("notes do not name the shipped seed and the unfinished one:\n%s", notes)
	}

	writeRun(t, root, id, Full, 0, 0.95, 7200, -1, nil) // the user's own seed 0
	tr, err = Aggregate(root, "A.9", Full, shipped)
	if err != nil {
		t.Fatal(err)
	}
	if c := findCell(t, tr, "", "FiTS (ours, M = 1, W = 256)", "Acc."); c.Ours == nil || math.Abs(c.Ours.Mean-95) > 1e-9 || len(c.Shipped) != 0 {
		t.Errorf("the root's own seed 0 should win over the shipped one: cell %+v", c)
	}

	writeRun(t, root, id, Quick, 1, 0.6, 10, -1, nil)
	tr, err = Aggregate(root, "A.9", Quick, shipped)
	if err != nil {
		t.Fatal(err)
	}
	if c := findCell(t, tr, "", "FiTS (ours, M = 1, W = 256)", "Acc."); c.Ours == nil || math.Abs(c.Ours.Mean-60) > 1e-9 || len(c.Shipped) != 0 {
		t.Errorf("quick mode should show the stand-in: cell %+v", c)
	}
	if notes := strings.Join(tr.Notes, "\n"); !strings.Contains(notes, "Shipped run on the real data: smnist/fsts-m1/w256 (seed 0, the full recipe, 100 epochs) reached 98.28 %") {
		t.Errorf("quick-mode notes do not name the shipped run:\n%s", notes)
	}
}

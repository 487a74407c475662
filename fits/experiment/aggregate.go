package experiment

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// Stat summarizes one quantity over the finished runs of a cell.
type Stat struct {
	Mean float64 `json:"mean"`
	// Std is the sample standard deviation (n − 1 in the denominator, as the paper's "± std across
	// seeds" is read here); nil with fewer than two runs.
	Std    *float64 `json:"std"`
	Median float64  `json:"median"`
	N      int      `json:"n"`
}

// newStat summarizes values (at least one).
func newStat(values []float64) *Stat {
	n := len(values)
	if n == 0 {
		return nil
	}
	s := &Stat{N: n}
	for _, v := range values {
		s.Mean += v / float64(n)
	}
	if n > 1 {
		var ss float64
		for _, v := range values {
			ss += (v - s.Mean) * (v - s.Mean)
		}
		std := math.Sqrt(ss / float64(n-1))
		s.Std = &std
	}
	sorted := slices.Sorted(slices.Values(values))
	if n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return s
}

// Cell is one cell of an aggregated table: the paper's value beside ours.
type Cell struct {
	// Column is the paper's column label: a width ("512") in the ablation and training-time tables,
	// "Acc." in the comparison tables, "Full" in Table A.8.
	Column string `json:"column"`
	// Experiment is the ID of the runs behind the cell ("" for rows quoted from other papers).
	Experiment string `json:"experiment,omitempty"`
	// Paper is the paper's value: accuracy in percent, or minutes in Table A.4 (nil where the paper
	// prints none).
	Paper *paper.Score `json:"paper,omitempty"`
	// Ours summarizes the finished runs: test accuracy in percent as each run's protocol selects it, or
	// wall minutes per run in Table A.4; nil when no run finished.
	Ours *Stat `json:"ours,omitempty"`
	// Diff is ours − paper (the mean, or the median in Table A.4), in full mode only: quick-mode runs
	// use stand-in data.
	Diff *float64 `json:"diff,omitempty"`
	// Seeds are the seeds whose finished runs were aggregated; Expected is how many the mode asks for
	// (Experiment.SeedsFor; 0 when the experiment has no quick stand-in in quick mode).
	Seeds    []int64 `json:"seeds"`
	Expected int     `json:"expected"`
	// PaperParamsM is the paper's parameter count in millions (comparison tables only) and Params ours
	// (of the first finished run; every seed has the same).
	PaperParamsM float64 `json:"paper_params_m,omitempty"`
	Params       int     `json:"params,omitempty"`
	// WallMinutes summarizes the runs' wall times in minutes.
	WallMinutes *Stat `json:"wall_minutes,omitempty"`
	// Shipped are the seeds (among Seeds) whose runs were read from a shipped results folder (Aggregate's
	// shipped roots) rather than from the runs root.
	Shipped []int64 `json:"shipped,omitempty"`
}

// Row is one row of an aggregated table.
type Row struct {
	// Group is the dataset block (Table 1: "SHD", "SHD*", "SSC"; Table A.4: "SHD", "SSC", "GSC"), "" in
	// tables without blocks.
	Group string `json:"group,omitempty"`
	// Label is the row label as the paper prints it (the model, the method, or "W = 64" in Table A.8).
	Label string `json:"label"`
	// Info holds the row's descriptive columns (TableResult.InfoHeaders), e.g. Rec., Del. and Res. in
	// Table 1.
	Info  []string `json:"info,omitempty"`
	Cells []Cell   `json:"cells"`
}

// TableResult is a table of the paper with our aggregated runs beside the published numbers.
type TableResult struct {
	Label   string `json:"label"`
	Caption string `json:"caption"`
	Mode    Mode   `json:"mode"`
	Root    string `json:"root"`
	// Quantity says what the cells hold, with units.
	Quantity string `json:"quantity"`
	// Columns are the paper's column labels, one per cell of every row.
	Columns []string `json:"columns"`
	// RowHeader names the row labels: "Model", "Method" (comparison tables), "Order" (Table A.4) or "W"
	// (Table A.8).
	RowHeader string `json:"row_header"`
	// InfoHeaders name Row.Info.
	InfoHeaders []string `json:"info_headers,omitempty"`
	// HasParams marks the comparison tables, whose rows carry parameter counts.
	HasParams bool  `json:"has_params"`
	Rows      []Row `json:"rows"`
	// Notes state the protocol, the statistics, the data of quick mode and every run that was skipped.
	Notes []string `json:"notes"`
}

// ShippedDir is the folder of the repository that holds shipped results: finished runs of the paper's
// recipes on the real data, laid out like a runs root (RunDir), each with its result.json and final
// checkpoint, so that tables are rebuilt from them without retraining.
const ShippedDir = "results"

// ErrNotAggregated is returned (wrapped) by Aggregate for tables and figures that result.json files
// cannot fill: they come from checkpoints (fits/analysis) or are not results.
var ErrNotAggregated = errors.New("not aggregated from result.json")

// aggregated lists the labels Aggregate builds, with their captions.
var aggregated = map[string]string{
	paper.Table1:   "Performance on SHD, SHD* and SSC",
	paper.Table2:   "Performance on GSC",
	paper.Table3:   "Factorized ablation on SSC across hidden sizes",
	paper.TableA4:  "Training time per run",
	paper.TableA5:  "Factorized ablation on GSC across hidden sizes",
	paper.TableA6:  "Factorized ablation on SHD* across hidden sizes",
	paper.TableA7:  "TS cascade order sweep (M = 0 to 5) on SSC across hidden sizes",
	paper.TableA8:  "Target-frequency perturbation on SSC: the unperturbed FS-only checkpoints",
	paper.TableA9:  "sMNIST",
	paper.TableA10: "DVS Gesture 128",
}

// AggregatedTables returns the labels Aggregate builds, in paper order. The others that experiments
// feed (Table 4, Table 5, Figures 2, 3 and A.2) come from checkpoints, through the analyses.
func AggregatedTables() []string {
	return slices.DeleteFunc(paper.Labels(), func(l string) bool { _, ok := aggregated[l]; return !ok })
}

// Aggregate reads the finished runs of a table's experiments under root (RunDir layout) and returns the
// table with the paper's numbers beside ours. shipped are results folders laid out like root whose runs
// follow the full recipes on the real data (the repository's results/, ShippedDir): in full mode, a seed
// that root lacks is read from the first shipped folder that has it (Cell.Shipped names those seeds); in
// quick mode, whose cells hold stand-ins, the notes name the shipped real-data runs of the table's cells.
// label is parsed by ParseLabel ("Table 3", "3", "A.7", ...). A run counts when its folder holds a
// current run (ReadRun: every epoch of its configuration, the folder's seed, and the mode's recipe in all
// but the schedule, see Departures); other runs are listed in the notes. Every seed folder found is
// aggregated, also seeds beyond the mode's (Cell.Expected says how many the mode asks for).
func Aggregate(root string, label string, mode Mode, shipped ...string) (*TableResult, error) {
	l, err := ParseLabel(label)
	if err != nil {
		return nil, err
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	caption, ok := aggregated[l]
	if !ok {
		return nil, fmt.Errorf("%s: %w (valid: %s)", l, ErrNotAggregated, strings.Join(AggregatedTables(), ", "))
	}
	if st, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("runs folder: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("runs folder %s is not a folder", root)
	}
	t := &TableResult{Label: l, Caption: caption, Mode: mode, Root: root, Quantity: "test accuracy (%)", RowHeader: "Model"}
	a := &aggregator{root: root, shipped: shipped, mode: mode, t: t}
	switch l {
	case paper.Table1, paper.Table2, paper.TableA9, paper.TableA10:
		a.benchmark(l)
	case paper.Table3, paper.TableA5, paper.TableA6, paper.TableA7:
		a.ablation(l)
	case paper.TableA4:
		a.trainingTime()
	case paper.TableA8:
		a.perturbation()
	}
	a.finish()
	return t, nil
}

// aggregator fills one TableResult.
type aggregator struct {
	root    string
	shipped []string // shipped results folders (Aggregate)
	mode    Mode
	t       *TableResult
	skipped []string
	quick   []string // the quick notes of the table's experiments, in order of appearance
}

// cell aggregates the runs of an experiment into a cell; time selects wall minutes (Table A.4) instead of
// accuracy.
func (a *aggregator) cell(column, id string, published *paper.Score, time bool) Cell {
	c := Cell{Column: column, Experiment: id, Paper: published, Seeds: []int64{}}
	if id == "" {
		return c
	}
	e, err := Lookup(id)
	if err != nil {
		panic(err) // the tables name only catalog experiments (a test checks)
	}
	c.Expected = len(e.SeedsFor(a.mode))
	recipe, err := e.Recipe(a.mode)
	if err != nil {
		return c // no quick stand-in
	}
	if a.mode == Quick && !slices.Contains(a.quick, e.QuickNote) {
		a.quick = append(a.quick, e.QuickNote)
	}
	if a.mode == Quick {
		a.noteShipped(id, e)
	}
	var values, wall []float64
	for _, run := range a.runFolders(id) {
		seed, dir := run.seed, run.dir
		st := ReadRun(dir, seed, &recipe)
		r := st.Result
		switch {
		case st.Err != nil:
			a.skip(dir, st.Err.Error())
			continue
		case r == nil:
			continue // not finished (or not started)
		case st.Stale != "":
			a.skip(dir, st.Stale)
			continue
		case !st.Finished:
			a.skip(dir, fmt.Sprintf("%d of %d epochs", len(r.Epochs), r.Config.Epochs))
			continue
		}
		acc, err := r.SelectedTestAcc()
		if err != nil {
			a.skip(dir, err.Error())
			continue
		}
		v := 100 * acc
		if time {
			v = r.WallSeconds / 60
		}
		values = append(values, v)
		wall = append(wall, r.WallSeconds/60)
		c.Seeds = append(c.Seeds, seed)
		if run.shipped {
			c.Shipped = append(c.Shipped, seed)
		}
		if c.Params == 0 {
			c.Params = r.ParameterCount
		}
	}
	c.Ours, c.WallMinutes = newStat(values), newStat(wall)
	if len(c.Shipped) > 0 {
		a.t.Notes = append(a.t.Notes, fmt.Sprintf("%s: seed(s) %v read from the shipped results (%s), trained on the real data with the full recipe.",
			id, c.Shipped, strings.Join(a.shipped, ", ")))
	}
	if c.Ours != nil && published != nil && a.mode == Full {
		d := c.Ours.Mean - published.Mean
		if time {
			d = c.Ours.Median - published.Mean
		}
		c.Diff = &d
	}
	return c
}

// runFolder is one seed's run folder of an experiment.
type runFolder struct {
	seed    int64
	dir     string
	shipped bool // read from a shipped results folder
}

// runFolders returns the run folders of an experiment in seed order: those under the runs root, and in
// full mode the seeds the root lacks from the first shipped folder that has them.
func (a *aggregator) runFolders(id string) []runFolder {
	var runs []runFolder
	have := map[int64]bool{}
	for _, seed := range SeedFolders(a.root, id) {
		runs, have[seed] = append(runs, runFolder{seed: seed, dir: RunDir(a.root, id, seed)}), true
	}
	if a.mode != Full {
		return runs
	}
	for _, root := range a.shipped {
		for _, seed := range SeedFolders(root, id) {
			if !have[seed] {
				runs, have[seed] = append(runs, runFolder{seed: seed, dir: RunDir(root, id, seed), shipped: true}), true
			}
		}
	}
	slices.SortFunc(runs, func(x, y runFolder) int { return cmp.Compare(x.seed, y.seed) })
	return runs
}

// noteShipped names, in quick mode, the finished runs of experiment id in the shipped folders: real data
// and the full recipe, which the stand-in cells do not show.
func (a *aggregator) noteShipped(id string, e Experiment) {
	recipe, err := e.Recipe(Full)
	if err != nil {
		return
	}
	for _, root := range a.shipped {
		for _, seed := range SeedFolders(root, id) {
			st := ReadRun(RunDir(root, id, seed), seed, &recipe)
			if !st.Current() {
				continue
			}
			r := st.Result
			acc, err := r.SelectedTestAcc()
			if err != nil {
				continue
			}
			a.t.Notes = append(a.t.Notes, fmt.Sprintf("Shipped run on the real data: %s (seed %d, the full recipe, %d epochs) reached %.2f %% (%s); `--mode=full` shows it in the table.",
				id, seed, len(r.Epochs), 100*acc, r.Protocol))
		}
	}
}

// skip records a run folder that was not aggregated.
func (a *aggregator) skip(dir string, why string) {
	a.skipped = append(a.skipped, fmt.Sprintf("%s: skipped (%s)", dir, why))
}

// SeedFolders returns the seeds of the seed-<n> folders of an experiment under root (RunDir layout), in order.
func SeedFolders(root, id string) []int64 {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(id)))
	if err != nil {
		return nil
	}
	var seeds []int64
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "seed-")
		if !e.IsDir() || !ok {
			continue
		}
		if s, err := strconv.ParseInt(rest, 10, 64); err == nil && rest == strconv.FormatInt(s, 10) {
			seeds = append(seeds, s)
		}
	}
	slices.Sort(seeds)
	return seeds
}

func (a *aggregator) benchmark(label string) {
	t := a.t
	t.Columns, t.HasParams, t.RowHeader = []string{"Acc."}, true, "Method"
	switch label {
	case paper.Table1:
		t.InfoHeaders = []string{"Rec.", "Del.", "Res."}
		t.Notes = append(t.Notes, "SHD: best test accuracy over training; SHD*: 20 % of the training set held out, test accuracy at the best validation epoch; SSC: official validation split. Rows without our runs are quoted by the paper from the cited works.")
	case paper.Table2:
		t.InfoHeaders = []string{"Rec.", "Del.", "# Mel"}
		t.Notes = append(t.Notes, "GSC: official validation split, test accuracy at the best validation epoch. Rows without our runs are quoted by the paper from the cited works.")
	case paper.TableA9:
		t.Notes = append(t.Notes, "Rows without our runs are quoted by the paper from the cited works, with their parameter counts.")
	case paper.TableA10:
		t.Notes = append(t.Notes, "Official train/test split, test accuracy after the last epoch (protocol final-epoch); the same convolutional network for every model.")
	}
	mark := func(b *bool) string {
		switch {
		case b == nil:
			return ""
		case *b:
			return "yes"
		}
		return "no"
	}
	for _, r := range paper.BenchmarkRows(label) {
		acc := r.Acc
		c := a.cell("Acc.", BenchmarkID(r), &acc, false)
		c.PaperParamsM = r.ParamsM
		row := Row{Group: r.Dataset, Label: r.Method, Cells: []Cell{c}}
		switch label {
		case paper.Table1:
			row.Info = []string{mark(r.Recurrent), mark(r.Delays), r.Resolution}
		case paper.Table2:
			row.Info = []string{mark(r.Recurrent), mark(r.Delays), strconv.Itoa(r.Mel)}
		}
		t.Rows = append(t.Rows, row)
	}
}

func (a *aggregator) ablation(label string) {
	t := a.t
	for _, w := range paper.Widths() {
		t.Columns = append(t.Columns, strconv.Itoa(w))
	}
	cells := paper.AblationCells(label)
	g := ablationGrid(cells[0].Dataset)
	protocol := map[train.Protocol]string{
		train.OfficialVal: "official validation split, test accuracy at the best validation epoch",
		train.ValSplit:    "20 % of the training set held out for validation, test accuracy at the best validation epoch",
	}[g.protocol]
	t.Notes = append(t.Notes, fmt.Sprintf("%s: %s. Columns are hidden widths W.", cells[0].Dataset, protocol))
	for _, cell := range cells {
		acc := cell.Acc
		row := t.lastRow("", cell.Row)
		row.Cells = append(row.Cells, a.cell(strconv.Itoa(cell.Width), gridID(g, cell.Model, cell.Order, cell.Width), &acc, false))
	}
}

func (a *aggregator) trainingTime() {
	t := a.t
	t.Quantity, t.RowHeader = "training time per run (minutes, median over the finished runs)", "Order"
	for _, w := range paper.Widths() {
		t.Columns = append(t.Columns, strconv.Itoa(w))
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Ours: the median wall time per run (summed over resumed segments, compilation included) on the machine that trained it; the paper's: the median on one %s with a fused Triton kernel. The paper's SHD rows are matched with the SHD* runs (it does not say which SHD protocol it timed); M = 0 is FS with learnable target frequencies.", paper.KernelRuntimeGPU))
	for _, tt := range paper.TrainingTimes() {
		row := t.lastRow(tt.Dataset, fmt.Sprintf("M = %d", tt.Order))
		published := paper.Score{Mean: tt.Minutes, Digits: 1}
		id := gridID(ablationGrid(tt.Dataset), trainingTimeModel(tt.Order), tt.Order, tt.Width)
		row.Cells = append(row.Cells, a.cell(strconv.Itoa(tt.Width), id, &published, true))
	}
}

// lastRow returns the table's last row when it has group and label, else a new row appended.
func (t *TableResult) lastRow(group, label string) *Row {
	if n := len(t.Rows); n == 0 || t.Rows[n-1].Group != group || t.Rows[n-1].Label != label {
		t.Rows = append(t.Rows, Row{Group: group, Label: label})
	}
	return &t.Rows[len(t.Rows)-1]
}

func (a *aggregator) perturbation() {
	t := a.t
	t.Columns, t.RowHeader = []string{"Full"}, "W"
	t.Notes = append(t.Notes, "Only the unperturbed column (Full) comes from result.json; Reset f* and Shuffle f* are measured on the checkpoints by the perturbation analysis. SSC, FS only (M = 0), official validation split.")
	for _, p := range paper.Perturbations() {
		full := p.Full
		t.Rows = append(t.Rows, Row{Label: fmt.Sprintf("W = %d", p.Width),
			Cells: []Cell{a.cell("Full", gridID(gridSSC, "fs", 0, p.Width), &full, false)}})
	}
}

// finish adds the closing notes.
func (a *aggregator) finish() {
	t := a.t
	if t.Label != paper.TableA4 {
		t.Notes = append(t.Notes, "Ours: mean ± sample standard deviation (n − 1) over the finished seeds, as a percentage; k/n counts the finished seeds against the seeds the mode runs.")
	}
	switch a.mode {
	case Quick:
		t.Notes = append(t.Notes, "Quick mode: our runs use stand-in data, not the paper's datasets, so no difference is computed; the paper's values are shown for orientation.")
		for _, q := range a.quick {
			t.Notes = append(t.Notes, "Quick stand-in: "+q+".")
		}
	case Full:
		if t.Label == paper.TableA9 {
			t.Notes = append(t.Notes, fmt.Sprintf("Full mode: the released sMNIST recipe on the real MNIST (pixel by pixel, T = 784; learning rate %g, batch %d, no dropout, 100 epochs, best test); Δ = ours − paper.", smnistLR, smnistBatch))
			break
		}
		t.Notes = append(t.Notes, "Full mode: the paper's recipe on the real datasets (Table A.2 learning rates and dropouts, 100 epochs, batch 128); Δ = ours − paper.")
	}
	t.Notes = append(t.Notes, a.skipped...)
}

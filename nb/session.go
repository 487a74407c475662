package nb

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/analysis"
	"github.com/fits-snn/fits/fits/experiment"
	"github.com/gomlx/compute"
)

// Display is where a Session shows what a notebook cell produces. In a notebook it is GoNB's front end
// (gonbdisplay.Display); the tests record into one.
type Display interface {
	// Table shows a table.
	Table(Table)
	// Markdown shows Markdown text ($…$ and $$…$$ render as equations).
	Markdown(string)
	// Figure shows a figure inline.
	Figure(*Figure) error
	// Fail ends the cell with err (in a notebook: the message on stderr and exit status 1); it does not
	// return.
	Fail(err error)
}

// Session is what the cells of the results notebooks (05–14) share: the reproduction mode, the runs'
// root folder, the figures folder and the paper's tables or figures whose runs the notebook reads, all
// taken from the environment (Mode, RunsRoot, ResultFiguresDir: FITS_MODE, FITS_RUNS, FITS_FIGURES_DIR),
// and a Display. GoNB runs every cell as a fresh program, so a session holds nothing else: each cell reads
// its runs back from their folders.
//
// The methods that can fail end the cell through Display.Fail, so that a notebook cell is a few calls
// without error handling; the functions they call return errors and are what the tests check. A table or
// figure whose runs have not finished (an error wrapping ErrNoRuns) is no failure of the notebook: the
// session says so and the cell goes on.
type Session struct {
	// Mode is experiment.Quick (stand-ins trained on this machine) or experiment.Full (the user's sweeps
	// of the paper's recipes).
	Mode experiment.Mode
	// Root is the runs' root folder: runs live in Root/<experiment ID>/seed-<n>.
	Root string
	// Figures is the folder figures are saved in, as SVG and PNG.
	Figures string
	// Tables are the paper's tables and figures whose runs the notebook reads, as the paper labels them
	// ("Table 1", "Table A.8", "Figure 2"); nil for a notebook that trains its own runs (05).
	Tables []string
	// Out shows tables, figures and Markdown.
	Out Display
	// Log receives plain text: the mode line and the training logs of EnsureRuns.
	Log io.Writer
}

// Open returns the session of a notebook that reads the runs of tables (paper labels, checked by
// experiment.ParseLabel; none for a notebook that trains its own runs), with its mode and folders from the
// environment and its output shown by out (in a notebook: gonbdisplay.Display{}). Log is os.Stdout. An
// unknown FITS_MODE or label ends the cell through out.Fail.
func Open(out Display, tables ...string) *Session {
	s := &Session{Tables: tables, Out: out, Log: os.Stdout}
	mode, err := Mode()
	s.Check(err)
	for _, t := range tables {
		l, err := experiment.ParseLabel(t)
		s.Check(err)
		_, err = experiment.ForTable(l)
		s.Check(err)
	}
	s.Mode, s.Root, s.Figures = mode, RunsRoot(mode), ResultFiguresDir(mode)
	return s
}

// Check ends the cell through Out.Fail when err is not nil; it does nothing otherwise.
func (s *Session) Check(err error) {
	if err == nil {
		return
	}
	s.Out.Fail(err)
	panic(err) // a Display whose Fail returns
}

// shown reports whether the item that err came with can be shown: it ends the cell on an error, and on
// one wrapping ErrNoRuns says that the runs have not finished and returns false.
func (s *Session) shown(err error) bool {
	if errors.Is(err, ErrNoRuns) {
		s.Out.Markdown(fmt.Sprintf("*%s yet under `%s`: train the runs first (the commands are above).*", err, s.Root))
		return false
	}
	s.Check(err)
	return true
}

// Table shows t; a non-nil error in err ends the cell instead (or, wrapping ErrNoRuns, is said), so that
// s.Table(f()) takes a function returning (Table, error).
func (s *Session) Table(t Table, err ...error) {
	if s.shown(firstErr(err...)) {
		s.Out.Table(t)
	}
}

// Markdown shows md.
func (s *Session) Markdown(md string) { s.Out.Markdown(md) }

// Figure shows fig, saves it under Figures as <fig.Name>.svg and .png and shows its caption with the
// file's name; a non-nil error in err ends the cell instead, as in Table (s.Figure(f()) takes a function
// returning (*Figure, error)).
func (s *Session) Figure(fig *Figure, err ...error) {
	if s.shown(firstErr(err...)) {
		s.Check(s.Out.Figure(fig))
		s.Save(fig)
	}
}

// Save saves fig under Figures as <fig.Name>.svg and .png and shows its caption with the file's name,
// without showing the figure (a cell that drew it live already shows it).
func (s *Session) Save(fig *Figure, err ...error) {
	if !s.shown(firstErr(err...)) {
		return
	}
	note, err2 := SaveWithCaption(fig, s.Figures)
	s.Check(err2)
	s.Out.Markdown(note)
}

// SaveWithCaption saves fig as dir/<fig.Name>.svg and .png and returns the Markdown line shown under it:
// the caption in italics (its Markdown and math characters escaped, so that "f*" shows as written) and
// the saved file's name.
func SaveWithCaption(fig *Figure, dir string) (string, error) {
	svg, _, err := Save(fig, dir, "")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("*%s* (saved as `%s`, `.png`)", MarkdownText(fig.Caption), filepath.Join(filepath.Base(dir), filepath.Base(svg))), nil
}

// markdownSpecial are the characters that Markdown (CommonMark) or the notebook's math renderer would
// read as markup inside running text.
var markdownSpecial = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "#", `\#`, "$", `\$`, "|", `\|`, "~", `\~`)

// MarkdownText returns plain text escaped for Markdown, so that it renders as written: "f*_DT" stays
// "f*_DT" instead of starting emphasis.
func MarkdownText(s string) string { return markdownSpecial.Replace(s) }

// Output is what one notebook cell shows, in this order: its tables, its figures (each saved under the
// session's Figures folder with its caption) and its notes (Markdown). The functions that assemble a
// paper's table or figure from runs return one.
type Output struct {
	Tables  []Table
	Figures []*Figure
	Notes   []string
}

// figureOutput is the Output of fig and tables, or err when it is not nil.
func figureOutput(fig *Figure, err error, tables ...Table) (*Output, error) {
	if err != nil {
		return nil, err
	}
	return &Output{Tables: tables, Figures: []*Figure{fig}}, nil
}

// Show shows o; a non-nil error in err ends the cell instead, as in Table (s.Show(f()) takes a function
// returning (*Output, error)).
func (s *Session) Show(o *Output, err ...error) {
	if !s.shown(firstErr(err...)) {
		return
	}
	for _, t := range o.Tables {
		s.Out.Table(t)
	}
	for _, f := range o.Figures {
		s.Figure(f)
	}
	for _, n := range o.Notes {
		s.Out.Markdown(n)
	}
}

// Backend returns the GoMLX backend the notebooks compute with and its name (see Backend).
func (s *Session) Backend() (compute.Backend, string) {
	b, name, err := Backend()
	s.Check(err)
	return b, name
}

// EnsureRuns makes sure the runs of the session's tables exist (the package function EnsureRuns: quick
// mode trains what is missing with `fits sweep`, full mode trains nothing) and shows, per table, how many
// have finished; in full mode, also the commands that train the missing ones. It returns the runs' states.
// A run that a sweep left unfinished, or one trained with another recipe, ends the cell after the summary.
func (s *Session) EnsureRuns() []PlannedRun {
	s.Check(os.MkdirAll(s.Root, 0o755))
	fmt.Fprintf(s.Log, "%s mode, runs in %s\n", s.Mode, s.Root)
	runs, err := EnsureRuns(s.Root, s.Mode, s.Tables, EnsureOptions{Log: s.Log})
	s.Out.Table(RunSummary(s.Tables, runs))
	if cmds := FullCommands(s.Root, s.Tables, runs); s.Mode == experiment.Full && len(cmds) > 0 {
		s.Out.Markdown("Missing runs are trained (on a GPU machine with the datasets) by:\n\n```sh\n" + strings.Join(cmds, "\n") + "\n```")
	}
	s.Check(err)
	return runs
}

// Result aggregates the paper's table label from the runs' result.json (experiment.Aggregate: mean ±
// sample std over the finished seeds, beside the paper's value, under the table's protocol) and shows it
// with its notes (protocol, data, skipped runs); given a figure name, also the table drawn (ResultFigure),
// saved under that name. The same table as files: `fits aggregate --table=LABEL`.
func (s *Session) Result(label string, figure ...string) *experiment.TableResult {
	t, err := experiment.Aggregate(s.Root, label, s.Mode, ShippedRoot())
	s.Check(err)
	s.Out.Table(ResultTable(t))
	s.Out.Markdown(ResultNotes(t))
	for _, name := range figure {
		s.Figure(ResultFigure(name, t))
	}
	return t
}

// Plan returns the runs of tables (the session's Tables when none is given) and their states (Plan).
func (s *Session) Plan(tables ...string) []PlannedRun {
	if len(tables) == 0 {
		tables = s.Tables
	}
	runs, err := Plan(s.Root, s.Mode, tables)
	s.Check(err)
	return runs
}

// ExperimentRuns are the loaded runs (one per finished seed) of one experiment.
type ExperimentRuns struct {
	Experiment experiment.Experiment
	Runs       []*analysis.Run
}

// ErrNoRuns is returned (wrapped, e.g. "Table 4: no finished run") by the functions that assemble a
// table or figure from runs when they are given none: the runs have not finished yet.
var ErrNoRuns = errors.New("no finished run")

// FinishedByExperiment groups the finished runs of a plan by experiment, in the plan's order: the run
// folders of each experiment that has at least one.
func FinishedByExperiment(runs []PlannedRun) (exps []experiment.Experiment, dirs [][]string) {
	for _, r := range runs {
		if !r.Finished {
			continue
		}
		i := slices.IndexFunc(exps, func(e experiment.Experiment) bool { return e.ID == r.Experiment.ID })
		if i < 0 {
			i, exps, dirs = len(exps), append(exps, r.Experiment), append(dirs, nil)
		}
		dirs[i] = append(dirs[i], r.Dir)
	}
	return exps, dirs
}

// LoadGroups reads back the finished runs of the session's tables, grouped by experiment in the plan's
// order (each run's latest checkpoint and result.json, analysis.LoadRuns with the notebooks' backend);
// nil when none has finished.
func (s *Session) LoadGroups() []ExperimentRuns {
	exps, dirs := FinishedByExperiment(s.Plan())
	if len(exps) == 0 {
		return nil
	}
	b, _ := s.Backend()
	runs, err := analysis.LoadRuns(slices.Concat(dirs...), analysis.Options{Backend: b})
	s.Check(err)
	out := make([]ExperimentRuns, len(exps))
	for i, e := range exps {
		out[i] = ExperimentRuns{Experiment: e, Runs: runs[:len(dirs[i])]}
		runs = runs[len(dirs[i]):]
	}
	return out
}

// LoadRuns reads back the finished runs of the session's tables (LoadGroups, flattened); nil when none
// has finished.
func (s *Session) LoadRuns() []*analysis.Run {
	var runs []*analysis.Run
	for _, g := range s.LoadGroups() {
		runs = append(runs, g.Runs...)
	}
	return runs
}

// LoadRun reads back the run in dir (analysis.Load with the notebooks' backend); nil when dir does not
// exist. Any other error ends the cell.
func (s *Session) LoadRun(dir string) *analysis.Run {
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	b, _ := s.Backend()
	r, err := analysis.Load(dir, analysis.Options{Backend: b})
	s.Check(err)
	return r
}

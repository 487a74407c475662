package nb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
)

// recorder is a Display that keeps what a session shows; Fail panics with a failure, which failsWith
// recovers.
type recorder struct {
	tables  []Table
	notes   []string
	figures []string
	// order is the kind of every item shown: "table", "note" or "figure".
	order []string
}

type failure struct{ err error }

func (r *recorder) Table(t Table) { r.tables, r.order = append(r.tables, t), append(r.order, "table") }
func (r *recorder) Markdown(md string) {
	r.notes, r.order = append(r.notes, md), append(r.order, "note")
}
func (r *recorder) Figure(f *Figure) error {
	if err := f.validate(); err != nil {
		return err
	}
	r.figures, r.order = append(r.figures, f.Name), append(r.order, "figure")
	return nil
}
func (r *recorder) Fail(err error) { panic(failure{err}) }

// erred fails t unless err is what wantErr says (an error, or none) and reports whether there was one:
// then the case has nothing more to check.
func erred(t *testing.T, err error, wantErr bool) bool {
	t.Helper()
	if wantErr && err == nil {
		t.Fatal("want an error")
	}
	if !wantErr && err != nil {
		t.Fatal(err)
	}
	return err != nil
}

// failsWith runs f and returns the error it ended the cell with (nil when it returned).
func failsWith(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			fl, ok := v.(failure)
			if !ok {
				panic(v)
			}
			err = fl.err
		}
	}()
	f()
	return nil
}

// testSession opens a session in mode over a fresh runs root and figures folder, with its output recorded.
func testSession(t *testing.T, mode experiment.Mode, tables ...string) (*Session, *recorder, *strings.Builder) {
	t.Helper()
	t.Setenv("FITS_MODE", string(mode))
	t.Setenv("FITS_QUICK", "")
	t.Setenv("FITS_RUNS", t.TempDir())
	t.Setenv("FITS_FIGURES_DIR", t.TempDir())
	out := &recorder{}
	var s *Session
	if err := failsWith(func() { s = Open(out, tables...) }); err != nil {
		t.Fatal(err)
	}
	log := &strings.Builder{}
	s.Log = log
	return s, out, log
}

func TestOpen(t *testing.T) {
	t.Setenv("GONB_DIR", "/repo/notebooks")
	t.Setenv("FITS_ROOT", "")
	t.Setenv("FITS_RUNS", "")
	t.Setenv("FITS_FIGURES_DIR", "")
	for _, tc := range []struct {
		mode, runs, figures string
		tables              []string
		wantRoot, wantFigs  string
		bad                 bool
	}{
		{"", "", "", []string{"Table 1", "Table 2"}, "/repo/runs/quick", "/repo/notebooks/.executed/figures-quick", false},
		{"full", "", "", []string{"A.8"}, "/repo/runs/full", "/repo/figures", false},
		{"full", "sweeps", "/tmp/figs", nil, "/repo/sweeps", "/tmp/figs", false},
		{"fast", "", "", nil, "", "", true},
		{"quick", "", "", []string{"Table 9"}, "", "", true},
		{"quick", "", "", []string{"Figure 1"}, "", "", true},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.mode, tc.tables), func(t *testing.T) {
			t.Setenv("FITS_MODE", tc.mode)
			t.Setenv("FITS_RUNS", tc.runs)
			t.Setenv("FITS_FIGURES_DIR", tc.figures)
			var s *Session
			err := failsWith(func() { s = Open(&recorder{}, tc.tables...) })
			if erred(t, err, tc.bad) {
				return
			}
			if s.Root != tc.wantRoot || s.Figures != tc.wantFigs || !slices.Equal(s.Tables, tc.tables) || s.Log != os.Stdout {
				t.Errorf("root %q, figures %q, tables %v", s.Root, s.Figures, s.Tables)
			}
		})
	}
}

func TestSessionShows(t *testing.T) {
	s, out, _ := testSession(t, experiment.Quick)
	hist := func(name string) *Figure {
		fig, err := HistogramFigure(name, "caption of "+name,
			[]HistogramPanel{{Title: "t", XLabel: "x", YLabel: "n", Bins: 4, Hists: []Hist{{Label: "a", Values: []float64{1, 2, 2, 3}}}}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fig
	}
	s.Show(&Output{
		Notes:   []string{"a note"},
		Figures: []*Figure{hist("fig_a")},
		Tables:  []Table{{Caption: "t1"}, {Caption: "t2"}},
	})
	if want := []string{"table", "table", "figure", "note", "note"}; !slices.Equal(out.order, want) {
		t.Errorf("shown %v, want %v", out.order, want)
	}
	if want := "*caption of fig\\_a* (saved as `" + filepath.Base(s.Figures) + "/fig_a.svg`, `.png`)"; out.notes[0] != want {
		t.Errorf("caption line %q, want %q", out.notes[0], want)
	}
	s.Save(hist("fig_b"))
	for _, f := range []string{"fig_a.svg", "fig_a.png", "fig_b.svg", "fig_b.png"} {
		if st, err := os.Stat(filepath.Join(s.Figures, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not saved: %v", f, err)
		}
	}
	if slices.Contains(out.figures, "fig_b") {
		t.Error("Save showed the figure")
	}

	boom := errors.New("boom")
	for name, call := range map[string]func(){
		"Check":        func() { s.Check(boom) },
		"Table":        func() { s.Table(Table{}, boom) },
		"Figure":       func() { s.Figure(nil, boom) },
		"Save":         func() { s.Save(nil, boom) },
		"Show":         func() { s.Show(nil, boom) },
		"empty figure": func() { s.Figure(&Figure{Name: "empty"}) },
	} {
		if err := failsWith(call); err == nil {
			t.Errorf("%s: the cell went on", name)
		}
	}
	if err := failsWith(func() { s.Check(nil); s.Table(Table{Caption: "ok"}, nil) }); err != nil {
		t.Errorf("nil errors ended the cell: %v", err)
	}

	// Runs that have not finished are said, not failed.
	out.order, out.notes = nil, nil
	noRuns := fmt.Errorf("Figure 3: %w", ErrNoRuns)
	if err := failsWith(func() {
		s.Table(Table{}, noRuns)
		s.Figure(nil, noRuns)
		s.Save(nil, noRuns)
		s.Show(nil, noRuns)
	}); err != nil {
		t.Fatalf("no runs ended the cell: %v", err)
	}
	if want := "*Figure 3: no finished run yet under `" + s.Root + "`: train the runs first (the commands are above).*"; len(out.notes) != 4 || out.notes[3] != want || slices.Contains(out.order, "table") {
		t.Errorf("notes %q, want 4 × %q", out.notes, want)
	}
	if err := failsWith(func() { s.Check(noRuns) }); err == nil {
		t.Error("Check let a missing run pass")
	}
}

func TestSessionEnsureRunsAndResultInFullMode(t *testing.T) {
	s, out, log := testSession(t, experiment.Full, "Table A.10")
	runs := s.EnsureRuns()
	if len(runs) != 20 {
		t.Errorf("%d runs, want 4 models × 5 seeds", len(runs))
	}
	if !strings.Contains(log.String(), "full mode, runs in "+s.Root) {
		t.Errorf("log %q", log.String())
	}
	if len(out.tables) != 1 || out.tables[0].Rows[0][1] != "0 / 20" {
		t.Errorf("summary %+v", out.tables)
	}
	if len(out.notes) != 1 || !strings.Contains(out.notes[0], "bin/fits sweep --table=A.10 --mode=full --out="+s.Root) {
		t.Errorf("commands %q", out.notes)
	}

	tr := s.Result("Table A.10")
	if tr.Label != "Table A.10" || len(out.tables) != 2 || !strings.Contains(out.tables[1].HTML(), "87.01 ± 1.34") ||
		!strings.Contains(out.notes[1], "final-epoch") || len(out.figures) != 0 {
		t.Errorf("result table %+v, notes %q, figures %q", out.tables[1], out.notes[1:], out.figures)
	}
	s.Result("Table A.10", "12_tableA10_ours_vs_paper")
	if want := []string{"table", "note", "figure", "note"}; !slices.Equal(out.order[len(out.order)-4:], want) || !slices.Equal(out.figures, []string{"12_tableA10_ours_vs_paper"}) {
		t.Errorf("with a figure: shown %v, figures %q", out.order, out.figures)
	}
	if _, err := os.Stat(filepath.Join(s.Figures, "12_tableA10_ours_vs_paper.png")); err != nil {
		t.Errorf("figure not saved: %v", err)
	}
	if err := failsWith(func() { s.Result("Table 9") }); err == nil {
		t.Error("an unknown table was aggregated")
	}
}

func TestSessionLoadsFinishedRunsOnly(t *testing.T) {
	s, out, _ := testSession(t, experiment.Quick, "A.10", "fig2")
	if g, r := s.LoadGroups(), s.LoadRun(filepath.Join(s.Root, "nothing")); g != nil || r != nil || len(out.order) != 0 {
		t.Errorf("groups %v, run %v, shown %v", g, r, out.order)
	}

	plan := s.Plan()
	if len(plan) != 7 || len(s.Plan("A.10")) != 4 {
		t.Fatalf("plan of %d runs, %d of A.10", len(plan), len(s.Plan("A.10")))
	}
	// Finished: both seeds 1 and 3 of Figure 2 and dvs/fs; dvs/lif has half its epochs.
	for _, r := range plan {
		switch {
		case r.Experiment.ID == "gsc-org/fsts-m1/w512" && r.Seed != 2, r.Experiment.ID == "dvs/fs":
			writeResult(t, r.Dir, r.Experiment, experiment.Quick, r.Seed, r.Experiment.Quick.Epochs)
		case r.Experiment.ID == "dvs/lif":
			writeResult(t, r.Dir, r.Experiment, experiment.Quick, r.Seed, r.Experiment.Quick.Epochs/2)
		}
	}
	exps, dirs := FinishedByExperiment(s.Plan())
	var ids []string
	for _, e := range exps {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []string{"dvs/fs", "gsc-org/fsts-m1/w512"}) || len(dirs) != 2 || len(dirs[0]) != 1 ||
		!slices.Equal(dirs[1], []string{experiment.RunDir(s.Root, ids[1], 1), experiment.RunDir(s.Root, ids[1], 3)}) {
		t.Errorf("finished %v in %v", ids, dirs)
	}
}

package nb

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

func TestModeAndFolders(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want experiment.Mode
		bad  bool
	}{{"", experiment.Quick, false}, {"quick", experiment.Quick, false}, {" FULL ", experiment.Full, false}, {"fast", "", true}} {
		t.Setenv("FITS_MODE", tc.env)
		m, err := Mode()
		if (err != nil) != tc.bad || m != tc.want {
			t.Errorf("FITS_MODE=%q: got %q, %v", tc.env, m, err)
		}
	}
	t.Setenv("GONB_DIR", "/repo/notebooks")
	t.Setenv("FITS_ROOT", "")
	t.Setenv("FITS_RUNS", "")
	t.Setenv("FITS_FIGURES_DIR", "")
	if got := RunsRoot(experiment.Quick); got != "/repo/runs/quick" {
		t.Errorf("RunsRoot(quick) = %q", got)
	}
	if got := ResultFiguresDir(experiment.Quick); got != "/repo/notebooks/.executed/figures-quick" {
		t.Errorf("ResultFiguresDir(quick) = %q", got)
	}
	if got := ResultFiguresDir(experiment.Full); got != "/repo/figures" {
		t.Errorf("ResultFiguresDir(full) = %q", got)
	}
	t.Setenv("FITS_RUNS", "/data/sweeps")
	if got := RunsRoot(experiment.Full); got != "/data/sweeps" {
		t.Errorf("RunsRoot with FITS_RUNS = %q", got)
	}
	t.Setenv("FITS_RUNS", "sweeps/full")
	if got := RunsRoot(experiment.Full); got != "/repo/sweeps/full" {
		t.Errorf("RunsRoot with a relative FITS_RUNS = %q", got)
	}
}

// writeResult writes a result.json for the experiment's recipe in mode with epochs of its epochs done.
func writeResult(t *testing.T, dir string, e experiment.Experiment, mode experiment.Mode, seed int64, done int) {
	t.Helper()
	cfg, err := e.Config(mode, seed)
	if err != nil {
		t.Fatal(err)
	}
	r := train.Result{Dataset: cfg.Dataset, Model: cfg.Model, M: cfg.M, Width: cfg.Width, Seed: seed,
		Epochs: make([]train.Epoch, done), Config: cfg, Protocol: cfg.Protocol, BestTestAcc: 0.5, FinalTestAcc: 0.5}
	acc := 0.5
	r.BestValAcc, r.TestAccAtBestVal = &acc, &acc
	for i := range r.Epochs {
		r.Epochs[i].Epoch = i + 1
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, train.ResultFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPlan(t *testing.T) {
	root, runs := quickPlan(t, "A.10", "fig2")
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.Experiment.ID)
		if r.Finished {
			t.Errorf("%s finished in an empty root", r.Dir)
		}
		if r.Dir != experiment.RunDir(root, r.Experiment.ID, r.Seed) {
			t.Errorf("dir %s", r.Dir)
		}
	}
	want := []string{"dvs/lif", "dvs/fs", "dvs/fsts-m1", "dvs/fsts-m2", "gsc-org/fsts-m1/w512", "gsc-org/fsts-m1/w512", "gsc-org/fsts-m1/w512"}
	if !slices.Equal(ids, want) {
		t.Errorf("quick plan of A.10 and Figure 2: %v, want %v", ids, want)
	}

	// Full mode: the paper's seeds; a finished run and an unfinished one.
	runs, err := Plan(root, experiment.Full, []string{"Table A.9"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 5 {
		t.Fatalf("Table A.9 full: %d runs, want 5 seeds", len(runs))
	}
	e := runs[0].Experiment
	writeResult(t, runs[0].Dir, e, experiment.Full, runs[0].Seed, e.Full.Epochs)
	writeResult(t, runs[1].Dir, e, experiment.Full, runs[1].Seed, e.Full.Epochs-1)
	runs, _ = Plan(root, experiment.Full, []string{"Table A.9"})
	if !runs[0].Finished || runs[1].Finished || runs[2].Finished {
		t.Errorf("finished: %v %v %v, want true false false", runs[0].Finished, runs[1].Finished, runs[2].Finished)
	}
	tab := RunSummary([]string{"A.9"}, runs)
	if want := []string{"Table A.9", "1 / 5", "1", "3", "smnist/fsts-m1/w256 seed 1, smnist/fsts-m1/w256 seed 2, smnist/fsts-m1/w256 seed 3, smnist/fsts-m1/w256 seed 4"}; !slices.Equal(tab.Rows[0], want) {
		t.Errorf("summary row %q, want %q", tab.Rows[0], want)
	}

	for _, bad := range []string{"Table 9", "A.3", "Figure 1"} {
		if _, err := Plan(root, experiment.Quick, []string{bad}); err == nil {
			t.Errorf("Plan(%q) accepted", bad)
		}
	}
}

func TestEnsureRunsFullModeTrainsNothing(t *testing.T) {
	root := t.TempDir()
	runs, err := EnsureRuns(root, experiment.Full, []string{"A.10"}, EnsureOptions{Fits: filepath.Join(root, "no-such-binary")})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 20 {
		t.Errorf("%d runs, want 4 models × 5 seeds", len(runs))
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Errorf("full mode wrote into the root: %v", entries)
	}
	cmds := FullCommands(root, []string{"A.10"}, runs)
	if len(cmds) != 2 || !strings.Contains(cmds[0], "fits sweep --table=A.10 --mode=full --out="+root) || !strings.Contains(cmds[1], "--emit=slurm") {
		t.Errorf("commands %q", cmds)
	}
}

// standIn writes a fake fits binary that logs its arguments and, for `sweep`, copies a finished
// result.json into every run folder of its experiments and seeds (read from a file named after the
// experiment, with '/' as '_', and the seed: ID-SEED.json); other commands succeed doing nothing.
func standIn(t *testing.T, dir string) (exe, argLog string) {
	t.Helper()
	exe = filepath.Join(dir, "fits")
	argLog = filepath.Join(dir, "args.txt")
	script := `#!/bin/bash
echo "$*" >> ` + argLog + `
[[ $1 == sweep ]] || exit 0
for a in "$@"; do
  case $a in
    --experiments=*) ids=${a#--experiments=} ;;
    --seeds=*) seeds=${a#--seeds=} ;;
    --out=*) out=${a#--out=} ;;
  esac
done
IFS=, read -ra I <<< "$ids"; IFS=, read -ra S <<< "$seeds"
for id in "${I[@]}"; do for s in "${S[@]}"; do
  mkdir -p "$out/$id/seed-$s" && cp "` + dir + `/${id//\//_}-$s.json" "$out/$id/seed-$s/result.json"
done; done
`
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, argLog
}

func TestEnsureRunsQuickSweepsWhatIsMissing(t *testing.T) {
	t.Setenv("FITS_QUICK", "")
	root, bin := t.TempDir(), t.TempDir()
	exe, argLog := standIn(t, bin)
	tables := []string{"A.10", "A.9", "fig2"}
	plan, err := Plan(root, experiment.Quick, tables)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range plan {
		writeResult(t, bin, r.Experiment, experiment.Quick, r.Seed, r.Experiment.Quick.Epochs)
		if err := os.Rename(filepath.Join(bin, train.ResultFile), filepath.Join(bin, fmt.Sprintf("%s-%d.json", strings.ReplaceAll(r.Experiment.ID, "/", "_"), r.Seed))); err != nil {
			t.Fatal(err)
		}
	}
	// dvs/lif and seed 2 of Figure 2 finished before: they are not trained again.
	for _, r := range plan {
		if r.Experiment.ID == "dvs/lif" || (r.Experiment.ID == "gsc-org/fsts-m1/w512" && r.Seed == 2) {
			writeResult(t, r.Dir, r.Experiment, experiment.Quick, r.Seed, r.Experiment.Quick.Epochs)
		}
	}
	var log strings.Builder
	runs, err := EnsureRuns(root, experiment.Quick, tables, EnsureOptions{Fits: exe, Workers: 3, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, r := range runs {
		if !r.Finished {
			t.Errorf("%s not finished", r.Dir)
		}
	}
	b, err := os.ReadFile(argLog)
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"data convert --dataset=espeak",
		"sweep --experiments=smnist/fsts-m1/w256,dvs/fs,dvs/fsts-m1,dvs/fsts-m2 --seeds=1 --mode=quick --out=" + root + " --workers=3",
		"sweep --experiments=gsc-org/fsts-m1/w512 --seeds=1,3 --mode=quick --out=" + root + " --workers=3",
	}
	if !slices.Equal(calls, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	// Everything finished: a second call runs nothing.
	if _, err := EnsureRuns(root, experiment.Quick, tables, EnsureOptions{Fits: exe}); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(argLog); string(b2) != string(b) {
		t.Errorf("a second EnsureRuns ran commands: %s", b2[len(b):])
	}
}

func TestPlanCISubset(t *testing.T) {
	root := t.TempDir()
	t.Setenv("FITS_QUICK", "1")
	runs, err := Plan(root, experiment.Quick, []string{"A.10", "fig2", "A.7"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, fmt.Sprintf("%s/%d", r.Experiment.ID, r.Seed))
	}
	// The four rows of CIEverySeed with all three quick seeds, the others with their first.
	want := []string{"ssc/lif/w512/1", "ssc/lif/w512/2", "ssc/lif/w512/3", "ssc/adaptlif/w512/1", "ssc/adaptlif/w512/2", "ssc/adaptlif/w512/3",
		"ssc/fs-frozen/w512/1", "ssc/fs-frozen/w512/2", "ssc/fs-frozen/w512/3", "ssc/fs/w512/1", "ssc/fs/w512/2", "ssc/fs/w512/3",
		"ssc/fsts-m1/w512/1", "ssc/fsts-m2/w512/1", "dvs/fs/1", "gsc-org/fsts-m1/w512/1"}
	if !slices.Equal(got, want) {
		t.Errorf("CI plan %v, want %v", got, want)
	}
	// Full mode ignores the subset.
	if runs, _ := Plan(root, experiment.Full, []string{"A.10"}); len(runs) != 20 {
		t.Errorf("full mode under FITS_QUICK=1: %d runs, want 20", len(runs))
	}
	// Every experiment of the subset exists and has a quick stand-in; every table with runs keeps at least one.
	for _, id := range CISubset {
		e, err := experiment.Lookup(id)
		if err != nil || !e.HasQuick() {
			t.Errorf("subset experiment %s: %v, quick %v", id, err, e.HasQuick())
		}
	}
	for _, l := range experiment.Tables() {
		if runs, _ := Plan(root, experiment.Quick, []string{l}); len(runs) == 0 {
			t.Errorf("%s has no run in the CI subset", l)
		}
	}
	for _, v := range []string{"", "0"} {
		t.Setenv("FITS_QUICK", v)
		if CIMode() {
			t.Errorf("FITS_QUICK=%q turns the CI subset on", v)
		}
	}
}

func TestStaleRunsAreNamedNotRetrained(t *testing.T) {
	root, plan := quickPlan(t, "A.9")
	// A finished run of another recipe (the stand-in's dataset changed since it was trained).
	e := plan[0].Experiment
	e.Quick.Dataset = "smnist"
	writeResult(t, plan[0].Dir, e, experiment.Quick, 1, e.Quick.Epochs)
	runs, err := EnsureRuns(root, experiment.Quick, []string{"A.9"}, EnsureOptions{Fits: filepath.Join(root, "no-such-binary")})
	if err == nil || !strings.Contains(err.Error(), "dataset smnist, the recipe's is smnist-row") || !strings.Contains(err.Error(), "delete their folders") {
		t.Errorf("error %v", err)
	}
	if len(runs) != 1 || runs[0].Finished || runs[0].Stale == "" {
		t.Errorf("runs %+v", runs)
	}
	if tab := RunSummary([]string{"A.9"}, runs); tab.Rows[0][1] != "0 / 1" || tab.Rows[0][2] != "1" {
		t.Errorf("summary %q", tab.Rows[0])
	}
}

func TestEnsureRunsReportsUnfinished(t *testing.T) {
	t.Setenv("FITS_QUICK", "")
	root, bin := t.TempDir(), t.TempDir()
	exe := filepath.Join(bin, "fits")
	if err := os.WriteFile(exe, []byte("#!/bin/bash\necho training fails >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	_, err := EnsureRuns(root, experiment.Quick, []string{"A.9"}, EnsureOptions{Fits: exe, Log: &log})
	if err == nil || !strings.Contains(err.Error(), "1 run(s) did not finish") || !strings.Contains(err.Error(), "smnist") {
		t.Errorf("error %v", err)
	}
	if !strings.Contains(log.String(), "training fails") {
		t.Errorf("log lacks the command's output: %q", log.String())
	}
}

func TestLineWriterKeepsLastRedraw(t *testing.T) {
	var b strings.Builder
	w := &lineWriter{w: &b}
	for _, chunk := range []string{"progress 1/3\rprogress 2", "/3\rprogress 3/3\n", "\x1b[Krun a finished\n\n", "tail"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if got, want := b.String(), "progress 3/3\nrun a finished\ntail\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestShortLabel(t *testing.T) {
	for in, want := range map[string]string{"Table 3": "3", "Table A.7": "A.7", "Figure 2": "fig2", "Figure A.2": "figA.2"} {
		got := ShortLabel(in)
		if got != want {
			t.Errorf("ShortLabel(%q) = %q, want %q", in, got, want)
		}
		if l, err := experiment.ParseLabel(got); err != nil || l != in {
			t.Errorf("ParseLabel(%q) = %q, %v", got, l, err)
		}
	}
}

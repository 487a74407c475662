package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// The test binary doubles as a stand-in for the fits binary, so that the executor is tested without
// compiling graphs:
//   - FITS_SWEEP_FAKE=train: `train --seed=S --out=DIR [--epochs=N] [--resume] ...` prints epoch lines like
//     train.TerminalProgress, saves a fake checkpoint after each epoch (FITS_SWEEP_FAKE_SLEEP
//     milliseconds each), and writes result.json at the end; seed FITS_SWEEP_FAKE_FAIL exits with
//     status 1 after printing an error, and a directory with a checkpoint but no --resume is refused.
//   - FITS_SWEEP_FAKE=sweep: runs Execute on FITS_SWEEP_FAKE_GRID (a JSON Grid) with one worker and
//     itself as the trainer, exit status 1 when a run failed.
func TestMain(m *testing.M) {
	switch os.Getenv("FITS_SWEEP_FAKE") {
	case "train":
		os.Exit(fakeTrain(os.Args[1:]))
	case "sweep":
		os.Exit(fakeSweep())
	}
	os.Exit(m.Run())
}

func fakeTrain(args []string) int {
	fmt.Println("fake train", strings.Join(args, " "))
	var dir string
	var seed int64
	epochs, resume := 3, false
	for _, a := range args[1:] {
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "out":
			dir = value
		case "seed":
			seed, _ = strconv.ParseInt(value, 10, 64)
		case "epochs":
			epochs, _ = strconv.Atoi(value)
		case "resume":
			resume = true
		}
	}
	if fail := os.Getenv("FITS_SWEEP_FAKE_FAIL"); fail != "" && fail == strconv.FormatInt(seed, 10) {
		fmt.Fprintln(os.Stderr, "fits train: the loss is NaN (fake)")
		return 1
	}
	done := 0
	if train.HasCheckpoint(dir) {
		if !resume {
			fmt.Fprintln(os.Stderr, "fits train: --out already holds a run")
			return 2
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*.json"))
		for _, m := range matches {
			var c struct{ FakeEpochs int }
			b, _ := os.ReadFile(m)
			if json.Unmarshal(b, &c) == nil {
				done = max(done, c.FakeEpochs)
			}
		}
		fmt.Fprintf(os.Stderr, "resuming %s after epoch %d of %d\n", dir, done, epochs)
	}
	sleep, _ := strconv.Atoi(os.Getenv("FITS_SWEEP_FAKE_SLEEP"))
	for e := done + 1; e <= epochs; e++ {
		fmt.Fprintf(os.Stderr, "\r\033[Kepoch %d/%d [=   ] 1/4 loss 1.0", e, epochs)
		time.Sleep(time.Duration(sleep) * time.Millisecond)
		if err := writeCheckpointFiles(dir, e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "\r\033[Kepoch %d/%d loss 1.0 train 10.0%% test 10.0%% rate 1.0%% (0.0 s)\n", e, epochs)
	}
	if err := train.WriteResult(dir, fakeResult(seed, epochs, epochs)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func fakeSweep() int {
	var g Grid
	if err := json.Unmarshal([]byte(os.Getenv("FITS_SWEEP_FAKE_GRID")), &g); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	os.Setenv("FITS_SWEEP_FAKE", "train")
	idx, err := Execute(context.Background(), &g, Options{Workers: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if idx.Failed() > 0 {
		return 1
	}
	return 0
}

// fakeGrid returns a grid of the first experiment of the catalogue with the given seeds under a new root;
// the fake trainer trains each run for the given epochs.
func fakeGrid(t *testing.T, epochs int, seeds ...int64) *Grid {
	t.Helper()
	_, exps := firstTable(t)
	g, err := NewGrid(Spec{Experiments: []string{exps[0].ID}, Seeds: seeds, Mode: experiment.Quick,
		Root: t.TempDir(), TrainArgs: []string{fmt.Sprintf("--epochs=%d", epochs)}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// segments returns the segment lines of a run's log (one per training process started on it).
func segments(t testing.TB, r Run) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, LogFile))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, segmentMark) {
			out = append(out, l)
		}
	}
	return out
}

func TestExecute(t *testing.T) {
	t.Setenv("FITS_SWEEP_FAKE", "train")
	t.Setenv("FITS_SWEEP_FAKE_FAIL", "2")
	g := fakeGrid(t, 3, 1, 2, 3, 4)
	// Run 4 was interrupted after its first epoch, in the middle of a progress bar.
	writeFakeCheckpoint(t, g.Runs[3].Dir, 1)
	if err := os.WriteFile(filepath.Join(g.Runs[3].Dir, LogFile), []byte("\r\033[Kepoch 2/3 [=   ] 1/4"), 0o644); err != nil {
		t.Fatal(err)
	}
	var display bytes.Buffer
	idx, err := Execute(context.Background(), g, Options{Workers: 2, Exe: os.Args[0], Progress: &display})
	if err != nil {
		t.Fatal(err)
	}
	if idx.Counts[Finished] != 3 || idx.Failed() != 1 || len(idx.Runs) != 4 {
		t.Fatalf("counts %v", idx.Counts)
	}
	failed := idx.Runs[1]
	if failed.Status != Failed || !strings.Contains(failed.Error, "the loss is NaN (fake)") ||
		!strings.Contains(failed.Error, "exit status 1") || failed.Accuracy != nil {
		t.Errorf("failed run: %+v", failed)
	}
	for _, k := range []int{0, 2, 3} {
		rec := idx.Runs[k]
		if rec.Status != Finished || rec.Accuracy == nil || *rec.Accuracy != 0.03 || rec.BestEpoch != 3 ||
			rec.EpochsDone != 3 || rec.Epochs != 3 || rec.WallSeconds != 12.5 || rec.Skipped {
			t.Errorf("run %d: %+v", k, rec)
		}
		if rec.Dir != fmt.Sprintf("%s/seed-%d", exps0(t), k+1) || rec.Result != rec.Dir+"/result.json" || rec.Log != rec.Dir+"/log.txt" {
			t.Errorf("run %d paths: %+v", k, rec)
		}
	}
	if s := segments(t, g.Runs[3]); len(s) != 1 || !strings.HasSuffix(s[0], " --epochs=3 --resume") {
		t.Errorf("interrupted run was not resumed: %q", s)
	}
	if b, _ := os.ReadFile(filepath.Join(g.Runs[3].Dir, LogFile)); !strings.Contains(string(b), "after epoch 1 of 3") {
		t.Errorf("interrupted run's log:\n%s", b)
	}
	// The index on disk is the one returned.
	disk, err := ReadIndex(g.Root)
	if err != nil || disk.Counts[Finished] != 3 || disk.Mode != experiment.Quick || !slices.Equal(disk.TrainArgs, g.TrainArgs) {
		t.Errorf("index on disk: %+v, %v", disk, err)
	}
	out := display.String()
	for _, want := range []string{"sweep of 4 runs", "1 to resume, 3 to start", "failed    ", "finished  ", "100% 4/4 runs, 0 running, 1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("display lacks %q:\n%s", want, out)
		}
	}

	// Again, without the failure: only the failed run trains, the finished ones are skipped.
	t.Setenv("FITS_SWEEP_FAKE_FAIL", "")
	idx, err = Execute(context.Background(), g, Options{Workers: 2, Exe: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	if idx.Counts[Finished] != 4 || !idx.Runs[0].Skipped || idx.Runs[1].Skipped {
		t.Errorf("second sweep: %+v", idx)
	}
	for k, want := range []int{1, 2, 1, 1} {
		if s := segments(t, g.Runs[k]); len(s) != want {
			t.Errorf("run %d trained %d times, want %d: %q", k, len(s), want, s)
		}
	}
}

// exps0 is the directory of the first experiment of the catalogue relative to a root.
func exps0(t *testing.T) string {
	_, exps := firstTable(t)
	return exps[0].ID
}

func TestExecuteLockAndMode(t *testing.T) {
	t.Setenv("FITS_SWEEP_FAKE", "train")
	g := fakeGrid(t, 1, 1)
	unlock, err := lockRoot(g.Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(context.Background(), g, Options{Workers: 1, Exe: os.Args[0]}); !errors.Is(err, ErrLocked) {
		t.Errorf("second sweep on a locked root: %v", err)
	}
	unlock()
	if _, err := Execute(context.Background(), g, Options{Workers: 1, Exe: os.Args[0]}); err != nil {
		t.Fatal(err)
	}
	full := *g
	full.Mode = experiment.Full
	if _, err := Execute(context.Background(), &full, Options{Workers: 1, Exe: os.Args[0]}); !errors.Is(err, ErrOtherMode) {
		t.Errorf("full-mode sweep in a quick-mode root: %v", err)
	}
	if _, _, err := Collect(&full, nil); !errors.Is(err, ErrOtherMode) {
		t.Errorf("full-mode collect in a quick-mode root: %v", err)
	}
	if _, err := Execute(context.Background(), g, Options{Workers: 0}); err == nil {
		t.Error("0 workers accepted")
	}
}

func TestExecuteCancel(t *testing.T) {
	t.Setenv("FITS_SWEEP_FAKE", "train")
	t.Setenv("FITS_SWEEP_FAKE_SLEEP", "50")
	g := fakeGrid(t, 1000, 1, 2)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !train.HasCheckpoint(g.Runs[0].Dir) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	idx, err := Execute(ctx, g, Options{Workers: 1, Exe: os.Args[0]})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sweep: %v", err)
	}
	// The stopped run keeps its checkpoint and is not a failure; the other never started.
	if idx.Runs[0].Status != Partial || idx.Runs[1].Status != Pending || idx.Failed() != 0 {
		t.Errorf("index after cancel: %+v", idx.Runs)
	}
}

func TestCollect(t *testing.T) {
	label, _ := firstTable(t)
	root := t.TempDir()
	g, err := NewGrid(Spec{Table: label, Mode: experiment.Quick, Root: root, Seeds: []int64{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	// One finished run (following the recipe, as Aggregate requires), one interrupted, the rest never
	// started.
	e, _ := experiment.Lookup(g.Runs[0].Experiment)
	res := fakeResult(g.Runs[0].Seed, 2, 2)
	res.Config, _ = e.Config(experiment.Quick, g.Runs[0].Seed)
	res.Config.Epochs, res.Protocol = 2, res.Config.Protocol
	for i := range res.Epochs {
		res.Epochs[i].ValAcc = &res.Epochs[i].TestAcc
	}
	mustWriteResult(t, g.Runs[0].Dir, res)
	writeFakeCheckpoint(t, g.Runs[1].Dir, 1)
	idx, files, err := Collect(g, []string{label})
	if err != nil {
		t.Fatal(err)
	}
	if idx.Counts[Finished] != 1 || idx.Counts[Partial] != 1 || idx.Counts[Pending] != len(g.Runs)-2 {
		t.Errorf("counts %v", idx.Counts)
	}
	if len(files) != 1 || files[0].Label != label {
		t.Fatalf("files %+v", files)
	}
	want, err := experiment.Aggregate(root, label, experiment.Quick)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(files[0].Markdown)
	csv, _ := os.ReadFile(files[0].CSV)
	if string(md) != want.Markdown() || string(csv) != want.CSV() {
		t.Errorf("table files differ from Aggregate's:\n%s\n%s", md, csv)
	}
	if filepath.Dir(files[0].Markdown) != root || filepath.Base(files[0].Markdown) != experiment.Stem(label)+".md" {
		t.Errorf("markdown file %s", files[0].Markdown)
	}
	if disk, err := ReadIndex(root); err != nil || disk.Counts[Finished] != 1 {
		t.Errorf("index on disk: %+v, %v", disk, err)
	}

	// Without tables: every aggregated table the experiments feed, and none that result.json cannot fill.
	_, files, err = Collect(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	feeds, _ := g.Tables()
	var labels []string
	for _, f := range files {
		labels = append(labels, f.Label)
	}
	for _, l := range feeds {
		if slices.Contains(experiment.AggregatedTables(), l) != slices.Contains(labels, l) {
			t.Errorf("collected %v of the tables %v", labels, feeds)
		}
	}
}

// TestKillFake kills a sweep process (SIGKILL) while it trains the second of three runs with the fake
// trainer, restarts it, and checks that nothing finished was redone and everything finishes.
func TestKillFake(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the training processes outlive a killed sweep except on Linux")
	}
	g := fakeGrid(t, 40, 1, 2, 3)
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "FITS_SWEEP_FAKE=sweep", "FITS_SWEEP_FAKE_GRID="+string(b),
			"FITS_SWEEP_FAKE_SLEEP=20")
		return cmd
	}
	killRestart(t, g, start)
}

// TestKillRealSweep builds the fits binary, runs `fits sweep` over three tiny runs with one worker, kills
// it (SIGKILL) during the second run, restarts it, and checks that the finished run was not redone, the
// interrupted one resumed from its checkpoint, and all finished.
func TestKillRealSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI and trains three tiny runs")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the training processes outlive a killed sweep except on Linux")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "fits")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "../../cmd/fits")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, exps := firstTable(t)
	// Whatever the experiment, the runs are tiny: the embedded synthetic task, reduced, 4 LIF neurons.
	tiny := []string{"--dataset=synthetic", "--small", "--model=lif", "--m=0", "--width=4", "--batch=32",
		"--epochs=60", "--lr=0.01", "--dropout=0", "--protocol=best-test"}
	g, err := NewGrid(Spec{Experiments: []string{exps[0].ID}, Seeds: []int64{1, 2, 3}, Mode: experiment.Quick,
		Root: filepath.Join(tmp, "root"), TrainArgs: tiny})
	if err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		args := []string{"sweep", "--experiments=" + exps[0].ID, "--seeds=1-3", "--mode=quick", "--workers=1",
			"--quiet", "--out=" + g.Root, "--"}
		cmd := exec.Command(bin, append(args, tiny...)...)
		cmd.Env = append(os.Environ(), "GOMLX_NO_AUTO_INSTALL=1")
		return cmd
	}
	killRestart(t, g, start)
}

var resumedRe = regexp.MustCompile(`after epoch (\d+) of`)

// killRestart starts a one-worker sweep of g's three runs, kills it with SIGKILL once the first run has
// finished and the second has a checkpoint, checks that no training process survives it, restarts the
// sweep and checks the outcome.
func killRestart(t *testing.T, g *Grid, start func() *exec.Cmd) {
	t.Helper()
	first, second := g.Runs[0], g.Runs[1]
	var stderr bytes.Buffer
	cmd := start()
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for !(Inspect(first).Status == Finished && Inspect(second).Status == Partial) {
		if Inspect(second).Status == Finished {
			_ = cmd.Process.Kill()
			t.Fatal("the second run finished before the sweep was killed: the test needs more epochs")
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no checkpoint of the second run after 10 minutes; sweep stderr:\n%s", stderr.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	doneBefore, _, _ := LogEpochs(second.Dir)

	// The training process of the second run dies with the sweep.
	for wait := time.Now().Add(time.Minute); trainingProcess(second.Dir); {
		if time.Now().After(wait) {
			t.Fatal("the training process of the second run outlived the killed sweep")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := Inspect(second); st.Status != Partial {
		t.Fatalf("the second run is %s after the sweep was killed, want partial (did its process outlive the sweep?)", st.Status)
	}
	resultPath := filepath.Join(first.Dir, train.ResultFile)
	before, err := os.ReadFile(resultPath)
	if err != nil {
		t.Fatal(err)
	}
	stBefore, _ := os.Stat(resultPath)

	cmd = start()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("restarted sweep: %v\n%s", err, out)
	}
	after, _ := os.ReadFile(resultPath)
	stAfter, _ := os.Stat(resultPath)
	if !bytes.Equal(before, after) || !stAfter.ModTime().Equal(stBefore.ModTime()) {
		t.Error("the finished first run was redone")
	}
	if s := segments(t, first); len(s) != 1 {
		t.Errorf("the first run was trained %d times", len(s))
	}
	s := segments(t, second)
	if len(s) != 2 || !strings.HasSuffix(s[1], " --resume") {
		t.Fatalf("second run's segments: %q", s)
	}
	log, _ := os.ReadFile(filepath.Join(second.Dir, LogFile))
	m := resumedRe.FindSubmatch(log)
	if m == nil {
		t.Fatalf("the second run did not resume from a checkpoint:\n%s", log)
	}
	// At most the epoch in flight is lost: the resume starts after every epoch the log reported done.
	if k, _ := strconv.Atoi(string(m[1])); k < doneBefore || k < 1 {
		t.Errorf("resumed after epoch %d, but %d epochs were done before the kill", k, doneBefore)
	}
	idx, err := ReadIndex(g.Root)
	if err != nil {
		t.Fatal(err)
	}
	if idx.Counts[Finished] != 3 || !idx.Runs[0].Skipped || idx.Runs[1].Skipped {
		t.Errorf("index after the restart: %+v", idx)
	}
	for _, r := range g.Runs {
		if st := Inspect(r); st.Status != Finished {
			t.Errorf("%s: %s", r.Name(), st.Status)
		}
	}
}

// trainingProcess reports whether a process on this machine trains into dir (its command line holds
// --out=dir).
func trainingProcess(dir string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte("--out="+dir+"\x00")) {
			return true
		}
	}
	return false
}

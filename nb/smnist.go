package nb

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// SMNISTExperiment is the catalog cell of Table A.9's FiTS row (M = 1, W = 256, the released sMNIST recipe),
// the one whose run on the real MNIST the repository ships.
const SMNISTExperiment = "smnist/fsts-m1/w256"

// ShippedRun is one seed of a shipped experiment: finished (result.json) or still training (read from its
// newest checkpoint, train.PartialResult). Departure names what a run of the departures folder changed
// (its folder's suffix, e.g. "skip-nonfinite"); empty for a run of the recipe itself.
type ShippedRun struct {
	Seed      int64
	Dir       string
	Result    *train.Result
	Finished  bool
	Departure string
}

// DeparturesDir is the folder under the shipped root that holds runs of a recipe trained with an option
// the released code lacks, one folder per run named ID-seed-N-DEPARTURE (the experiment id with '/' as
// '-'), kept out of every table that counts the recipe's seeds.
const DeparturesDir = "departures"

// readShipped reads the run in dir from its result.json or, before the last epoch, its newest checkpoint.
func readShipped(dir string, seed int64) (ShippedRun, error) {
	r, err := train.ReadResult(dir)
	finished := err == nil
	if errors.Is(err, fs.ErrNotExist) {
		r, err = train.PartialResult(dir)
	}
	if err != nil {
		return ShippedRun{}, fmt.Errorf("shipped run %s: %w", dir, err)
	}
	return ShippedRun{Seed: seed, Dir: dir, Result: r, Finished: finished && len(r.Epochs) >= r.Config.Epochs}, nil
}

// ShippedRuns reads the seeds of experiment id under root (ShippedRoot() in the notebooks), in seed order,
// each from its result.json or, before the last epoch, from its newest checkpoint. An error wrapping
// ErrNoRuns when root holds none.
func ShippedRuns(root, id string) ([]ShippedRun, error) {
	var runs []ShippedRun
	for _, seed := range experiment.SeedFolders(root, id) {
		r, err := readShipped(experiment.RunDir(root, id, seed), seed)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s under %s: %w", id, root, ErrNoRuns)
	}
	return runs, nil
}

// ShippedDepartures reads the runs of experiment id under root/departures (DeparturesDir), in folder-name
// order; none is not an error.
func ShippedDepartures(root, id string) ([]ShippedRun, error) {
	prefix := strings.ReplaceAll(id, "/", "-") + "-seed-"
	entries, err := os.ReadDir(filepath.Join(root, DeparturesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []ShippedRun
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		seedText, departure, _ := strings.Cut(rest, "-")
		seed, err := strconv.ParseInt(seedText, 10, 64)
		if !ok || !e.IsDir() || err != nil || departure == "" {
			continue
		}
		r, err := readShipped(filepath.Join(root, DeparturesDir, e.Name()), seed)
		if err != nil {
			return nil, err
		}
		r.Departure = departure
		runs = append(runs, r)
	}
	return runs, nil
}

// RealSMNIST shows Table A.9's FiTS row reproduced on the real MNIST from the runs shipped under root
// (ShippedRoot()/smnist/fsts-m1/w256/seed-N; no training): a table of ours (best test over the epochs, the
// released config's protocol, and the final epoch's test accuracy) beside the paper's 98.28 %, with each
// run's epochs, resumes, wall time, CPU and commit; and figure 12_smnist_real: the test (and training)
// accuracy per epoch with the paper's value as a line, and the last epochs beside every row of Table A.9.
// A run that has not finished (still training, or stopped) is shown with the epochs it has finished,
// labelled so. An error wrapping
// ErrNoRuns when nothing is shipped.
func RealSMNIST(root string) (*Output, error) {
	runs, err := ShippedRuns(root, SMNISTExperiment)
	if err != nil {
		return nil, err
	}
	departures, err := ShippedDepartures(root, SMNISTExperiment)
	if err != nil {
		return nil, err
	}
	runs = append(runs, departures...)
	var ours paper.BenchmarkRow
	var baselines []paper.BenchmarkRow
	for _, r := range paper.TableA9Rows() {
		if r.Ours {
			ours = r
		} else {
			baselines = append(baselines, r)
		}
	}
	t := Table{Caption: "Table A.9 on the real MNIST (pixel by pixel, T = 784): the shipped run(s) of the released recipe beside the paper's FiTS row",
		Header: []string{"run", "state", "epochs", "best test (%)", "at epoch", "final epoch (%)", "paper (%)", "best − paper", "parameters (paper)", "resumes", "wall (h)", "CPU", "commit(s)"}}
	var curves, zoom []Curve
	for _, sr := range runs {
		r := sr.Result
		state := "finished"
		if !sr.Finished {
			state = fmt.Sprintf("unfinished: %d of %d epochs", len(r.Epochs), r.Config.Epochs)
		}
		name := fmt.Sprintf("FiTS M = %d, W = %d, seed %d", r.M, r.Width, sr.Seed)
		if sr.Departure != "" {
			name += fmt.Sprintf(" (departure: %s, %d updates skipped)", sr.Departure, skippedUpdates(r))
		}
		best, final := 100*r.BestTestAcc, 100*r.FinalTestAcc
		t.Rows = append(t.Rows, []string{name, state,
			fmt.Sprint(len(r.Epochs)), fmt.Sprintf("%.2f", best), fmt.Sprint(r.BestEpoch), fmt.Sprintf("%.2f", final),
			ours.Acc.String(), fmt.Sprintf("%+.2f", best-ours.Acc.Mean),
			fmt.Sprintf("%d (%.2f M)", r.ParameterCount, ours.ParamsM), resumesOf(r),
			fmt.Sprintf("%.2f", r.WallSeconds/3600), cpuOf(r), commitsOf(r)})
		xs := make([]float64, len(r.Epochs))
		test, trainAcc := make([]float64, len(r.Epochs)), make([]float64, len(r.Epochs))
		for i, e := range r.Epochs {
			xs[i], test[i], trainAcc[i] = float64(e.Epoch), 100*e.TestAcc, 100*e.TrainAcc
		}
		label := fmt.Sprintf("ours, seed %d", sr.Seed)
		if sr.Departure != "" {
			label += ", " + sr.Departure
		}
		if !sr.Finished {
			label += " (unfinished)"
		}
		curves = append(curves, Curve{Label: label + ": test", X: xs, Y: test},
			Curve{Label: label + ": training examples", X: xs, Y: trainAcc, Dashed: true})
		zoom = append(zoom, Curve{Label: label + ": test", X: xs, Y: test})
	}
	last := 1.0
	for _, c := range curves {
		last = math.Max(last, c.X[len(c.X)-1])
	}
	hline := func(label string, v float64) Curve {
		return Curve{Label: label, X: []float64{1, last}, Y: []float64{v, v}, Dashed: true}
	}
	paperLine := hline(fmt.Sprintf("paper, FiTS: %s %%", ours.Acc), ours.Acc.Mean)
	curves = append(curves, paperLine)
	zoom = append(zoom, paperLine)
	for _, b := range baselines {
		zoom = append(zoom, hline(fmt.Sprintf("%s: %s %%", b.Method, b.Acc), b.Acc.Mean))
	}
	fig, err := CurveFigure("12_smnist_real",
		"Sequential MNIST on the real data, the released recipe (batch 256, learning rate 8e-3, no dropout, best test): accuracy per epoch (left) with the paper's 98.28 %; right, the same test accuracy from 96 % up beside every row of Table A.9 (published models as dashed lines).",
		[]CurvePanel{
			{Title: "Accuracy per epoch", XLabel: "epoch", YLabel: "accuracy (%)", Curves: curves},
			{Title: "Beside Table A.9", XLabel: "epoch", YLabel: "test accuracy (%)", YMin: 96, YMax: 100, Curves: zoom},
		}, 2)
	if err != nil {
		return nil, err
	}
	notes := []string{"Best test is the highest test accuracy over the epochs (the protocol of the released sMNIST config; the paper names none); the final epoch's accuracy involves no selection."}
	for _, sr := range runs {
		if sr.Departure != "" {
			notes = append(notes, fmt.Sprintf("Seed %d, %s, departs from the released recipe: a step whose gradients are not finite is skipped instead of applied (%d updates in its %d epochs, listed per epoch in its result); it is shown beside the recipe, never counted as it (%s).",
				sr.Seed, sr.Departure, skippedUpdates(sr.Result), len(sr.Result.Epochs), repoPath(sr.Dir)))
		}
		if !sr.Finished {
			notes = append(notes, fmt.Sprintf("Seed %d has not finished: the table and the curves show its %d finished epochs of %d, read from its newest checkpoint (%s); results/README.md says where it stands.",
				sr.Seed, len(sr.Result.Epochs), sr.Result.Config.Epochs, repoPath(sr.Dir)))
		} else if best := 100 * sr.Result.BestTestAcc; best < 97.8 {
			notes = append(notes, fmt.Sprintf("Seed %d ends at %.2f %% best test, below the paper's %s %% by more than half a point.", sr.Seed, best, ours.Acc))
		}
	}
	return &Output{Tables: []Table{t}, Figures: []*Figure{fig}, Notes: notes}, nil
}

// skippedUpdates counts the updates a run skipped over all its epochs (Epoch.SkippedSteps).
func skippedUpdates(r *train.Result) int {
	n := 0
	for _, e := range r.Epochs {
		n += len(e.SkippedSteps)
	}
	return n
}

// cpuOf returns the CPU models of a run's segments, "not recorded" where none is.
func cpuOf(r *train.Result) string {
	var cpus []string
	for _, s := range r.Segments {
		if s.CPU != "" && !slices.Contains(cpus, s.CPU) {
			cpus = append(cpus, s.CPU)
		}
	}
	if len(cpus) == 0 {
		return "not recorded"
	}
	return strings.Join(cpus, "; ")
}

// commitsOf returns the short commits of a run's segments with the epochs each trained ("epochs 1–17: not
// recorded; 18–100: a21ebd6").
func commitsOf(r *train.Result) string {
	var parts []string
	for _, s := range r.Segments {
		c := s.Commit
		if c == "" {
			c = "not recorded"
		} else if rev, dirty, _ := strings.Cut(c, "+"); len(rev) > 7 {
			c = rev[:7]
			if dirty != "" {
				c += "+" + dirty
			}
		}
		parts = append(parts, fmt.Sprintf("%d–%d: %s", s.FirstEpoch, s.LastEpoch, c))
	}
	if len(parts) == 0 {
		return "not recorded"
	}
	return "epochs " + strings.Join(parts, "; ")
}

// resumesOf returns how many times a run was resumed, saying so where its first epochs were trained by a
// binary that did not record its segments (their resumes are not counted).
func resumesOf(r *train.Result) string {
	if len(r.Segments) > 0 && r.Segments[0].Started == "" {
		return fmt.Sprintf("%d after epoch %d (earlier ones not recorded)", r.Resumes, r.Segments[0].LastEpoch)
	}
	return fmt.Sprint(r.Resumes)
}

// repoPath returns path relative to the repository root when it lies inside it (what a reader of the notebook
// can follow on any machine), else path as it is.
func repoPath(path string) string {
	root, err := filepath.Abs(RepoRoot())
	if err != nil {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return path
}

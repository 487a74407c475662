package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// suiteTraining is `fits bench --suite=training`: Table A.4 on this machine.
const suiteTraining = "training"

// trainingDatasets are the datasets of the training suite, in Table A.4's order, then sMNIST (Table A.9,
// not in Table A.4).
var trainingDatasets = []string{"shd", "ssc", "gsc", "smnist"}

// trainingCell is one cell of the training suite: an experiment of the catalog (its full recipe) and the
// Table A.4 cell it stands for.
type trainingCell struct {
	Dataset    string `json:"dataset"` // shd, ssc, gsc or smnist
	M          int    `json:"m"`
	Width      int    `json:"width"`
	Experiment string `json:"experiment"` // the catalog id trained, e.g. ssc/fsts-m1/w128
}

// trainingRow is a cell with its measurement.
type trainingRow struct {
	trainingCell
	// Epochs is the number of epochs timed (--epochs).
	Epochs int `json:"epochs"`
	// EpochSeconds is the median wall time of the timed epochs: every training step (batch assembly from
	// the compact set, forward, backward, Adam, the frequency guard) and the protocol's evaluations
	// (validation and test), with the first epoch's compile time taken out.
	EpochSeconds float64 `json:"epoch_seconds"`
	// CompileSeconds is the time spent compiling graphs; SetupSeconds the rest of the run outside its epochs
	// (loading the dataset, building the model, writing checkpoints and the result).
	CompileSeconds float64 `json:"compile_seconds"`
	SetupSeconds   float64 `json:"setup_seconds"`
	// Minutes100 is the estimated time of the recipe's 100-epoch run: 100 epochs plus compile and setup.
	Minutes100 float64 `json:"minutes_100_epochs"`
	// PaperMinutes is Table A.4's median per-run time on one NVIDIA RTX A5000 (null where the table has no
	// cell: sMNIST).
	PaperMinutes *float64 `json:"paper_minutes"`
	// PeakRSSMiB is the peak resident memory of the training process (its own, a fresh process per cell).
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// Data says what was trained on: "real" or "stand-in" (fits data synth --full, --stand-in).
	Data  string `json:"data"`
	Error string `json:"error,omitempty"`
}

// trainingOutput is the JSON form of `fits bench --suite=training --json`.
type trainingOutput struct {
	Suite       string        `json:"suite"`
	Date        string        `json:"date"`
	Machine     benchHost     `json:"machine"`
	Note        string        `json:"note"`
	PaperDevice string        `json:"paper_device"`
	Rows        []trainingRow `json:"rows"`
}

const trainingNote = "per cell, a fresh `fits train --experiment=ID --epochs=N --seed=0` with the recipe of the catalog on " +
	"full-size data; epoch_seconds is the median epoch wall time (training steps with batch assembly and Adam, and the " +
	"protocol's evaluations) with compile time taken out; minutes_100_epochs = (100 x epoch_seconds + compile + setup) / 60"

// trainingCells returns the suite's cells: for shd, ssc and gsc every M in ms and W in widths (Table A.4,
// SHD with its validation protocol), for smnist the Table A.9 recipe (M = 1, W = 256) whatever ms and
// widths say.
func trainingCells(datasets []string, ms, widths []int) ([]trainingCell, error) {
	var cells []trainingCell
	for _, d := range datasets {
		if !slices.Contains(trainingDatasets, d) {
			return nil, badInput("--datasets: %s is not one of %s", shortQuote(d), strings.Join(trainingDatasets, ", "))
		}
		if d == "smnist" {
			cells = append(cells, trainingCell{Dataset: d, M: 1, Width: 256, Experiment: "smnist/fsts-m1/w256"})
			continue
		}
		prefix := d
		if d == "shd" {
			prefix = "shd-val"
		}
		for _, m := range ms {
			if m < 0 || m > 2 {
				return nil, badInput("--m: Table A.4 has M = 0, 1, 2, not %d", m)
			}
			for _, w := range widths {
				if !slices.Contains(paper.Widths(), w) {
					return nil, badInput("--width: Table A.4 has W = 64, 128, 256, 512, not %d", w)
				}
				model := "fs"
				if m > 0 {
					model = fmt.Sprintf("fsts-m%d", m)
				}
				cells = append(cells, trainingCell{Dataset: d, M: m, Width: w, Experiment: fmt.Sprintf("%s/%s/w%d", prefix, model, w)})
			}
		}
	}
	return cells, nil
}

// paperTrainingMinutes returns Table A.4's minutes of a cell.
func paperTrainingMinutes(c trainingCell) *float64 {
	for _, t := range paper.TrainingTimes() {
		if strings.EqualFold(t.Dataset, c.Dataset) && t.Order == c.M && t.Width == c.Width {
			v := t.Minutes
			return &v
		}
	}
	return nil
}

// trainingFromResult fills a row's times from the run's result.
func trainingFromResult(row *trainingRow, r train.Result) error {
	if len(r.Epochs) == 0 {
		return fmt.Errorf("the run trained no epoch")
	}
	secs := make([]float64, len(r.Epochs))
	total := 0.0
	for i, e := range r.Epochs {
		secs[i] = e.Seconds
		total += e.Seconds
	}
	// Compilation happens in the first epoch (its first step and first evaluation).
	secs[0] = max(0, secs[0]-r.CompileSeconds)
	slices.Sort(secs)
	n := len(secs)
	row.EpochSeconds = secs[n/2]
	if n%2 == 0 {
		row.EpochSeconds = (secs[n/2-1] + secs[n/2]) / 2
	}
	row.CompileSeconds = r.CompileSeconds
	row.SetupSeconds = max(0, r.WallSeconds-total)
	row.Minutes100 = (100*row.EpochSeconds + row.CompileSeconds + row.SetupSeconds) / 60
	return nil
}

// runTrainingSuite runs `fits bench --suite=training`.
func runTrainingSuite(names []string, ms, widths []int, epochs int, dataDir string, standIn, asJSON bool, backend string, stdout, stderr io.Writer) error {
	cells, err := trainingCells(names, ms, widths)
	if err != nil {
		return err
	}
	if epochs < 1 || epochs > 100 {
		return badInput("--epochs: %d is not in [1, 100]", epochs)
	}
	if dataDir != "" {
		if st, err := os.Stat(dataDir); err != nil || !st.IsDir() {
			return badInput("--data-dir: %s is not a folder", shortQuote(dataDir))
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fits-bench-training-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // only what this command created
	out := trainingOutput{Suite: suiteTraining, Date: time.Now().UTC().Format(time.RFC3339), Machine: hostInfo(),
		Note: trainingNote, PaperDevice: paper.KernelRuntimeGPU + " (paper, Table A.4)"}
	failed := 0
	for i, c := range cells {
		label := fmt.Sprintf("[%d/%d] %s", i+1, len(cells), c.Experiment)
		fmt.Fprintf(stderr, "fits bench: %s: training %d epoch(s)\n", label, epochs)
		row := trainingRow{trainingCell: c, Epochs: epochs, PaperMinutes: paperTrainingMinutes(c), Data: "real"}
		if standIn && c.Dataset != "smnist" { // MNIST ships with the toolkit: always the real one
			row.Data = "stand-in"
		}
		args := []string{"train", "--experiment=" + c.Experiment, fmt.Sprintf("--epochs=%d", epochs), "--seed=0",
			"--quiet", "--json", "--out=" + filepath.Join(tmp, fmt.Sprintf("cell-%d", i))}
		if dataDir != "" && c.Dataset != "smnist" {
			args = append(args, "--data-dir="+filepath.Join(dataDir, c.Dataset))
		}
		if backend != "" {
			args = append(args, "--backend="+backend)
		}
		cmd := exec.Command(exe, args...)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		runErr := cmd.Run()
		if cmd.ProcessState != nil {
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				row.PeakRSSMiB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
			}
		}
		var r train.Result
		switch {
		case runErr != nil:
			row.Error = oneLine(finalLine(se.String(), runErr.Error()))
		case json.Unmarshal(so.Bytes(), &r) != nil:
			row.Error = "the run printed no result"
		default:
			if err := trainingFromResult(&row, r); err != nil {
				row.Error = err.Error()
			}
		}
		if row.Error != "" {
			failed++
			fmt.Fprintf(stderr, "fits bench: %s: failed: %s\n", label, row.Error)
		} else {
			fmt.Fprintf(stderr, "fits bench: %s: %.1f s per epoch, %.1f min for 100 epochs (paper %s), peak %.0f MiB\n",
				label, row.EpochSeconds, row.Minutes100, minutesOrDash(row.PaperMinutes), row.PeakRSSMiB)
		}
		out.Rows = append(out.Rows, row)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		printTraining(stdout, out)
	}
	if failed > 0 {
		return fmt.Errorf("bench: %d of %d training cells failed", failed, len(cells))
	}
	return nil
}

func minutesOrDash(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f min", *v)
}

// finalLine returns the last nonempty line of s, or def.
func finalLine(s, def string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return def
}

func printTraining(w io.Writer, out trainingOutput) {
	fmt.Fprintf(w, "suite training (Table A.4 on this machine), %d CPUs (%s), %s\n", out.Machine.CPUs, out.Machine.CPU, out.Date)
	fmt.Fprintf(w, "%s\n\n", out.Note)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "experiment\tdata\tM\tW\tepoch s\tcompile s\tmin / 100 epochs\tpaper A5000 min\tpeak MiB\t")
	for _, r := range out.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\tfailed: %s\t\t\t\t\t\n", r.Experiment, r.Data, r.M, r.Width, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%s\t%.0f\t\n", r.Experiment, r.Data, r.M, r.Width,
			r.EpochSeconds, r.CompileSeconds, r.Minutes100, minutesOrDash(r.PaperMinutes), r.PeakRSSMiB)
	}
	_ = tw.Flush()
}

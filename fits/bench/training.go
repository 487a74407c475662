package bench

import (
	"cmp"
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

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// The training suite (fits bench --suite=training): Table A.4 measured on this machine, whole epochs of each
// recipe of the catalog on full-size data, one fresh training process per cell.

// TrainingDatasets are the datasets of the training suite, in Table A.4's order, then sMNIST (Table A.9,
// not in Table A.4).
var TrainingDatasets = []string{"shd", "ssc", "gsc", "smnist"}

// TrainingCell is one cell of the training suite: an experiment of the catalog (its full recipe) and the
// Table A.4 cell it stands for.
type TrainingCell struct {
	Dataset    string `json:"dataset"` // shd, ssc, gsc or smnist
	M          int    `json:"m"`
	Width      int    `json:"width"`
	Experiment string `json:"experiment"` // the catalog id trained, e.g. ssc/fsts-m1/w128
}

// TrainingRow is a cell with its measurement.
type TrainingRow struct {
	TrainingCell
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
	// Engine is the training engine the run used (package fits/step; --engine, or the backend's default).
	Engine string `json:"engine,omitempty"`
	// Data says what was trained on: "real" or "stand-in" (fits data synth --full, --stand-in).
	Data  string `json:"data"`
	Error string `json:"error,omitempty"`
}

// TrainingReport is the JSON form of `fits bench --suite=training --json`.
type TrainingReport struct {
	Suite       string        `json:"suite"`
	Date        string        `json:"date"`
	Machine     Host          `json:"machine"`
	Note        string        `json:"note"`
	PaperDevice string        `json:"paper_device"`
	Rows        []TrainingRow `json:"rows"`
}

// TrainingNote says what a row of the training suite measures.
const TrainingNote = "per cell, a fresh `fits train --experiment=ID --epochs=N --seed=0` with the recipe of the catalog on " +
	"full-size data; epoch_seconds is the median epoch wall time (training steps with batch assembly and Adam, and the " +
	"protocol's evaluations) with compile time taken out; minutes_100_epochs = (100 x epoch_seconds + compile + setup) / 60"

// TrainingCells returns the suite's cells: for shd, ssc and gsc the Table A.4 cells with an M in ms and a W
// in widths, each trained as the catalog's experiment for it (experiment.TrainingTimeID; SHD with its
// validation protocol), for smnist the Table A.9 recipe (M = 1, W = 256) whatever ms and widths say.
func TrainingCells(datasets []string, ms, widths []int) ([]TrainingCell, error) {
	for _, m := range ms {
		if m < 0 || m > 2 {
			return nil, fmt.Errorf("Table A.4 has M = 0, 1, 2, not %d", m)
		}
	}
	for _, w := range widths {
		if !slices.Contains(paper.Widths(), w) {
			return nil, fmt.Errorf("Table A.4 has W = 64, 128, 256, 512, not %d", w)
		}
	}
	var cells []TrainingCell
	for _, d := range datasets {
		if !slices.Contains(TrainingDatasets, d) {
			return nil, fmt.Errorf("dataset %q is not one of %s", d, strings.Join(TrainingDatasets, ", "))
		}
		if d == "smnist" {
			cells = append(cells, TrainingCell{Dataset: d, M: 1, Width: 256, Experiment: "smnist/fsts-m1/w256"})
			continue
		}
		for _, t := range paper.TrainingTimes() {
			if strings.EqualFold(t.Dataset, d) && slices.Contains(ms, t.Order) && slices.Contains(widths, t.Width) {
				cells = append(cells, TrainingCell{Dataset: d, M: t.Order, Width: t.Width, Experiment: experiment.TrainingTimeID(t)})
			}
		}
	}
	return cells, nil
}

// PaperTrainingMinutes returns Table A.4's minutes of a cell.
func PaperTrainingMinutes(c TrainingCell) *float64 {
	for _, t := range paper.TrainingTimes() {
		if strings.EqualFold(t.Dataset, c.Dataset) && t.Order == c.M && t.Width == c.Width {
			v := t.Minutes
			return &v
		}
	}
	return nil
}

// FillFromResult fills the row's times from the result of its run.
func (row *TrainingRow) FillFromResult(r train.Result) error {
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
	row.EpochSeconds = Median(secs)
	row.CompileSeconds = r.CompileSeconds
	row.Engine = r.Engine
	row.SetupSeconds = max(0, r.WallSeconds-total)
	row.Minutes100 = (100*row.EpochSeconds + row.CompileSeconds + row.SetupSeconds) / 60
	return nil
}

// Host is the machine a measurement ran on, as `fits bench --json` records it.
type Host struct {
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	CPUs   int    `json:"cpus"`
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
	// FusedVector: the fused engine's kernel runs its SIMD code (built with GOEXPERIMENT=simd, AVX2 CPU).
	FusedVector bool `json:"fused_vector"`
	// FusedISA is the instruction set the fused engine's kernel runs: scalar, avx2 or avx512.
	FusedISA string `json:"fused_isa"`
	// GlibcTunables is GLIBC_TUNABLES of the benchmark (and of the PyTorch peers it starts), which fits
	// sets to glibc.malloc.hugetlb=1 unless FITS_MALLOC_HUGEPAGES=0.
	GlibcTunables string `json:"glibc_tunables,omitempty"`
}

// TrainingOptions says how RunTraining trains each cell.
type TrainingOptions struct {
	// Engines are the training engines (fits/step names) each cell is timed with, one row each; none: the
	// backend's default.
	Engines []string
	// Epochs timed per cell (the median epoch is reported).
	Epochs int
	// DataDir holds one folder per dataset (shd, ssc, gsc; "": fits train's default), full-size stand-ins
	// of `fits data synth --full` with StandIn (recorded in the rows).
	DataDir string
	StandIn bool
	// Backend is the backend configuration of each run ("" the default).
	Backend string
	// Log receives the progress lines (nil: none).
	Log io.Writer
}

// RunTraining runs the training suite: for each cell and engine, a fresh `fits train` of this executable
// (Epochs epochs of the cell's experiment, seed 0, its run folder in a temporary folder removed after),
// and returns the report. A run that fails keeps its error in its row; failed counts those rows.
func RunTraining(cells []TrainingCell, opts TrainingOptions) (out TrainingReport, failed int, err error) {
	log := cmp.Or(opts.Log, io.Discard)
	engines := opts.Engines
	if len(engines) == 0 {
		engines = []string{""}
	}
	out = TrainingReport{Suite: SuiteTraining, Date: time.Now().UTC().Format(time.RFC3339), Machine: thisHost(),
		Note: TrainingNote, PaperDevice: paper.KernelRuntimeGPU + " (paper, Table A.4)"}
	exe, err := os.Executable()
	if err != nil {
		return out, 0, err
	}
	tmp, err := os.MkdirTemp("", "fits-bench-training-")
	if err != nil {
		return out, 0, err
	}
	defer os.RemoveAll(tmp) // only what this run created
	n := len(cells) * len(engines)
	for i := range n {
		c, engine := cells[i/len(engines)], engines[i%len(engines)]
		label := fmt.Sprintf("[%d/%d] %s", i+1, n, c.Experiment)
		if engine != "" {
			label += " (" + engine + ")"
		}
		fmt.Fprintf(log, "%s%s: training %d epoch(s)\n", logPrefix, label, opts.Epochs)
		row := TrainingRow{TrainingCell: c, Epochs: opts.Epochs, PaperMinutes: PaperTrainingMinutes(c), Data: "real"}
		if opts.StandIn && c.Dataset != "smnist" { // MNIST ships with the toolkit: always the real one
			row.Data = "stand-in"
		}
		args := []string{"train", "--experiment=" + c.Experiment, fmt.Sprintf("--epochs=%d", opts.Epochs), "--seed=0",
			"--quiet", "--json", "--out=" + filepath.Join(tmp, fmt.Sprintf("cell-%d", i))}
		if opts.DataDir != "" && c.Dataset != "smnist" {
			args = append(args, "--data-dir="+filepath.Join(opts.DataDir, c.Dataset))
		}
		if opts.Backend != "" {
			args = append(args, "--backend="+opts.Backend)
		}
		if engine != "" {
			args = append(args, "--engine="+engine)
		}
		cmd := exec.Command(exe, args...)
		stdout, last, runErr := runCollect(cmd, nil)
		if cmd.ProcessState != nil {
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				row.PeakRSSMiB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
			}
		}
		var r train.Result
		switch {
		case runErr != nil:
			row.Error = runErr.Error()
			if last != "" {
				row.Error = oneLine(last)
			}
		case json.Unmarshal(stdout, &r) != nil:
			row.Error = "the run printed no result"
		default:
			if err := row.FillFromResult(r); err != nil {
				row.Error = err.Error()
			}
		}
		if row.Error != "" {
			failed++
			fmt.Fprintf(log, "%s%s: failed: %s\n", logPrefix, label, row.Error)
		} else {
			fmt.Fprintf(log, "%s%s: %.1f s per epoch, %.1f min for 100 epochs (paper %s), peak %.0f MiB\n",
				logPrefix, label, row.EpochSeconds, row.Minutes100, orDash(row.PaperMinutes, "%.1f min"), row.PeakRSSMiB)
		}
		out.Rows = append(out.Rows, row)
	}
	return out, failed, nil
}

// WriteText prints the report as `fits bench --suite=training` does without --json: a header and one table
// row per cell.
func (r TrainingReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "suite training (Table A.4 on this machine), %d CPUs (%s), %s\n", r.Machine.CPUs, r.Machine.CPU, r.Date)
	fmt.Fprintf(w, "%s\n\n", r.Note)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "experiment\tdata\tM\tW\tepoch s\tcompile s\tmin / 100 epochs\tpaper A5000 min\tpeak MiB\t")
	for _, row := range r.Rows {
		if row.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\tfailed: %s\t\t\t\t\t\n", row.Experiment, row.Data, row.M, row.Width, row.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%s\t%.0f\t\n", row.Experiment, row.Data, row.M, row.Width,
			row.EpochSeconds, row.CompileSeconds, row.Minutes100, orDash(row.PaperMinutes, "%.1f min"), row.PeakRSSMiB)
	}
	_ = tw.Flush()
}

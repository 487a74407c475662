package bench

import (
	"fmt"
	"slices"
	"strings"

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
	slices.Sort(secs)
	n := len(secs)
	row.EpochSeconds = secs[n/2]
	if n%2 == 0 {
		row.EpochSeconds = (secs[n/2-1] + secs[n/2]) / 2
	}
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

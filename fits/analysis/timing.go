package analysis

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/train"
)

// Training time (the paper's Table A.4: median per-run training time in minutes, per dataset, order M
// and width W) from the runs' own wall times (train.Result.WallSeconds in result.json: the whole run,
// training and per-epoch evaluation, summed over resumed segments), and the kernel-runtime table (Table
// A.3) from the JSON files that `fits bench --json` writes.

// TrainingTimeRow is one cell of the training-time table: the runs of one group.
type TrainingTimeRow struct {
	Key GroupKey `json:"key"`
	// Runs is the number of finished runs (with result.json); Unfinished those without.
	Runs       int `json:"runs"`
	Unfinished int `json:"unfinished,omitempty"`
	// MedianMinutes, MinMinutes and MaxMinutes are over the finished runs' wall times; Epochs is the
	// configured number of epochs, Backend the backend of the first run.
	MedianMinutes float64 `json:"median_minutes"`
	MinMinutes    float64 `json:"min_minutes"`
	MaxMinutes    float64 `json:"max_minutes"`
	Epochs        int     `json:"epochs"`
	Backend       string  `json:"backend"`
}

// TrainingTimeReport is what TrainingTimes returns.
type TrainingTimeReport struct {
	Rows []TrainingTimeRow `json:"rows"`
}

// TrainingTimes reads result.json of each run folder (no checkpoint is loaded) and returns the median
// wall time over the runs of each group (see GroupKey). Folders without result.json count as
// unfinished; it is an error when no folder has one.
func TrainingTimes(dirs []string) (*TrainingTimeReport, error) {
	type acc struct {
		minutes    []float64
		unfinished int
		epochs     int
		backend    string
	}
	var order []GroupKey
	accs := map[GroupKey]*acc{}
	var unfinished []string
	for _, dir := range dirs {
		res, err := train.ReadResult(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				unfinished = append(unfinished, dir)
				continue
			}
			return nil, err
		}
		k := KeyOf(res.Config)
		a, ok := accs[k]
		if !ok {
			a = &acc{epochs: res.Config.Epochs, backend: res.Backend}
			accs[k] = a
			order = append(order, k)
		}
		a.minutes = append(a.minutes, res.WallSeconds/60)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("none of the %d run folders has a %s (no finished run)", len(dirs), train.ResultFile)
	}
	// Unfinished runs are attributed to their group when their checkpoint names it.
	for _, dir := range unfinished {
		if r, err := Load(dir, Options{}); err == nil {
			if a, ok := accs[KeyOf(r.Config)]; ok {
				a.unfinished++
			}
		}
	}
	rep := &TrainingTimeReport{}
	for _, k := range order {
		a := accs[k]
		rep.Rows = append(rep.Rows, TrainingTimeRow{Key: k, Runs: len(a.minutes), Unfinished: a.unfinished,
			MedianMinutes: Median(a.minutes), MinMinutes: slices.Min(a.minutes), MaxMinutes: slices.Max(a.minutes),
			Epochs: a.epochs, Backend: a.backend})
	}
	return rep, nil
}

// Summary returns the training-time table: one row per group.
func (r *TrainingTimeReport) Summary() Table {
	t := Table{Header: []string{"dataset", "model", "m", "width", "runs", "unfinished", "epochs", "median_min", "min_min", "max_min", "backend"}}
	for _, row := range r.Rows {
		t.Rows = append(t.Rows, []string{row.Key.Dataset, row.Key.Model, itoa(row.Key.M), itoa(row.Key.Width), itoa(row.Runs),
			itoa(row.Unfinished), itoa(row.Epochs), num(row.MedianMinutes, 4), num(row.MinMinutes, 4), num(row.MaxMinutes, 4), row.Backend})
	}
	return t
}

// Long is Summary (the table has one row per group already).
func (r *TrainingTimeReport) Long() Table { return r.Summary() }

// benchFile is the part of `fits bench --json`'s output that the kernel-runtime table reads.
type benchFile struct {
	Suite   string `json:"suite"`
	Backend string `json:"backend"`
	Date    string `json:"date"`
	Machine struct {
		CPUs int    `json:"cpus"`
		CPU  string `json:"cpu"`
	} `json:"machine"`
	// Rows decode straight into KernelRuntimeRow (its JSON names are the bench rows'); File, Backend and
	// CPU are filled from the file.
	Rows []KernelRuntimeRow `json:"rows"`
}

// KernelRuntimeRow is one measured cell of `fits bench --suite=kernel`: one training iteration (forward
// and backward) of the two-hidden-layer network of width W and order M, median milliseconds, beside the
// paper's PyTorch-loop and Triton numbers where the shape is the paper's.
type KernelRuntimeRow struct {
	File     string   `json:"file"`
	Backend  string   `json:"backend"`
	CPU      string   `json:"cpu,omitempty"`
	Model    string   `json:"model"`
	Width    int      `json:"width"`
	M        int      `json:"m"`
	Variant  string   `json:"variant"`
	Batch    int      `json:"batch"`
	Time     int      `json:"time"`
	MedianMs float64  `json:"median_ms"`
	CompileS float64  `json:"compile_s"`
	Speedup  *float64 `json:"speedup_vs_stepwise"`
	// PaperPyTorchMs and PaperTritonMs are the paper's Table A.3 (RTX A5000), nil for other shapes.
	PaperPyTorchMs *float64 `json:"paper_pytorch_ms"`
	PaperTritonMs  *float64 `json:"paper_triton_ms"`
	Error          string   `json:"error,omitempty"`
}

// KernelRuntimeReport is what KernelRuntimes returns.
type KernelRuntimeReport struct {
	Rows []KernelRuntimeRow `json:"rows"`
}

// KernelRuntimes reads the JSON outputs of `fits bench --json --suite=kernel` and returns their rows,
// sorted by width, M, variant and file. Files of another suite are skipped; it is an error when no file
// holds a kernel row.
func KernelRuntimes(files []string) (*KernelRuntimeReport, error) {
	return KernelRuntimesRead(files, os.ReadFile)
}

// KernelRuntimesRead is KernelRuntimes with the files read by read (a reader that refuses what is not a
// regular file of bounded size, for files a user names).
func KernelRuntimesRead(files []string, read func(path string) ([]byte, error)) (*KernelRuntimeReport, error) {
	rep := &KernelRuntimeReport{}
	for _, f := range files {
		b, err := read(f)
		if err != nil {
			return nil, err
		}
		var bf benchFile
		if err := json.Unmarshal(b, &bf); err != nil {
			return nil, fmt.Errorf("%s: not the JSON of fits bench: %w", f, err)
		}
		if bf.Suite != "kernel" {
			continue
		}
		for _, r := range bf.Rows {
			r.File, r.Backend, r.CPU = f, bf.Backend, bf.Machine.CPU
			rep.Rows = append(rep.Rows, r)
		}
	}
	if len(rep.Rows) == 0 {
		return nil, fmt.Errorf("no kernel-suite row in %d bench file(s)", len(files))
	}
	slices.SortStableFunc(rep.Rows, func(a, b KernelRuntimeRow) int {
		return cmp.Or(cmp.Compare(a.Width, b.Width), cmp.Compare(a.M, b.M), strings.Compare(a.Variant, b.Variant),
			strings.Compare(a.File, b.File))
	})
	return rep, nil
}

// Summary returns Table A.3 as measured: one row per cell and file.
func (r *KernelRuntimeReport) Summary() Table {
	t := Table{Header: []string{"width", "m", "model", "variant", "batch", "time", "median_ms", "speedup_vs_stepwise",
		"paper_pytorch_ms", "paper_triton_ms", "backend", "file", "error"}}
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v, 5)
	}
	for _, row := range r.Rows {
		med := num(row.MedianMs, 5)
		if row.Error != "" {
			med = ""
		}
		t.Rows = append(t.Rows, []string{itoa(row.Width), itoa(row.M), row.Model, row.Variant, itoa(row.Batch), itoa(row.Time), med,
			opt(row.Speedup), opt(row.PaperPyTorchMs), opt(row.PaperTritonMs), row.Backend, row.File, row.Error})
	}
	return t
}

// Long is Summary.
func (r *KernelRuntimeReport) Long() Table { return r.Summary() }

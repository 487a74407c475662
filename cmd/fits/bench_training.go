package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/fits-snn/fits/fits/bench"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/train"
)

// suiteTraining is `fits bench --suite=training`: Table A.4 on this machine.
const suiteTraining = "training"

// runTrainingSuite runs `fits bench --suite=training`.
// engines are the training engines to time each cell with (--engine); none means the backend's default.
func runTrainingSuite(names []string, ms, widths []int, engines []string, epochs int, dataDir string, standIn, asJSON bool, backend string, stdout, stderr io.Writer) error {
	recipes, err := bench.TrainingCells(names, ms, widths)
	if err != nil {
		return badInput("--datasets, --m, --width: %v", err)
	}
	if len(engines) == 0 {
		engines = []string{""}
	}
	type trainingCell struct {
		bench.TrainingCell
		engine string
	}
	var cells []trainingCell
	for _, c := range recipes {
		for _, e := range engines {
			cells = append(cells, trainingCell{c, e})
		}
	}
	if epochs < 1 || epochs > 100 {
		return badInput("--epochs: %d is not in [1, 100]", epochs)
	}
	var checks []engineCheck
	for _, e := range engines {
		if e != "" {
			checks = append(checks, engineCheck{engine: e}) // the backend's capabilities, whatever the network
		}
	}
	if err := checkBenchEngines(checks, backend, true); err != nil {
		return err
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
	out := bench.TrainingReport{Suite: suiteTraining, Date: time.Now().UTC().Format(time.RFC3339), Machine: hostInfo(),
		Note: bench.TrainingNote, PaperDevice: paper.KernelRuntimeGPU + " (paper, Table A.4)"}
	failed := 0
	for i, c := range cells {
		label := fmt.Sprintf("[%d/%d] %s", i+1, len(cells), c.Experiment)
		if c.engine != "" {
			label += " (" + c.engine + ")"
		}
		fmt.Fprintf(stderr, "fits bench: %s: training %d epoch(s)\n", label, epochs)
		row := bench.TrainingRow{TrainingCell: c.TrainingCell, Epochs: epochs, PaperMinutes: bench.PaperTrainingMinutes(c.TrainingCell), Data: "real"}
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
		if c.engine != "" {
			args = append(args, "--engine="+c.engine)
		}
		cmd := exec.Command(exe, args...)
		var so bytes.Buffer
		se := &lastLine{}
		cmd.Stdout, cmd.Stderr = &so, se
		runErr := cmd.Run()
		if cmd.ProcessState != nil {
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				row.PeakRSSMiB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
			}
		}
		var r train.Result
		switch {
		case runErr != nil:
			row.Error = runErr.Error()
			if l := se.String(); l != "" {
				row.Error = oneLine(l)
			}
		case json.Unmarshal(so.Bytes(), &r) != nil:
			row.Error = "the run printed no result"
		default:
			if err := row.FillFromResult(r); err != nil {
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

func printTraining(w io.Writer, out bench.TrainingReport) {
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

package train

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Phase names what a Progress event reports.
type Phase string

const (
	// PhaseCompile: the training or evaluation graph is being built and compiled (the first step of a
	// segment waits for it).
	PhaseCompile Phase = "compile"
	// PhaseStep: one training step finished; Loss, Acc and FiringRates are running means over the epoch.
	PhaseStep Phase = "step"
	// PhaseEval: the validation/test evaluation after an epoch is running.
	PhaseEval Phase = "eval"
	// PhaseEpoch: an epoch finished and its checkpoint is saved; Epoch holds its measurements.
	PhaseEpoch Phase = "epoch"
	// PhaseResumed: training continues from a checkpoint after Epoch epochs.
	PhaseResumed Phase = "resumed"
)

// Progress is one progress event of a training run.
type Progress struct {
	Phase Phase
	// Epoch is the 1-based epoch in progress (or finished, for PhaseEpoch); Epochs the planned total.
	Epoch, Epochs int
	// Step is the 1-based step within the epoch; Steps the number of steps per epoch.
	Step, Steps int
	// Loss and Acc are the running means over the epoch's examples so far (PhaseStep).
	Loss, Acc float64
	// FiringRates are the running mean firing rates per hidden layer (spikes per neuron per bin).
	FiringRates []float64
	// Result is the finished epoch (PhaseEpoch only).
	Result *Epoch
	// Elapsed is the wall time since the run (segment) started.
	Elapsed time.Duration
	// Message is a human-readable note (PhaseCompile, PhaseResumed).
	Message string
}

// ProgressFunc receives progress events. It is called from the training goroutine; it should return
// quickly.
type ProgressFunc func(Progress)

// TerminalProgress returns a ProgressFunc that draws a one-line progress bar on w (rewritten in place with
// carriage returns) and prints one summary line per finished epoch.
func TerminalProgress(w io.Writer) ProgressFunc {
	const barWidth = 20
	return func(p Progress) {
		switch p.Phase {
		case PhaseCompile, PhaseResumed:
			fmt.Fprintf(w, "\r\033[K%s\n", p.Message)
		case PhaseStep:
			filled := 0
			if p.Steps > 0 {
				filled = barWidth * p.Step / p.Steps
			}
			bar := strings.Repeat("=", filled) + strings.Repeat(" ", barWidth-filled)
			fmt.Fprintf(w, "\r\033[Kepoch %d/%d [%s] %d/%d loss %.4f acc %5.1f%% rate %s %s",
				p.Epoch, p.Epochs, bar, p.Step, p.Steps, p.Loss, 100*p.Acc, rates(p.FiringRates),
				p.Elapsed.Round(time.Second))
		case PhaseEval:
			fmt.Fprintf(w, "\r\033[Kepoch %d/%d evaluating...", p.Epoch, p.Epochs)
		case PhaseEpoch:
			e := p.Result
			val := ""
			if e.ValAcc != nil {
				val = fmt.Sprintf(" val %5.1f%%", 100**e.ValAcc)
			}
			fmt.Fprintf(w, "\r\033[Kepoch %d/%d loss %.4f train %5.1f%%%s test %5.1f%% rate %s (%.1f s)\n",
				e.Epoch, p.Epochs, e.Loss, 100*e.TrainAcc, val, 100*e.TestAcc, rates(e.FiringRates), e.Seconds)
		}
	}
}

// rates formats firing rates as percentages of bins with a spike.
func rates(r []float64) string {
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = fmt.Sprintf("%.1f%%", 100*v)
	}
	return strings.Join(parts, ",")
}

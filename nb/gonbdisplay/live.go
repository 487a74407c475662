package gonbdisplay

import (
	"fmt"
	"html"

	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/nb"
	"github.com/janpfeifer/gonb/gonbui"
)

// UpdateFigure shows fig in the display block id (a gonbui.UniqueId), replacing what the block showed:
// the first call creates the block in the running cell's output, later calls redraw it in place.
func UpdateFigure(id string, fig *nb.Figure) error {
	h, err := nb.FigureHTML(fig)
	if err != nil {
		return err
	}
	gonbui.UpdateHTML(id, h)
	return nil
}

// TrainingMonitor draws the training curves of several runs (nb.TrainingCurves) in one display block
// that is redrawn after every finished epoch, with a one-line progress report below it that is
// rewritten after every step. Use one monitor per cell: Progress for each run it trains, then Finish.
type TrainingMonitor struct {
	// Epochs fixes the x axis of the curves (the planned number of epochs).
	Epochs int
	// Runs are the curves drawn: the finished runs and the one in progress (last).
	Runs []nb.Curves
	// Err is the first error met while drawing (nil if none); training goes on regardless.
	Err error

	figID, lineID string
}

// NewTrainingMonitor returns a monitor whose curves span epochs epochs and which starts with the curves
// of the runs already finished (none is fine); nothing is shown before the first Progress or Redraw.
func NewTrainingMonitor(epochs int, finished ...nb.Curves) *TrainingMonitor {
	return &TrainingMonitor{Epochs: epochs, Runs: append([]nb.Curves(nil), finished...),
		figID: gonbui.UniqueId(), lineID: gonbui.UniqueId()}
}

// Redraw draws the curves of m.Runs now.
func (m *TrainingMonitor) Redraw() {
	fig, err := nb.TrainingCurves(m.Runs, m.Epochs)
	if err == nil {
		err = UpdateFigure(m.figID, fig)
	}
	if err != nil && m.Err == nil {
		m.Err = err
		gonbui.UpdateHTML(m.lineID, "<code>drawing the curves failed: "+html.EscapeString(err.Error())+"</code>")
	}
}

// Progress starts the curves of a new run named label and returns the train.ProgressFunc to pass to
// train.TrainModel: every finished epoch is added to the run's curves and the figure is redrawn; steps,
// compilation and resumption update the progress line.
func (m *TrainingMonitor) Progress(label string) train.ProgressFunc {
	m.Runs = append(m.Runs, nb.Curves{Label: label})
	run := len(m.Runs) - 1
	m.Redraw()
	return func(p train.Progress) {
		var line string
		switch p.Phase {
		case train.PhaseCompile, train.PhaseResumed:
			line = p.Message
		case train.PhaseStep:
			line = fmt.Sprintf("%s: epoch %d/%d, step %d/%d: loss %.3f, accuracy %.1f%%", label, p.Epoch, p.Epochs,
				p.Step, p.Steps, p.Loss, 100*p.Acc)
		case train.PhaseEval:
			line = fmt.Sprintf("%s: epoch %d/%d: evaluating ...", label, p.Epoch, p.Epochs)
		case train.PhaseEpoch:
			m.Runs[run].Epochs = append(m.Runs[run].Epochs, *p.Result)
			m.Redraw()
			line = fmt.Sprintf("%s: epoch %d/%d: loss %.3f, train %.1f%%, test %.1f%% (%.1f s)", label, p.Epoch, p.Epochs,
				p.Result.Loss, 100*p.Result.TrainAcc, 100*p.Result.TestAcc, p.Result.Seconds)
		default:
			return
		}
		gonbui.UpdateHTML(m.lineID, "<code>"+html.EscapeString(line)+"</code>")
	}
}

// Finish replaces the curves of the run in progress by the finished run's (which also holds the epochs
// of earlier segments when the run was resumed or only reloaded), redraws, and writes a summary line.
func (m *TrainingMonitor) Finish(res *train.Result) {
	if len(m.Runs) == 0 {
		m.Runs = append(m.Runs, nb.Curves{})
	}
	label := m.Runs[len(m.Runs)-1].Label
	m.Runs[len(m.Runs)-1].Epochs = res.Epochs
	m.Redraw()
	sel := fmt.Sprintf("best test %.1f%% (epoch %d)", 100*res.BestTestAcc, res.BestEpoch)
	if res.TestAccAtBestVal != nil {
		sel = fmt.Sprintf("test %.1f%% at the best validation epoch (%d)", 100**res.TestAccAtBestVal, res.BestEpoch)
	}
	gonbui.UpdateHTML(m.lineID, fmt.Sprintf("<code>%s: %s; %.0f s in all</code>", html.EscapeString(label), sel, res.WallSeconds))
}

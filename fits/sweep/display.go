package sweep

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// display draws the progress of a sweep on a terminal stream, in the style of the project's other
// progress bars (data/progress, train.TerminalProgress): one status line rewritten in place,
//
//	sweep [#########.....................]  30% 3/10 runs, 2 running, 0 failed | lif-w4 seed 2 epoch 3/10 | ETA 4m10s
//
// and one permanent line per event (a run finished or failed). A display with a nil writer draws nothing.
type display struct {
	w     io.Writer
	total int
	start time.Time
	// startUnits is the progress (in runs, see progressUnits) when the sweep started: the ETA extrapolates
	// from the progress made since.
	startUnits float64
}

func newDisplay(w io.Writer, total int, startUnits float64) *display {
	return &display{w: w, total: total, start: time.Now(), startUnits: startUnits}
}

// progressUnits measures the progress of a grid in runs: 1 per finished or failed run, the fraction of
// epochs done for the others when their logs tell it.
func progressUnits(recs []Record) float64 {
	u := 0.0
	for _, r := range recs {
		switch {
		case r.Status == Finished || r.Status == Failed:
			u++
		case r.Epochs > 0:
			u += float64(min(r.EpochsDone, r.Epochs)) / float64(r.Epochs)
		}
	}
	return u
}

// maxShown is how many running runs the status line names.
const maxShown = 3

// line returns the status line for recs at time now.
func (d *display) line(recs []Record, now time.Time) string {
	var finished, failed int
	var running []string
	for _, r := range recs {
		switch r.Status {
		case Finished:
			finished++
		case Failed:
			failed++
		case Running:
			s := fmt.Sprintf("%s seed %d", r.Experiment, r.Seed)
			if r.Epochs > 0 {
				s += fmt.Sprintf(" epoch %d/%d", min(r.EpochsDone+1, r.Epochs), r.Epochs)
			} else {
				s += " starting"
			}
			running = append(running, s)
		}
	}
	units := progressUnits(recs)
	frac := 0.0
	if d.total > 0 {
		frac = min(units/float64(d.total), 1)
	}
	const width = 30
	k := int(frac * width)
	var b strings.Builder
	fmt.Fprintf(&b, "sweep [%s%s] %3.0f%% %d/%d runs, %d running, %d failed", strings.Repeat("#", k),
		strings.Repeat(".", width-k), 100*frac, finished+failed, d.total, len(running), failed)
	if len(running) > 0 {
		shown := running[:min(len(running), maxShown)]
		b.WriteString(" | " + strings.Join(shown, ", "))
		if more := len(running) - len(shown); more > 0 {
			fmt.Fprintf(&b, ", +%d", more)
		}
	}
	el := now.Sub(d.start)
	if made := units - d.startUnits; made > 0 && units < float64(d.total) {
		eta := time.Duration(float64(el) * (float64(d.total) - units) / made).Round(time.Second)
		fmt.Fprintf(&b, " | ETA %s", eta)
	} else {
		fmt.Fprintf(&b, " | %s", el.Round(time.Second))
	}
	return b.String()
}

// draw rewrites the status line.
func (d *display) draw(recs []Record) {
	if d.w == nil {
		return
	}
	fmt.Fprintf(d.w, "\r\033[K%s", d.line(recs, time.Now()))
}

// event prints msg on its own line (over the status line, which the next draw restores).
func (d *display) event(msg string) {
	if d.w == nil {
		return
	}
	fmt.Fprintf(d.w, "\r\033[K%s\n", msg)
}

// finish ends the status line.
func (d *display) finish() {
	if d.w == nil {
		return
	}
	fmt.Fprintln(d.w)
}

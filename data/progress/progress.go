// Package progress draws a one-line text progress bar for long work (dataset conversion,
// downloads) on a terminal stream, normally stderr.
package progress

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Bar is a progress bar over a known total of units (samples, bytes). A nil *Bar, or one made with
// a nil writer, does nothing, so callers need not check.
type Bar struct {
	w     io.Writer
	label string
	total int64
	n     int64
	bytes bool
	start time.Time
	last  time.Time
	every time.Duration
}

// New returns a bar that writes to w; total may be 0 when unknown.
func New(w io.Writer, label string, total int64) *Bar {
	return &Bar{w: w, label: label, total: total, start: time.Now(), every: 200 * time.Millisecond}
}

// NewBytes returns a bar whose units are bytes, shown as KiB/MiB/GiB.
func NewBytes(w io.Writer, label string, total int64) *Bar {
	b := New(w, label, total)
	b.bytes = true
	return b
}

// Set moves the bar to n units done.
func (b *Bar) Set(n int64) {
	if b == nil {
		return
	}
	b.n = n
	if b.w == nil {
		return
	}
	if now := time.Now(); now.Sub(b.last) >= b.every {
		b.last = now
		b.draw(now)
	}
}

// Add advances the bar by n units.
func (b *Bar) Add(n int64) { b.Set(b.N() + n) }

// Write advances the bar by len(p) units and never fails, so that a bar of bytes can count what an
// io.Copy, io.MultiWriter or io.TeeReader passes through it.
func (b *Bar) Write(p []byte) (int, error) {
	b.Add(int64(len(p)))
	return len(p), nil
}

// Done draws the final state and ends the line.
func (b *Bar) Done() {
	if b == nil || b.w == nil {
		return
	}
	b.draw(time.Now())
	fmt.Fprintln(b.w)
}

func (b *Bar) amount(n int64) string {
	switch {
	case !b.bytes:
		return fmt.Sprint(n)
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n) / 1024
	for _, u := range []string{"KiB", "MiB"} {
		if f < 1024 {
			return fmt.Sprintf("%.1f %s", f, u)
		}
		f /= 1024
	}
	return fmt.Sprintf("%.1f GiB", f)
}

func (b *Bar) draw(now time.Time) {
	el := now.Sub(b.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(b.n) / el
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\r%s ", b.label)
	if b.total > 0 {
		frac := min(float64(b.n)/float64(b.total), 1)
		const width = 30
		k := int(frac * width)
		fmt.Fprintf(&s, "[%s%s] %3.0f%% %s/%s", strings.Repeat("#", k), strings.Repeat(".", width-k), 100*frac, b.amount(b.n), b.amount(b.total))
		if rate > 0 && b.n < b.total {
			eta := time.Duration(float64(b.total-b.n) / rate * float64(time.Second)).Round(time.Second)
			fmt.Fprintf(&s, " ETA %s", eta)
		}
	} else {
		s.WriteString(b.amount(b.n))
	}
	if rate > 0 {
		fmt.Fprintf(&s, " (%s/s)", b.amount(int64(rate)))
	}
	s.WriteString("   ")
	io.WriteString(b.w, s.String())
}

// N returns the units done so far.
func (b *Bar) N() int64 {
	if b == nil {
		return 0
	}
	return b.n
}

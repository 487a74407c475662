package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomlx/compute"
)

// Measurement is the result of timing one Spec in one Variant.
type Measurement struct {
	// Variant is the measured variant (not in the JSON form: the caller's record names it).
	Variant Variant `json:"-"`
	// Chunk is the number of steps per call (Runner.Chunk: 1 for stepwise, T for loop, 0 for unrolled and
	// fused).
	Chunk int `json:"chunk"`
	// FirstS is the wall time of the first iteration (building and compiling the graphs, then running),
	// seconds.
	FirstS float64 `json:"first_s"`
	// CompileS is the time spent building and compiling the engine's graphs, seconds, timed on its own
	// (step.Engine.CompileSeconds); FirstS minus the median iteration also counts the first iteration's
	// first touches of memory, which grow with T.
	CompileS float64 `json:"compile_s"`
	// MedianMs is the median wall time of the timed iterations, milliseconds.
	MedianMs float64 `json:"median_ms"`
	// IterMs are the timed iterations' wall times, milliseconds.
	IterMs []float64 `json:"iter_ms"`
	// PeakRSSBytes is the process's peak resident memory (VmHWM) after the last iteration, bytes; 0 where
	// /proc/self/status is unavailable. It covers everything the process did before, too.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// Loss is the loss of the last iteration (the same for every variant of a Spec).
	Loss float64 `json:"loss"`
}

// MeasureOptions says how many iterations to run.
type MeasureOptions struct {
	// Warmup iterations run after the first (compiling) one and are not timed.
	Warmup int
	// Iters timed iterations (at least 1).
	Iters int
	// Chunk is passed to Options.Chunk.
	Chunk int
	// Progress, when not nil, is called with a short line before each phase.
	Progress func(msg string)
}

// Measure creates a Runner for spec and variant on backend, runs the first iteration (compilation),
// then opts.Warmup untimed and opts.Iters timed iterations, and returns the timings and peak memory.
func Measure(backend compute.Backend, spec Spec, variant Variant, opts MeasureOptions) (Measurement, error) {
	if opts.Iters < 1 {
		return Measurement{}, fmt.Errorf("bench: %d timed iterations (need at least 1)", opts.Iters)
	}
	if opts.Warmup < 0 {
		return Measurement{}, fmt.Errorf("bench: %d warm-up iterations", opts.Warmup)
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	r, err := NewRunner(backend, spec, variant, Options{Chunk: opts.Chunk})
	if err != nil {
		return Measurement{}, err
	}
	defer r.Close()
	m := Measurement{Variant: variant, Chunk: r.Chunk()}
	progress("compiling and running the first iteration")
	start := time.Now()
	if err := r.Iterate(); err != nil {
		return m, err
	}
	m.FirstS = time.Since(start).Seconds()
	for i := range opts.Warmup {
		progress(fmt.Sprintf("warm-up %d/%d", i+1, opts.Warmup))
		if err := r.Iterate(); err != nil {
			return m, err
		}
	}
	for i := range opts.Iters {
		progress(fmt.Sprintf("iteration %d/%d", i+1, opts.Iters))
		start := time.Now()
		if err := r.Iterate(); err != nil {
			return m, err
		}
		m.IterMs = append(m.IterMs, float64(time.Since(start).Microseconds())/1000)
	}
	m.MedianMs = Median(m.IterMs)
	m.CompileS = r.CompileSeconds()
	m.Loss = r.Loss()
	m.PeakRSSBytes, _ = PeakRSS()
	return m, nil
}

// Median returns the median of v (the mean of the two middle values for an even length), 0 for none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// PeakRSS returns the process's peak resident set size (VmHWM of /proc/self/status) in bytes.
func PeakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseVmHWM(f)
}

// parseVmHWM reads the "VmHWM:  <n> kB" line of a /proc/<pid>/status file and returns bytes.
func parseVmHWM(f interface{ Read([]byte) (int, error) }) (int64, error) {
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("bench: unexpected VmHWM line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: VmHWM: %w", err)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("bench: no VmHWM line")
}

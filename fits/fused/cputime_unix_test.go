//go:build unix

package fused_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTimer measures the process's CPU time (user + system, all threads) over a benchmark's loop.
type cpuTimer struct {
	b     *testing.B
	start time.Duration
	ok    bool
}

func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

func startCPUTimer(b *testing.B) *cpuTimer {
	d, ok := processCPU()
	return &cpuTimer{b: b, start: d, ok: ok}
}

// report adds the metric cpu-ms/op.
func (c *cpuTimer) report() {
	end, ok := processCPU()
	if !c.ok || !ok || c.b.N == 0 {
		return
	}
	c.b.ReportMetric(float64(end-c.start)/float64(time.Millisecond)/float64(c.b.N), "cpu-ms/op")
}

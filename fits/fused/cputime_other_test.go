//go:build !unix

package fused_test

import "testing"

// cpuTimer reports nothing where the process's CPU time is not read (not a Unix system).
type cpuTimer struct{}

func startCPUTimer(*testing.B) *cpuTimer { return &cpuTimer{} }

func (*cpuTimer) report() {}

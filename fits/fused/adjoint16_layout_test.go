//go:build goexperiment.simd && amd64

package fused

import (
	"testing"
	"unsafe"
)

// TestAdjointLayout holds the byte offsets the order-1 assembly kernels (adjoint16x2_amd64.s, forward16x2_amd64.s)
// reads its arguments and vectors at to the Go structs'.
func TestAdjointLayout(t *testing.T) {
	var a adjointArgs16
	var k adjointBlock16
	var f forwardArgs16
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"args.current", unsafe.Offsetof(a.current), 0},
		{"args.cotSpikes", unsafe.Offsetof(a.cotSpikes), 8},
		{"args.cotCurrent", unsafe.Offsetof(a.cotCurrent), 16},
		{"args.rows", unsafe.Offsetof(a.rows), 24},
		{"args.block", unsafe.Offsetof(a.block), 32},
		{"args.steps", unsafe.Offsetof(a.steps), 40},
		{"args.rowBytes", unsafe.Offsetof(a.rowBytes), 48},
		{"args.cotStep", unsafe.Offsetof(a.cotStep), 56},
		{"args.stepMask", unsafe.Offsetof(a.stepMask), 64},
		{"mu", unsafe.Offsetof(k.mu), 0},
		{"rho", unsafe.Offsetof(k.rho), 64},
		{"vth", unsafe.Offsetof(k.vth), 128},
		{"one", unsafe.Offsetof(k.one), 192},
		{"width", unsafe.Offsetof(k.width), 256},
		{"scale", unsafe.Offsetof(k.scale), 320},
		{"g[0]", unsafe.Offsetof(k.g), 384},
		{"g[1]", unsafe.Offsetof(k.g) + unsafe.Sizeof(k.g[0]), 1088},
		{"g.drop", unsafe.Offsetof(k.g[0].drop), 0},
		{"g.eta", unsafe.Offsetof(k.g[0].eta), 64},
		{"g.gamma", unsafe.Offsetof(k.g[0].gamma), 128},
		{"g.beta", unsafe.Offsetof(k.g[0].beta), 192},
		{"g.lambda", unsafe.Offsetof(k.g[0].lambda), 256},
		{"g.oneMinusLam", unsafe.Offsetof(k.g[0].oneMinusLam), 320},
		{"g.etaSum", unsafe.Offsetof(k.g[0].etaSum), 384},
		{"g.gammaSum", unsafe.Offsetof(k.g[0].gammaSum), 448},
		{"g.betaSum", unsafe.Offsetof(k.g[0].betaSum), 512},
		{"g.lambdaSum", unsafe.Offsetof(k.g[0].lambdaSum), 576},
		{"g.ctr", unsafe.Offsetof(k.g[0].ctr), 640},
		{"key", unsafe.Offsetof(k.key), 1792},
		{"threshold", unsafe.Offsetof(k.threshold), 1856},
		{"mul1", unsafe.Offsetof(k.mul1), 1920},
		{"mul2", unsafe.Offsetof(k.mul2), 1984},
		{"dropScale", unsafe.Offsetof(k.dropScale), 2048},
		{"stride", unsafe.Offsetof(k.stride), 2112},
		{"fireAt", unsafe.Offsetof(k.fireAt), 2176},
		{"count", unsafe.Offsetof(k.count), 2240},
		{"forward.current", unsafe.Offsetof(f.current), 0},
		{"forward.out", unsafe.Offsetof(f.out), 8},
		{"forward.sel", unsafe.Offsetof(f.sel), 16},
		{"forward.block", unsafe.Offsetof(f.block), 24},
		{"forward.steps", unsafe.Offsetof(f.steps), 32},
		{"forward.rowBytes", unsafe.Offsetof(f.rowBytes), 40},
		{"forward.selStep", unsafe.Offsetof(f.selStep), 48},
		{"forward.stepMask", unsafe.Offsetof(f.stepMask), 56},
		{"row", adjointRowBytes, 320},
	} {
		if c.got != c.want {
			t.Errorf("%s at byte %d, the assembly reads byte %d", c.name, c.got, c.want)
		}
	}
}

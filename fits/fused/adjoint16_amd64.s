//go:build goexperiment.simd && amd64

#include "textflag.h"

// The adjoint of one group of 16 FS+TS neurons of order M = 1 (adjointM1x16 in adjoint16_amd64.go documents
// the arguments). Register use:
//   Z0 μ̄, Z1 ρ̄, Z2 Vth, Z3 1, Z4 width, Z5 scale, Z6 dropout, Z7 e, Z8 g, Z9 β, Z10 λ, Z11 1 − λ, Z12 0;
//   the recomputation: Z13 V, Z14 a, Z15 V0 (stage 0), Z16 V1 (stage 1);
//   the adjoint: Z13 V̄, Z14 ā, Z15 and Z16 the stages' cotangents, Z24–Z27 Σ a·V̄0, Σ V0·ā, β̄, λ̄;
//   Z17–Z23 temporaries.
// Every operation is the one the Go kernels do, in their order (no fused multiply-add): x.Mul(y) is
// VMULPS y, x; x.Sub(y) is VSUBPS y, x; x.Max(y) is VMAXPS y, x.

// func adjointM1x16(a *adjointArgs16)
TEXT ·adjointM1x16(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), AX
	MOVQ 0(AX), SI    // current, step 0
	MOVQ 8(AX), BX    // spike cotangent, step 0
	MOVQ 16(AX), DX   // cotangent of the current, step T − 1
	MOVQ 24(AX), DI   // the rows of recomputed values
	MOVQ 32(AX), R8   // the block of vectors
	MOVQ 40(AX), CX   // T
	MOVQ 48(AX), R9   // bytes from one step's current to the next
	MOVQ 56(AX), R10  // bytes from one step's spike cotangent to the next (0: constant over time)
	MOVQ 64(AX), R11  // 1: strict spikes (ṼM > Vth)
	MOVQ 72(AX), R12  // 1: the reset carries a gradient

	VMOVUPS 0(R8), Z0
	VMOVUPS 64(R8), Z1
	VMOVUPS 128(R8), Z2
	VMOVUPS 192(R8), Z3
	VMOVUPS 256(R8), Z4
	VMOVUPS 320(R8), Z5
	VMOVUPS 384(R8), Z6
	VMOVUPS 448(R8), Z7
	VMOVUPS 512(R8), Z8
	VMOVUPS 576(R8), Z9
	VMOVUPS 640(R8), Z10
	VMOVUPS 704(R8), Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16

	// The state before every step, with V replaced by the step's V0 = μ̄V + I − e·a: a row of
	// V0, a, V0 (stage), V1, S̄ per step.
	MOVQ CX, R13
forward:
	VMULPS Z0, Z13, Z17
	VADDPS (SI), Z17, Z17
	VMULPS Z14, Z7, Z18
	VSUBPS Z18, Z17, Z17          // V0
	VMOVUPS (BX), Z19
	VMOVUPS Z17, 0(DI)
	VMOVUPS Z14, 64(DI)
	VMOVUPS Z15, 128(DI)
	VMOVUPS Z16, 192(DI)
	VMOVUPS Z19, 256(DI)
	DECQ R13
	JZ forwardDone
	VMULPS Z1, Z14, Z14
	VMULPS Z17, Z8, Z18
	VADDPS Z18, Z14, Z14          // a ← ρ̄a + gV0
	VSUBPS Z17, Z16, Z18
	VMULPS Z18, Z9, Z18
	VADDPS Z15, Z18, Z16          // V1 ← β(V1 − V0) + V0old
	VMOVAPS Z17, Z15              // stage 0 ← V0
	VMULPS Z17, Z11, Z19
	VMULPS Z16, Z10, Z20
	VADDPS Z20, Z19, Z19          // ṼM = (1 − λ)V0 + λV1
	VSUBPS Z2, Z19, Z20           // u = ṼM − Vth
	TESTQ R11, R11
	JNZ strict
	VCMPPS $13, Z12, Z20, K1      // u ≥ 0
	JMP fired
strict:
	VCMPPS $14, Z12, Z20, K1      // u > 0
fired:
	VPMOVM2D K1, Z21
	VPANDD Z3, Z21, Z21
	VSUBPS Z20, Z20, Z22
	VADDPS Z22, Z21, Z21          // S = 1 where fired, plus u − u
	VMULPS Z2, Z21, Z21
	VSUBPS Z21, Z19, Z13          // V ← ṼM − S·Vth
	ADDQ R9, SI
	ADDQ R10, BX
	ADDQ $320, DI
	JMP forward
forwardDone:

	// Back in time from step T − 1, DI at its row.
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
backward:
	VMOVUPS 0(DI), Z17            // V0
	VMOVUPS 192(DI), Z18          // V1 before the step
	VSUBPS Z17, Z18, Z19
	VMULPS Z19, Z9, Z19
	VADDPS 128(DI), Z19, Z19      // n1 = β(V1 − V0) + stage 0
	VMULPS Z17, Z11, Z20
	VMULPS Z19, Z10, Z21
	VADDPS Z21, Z20, Z20
	VSUBPS Z2, Z20, Z20           // u
	VSUBPS Z20, Z12, Z21
	VMAXPS Z20, Z21, Z21          // |u|
	VDIVPS Z4, Z21, Z21
	VSUBPS Z21, Z3, Z21
	VMAXPS Z12, Z21, Z21
	VMULPS Z5, Z21, Z21           // σ′(u)
	VMOVUPS 256(DI), Z22
	VMULPS Z6, Z22, Z22           // S̄ times the dropout mask
	TESTQ R12, R12
	JZ detached
	VMULPS Z2, Z13, Z23
	VSUBPS Z23, Z22, Z22          // − V̄·Vth through the reset
detached:
	VMULPS Z22, Z21, Z21
	VADDPS Z21, Z13, Z21          // ū = V̄ + σ′·S̄
	VMULPS Z21, Z10, Z22
	VADDPS Z22, Z16, Z22          // n̄1 = stage-1 cotangent + λū
	VSUBPS Z17, Z18, Z23
	VMULPS Z22, Z23, Z23
	VADDPS Z23, Z26, Z26          // β̄ += (V1 − V0)·n̄1
	VSUBPS Z17, Z19, Z23
	VMULPS Z21, Z23, Z23
	VADDPS Z23, Z27, Z27          // λ̄ += (n1 − V0)·ū
	VMULPS Z21, Z11, Z23
	VADDPS Z15, Z23, Z23
	VMULPS Z22, Z9, Z18
	VSUBPS Z18, Z23, Z23          // V̄0 = (1 − λ)ū + stage-0 cotangent − βn̄1
	VMOVAPS Z22, Z15
	VMOVAPS Z18, Z16
	VMULPS Z14, Z8, Z19
	VADDPS Z19, Z23, Z23          // V̄0 += gā
	VMULPS 64(DI), Z23, Z20
	VADDPS Z20, Z24, Z24          // Σ a·V̄0
	VMULPS Z14, Z17, Z20
	VADDPS Z20, Z25, Z25          // Σ V0·ā
	VMULPS Z1, Z14, Z14
	VMULPS Z23, Z7, Z20
	VSUBPS Z20, Z14, Z14          // ā ← ρ̄ā − eV̄0
	VMULPS Z0, Z23, Z13           // V̄ ← μ̄V̄0
	VMOVUPS Z23, (DX)
	DECQ CX
	JZ done
	SUBQ R9, DX
	SUBQ $320, DI
	JMP backward
done:
	VMOVUPS Z24, 768(R8)
	VMOVUPS Z25, 832(R8)
	VMOVUPS Z26, 896(R8)
	VMOVUPS Z27, 960(R8)
	VZEROUPPER
	RET

//go:build goexperiment.simd && amd64

#include "textflag.h"

// The forward pass of two adjacent groups of 16 FS+TS neurons of order M = 1 over all T steps, stepped
// together (forwardM1x16x2 in forward16_amd64.go documents the arguments). Every operation is step16's and
// forward16's, in their order. The block (R8) is adjoint16_amd64.go's adjointBlock16: the constants at
// 0…320, the groups' vectors at G = 384 and 1088 (dropout +0, e +64, g +128, β +192, λ +256, 1 − λ +320,
// the mask's counters at step 0 +640), the mask's key (1792), threshold, fmix32's multipliers, scale and
// the counters' step (2112), the firing comparand (2176: 0 for strict spikes, −2⁻¹⁴⁹ otherwise: u > −2⁻¹⁴⁹
// is u ≥ 0 for every float32, NaN included), and the spike counts written back (2240, 2304).
// Registers: Z0 μ̄, Z1 ρ̄, Z2 Vth, Z3 1, Z4 width, Z28 the firing comparand, Z12 0; the first group's V, a,
// V0, V1 and count in Z6–Z10, the second's in Z13–Z16 and Z11; its counters in Z30 and Z31; Z17–Z24
// temporaries.

#include "m1x16_amd64.h"

// STEP steps the group: V, A, S0, S1 from the current at byte C of the step's row (SI), the spike (before
// the mask) in Z21 added to the count CNT, u in Z20.
#define STEP(C, G, V, A, S0, S1, CNT) \
	V0(C, G, V, A); \
	ADVANCE(G, V, A, S0, S1); \
	VADDPS Z21, CNT, CNT

// OUT stores the spike times the mask D (Z22) at byte C of the step's output row (DI), and sets K2 to the
// selected lanes: |u| < width where D ≠ 0.
#define OUT(C) \
	VMULPS Z22, Z21, Z21; \
	VMOVUPS Z21, C(DI); \
	VSUBPS Z20, Z12, Z23; \
	VMAXPS Z20, Z23, Z23; \
	VCMPPS $1, Z4, Z23, K2; \
	VCMPPS $4, Z12, Z22, K3; \
	KANDW K3, K2, K2

// STEPMASK sets Z22 to the per-step dropout mask of the counters CTR and moves CTR one step on.
#define STEPMASK(CTR) \
	DROPMASK(CTR, Z22, Z23, Z24); \
	VPADDD 2112(R8), CTR, CTR

// SELECT ORs the two groups' selected lanes (K5 the first's, K2 the second's) into the step's selection
// word (BX), 32 bits.
#define SELECT \
	KMOVW K5, R12; \
	KMOVW K2, R13; \
	SHLL $16, R13; \
	ORL R13, R12; \
	ORL R12, (BX)

// func forwardM1x16x2(a *forwardArgs16)
TEXT ·forwardM1x16x2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), AX
	MOVQ 0(AX), SI    // current, step 0
	MOVQ 8(AX), DI    // output, step 0
	MOVQ 16(AX), BX   // the selection's 32 bits of step 0 (a scratch word when there is no selection)
	MOVQ 24(AX), R8   // the block of vectors
	MOVQ 32(AX), CX   // T
	MOVQ 40(AX), R9   // bytes from one step's row to the next
	MOVQ 48(AX), R10  // bytes from one step's selection word to the next (0 without a selection)
	MOVQ 56(AX), R11  // 1: the per-step dropout mask

	VMOVUPS 0(R8), Z0
	VMOVUPS 64(R8), Z1
	VMOVUPS 128(R8), Z2
	VMOVUPS 192(R8), Z3
	VMOVUPS 256(R8), Z4
	VMOVUPS 2176(R8), Z28
	VPXORD Z12, Z12, Z12
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	TESTQ R11, R11
	JNZ masked
plain:
	STEP(0, 384, Z6, Z7, Z8, Z9, Z10)
	VMOVUPS 384(R8), Z22
	OUT(0)
	KMOVW K2, K5
	STEP(64, 1088, Z13, Z14, Z15, Z16, Z11)
	VMOVUPS 1088(R8), Z22
	OUT(64)
	SELECT
	ADDQ R9, SI
	ADDQ R9, DI
	ADDQ R10, BX
	DECQ CX
	JNZ plain
	JMP done
masked:
	VMOVUPS 1024(R8), Z30
	VMOVUPS 1728(R8), Z31
maskedStep:
	STEP(0, 384, Z6, Z7, Z8, Z9, Z10)
	STEPMASK(Z30)
	OUT(0)
	KMOVW K2, K5
	STEP(64, 1088, Z13, Z14, Z15, Z16, Z11)
	STEPMASK(Z31)
	OUT(64)
	SELECT
	ADDQ R9, SI
	ADDQ R9, DI
	ADDQ R10, BX
	DECQ CX
	JNZ maskedStep
done:
	VMOVUPS Z10, 2240(R8)
	VMOVUPS Z11, 2304(R8)
	VZEROUPPER
	RET

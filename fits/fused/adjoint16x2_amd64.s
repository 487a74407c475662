//go:build goexperiment.simd && amd64

#include "textflag.h"

// The adjoint of two adjacent groups of 16 FS+TS neurons of order M = 1, stepped together so that the CPU
// overlaps their chains of dependent instructions (adjointM1x16x2 in adjoint16_amd64.go documents the
// arguments). Every operation is the one the Go kernels do, in their order (no fused multiply-add):
// x.Mul(y) is VMULPS y, x; x.Sub(y) is VSUBPS y, x; x.Max(y) is VMAXPS y, x, with the operands in the order
// the Go compiler gives them in backward16. Registers: Z0 μ̄, Z1 ρ̄, Z2 Vth,
// Z3 1, Z4 width, Z5 scale, Z12 0; the recomputation's state V, a, V0, V1 of the first group in Z6–Z9,
// of the second in Z13–Z16; the adjoint's V̄, ā, the stages' cotangents and the four sums in Z6–Z11 and
// Z24–Z25 (first group), Z13–Z16 and Z26–Z29 (second); Z17–Z23 temporaries of both (the CPU renames
// them); with the per-step dropout mask the groups' counters in Z30 and Z31; while recomputing, the firing
// comparand in Z28 (m1x16_amd64.h). The coefficients are memory
// operands: G is the byte offset of the group's vectors in the block (R8; 384 and 1088): dropout +0,
// e +64, g +128, β +192, λ +256, 1 − λ +320, the four sums +384…+576, the mask's counters at step T − 1
// +640; after both groups the mask's key (1792), threshold, fmix32's two multipliers, scale and the
// counters' step N (2112).

#include "m1x16_amd64.h"

// RECOMPUTE stores the group's row (at byte R of the step's row: V0, and a, V0 and V1 before the step, S̄
// read at byte C of the step's spike cotangent) and steps its state V, A, S0, S1.
#define RECOMPUTE(C, R, G, V, A, S0, S1) \
	STORELAST(C, R, G, V, A, S0, S1); \
	ADVANCE(G, V, A, S0, S1)

// STORELAST stores the group's row (the last step's, after which it does not step).
#define STORELAST(C, R, G, V, A, S0, S1) \
	V0(C, G, V, A); \
	VMOVUPS C(BX), Z19; \
	VMOVUPS Z17, R+0(DI); \
	VMOVUPS A, R+64(DI); \
	VMOVUPS S0, R+128(DI); \
	VMOVUPS S1, R+192(DI); \
	VMOVUPS Z19, R+256(DI)

// ADJOINT1 begins one step of the group's adjoint back in time, from its row at byte R: V0 in Z17, V1
// before the step in Z18, n1 in Z19, σ′(u) in Z21, S̄ times the time-shared dropout mask in Z22.
#define ADJOINT1(R, G) \
	VMOVUPS R+0(DI), Z17; \
	VMOVUPS R+192(DI), Z18; \
	VSUBPS Z17, Z18, Z19; \
	VMULPS G+192(R8), Z19, Z19; \
	VADDPS R+128(DI), Z19, Z19; \
	VMULPS G+320(R8), Z17, Z20; \
	VMULPS G+256(R8), Z19, Z21; \
	VADDPS Z21, Z20, Z20; \
	VSUBPS Z2, Z20, Z20; \
	VSUBPS Z20, Z12, Z21; \
	VMAXPS Z20, Z21, Z21; \
	VDIVPS Z4, Z21, Z21; \
	VSUBPS Z21, Z3, Z21; \
	VMAXPS Z12, Z21, Z21; \
	VMULPS Z5, Z21, Z21; \
	VMOVUPS R+256(DI), Z22; \
	VMULPS G+0(R8), Z22, Z22

// ADJOINT2 is the rest of the step: V̄ VB, ā AB, the stages' cotangents B0, B1, the sums SE (Σ a·V̄0),
// SG (Σ V0·ā), SB (β̄), SL (λ̄); the cotangent of the current goes to byte C of the step's row (DX).
#define ADJOINT2(C, R, G, VB, AB, B0, B1, SE, SG, SB, SL) \
	VMULPS Z2, VB, Z23; \
	VSUBPS Z23, Z22, Z22; \
	VMULPS Z22, Z21, Z21; \
	VADDPS Z21, VB, Z21; \
	VMULPS G+256(R8), Z21, Z22; \
	VADDPS Z22, B1, Z22; \
	VSUBPS Z17, Z18, Z23; \
	VMULPS Z22, Z23, Z23; \
	VADDPS Z23, SB, SB; \
	VSUBPS Z17, Z19, Z23; \
	VMULPS Z21, Z23, Z23; \
	VADDPS Z23, SL, SL; \
	VMULPS G+320(R8), Z21, Z23; \
	VADDPS B0, Z23, Z23; \
	VMULPS G+192(R8), Z22, Z18; \
	VSUBPS Z18, Z23, Z23; \
	VMOVAPS Z22, B0; \
	VMOVAPS Z18, B1; \
	VMULPS G+128(R8), AB, Z19; \
	VADDPS Z19, Z23, Z23; \
	VMULPS R+64(DI), Z23, Z20; \
	VADDPS Z20, SE, SE; \
	VMULPS AB, Z17, Z20; \
	VADDPS Z20, SG, SG; \
	VMULPS Z1, AB, AB; \
	VMULPS G+64(R8), Z23, Z20; \
	VSUBPS Z20, AB, AB; \
	VMULPS Z0, Z23, VB; \
	VMOVUPS Z23, C(DX)

// STEPMASK multiplies S̄ (Z22) by the per-step dropout mask of the counters CTR and moves CTR one step
// back.
#define STEPMASK(CTR) \
	DROPMASK(CTR, Z20, Z23, Z20); \
	VMULPS Z20, Z22, Z22; \
	VPSUBD 2112(R8), CTR, CTR

// func adjointM1x16x2(a *adjointArgs16)
TEXT ·adjointM1x16x2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), AX
	MOVQ 0(AX), SI    // current, step 0
	MOVQ 8(AX), BX    // spike cotangent, step 0
	MOVQ 16(AX), DX   // cotangent of the current, step T − 1
	MOVQ 24(AX), DI   // the rows of recomputed values
	MOVQ 32(AX), R8   // the block of vectors
	MOVQ 40(AX), CX   // T
	MOVQ 48(AX), R9   // bytes from one step's current to the next
	MOVQ 56(AX), R10  // bytes from one step's spike cotangent to the next (0: constant over time)
	MOVQ 64(AX), R12  // 1: the per-step dropout mask

	VMOVUPS 0(R8), Z0
	VMOVUPS 64(R8), Z1
	VMOVUPS 128(R8), Z2
	VMOVUPS 192(R8), Z3
	VMOVUPS 256(R8), Z4
	VMOVUPS 320(R8), Z5
	VMOVUPS 2176(R8), Z28
	VPXORD Z12, Z12, Z12
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16

	MOVQ CX, R13
	DECQ R13
	JZ last
recompute:
	RECOMPUTE(0, 0, 384, Z6, Z7, Z8, Z9)
	RECOMPUTE(64, 320, 1088, Z13, Z14, Z15, Z16)
	ADDQ R9, SI
	ADDQ R10, BX
	ADDQ $640, DI
	DECQ R13
	JNZ recompute
last:
	STORELAST(0, 0, 384, Z6, Z7, Z8, Z9)
	STORELAST(64, 320, 1088, Z13, Z14, Z15, Z16)

	// Back in time from step T − 1, DI at its row.
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	TESTQ R12, R12
	JNZ masked
backward:
	ADJOINT1(0, 384)
	ADJOINT2(0, 0, 384, Z6, Z7, Z8, Z9, Z10, Z11, Z24, Z25)
	ADJOINT1(320, 1088)
	ADJOINT2(64, 320, 1088, Z13, Z14, Z15, Z16, Z26, Z27, Z28, Z29)
	DECQ CX
	JZ done
	SUBQ R9, DX
	SUBQ $640, DI
	JMP backward
masked:
	VMOVUPS 1024(R8), Z30
	VMOVUPS 1728(R8), Z31
maskedStep:
	ADJOINT1(0, 384)
	STEPMASK(Z30)
	ADJOINT2(0, 0, 384, Z6, Z7, Z8, Z9, Z10, Z11, Z24, Z25)
	ADJOINT1(320, 1088)
	STEPMASK(Z31)
	ADJOINT2(64, 320, 1088, Z13, Z14, Z15, Z16, Z26, Z27, Z28, Z29)
	DECQ CX
	JZ done
	SUBQ R9, DX
	SUBQ $640, DI
	JMP maskedStep
done:
	VMOVUPS Z10, 768(R8)
	VMOVUPS Z11, 832(R8)
	VMOVUPS Z24, 896(R8)
	VMOVUPS Z25, 960(R8)
	VMOVUPS Z26, 1472(R8)
	VMOVUPS Z27, 1536(R8)
	VMOVUPS Z28, 1600(R8)
	VMOVUPS Z29, 1664(R8)
	VZEROUPPER
	RET

// Macros shared by the assembly kernels of FS+TS layers of order M = 1 (forward16x2_amd64.s,
// adjoint16x2_amd64.s). Registers they assume: Z0 μ̄, Z1 ρ̄, Z2 Vth, Z3 1, Z28 the firing comparand (0 for
// strict spikes, −2⁻¹⁴⁹ otherwise: u > −2⁻¹⁴⁹ is u ≥ 0 for every float32, NaN included); R8 the block of
// vectors (adjointBlock16), G the byte offset of the group's vectors in it (e +64, g +128, β +192,
// λ +256, 1 − λ +320); SI the step's current. Every operation is step16's, in its order (no fused
// multiply-add): x.Mul(y) is VMULPS y, x; x.Sub(y) is VSUBPS y, x.

// V0 sets Z17 to the group's V0 = μ̄V + I − e·a, with the current I at byte C of the step's row.
#define V0(C, G, V, A) \
	VMULPS Z0, V, Z17; \
	VADDPS C(SI), Z17, Z17; \
	VMULPS G+64(R8), A, Z18; \
	VSUBPS Z18, Z17, Z17

// ADVANCE steps the group's state from its V0 in Z17: a ← ρ̄a + g·V0, V1 ← β(V1 − V0) + V0old, V0old ← V0,
// ṼM = (1 − λ)V0 + λV1 (Z19), u = ṼM − Vth (Z20), the spike S (Z21: 1 where u fires, plus u − u) and
// V ← ṼM − S·Vth.
#define ADVANCE(G, V, A, S0, S1) \
	VMULPS Z1, A, A; \
	VMULPS G+128(R8), Z17, Z18; \
	VADDPS Z18, A, A; \
	VSUBPS Z17, S1, Z18; \
	VMULPS G+192(R8), Z18, Z18; \
	VADDPS S0, Z18, S1; \
	VMOVAPS Z17, S0; \
	VMULPS G+320(R8), Z17, Z19; \
	VMULPS G+256(R8), S1, Z20; \
	VADDPS Z20, Z19, Z19; \
	VSUBPS Z2, Z19, Z20; \
	VCMPPS $14, Z28, Z20, K1; \
	VPMOVM2D K1, Z21; \
	VPANDD Z3, Z21, Z21; \
	VSUBPS Z20, Z20, Z22; \
	VADDPS Z22, Z21, Z21; \
	VMULPS Z2, Z21, Z22; \
	VSUBPS Z22, Z19, V

// FMIX is dropmask's fmix32 (MurmurHash3's finalizer) on every lane of H, with T a temporary; fmix32's
// multipliers at 1920 and 1984 of the block.
#define FMIX(H, T) \
	VPSRLD $16, H, T; \
	VPXORD T, H, H; \
	VPMULLD 1920(R8), H, H; \
	VPSRLD $13, H, T; \
	VPXORD T, H, H; \
	VPMULLD 1984(R8), H, H; \
	VPSRLD $16, H, T; \
	VPXORD T, H, H

// DROPMASK sets D to the per-step dropout mask of the counters CTR (dropmask.Scale(p) where
// dropmask.Bits(key, counter) ≥ dropmask.Threshold(p), 0 elsewhere; the key at 1792, the threshold at
// 1856, the scale at 2048), with H and T temporaries.
#define DROPMASK(CTR, D, H, T) \
	VPADDD 1792(R8), CTR, H; \
	FMIX(H, T); \
	VPXORD 1792(R8), H, H; \
	FMIX(H, T); \
	VPCMPUD $5, 1856(R8), H, K4; \
	VPMOVM2D K4, D; \
	VPANDD 2048(R8), D, D

//go:build goexperiment.simd && amd64

package events

import "simd/archsimd"

// The dot products of SelectedInputCotangent, dotGroup at a time: AVX-512 (dots16) holds a dot's 16 partial
// sums in one vector, AVX2 (dots8) in two (entries j mod 16 < 8, and ≥ 8); both reduce them in dotScalar's
// tree, so every ISA gives the same values. Same vector-code rules as axpyAVX2 (no legacy SSE, VZEROUPPER
// at the end, never inlined).

// dots is dotsScalar with AVX-512 or AVX2 where the CPU has it; len(idx) = len(res) is a multiple of
// dotGroup.
func dots(c, w []float32, idx []int32, res []float32) {
	if hasAVX512 {
		dots16(c, w, idx, res)
		return
	}
	if hasAVX2 {
		dots8(c, w, idx, res)
		return
	}
	dotsScalar(c, w, idx, res)
}

// reduce4 returns [Σ a, Σ b, Σ c, Σ d] of four vectors of partials l and l + 4 already added (lanes 0-3):
// (0 + 1) + (2 + 3) each.
func reduce4(a, b, c, d archsimd.Float32x4) archsimd.Float32x4 {
	return a.ConcatAddPairs(b).ConcatAddPairs(c.ConcatAddPairs(d))
}

//go:noinline
func dots16(c, w []float32, idx []int32, res []float32) {
	out := len(c)
	full := out - out%16
	for k := 0; k < len(idx); k += dotGroup {
		r0, r1, r2, r3 := int(idx[k])*out, int(idx[k+1])*out, int(idx[k+2])*out, int(idx[k+3])*out
		var a0, a1, a2, a3 archsimd.Float32x16
		j := 0
		for ; j < full; j += 16 {
			cv := archsimd.LoadFloat32x16(c[j : j+16])
			a0 = a0.Add(cv.Mul(archsimd.LoadFloat32x16(w[r0+j : r0+j+16])))
			a1 = a1.Add(cv.Mul(archsimd.LoadFloat32x16(w[r1+j : r1+j+16])))
			a2 = a2.Add(cv.Mul(archsimd.LoadFloat32x16(w[r2+j : r2+j+16])))
			a3 = a3.Add(cv.Mul(archsimd.LoadFloat32x16(w[r3+j : r3+j+16])))
		}
		if j < out {
			cv := loadPart16(c[j:out])
			a0 = a0.Add(cv.Mul(loadPart16(w[r0+j : r0+out])))
			a1 = a1.Add(cv.Mul(loadPart16(w[r1+j : r1+out])))
			a2 = a2.Add(cv.Mul(loadPart16(w[r2+j : r2+out])))
			a3 = a3.Add(cv.Mul(loadPart16(w[r3+j : r3+out])))
		}
		h0, h1, h2, h3 := a0.GetLo().Add(a0.GetHi()), a1.GetLo().Add(a1.GetHi()), a2.GetLo().Add(a2.GetHi()), a3.GetLo().Add(a3.GetHi())
		s := reduce4(h0.GetLo().Add(h0.GetHi()), h1.GetLo().Add(h1.GetHi()), h2.GetLo().Add(h2.GetHi()), h3.GetLo().Add(h3.GetHi()))
		s.Store(res[k : k+4])
	}
	archsimd.ClearAVXUpperBits()
}

//go:noinline
func dots8(c, w []float32, idx []int32, res []float32) {
	out := len(c)
	full := out - out%16
	for k := 0; k < len(idx); k += dotGroup {
		r0, r1, r2, r3 := int(idx[k])*out, int(idx[k+1])*out, int(idx[k+2])*out, int(idx[k+3])*out
		var a0, a1, a2, a3, b0, b1, b2, b3 archsimd.Float32x8
		j := 0
		for ; j < full; j += 16 {
			cv, cu := archsimd.LoadFloat32x8(c[j:j+8]), archsimd.LoadFloat32x8(c[j+8:j+16])
			a0 = a0.Add(cv.Mul(archsimd.LoadFloat32x8(w[r0+j : r0+j+8])))
			b0 = b0.Add(cu.Mul(archsimd.LoadFloat32x8(w[r0+j+8 : r0+j+16])))
			a1 = a1.Add(cv.Mul(archsimd.LoadFloat32x8(w[r1+j : r1+j+8])))
			b1 = b1.Add(cu.Mul(archsimd.LoadFloat32x8(w[r1+j+8 : r1+j+16])))
			a2 = a2.Add(cv.Mul(archsimd.LoadFloat32x8(w[r2+j : r2+j+8])))
			b2 = b2.Add(cu.Mul(archsimd.LoadFloat32x8(w[r2+j+8 : r2+j+16])))
			a3 = a3.Add(cv.Mul(archsimd.LoadFloat32x8(w[r3+j : r3+j+8])))
			b3 = b3.Add(cu.Mul(archsimd.LoadFloat32x8(w[r3+j+8 : r3+j+16])))
		}
		if j < out {
			m := min(j+8, out)
			cv, cu := loadPart8(c[j:m]), loadPart8(c[m:out])
			a0, b0 = a0.Add(cv.Mul(loadPart8(w[r0+j:r0+m]))), b0.Add(cu.Mul(loadPart8(w[r0+m:r0+out])))
			a1, b1 = a1.Add(cv.Mul(loadPart8(w[r1+j:r1+m]))), b1.Add(cu.Mul(loadPart8(w[r1+m:r1+out])))
			a2, b2 = a2.Add(cv.Mul(loadPart8(w[r2+j:r2+m]))), b2.Add(cu.Mul(loadPart8(w[r2+m:r2+out])))
			a3, b3 = a3.Add(cv.Mul(loadPart8(w[r3+j:r3+m]))), b3.Add(cu.Mul(loadPart8(w[r3+m:r3+out])))
		}
		h0, h1, h2, h3 := a0.Add(b0), a1.Add(b1), a2.Add(b2), a3.Add(b3)
		s := reduce4(h0.GetLo().Add(h0.GetHi()), h1.GetLo().Add(h1.GetHi()), h2.GetLo().Add(h2.GetHi()), h3.GetLo().Add(h3.GetHi()))
		s.Store(res[k : k+4])
	}
	archsimd.ClearAVXUpperBits()
}

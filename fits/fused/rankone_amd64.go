//go:build goexperiment.simd && amd64

package fused

import "simd/archsimd"

// fillVector is RankOne.fill's loop in isa's vectors: dst[t, i] = xs[t]·w[i] + bias[i] for dst [T, N]; it
// reports false for the scalar instruction set.
func fillVector(isa ISA, xs, w, bias, dst []float32) bool {
	switch isa {
	case AVX512:
		fill16(xs, w, bias, dst)
	case AVX2:
		fill8(xs, w, bias, dst)
	default:
		return false
	}
	return true
}

func fill16(xs, w, bias, dst []float32) {
	n := len(w)
	for t := range xs {
		v := archsimd.BroadcastFloat32x16(xs[t])
		row := dst[t*n : (t+1)*n]
		i := 0
		for ; i+lanes16 <= n; i += lanes16 {
			v.Mul(load16(w, i)).Add(load16(bias, i)).Store(row[i : i+lanes16])
		}
		if i < n {
			wv, _ := archsimd.LoadFloat32x16Part(w[i:])
			bv, _ := archsimd.LoadFloat32x16Part(bias[i:])
			v.Mul(wv).Add(bv).StorePart(row[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

func fill8(xs, w, bias, dst []float32) {
	n := len(w)
	for t := range xs {
		v := archsimd.BroadcastFloat32x8(xs[t])
		row := dst[t*n : (t+1)*n]
		i := 0
		for ; i+lanes8 <= n; i += lanes8 {
			v.Mul(load8(w, i)).Add(load8(bias, i)).Store(row[i : i+lanes8])
		}
		if i < n {
			wv, _ := archsimd.LoadFloat32x8Part(w[i:])
			bv, _ := archsimd.LoadFloat32x8Part(bias[i:])
			v.Mul(wv).Add(bv).StorePart(row[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// sumsVector is RankOne.sums's loop in isa's vectors, for cot [T, N] and out [2][N]; it reports false for
// the scalar instruction set. Each lane sums over t in the scalar loop's order.
func sumsVector(isa ISA, xs, cot, out []float32) bool {
	switch isa {
	case AVX512:
		sums16(xs, cot, out)
	case AVX2:
		sums8(xs, cot, out)
	default:
		return false
	}
	return true
}

func sums16(xs, cot, out []float32) {
	n := len(out) / 2
	for i := 0; i < n; i += lanes16 {
		part := min(lanes16, n-i)
		var sw, sb vec16
		for t := range xs {
			c, _ := archsimd.LoadFloat32x16Part(cot[t*n+i : t*n+i+part])
			sw = sw.Add(c.Mul(archsimd.BroadcastFloat32x16(xs[t])))
			sb = sb.Add(c)
		}
		sw.StorePart(out[i : i+part])
		sb.StorePart(out[n+i : n+i+part])
	}
	archsimd.ClearAVXUpperBits()
}

func sums8(xs, cot, out []float32) {
	n := len(out) / 2
	for i := 0; i < n; i += lanes8 {
		part := min(lanes8, n-i)
		var sw, sb vec8
		for t := range xs {
			c, _ := archsimd.LoadFloat32x8Part(cot[t*n+i : t*n+i+part])
			sw = sw.Add(c.Mul(archsimd.BroadcastFloat32x8(xs[t])))
			sb = sb.Add(c)
		}
		sw.StorePart(out[i : i+part])
		sb.StorePart(out[n+i : n+i+part])
	}
	archsimd.ClearAVXUpperBits()
}

// timeSumVector is timeSum's loop in isa's vectors; it reports false for the scalar instruction set.
func timeSumVector(isa ISA, h, dst []float32) bool {
	switch isa {
	case AVX512:
		timeSum16(h, dst)
	case AVX2:
		timeSum8(h, dst)
	default:
		return false
	}
	return true
}

func timeSum16(h, dst []float32) {
	n := len(dst)
	for i := 0; i < n; i += lanes16 {
		part := min(lanes16, n-i)
		var acc vec16
		for r := i; r < len(h); r += n {
			v, _ := archsimd.LoadFloat32x16Part(h[r : r+part])
			acc = acc.Add(v)
		}
		acc.StorePart(dst[i : i+part])
	}
	archsimd.ClearAVXUpperBits()
}

func timeSum8(h, dst []float32) {
	n := len(dst)
	for i := 0; i < n; i += lanes8 {
		part := min(lanes8, n-i)
		var acc vec8
		for r := i; r < len(h); r += n {
			v, _ := archsimd.LoadFloat32x8Part(h[r : r+part])
			acc = acc.Add(v)
		}
		acc.StorePart(dst[i : i+part])
	}
	archsimd.ClearAVXUpperBits()
}

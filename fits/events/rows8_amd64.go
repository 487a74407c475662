//go:build goexperiment.simd && amd64

package events

import "simd/archsimd"

// The AVX2 row kernels: 8 outputs per instruction. rows16_amd64.go is this file for AVX-512, generated from
// it (go test ./fits/events -run TestRows16Generated -update); edit this one. The rules of vector_amd64.go
// hold: no legacy-SSE instruction (TestNoLegacySSE), VZEROUPPER at the end, never inlined.

// lanes8 is the number of outputs one instruction of these kernels handles.
const lanes8 = 8

// forwardRow8 is forwardRowScalar with the row of y held in registers, 4·lanes8 outputs at a time (then
// lanes8, then the rest with masked loads), while every event's row of W is added: per output, the same
// multiplies and adds in the same order as the scalar code. Each event's value is broadcast to every lane.
//
//go:noinline
func forwardRow8(idx []int32, vals, w, b, y []float32) {
	out := len(y)
	j := 0
	for ; j+4*lanes8 <= out; j += 4 * lanes8 {
		a0 := archsimd.LoadFloat32x8(b[j : j+lanes8])
		a1 := archsimd.LoadFloat32x8(b[j+lanes8 : j+2*lanes8])
		a2 := archsimd.LoadFloat32x8(b[j+2*lanes8 : j+3*lanes8])
		a3 := archsimd.LoadFloat32x8(b[j+3*lanes8 : j+4*lanes8])
		for k, i := range idx {
			v := archsimd.BroadcastFloat32x8(vals[k])
			row := w[int(i)*out+j : int(i)*out+j+4*lanes8]
			a0 = a0.Add(v.Mul(archsimd.LoadFloat32x8(row[0:lanes8])))
			a1 = a1.Add(v.Mul(archsimd.LoadFloat32x8(row[lanes8 : 2*lanes8])))
			a2 = a2.Add(v.Mul(archsimd.LoadFloat32x8(row[2*lanes8 : 3*lanes8])))
			a3 = a3.Add(v.Mul(archsimd.LoadFloat32x8(row[3*lanes8 : 4*lanes8])))
		}
		a0.Store(y[j : j+lanes8])
		a1.Store(y[j+lanes8 : j+2*lanes8])
		a2.Store(y[j+2*lanes8 : j+3*lanes8])
		a3.Store(y[j+3*lanes8 : j+4*lanes8])
	}
	for ; j+lanes8 <= out; j += lanes8 {
		a := archsimd.LoadFloat32x8(b[j : j+lanes8])
		for k, i := range idx {
			v := archsimd.BroadcastFloat32x8(vals[k])
			a = a.Add(v.Mul(archsimd.LoadFloat32x8(w[int(i)*out+j : int(i)*out+j+lanes8])))
		}
		a.Store(y[j : j+lanes8])
	}
	if j < out {
		a := loadPart8(b[j:out])
		for k, i := range idx {
			v := archsimd.BroadcastFloat32x8(vals[k])
			a = a.Add(v.Mul(loadPart8(w[int(i)*out+j : (int(i)+1)*out])))
		}
		a.StorePart(y[j:out])
	}
	archsimd.ClearAVXUpperBits()
}

// gradRow8 is gradRowScalar with c held in registers, 4·lanes8 entries at a time (then lanes8, then the
// rest with masked loads and stores): per entry of g, the same multiplies and adds in the same order as the
// scalar code.
//
//go:noinline
func gradRow8(idx []int32, vals, c, g []float32) {
	out := len(c)
	j := 0
	for ; j+4*lanes8 <= out; j += 4 * lanes8 {
		c0 := archsimd.LoadFloat32x8(c[j : j+lanes8])
		c1 := archsimd.LoadFloat32x8(c[j+lanes8 : j+2*lanes8])
		c2 := archsimd.LoadFloat32x8(c[j+2*lanes8 : j+3*lanes8])
		c3 := archsimd.LoadFloat32x8(c[j+3*lanes8 : j+4*lanes8])
		for k, i := range idx {
			v := archsimd.BroadcastFloat32x8(vals[k])
			row := g[int(i)*out+j : int(i)*out+j+4*lanes8]
			archsimd.LoadFloat32x8(row[0:lanes8]).Add(v.Mul(c0)).Store(row[0:lanes8])
			archsimd.LoadFloat32x8(row[lanes8 : 2*lanes8]).Add(v.Mul(c1)).Store(row[lanes8 : 2*lanes8])
			archsimd.LoadFloat32x8(row[2*lanes8 : 3*lanes8]).Add(v.Mul(c2)).Store(row[2*lanes8 : 3*lanes8])
			archsimd.LoadFloat32x8(row[3*lanes8 : 4*lanes8]).Add(v.Mul(c3)).Store(row[3*lanes8 : 4*lanes8])
		}
	}
	for ; j+lanes8 <= out; j += lanes8 {
		cv := archsimd.LoadFloat32x8(c[j : j+lanes8])
		for k, i := range idx {
			v := archsimd.BroadcastFloat32x8(vals[k])
			row := g[int(i)*out+j : int(i)*out+j+lanes8]
			archsimd.LoadFloat32x8(row).Add(v.Mul(cv)).Store(row)
		}
	}
	if j < out {
		cv := loadPart8(c[j:out])
		for k, i := range idx {
			v := archsimd.BroadcastFloat32x8(vals[k])
			row := g[int(i)*out+j : (int(i)+1)*out]
			loadPart8(row).Add(v.Mul(cv)).StorePart(row)
		}
	}
	archsimd.ClearAVXUpperBits()
}

// loadPart8 loads the first min(len(s), lanes8) elements of s, the other lanes zero.
func loadPart8(s []float32) archsimd.Float32x8 {
	v, _ := archsimd.LoadFloat32x8Part(s)
	return v
}

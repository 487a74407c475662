package espeak

import "math"

// resampleHalfWidth is the half-width of the interpolation kernel, in samples of the lower rate.
const resampleHalfWidth = 16

// Resample converts x from rate `from` to rate `to` (Hz) by band-limited interpolation: each output
// sample is a sum of input samples weighted by a Hann-windowed sinc whose cutoff is the lower of
// the two Nyquist frequencies (so downsampling also low-pass filters). The output covers the same
// duration, len(x)·to/from samples.
func Resample(x []float64, from, to int) []float64 {
	if from == to {
		return append([]float64(nil), x...)
	}
	n := int(int64(len(x)) * int64(to) / int64(from))
	out := make([]float64, n)
	fc := math.Min(1, float64(to)/float64(from)) // cutoff relative to the input Nyquist
	half := float64(resampleHalfWidth) / fc      // kernel half-width in input samples
	step := float64(from) / float64(to)
	for i := range out {
		c := float64(i) * step
		lo := max(0, int(math.Ceil(c-half)))
		hi := min(len(x)-1, int(math.Floor(c+half)))
		var s float64
		for k := lo; k <= hi; k++ {
			d := float64(k) - c
			w := 0.5 * (1 + math.Cos(math.Pi*d/half))
			s += x[k] * fc * sinc(fc*d) * w
		}
		out[i] = s
	}
	return out
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

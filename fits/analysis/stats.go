package analysis

import (
	"fmt"
	"math"
	"slices"
)

// Summary describes a sample of values: its size, mean and sample standard deviation (n − 1 in the
// denominator; 0 for fewer than two values), extremes and quantiles. Quantiles interpolate linearly
// between order statistics (the sample quantile of type 7: position q·(n−1) in the sorted values).
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
	Min    float64 `json:"min"`
	Q10    float64 `json:"q10"`
	Q25    float64 `json:"q25"`
	Median float64 `json:"median"`
	Q75    float64 `json:"q75"`
	Q90    float64 `json:"q90"`
	Max    float64 `json:"max"`
}

// Summarize returns the summary of v (all zero for an empty v). NaN values are skipped.
func Summarize(v []float64) Summary {
	s := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return Summary{}
	}
	slices.Sort(s)
	mean, std := MeanStd(s)
	return Summary{
		N: len(s), Mean: mean, Std: std, Min: s[0], Max: s[len(s)-1],
		Q10: quantileSorted(s, 0.10), Q25: quantileSorted(s, 0.25), Median: quantileSorted(s, 0.5),
		Q75: quantileSorted(s, 0.75), Q90: quantileSorted(s, 0.90),
	}
}

// MeanStd returns the mean and the sample standard deviation (n − 1 in the denominator) of v: the
// "mean ± std over seeds" of the paper's tables. The standard deviation is 0 for fewer than two values;
// both are NaN for an empty v.
func MeanStd(v []float64) (mean, std float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// Median returns the median of v (NaN for an empty v).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return quantileSorted(s, 0.5)
}

// quantileSorted returns the q-quantile of the sorted, non-empty s (linear interpolation, type 7).
func quantileSorted(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (pos-float64(lo))*(s[hi]-s[lo])
}

// Histogram counts values in Bins equal-width bins over [Lo, Hi]: bin i holds Lo + i·w ≤ x < Lo + (i+1)·w
// with w = (Hi − Lo)/Bins, the last bin also holding x = Hi. Values outside [Lo, Hi] are counted in
// Below and Above; NaN values are not counted.
type Histogram struct {
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Counts []int   `json:"counts"`
	Below  int     `json:"below,omitempty"`
	Above  int     `json:"above,omitempty"`
}

// NewHistogram returns an empty histogram of bins bins over [lo, hi]. It fails unless bins ≥ 1 and
// lo < hi are finite.
func NewHistogram(lo, hi float64, bins int) (*Histogram, error) {
	if bins < 1 || !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("histogram needs at least one bin over a finite range lo < hi, got %d bins over [%g, %g]", bins, lo, hi)
	}
	return &Histogram{Lo: lo, Hi: hi, Counts: make([]int, bins)}, nil
}

// Add counts the values v.
func (h *Histogram) Add(v ...float64) {
	n := len(h.Counts)
	w := (h.Hi - h.Lo) / float64(n)
	for _, x := range v {
		switch {
		case math.IsNaN(x):
		case x < h.Lo:
			h.Below++
		case x > h.Hi:
			h.Above++
		default:
			h.Counts[min(int((x-h.Lo)/w), n-1)]++
		}
	}
}

// histogramOf returns a histogram of v with bins bins over [lo, hi], or, when lo ≥ hi, over the range
// of v (widened by one unit either side when all values are equal or v is empty).
func histogramOf(v []float64, lo, hi float64, bins int) (*Histogram, error) {
	if !(lo < hi) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, x := range v {
			if !math.IsNaN(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
		if !(lo < hi) {
			if math.IsInf(lo, 0) {
				lo, hi = 0, 0
			}
			lo, hi = lo-1, hi+1
		}
	}
	h, err := NewHistogram(lo, hi, bins)
	if err != nil {
		return nil, err
	}
	h.Add(v...)
	return h, nil
}

package theory

import (
	"fmt"
	"math"
)

// LinearSpacedHz returns n target frequencies spaced evenly over [fmin, fmax] (the released code's
// "linear" initialization, used for sMNIST): f_i = fmin + (fmax − fmin)·i/(n−1), i = 0..n−1, ascending,
// with exact endpoints. n = 1 gives [fmin].
func LinearSpacedHz(fmin, fmax float64, n int) ([]float64, error) {
	if err := checkSpacing(fmin, fmax, n); err != nil {
		return nil, err
	}
	out := []float64{fmin}
	for i := 1; i < n; i++ {
		out = append(out, fmin+(fmax-fmin)*float64(i)/float64(n-1))
	}
	if n > 1 {
		out[n-1] = fmax
	}
	return out, nil
}

// LogSpacedHz returns n target frequencies in Hz spaced evenly on a log scale over [fmin, fmax]
// (the paper's log-scale target-frequency initialization): f_i = fmin·(fmax/fmin)^{i/(n−1)},
// i = 0..n−1, ascending, with exact endpoints. n = 1 gives [fmin].
func LogSpacedHz(fmin, fmax float64, n int) ([]float64, error) {
	if err := checkSpacing(fmin, fmax, n); err != nil {
		return nil, err
	}
	return LogSpace(fmin, fmax, n), nil
}

// checkSpacing reports whether n ≥ 1 target frequencies can be spaced over [fmin, fmax] Hz.
func checkSpacing(fmin, fmax float64, n int) error {
	if n < 1 {
		return fmt.Errorf("need at least one neuron, got n = %d", n)
	}
	if !(fmin > 0) || !(fmax >= fmin) || math.IsInf(fmax, 0) {
		return fmt.Errorf("need 0 < fmin <= fmax < inf, got [%g, %g] Hz", fmin, fmax)
	}
	return nil
}

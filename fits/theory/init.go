package theory

import (
	"fmt"
	"math"
)

// LogSpacedHz returns n target frequencies in Hz spaced evenly on a log scale over [fmin, fmax]
// (the paper's log-scale target-frequency initialization): f_i = fmin·(fmax/fmin)^{i/(n−1)},
// i = 0..n−1, ascending, with exact endpoints. n = 1 gives [fmin].
func LogSpacedHz(fmin, fmax float64, n int) ([]float64, error) {
	if n < 1 {
		return nil, fmt.Errorf("need at least one neuron, got n = %d", n)
	}
	if !(fmin > 0) || !(fmax >= fmin) || math.IsInf(fmax, 0) {
		return nil, fmt.Errorf("need 0 < fmin <= fmax < inf, got [%g, %g] Hz", fmin, fmax)
	}
	return LogSpace(fmin, fmax, n), nil
}

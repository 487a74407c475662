package nb

import (
	"math"

	"github.com/fits-snn/fits/fits/theory"
)

// DTExactErrors answers, for learned target frequencies fHz (Hz), what the DT-exact parameterization
// would realize: each target is mapped to κ by the DT-exact inverse (theory.Constants.KappaDTExact) and
// the realized discrete-time target is found by sweeping the semi-implicit FS module's magnitude
// response (theory.Constants.DTSweepTargetHz, independent of Theorem 2). It returns the mean and the
// largest absolute difference in Hz over the n targets that have one; skipped counts the others (f* not
// in (0, Nyquist), or no peak inside (0, π)). By construction the errors are those of the sweep's
// resolution, far below the CT parameterization's (Table 5).
func DTExactErrors(c theory.Constants, fHz []float64) (maeHz, maxHz float64, n, skipped int) {
	for _, f := range fHz {
		k, err := c.KappaDTExact(f)
		if err != nil {
			skipped++
			continue
		}
		got, ok := c.DTSweepTargetHz(k)
		if !ok {
			skipped++
			continue
		}
		d := math.Abs(got - f)
		maeHz += d
		maxHz = math.Max(maxHz, d)
		n++
	}
	if n > 0 {
		maeHz /= float64(n)
	}
	return maeHz, maxHz, n, skipped
}

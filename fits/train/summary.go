package train

import "fmt"

// SelectedTestAcc returns the test accuracy that the run's protocol reports (a fraction in [0, 1]): the
// best test accuracy over the epochs under best-test, the test accuracy at the epoch of best validation
// accuracy under val-split and official-val, and the last epoch's under final-epoch. It fails when the
// result has no epochs, names an unknown protocol, or lacks the validation numbers its protocol needs.
func (r *Result) SelectedTestAcc() (float64, error) {
	if len(r.Epochs) == 0 {
		return 0, fmt.Errorf("result of %s on %s (seed %d) has no finished epoch", r.Model, r.Dataset, r.Seed)
	}
	switch r.Protocol {
	case BestTest:
		return r.BestTestAcc, nil
	case ValSplit, OfficialVal:
		if r.TestAccAtBestVal == nil {
			return 0, fmt.Errorf("result of %s on %s (seed %d): protocol %s but no validation accuracy", r.Model, r.Dataset, r.Seed, r.Protocol)
		}
		return *r.TestAccAtBestVal, nil
	case FinalEpoch:
		return r.FinalTestAcc, nil
	}
	return 0, fmt.Errorf("result of %s on %s (seed %d): unknown protocol %q", r.Model, r.Dataset, r.Seed, r.Protocol)
}

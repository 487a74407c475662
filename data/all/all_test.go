package all

import (
	"slices"
	"testing"

	"github.com/fits-snn/fits/data"
)

func TestRegistered(t *testing.T) {
	names := data.Names()
	for _, n := range []string{"synthetic", "smnist", "smnist-row", "shd", "shd-val", "ssc", "gsc", "dvsgesture", "espeak-digits"} {
		if !slices.Contains(names, n) || data.Summary(n) == "" {
			t.Errorf("dataset %q not registered (have %v)", n, names)
		}
	}
}

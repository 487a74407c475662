package sim

import "math/rand/v2"

// lifTwin is the twin of kind "lif": plain LIF (Eq. 1), η = γ = 0, no variables.
type lifTwin struct{}

func init() { RegisterTwin("lif", lifTwin{}) }

func (lifTwin) Variables(Layer) []string { return nil }

func (lifTwin) Params(l Layer, v Vars) (Params, error) {
	if err := v.checkNames(nil); err != nil {
		return Params{}, err
	}
	return l.base()
}

func (lifTwin) Sample(*rand.Rand, Layer) Vars { return Vars{} }

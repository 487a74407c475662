package selftest

import (
	"fmt"
	"slices"

	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/internal/golden"
	"github.com/fits-snn/fits/internal/goldennet"
	"github.com/gomlx/compute"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Tolerances of the golden checks: the float32 engines against the float64 PyTorch steps of the released
// code (as fits/step's TestGoldenSteps holds them).
const (
	goldenLossTol = 2e-6
	goldenGradTol = 2e-4
	// goldenGradFloor is the absolute floor a of the gradient error: goldenGradTol·(s + a) = 2e-4·s + 1e-7.
	goldenGradFloor = 5e-4
)

// goldenJobs returns one job per golden case, each running the engines assigned to it: of the cases with
// the same M (in the file's order), engine i of step.Names runs case (i + M) mod (cases of that M).
func goldenJobs(backend compute.Backend, engines []string, perturb *Perturbation) ([]job, error) {
	cases, err := golden.Steps()
	if err != nil {
		return nil, err
	}
	byM := map[int][]string{}
	for _, c := range cases {
		byM[c.M] = append(byM[c.M], c.Name)
	}
	var jobs []job
	for _, c := range cases {
		var mine []string
		for _, e := range engines {
			i := slices.Index(step.Names(), e)
			same := byM[c.M]
			if same[(i+c.M)%len(same)] == c.Name {
				mine = append(mine, e)
			}
		}
		if len(mine) == 0 {
			continue
		}
		jobs = append(jobs, job{"golden/" + c.Name, func() []Row { return runGoldenCase(backend, c, mine, perturb) }})
	}
	return jobs, nil
}

// runGoldenCase runs one training step of the golden case c with each engine and compares the loss and
// every gradient with the golden ones.
func runGoldenCase(backend compute.Backend, c golden.StepCase, engines []string, perturb *Perturbation) []Row {
	name := "golden/" + c.Name
	want := map[string][]float64{}
	for p, g := range c.Grads {
		scope, vn := goldennet.Variable(p)
		want[scope+"/"+vn] = g.Data
	}
	var rows []Row
	for _, e := range engines {
		r, err := goldenStep(backend, c, e)
		if err != nil {
			rows = append(rows, failed(e, name+"/loss", err))
			continue
		}
		perturb.apply(e, &r.loss, r.grads)
		rows = append(rows, check(e, name+"/loss", lossError(r.loss, c.Loss), goldenLossTol),
			check(e, name+"/gradients", gradError(r.grads, want, goldenGradFloor), goldenGradTol))
	}
	return rows
}

// goldenStep runs one training step of the golden case c with engine e, on the golden parameters, batch
// and dropout masks.
func goldenStep(backend compute.Backend, c golden.StepCase, e string) (result, error) {
	net, err := goldennet.Net(c)
	if err != nil {
		return result{}, err
	}
	scope := mlmodel.NewStore().RootScope()
	if err := step.InitVariables(backend, scope.At("model"), net); err != nil {
		return result{}, err
	}
	if err := goldennet.SetParams(scope.Store(), c); err != nil {
		return result{}, err
	}
	x, labels, mask := goldennet.Inputs(c)
	batch := step.Batch{X: x, Labels: labels, Mask: mask}
	if c.Dropout > 0 {
		batch.StepMasks = &step.StepMasks{Seed: c.MaskSeed, Step: c.MaskStep}
	}
	r, err := stepOnce(backend, e, scope, net, batch, float64(c.Batch))
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", e, err)
	}
	return r, nil
}

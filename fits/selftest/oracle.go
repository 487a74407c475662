package selftest

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// The oracle network: [batch, time, inputs] = [4, 8, 4], two dense blocks of 6 neurons, 3 classes, the
// last example padding.
const (
	oracleBatch, oracleTime, oracleInputs = 4, 8, 4
	oracleWidth, oracleClasses            = 6, 3
	oracleValid                           = oracleBatch - 1
	// oracleMargin is the least |Ṽ − Vth| of the float64 forward the drawn inputs must keep, so float32
	// decides every spike the same way.
	oracleMargin = 1e-3
)

// Tolerances of the oracle checks: a float32 forward against the float64 one with the same spikes, and
// an engine's gradients against the unrolled engine's (as fits/step's TestEnginesMatchUnrolled holds them).
const (
	oracleLossTol  = 1e-5
	oracleRatesTol = 1e-5
	unrolledTol    = 2e-4
	// unrolledFloor gives unrolledTol·(s + a) = 2e-4·s + 2e-6.
	unrolledFloor = 1e-2
)

// kindCase is a neuron kind at one TS order.
type kindCase struct {
	name string
	kind neuron.Kind
	m    int
}

// kindCases returns every registered kind at every TS order 0–3 it takes.
func kindCases() []kindCase {
	var out []kindCase
	for _, k := range neuron.Kinds() {
		for m := range 4 {
			if k.CheckOrder(m) == nil {
				out = append(out, kindCase{fmt.Sprintf("%s-M%d", k, m), k, m})
			}
		}
	}
	return out
}

// oracleNet returns the oracle network of a kind case.
func oracleNet(kc kindCase) model.Net {
	cfg := model.DefaultConfig(kc.kind, kc.m, oracleWidth, oracleClasses)
	cfg.Readout = model.ReadoutSum
	return cfg.Net(oracleInputs)
}

// simLayer returns the layer constants of cfg as the twins of package sim take them.
func simLayer(cfg neuron.Config) sim.Layer {
	kf := cmp.Or(cfg.KappaFraction, neuron.DefaultKappaFraction)
	return sim.Layer{
		TauM: cfg.TauM, TauA: cfg.TauA, Dt: cfg.Dt, Vth: cfg.Vth,
		EtaGammaRatio: cfg.EtaGammaRatio, Order: cfg.Order, DTExact: cfg.DTExact, KappaFraction: kf,
		Nesting: cfg.TSMix.Nesting(), LogTargetHz: cfg.TargetCoordinate != neuron.TargetOmega,
		ForwardClip: cfg.ForwardClip, AdaptLIFLearnable: cfg.AdaptLIFLearnable,
	}
}

// oracleData are the drawn values of the oracle network and its float64 forward.
type oracleData struct {
	x       []float64   // [batch, time, inputs]
	weights [][]float64 // per dense map (blocks, then readout): [in, out]
	biases  [][]float64 // [out]
	labels  []int32
	loss    float64   // mean cross-entropy over the valid examples
	rates   []float64 // per block: Σ over valid examples of the mean spike per neuron and bin
}

// runKindCase draws the oracle network of kc, computes its float64 forward, and checks each engine's
// loss and rates against it and its gradients against the unrolled engine's.
func runKindCase(backend compute.Backend, kc kindCase, engines []string, perturb *Perturbation) []Row {
	name := "oracle/" + kc.name
	fail := func(err error) []Row {
		var rows []Row
		for _, e := range engines {
			rows = append(rows, failed(e, name+"/loss", err))
		}
		return rows
	}
	net := oracleNet(kc)
	scope := mlmodel.NewStore().RootScope()
	if err := scope.Store().SetRNGStateFromSeed(1); err != nil {
		return fail(err)
	}
	if err := step.InitVariables(backend, scope.At("model"), net); err != nil {
		return fail(err)
	}
	params, err := neuronParams(scope.Store(), net)
	if err != nil {
		return fail(err)
	}
	data, err := drawOracle(kc.name, net, params)
	if err != nil {
		return fail(err)
	}
	if err := setDense(scope.Store(), net, data); err != nil {
		return fail(err)
	}
	batch := oracleBatchOf(data)

	ref, err := stepOnce(backend, step.Unrolled, scope, net, batch, oracleValid)
	if err != nil {
		return fail(fmt.Errorf("the unrolled reference: %w", err))
	}
	want := map[string][]float64{}
	for path, g := range ref.grads {
		want[path] = convertFloats[float64](g)
	}
	var rows []Row
	for _, e := range engines {
		r := ref
		if e != step.Unrolled {
			if r, err = stepOnce(backend, e, scope, net, batch, oracleValid); err != nil {
				rows = append(rows, failed(e, name+"/loss", err))
				continue
			}
		} else {
			r.grads = map[string][]float32{}
			for p, g := range ref.grads {
				r.grads[p] = append([]float32(nil), g...)
			}
		}
		perturb.apply(e, &r.loss, r.grads)
		rateErr := math.Inf(1)
		if len(r.rates) == len(data.rates) {
			rateErr = 0
			for i := range r.rates {
				rateErr = math.Max(rateErr, math.Abs(r.rates[i]-data.rates[i]))
			}
		}
		rows = append(rows, check(e, name+"/loss", lossError(r.loss, data.loss), oracleLossTol),
			check(e, name+"/rates", rateErr, oracleRatesTol))
		if e != step.Unrolled {
			rows = append(rows, check(e, name+"/gradients", gradError(r.grads, want, unrolledFloor), unrolledTol))
		}
	}
	return rows
}

// neuronParams returns, per block and neuron, the constants of Algorithm 1 that the kind's twin maps the
// block's neuron variables (as initialized) to.
func neuronParams(store *mlmodel.Store, net model.Net) ([][]sim.Params, error) {
	out := make([][]sim.Params, len(net.Blocks))
	for bi, b := range net.Blocks {
		twin, err := sim.LookupTwin(string(b.Neuron.Kind))
		if err != nil {
			return nil, err
		}
		l := simLayer(b.Neuron)
		n := net.OutSize(bi)
		vars := make([]sim.Vars, n)
		for i := range vars {
			vars[i] = sim.Vars{}
		}
		for _, vn := range twin.Variables(l) {
			v := store.GetVariable(mlmodel.JoinPath("/model", b.Scope, "neuron", vn))
			if v == nil {
				return nil, fmt.Errorf("block %s: no neuron variable %s", b.Scope, vn)
			}
			t, err := v.Value()
			if err != nil {
				return nil, err
			}
			vals, err := tensors.CopyFlatData[float32](t)
			if err != nil {
				return nil, err
			}
			per := len(vals) / n
			for i := range n {
				for j := range per {
					vars[i][vn] = append(vars[i][vn], float64(vals[j*n+i]))
				}
			}
		}
		out[bi] = make([]sim.Params, n)
		for i, v := range vars {
			if out[bi][i], err = twin.Params(l, v); err != nil {
				return nil, fmt.Errorf("block %s neuron %d: %w", b.Scope, i, err)
			}
		}
	}
	return out, nil
}

// drawOracle draws weights, biases and inputs (rounded to float32) from a seed of the case's name until
// the float64 forward keeps every pre-reset voltage oracleMargin away from the threshold and every block
// fires between 5 % and 80 % of its bins.
func drawOracle(name string, net model.Net, params [][]sim.Params) (oracleData, error) {
	h := fnv.New64a()
	h.Write([]byte(name))
	for attempt := range 500 {
		rng := rand.New(rand.NewPCG(h.Sum64(), uint64(attempt)))
		uniform := func(n int, lo, hi float64) []float64 {
			out := make([]float64, n)
			for i := range out {
				out[i] = float64(float32(lo + (hi-lo)*rng.Float64()))
			}
			return out
		}
		d := oracleData{x: uniform(oracleBatch*oracleTime*oracleInputs, 0, 1)}
		in := oracleInputs
		for bi := range net.Blocks {
			out := net.OutSize(bi)
			d.weights = append(d.weights, uniform(in*out, -1.2, 1.2))
			d.biases = append(d.biases, uniform(out, -0.1, 0.3))
			in = out
		}
		d.weights = append(d.weights, uniform(in*oracleClasses, -0.5, 0.5))
		d.biases = append(d.biases, uniform(oracleClasses, -0.1, 0.1))
		for i := range oracleBatch {
			d.labels = append(d.labels, int32(i%oracleClasses))
		}
		ok, err := d.forward(params)
		if err != nil {
			return d, err
		}
		if ok {
			return d, nil
		}
	}
	return oracleData{}, fmt.Errorf("%s: no inputs found that keep the voltages %g away from the threshold", name, oracleMargin)
}

// forward computes the float64 forward of d: the loss and the rates. It reports false when a pre-reset
// voltage comes within oracleMargin of the threshold or a block fires in under 5 % or over 80 % of its
// bins.
func (d *oracleData) forward(params [][]sim.Params) (bool, error) {
	h, in := d.x, oracleInputs
	d.rates = make([]float64, len(params))
	for bi, ps := range params {
		out := len(ps)
		spikes := make([]float64, oracleBatch*oracleTime*out)
		fired := 0
		for b := range oracleBatch {
			for n := range out {
				cur := make([]float64, oracleTime)
				for t := range oracleTime {
					c := d.biases[bi][n]
					for i := range in {
						c += h[(b*oracleTime+t)*in+i] * d.weights[bi][i*out+n]
					}
					cur[t] = c
				}
				tr, err := sim.Run(ps[n], cur)
				if err != nil {
					return false, err
				}
				for t, s := range tr.Spikes {
					if math.Abs(tr.VPre[t]-ps[n].Vth) < oracleMargin {
						return false, nil
					}
					spikes[(b*oracleTime+t)*out+n] = float64(s)
					fired += s
					if b < oracleValid {
						d.rates[bi] += float64(s) / float64(oracleTime*out)
					}
				}
			}
		}
		if frac := float64(fired) / float64(len(spikes)); frac < 0.05 || frac > 0.8 {
			return false, nil
		}
		h, in = spikes, out
	}
	// Sum readout: logits = (Σ_t s[t])·W + b; the mean cross-entropy over the valid examples.
	ro := len(params)
	d.loss = 0
	for b := range oracleValid {
		logits := slices.Clone(d.biases[ro])
		for t := range oracleTime {
			for i := range in {
				s := h[(b*oracleTime+t)*in+i]
				for c := range oracleClasses {
					logits[c] += s * d.weights[ro][i*oracleClasses+c]
				}
			}
		}
		top := math.Inf(-1)
		for _, z := range logits {
			top = math.Max(top, z)
		}
		sum := 0.0
		for _, z := range logits {
			sum += math.Exp(z - top)
		}
		d.loss += top + math.Log(sum) - logits[d.labels[b]]
	}
	d.loss /= oracleValid
	return true, nil
}

// setDense writes the drawn weights and biases into the dense maps' variables.
func setDense(store *mlmodel.Store, net model.Net, d oracleData) error {
	scopes := make([]string, 0, len(net.Blocks)+1)
	for _, b := range net.Blocks {
		scopes = append(scopes, b.Scope)
	}
	scopes = append(scopes, "readout")
	for i, s := range scopes {
		for _, p := range []struct {
			name string
			vals []float64
		}{{"weights", d.weights[i]}, {"biases", d.biases[i]}} {
			v := store.GetVariable(mlmodel.JoinPath("/model", s, "dense", p.name))
			if v == nil {
				return fmt.Errorf("no variable /model/%s/dense/%s", s, p.name)
			}
			vals := convertFloats[float32](p.vals)
			if v.Shape().Size() != len(vals) {
				return fmt.Errorf("variable %s holds %d values, drew %d", v.Path(), v.Shape().Size(), len(vals))
			}
			if err := v.SetValue(tensors.FromFlatDataAndDimensions(vals, v.Shape().Dimensions...)); err != nil {
				return err
			}
		}
	}
	return nil
}

// oracleBatchOf returns the batch of d: the last example is padding.
func oracleBatchOf(d oracleData) step.Batch {
	x := convertFloats[float32](d.x)
	mask := make([]float32, oracleBatch)
	for i := range oracleValid {
		mask[i] = 1
	}
	return step.Batch{
		X:      tensors.FromFlatDataAndDimensions(x, oracleBatch, oracleTime, oracleInputs),
		Labels: tensors.FromFlatDataAndDimensions(d.labels, oracleBatch),
		Mask:   tensors.FromFlatDataAndDimensions(mask, oracleBatch),
	}
}

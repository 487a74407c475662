package neuron

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/sim"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// oracleCase is a layer configuration to hold against its kind's float64 twin in package sim.
type oracleCase struct {
	name string
	cfg  Config
	dims []int // input dimensions [batch, time, features...]
	// xla: also run on XLA CPU. Every case runs on SimpleGo, which has no compile step; XLA compiles the
	// unrolled graph for 20-55 s at T = 400 on a 2-core machine, so it runs fs M = 0 and fsts M = 3 only.
	xla bool
}

// oracleCases returns, for every registered kind, a case per accepted TS order among 0, 1 and 3, and the
// option variants (η/γ ratio 2.5; GSC constants with the DT-exact target; channel-shared parameters) at
// the kind's order 0, or 2 when it needs a TS order.
func oracleCases() []oracleCase {
	const T = 400
	var cases []oracleCase
	for _, kind := range Kinds() {
		for _, m := range []int{0, 1, 3} {
			if kind.CheckOrder(m) != nil {
				continue
			}
			cases = append(cases, oracleCase{fmt.Sprintf("%s M=%d", kind, m), DefaultConfig(kind, m), []int{2, T, 3},
				(kind == FS && m == 0) || (kind == FSTS && m == 3)})
		}
		m := 0
		if kind.CheckOrder(0) != nil {
			m = 2
		}
		for _, v := range []struct {
			name string
			edit func(*Config)
			dims []int
		}{
			{"ratio 2.5", func(c *Config) { c.EtaGammaRatio = 2.5 }, []int{2, T, 3}},
			{"gsc dt-exact", func(c *Config) { c.TauM, c.TauA, c.Dt, c.FMaxHz, c.DTExact = 0.1, 0.5, 0.01, 30, true }, []int{1, T, 3}},
			{"channel-shared", func(c *Config) { c.ChannelShared = true }, []int{1, T, 2, 3}},
			{"first form", func(c *Config) { // this toolkit's first semantics: paper nesting, Ω*, forward clip
				c.TSMix, c.TargetCoordinate, c.ForwardClip, c.AdaptLIFLearnable, c.Surrogate = TSMixPaper, TargetOmega, true, true, BellecSurrogate
			}, []int{2, T, 3}},
			{"linear f* omega", func(c *Config) { c.FInit, c.TargetCoordinate = FInitLinear, TargetOmega }, []int{1, T, 3}},
		} {
			cfg := DefaultConfig(kind, m)
			v.edit(&cfg)
			cases = append(cases, oracleCase{fmt.Sprintf("%s M=%d %s", kind, m, v.name), cfg, v.dims, false})
		}
	}
	return cases
}

// caseSeed returns a seed derived from a test case's name (FNV-1a).
func caseSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// simLayer returns the layer constants of cfg as package sim's twins take them.
func simLayer(cfg Config) sim.Layer {
	return sim.Layer{
		TauM: cfg.TauM, TauA: cfg.TauA, Dt: cfg.Dt, Vth: cfg.Vth,
		EtaGammaRatio: cfg.EtaGammaRatio, Order: cfg.Order, DTExact: cfg.DTExact,
		KappaFraction: cfg.kappaFraction(),
		Nesting:       cfg.TSMix.Nesting(), LogTargetHz: cfg.TargetCoordinate != TargetOmega,
		ForwardClip: cfg.ForwardClip, AdaptLIFLearnable: cfg.AdaptLIFLearnable,
	}
}

// wellDamped reports whether the subthreshold impulse response of the neuron decays by a factor 10⁴
// within 1000 steps.
func wellDamped(t *testing.T, sp sim.Params) bool {
	sp.Vth = math.MaxFloat64
	in := make([]float64, 1000)
	in[0] = 1
	tr, err := sim.Run(sp, in)
	if err != nil {
		t.Fatal(err)
	}
	peak := 0.0
	for _, v := range tr.VPre {
		peak = math.Max(peak, math.Abs(v))
	}
	tail := 0.0
	for _, v := range tr.VPre[900:] {
		tail = math.Max(tail, math.Abs(v))
	}
	return tail < 1e-4*peak
}

// layerVariables returns the variables of scope's current scope by name (without GoMLX's internal ones,
// such as the random number generator's state).
func layerVariables(scope *model.Scope) map[string]*model.Variable {
	out := map[string]*model.Variable{}
	for v := range scope.Store().IterVariables() {
		if v.Scope() == scope.Scope() && !strings.HasPrefix(v.Name(), "#") {
			out[v.Name()] = v
		}
	}
	return out
}

// sampleNeurons draws the variables of p neurons with the twin, rounded to float32 as the graph holds them,
// redrawing a neuron whose subthreshold closed loop is unstable or barely damped: with the TS module inside
// the FS feedback loop (Algorithm 1), some (β, λ) destabilize a neuron whose FS module alone is stable.
func sampleNeurons(t *testing.T, rng *rand.Rand, twin sim.Twin, l sim.Layer, p int) ([]sim.Vars, []sim.Params) {
	t.Helper()
	vars, params := make([]sim.Vars, p), make([]sim.Params, p)
	for i := range p {
		for try := 0; ; try++ {
			if try == 100 {
				t.Fatal("no stable random parameters found")
			}
			v := twin.Sample(rng, l)
			for _, xs := range v {
				for j := range xs {
					xs[j] = float64(float32(xs[j]))
				}
			}
			sp, err := twin.Params(l, v)
			if err != nil {
				t.Fatal(err)
			}
			if wellDamped(t, sp) {
				vars[i], params[i] = v, sp
				break
			}
		}
	}
	return vars, params
}

// setNeurons writes the per-neuron values into the layer's variables: a variable of shape [k, P...] (or P,
// k = 1) holds value j of neuron i at j·|P| + i.
func setNeurons(t *testing.T, vars map[string]*model.Variable, neurons []sim.Vars) {
	t.Helper()
	p := len(neurons)
	for name, v := range vars {
		shape := v.Shape()
		per := shape.Size() / p
		vals := make([]float32, shape.Size())
		for i, nv := range neurons {
			if len(nv[name]) != per {
				t.Fatalf("variable %s of shape %s: the twin gives %d values per neuron, want %d", name, shape, len(nv[name]), per)
			}
			for j, x := range nv[name] {
				vals[j*p+i] = float32(x)
			}
		}
		v.MustSetValue(tensors.FromFlatDataAndDimensions(vals, shape.Dimensions...))
	}
}

// TestLayerMatchesSim runs the graph layer of every registered kind and its float64 twin in package sim on
// the same random variables (drawn by the twin) and inputs, and requires identical spikes and v_pre within
// 1e-4, up to the first step where the float64 voltage lies within 1e-4 of the threshold and the spikes
// differ there (float32 may legitimately decide such a tie the other way, after which the trajectories
// part); at least 90% of all steps must be compared. It also requires the layer's variables to be exactly
// those the cell and the twin name.
func TestLayerMatchesSim(t *testing.T) {
	cases := oracleCases()
	for _, tb := range testBackends(t) {
		for _, tc := range cases {
			if tb.name == "xla:cpu" && !tc.xla {
				continue
			}
			t.Run(tb.name+"/"+tc.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(caseSeed(tc.name), 7)) // independent of the other registered kinds
				twin, err := sim.LookupTwin(string(tc.cfg.Kind))
				if err != nil {
					t.Fatal(err)
				}
				l := simLayer(tc.cfg)
				pshape, err := ParamShape(tc.dims, tc.cfg.ChannelShared)
				if err != nil {
					t.Fatal(err)
				}
				p := paramSize(pshape)

				batch, steps := tc.dims[0], tc.dims[1]
				nf := 1
				for _, d := range tc.dims[2:] {
					nf *= d
				}
				in := make([]float32, batch*steps*nf)
				for i := range in {
					in[i] = float32(0.3 + 0.6*rng.NormFloat64())
				}
				input := tensors.FromFlatDataAndDimensions(in, tc.dims...)
				scope := model.NewStore().RootScope()
				exec := model.MustNewExec(tb.b, scope.Store(), func(_ *model.Scope, x *Node) []*Node {
					s, v := LayerWithVoltage(scope, x, tc.cfg)
					return []*Node{s, v}
				})
				exec.MustCall(input) // creates the variables with their initial values

				vars := layerVariables(scope)
				cell, _ := tc.cfg.Kind.Cell()
				got := slices.Sorted(maps.Keys(vars))
				fromCell, fromTwin := slices.Sorted(slices.Values(cell.Variables(tc.cfg))), slices.Sorted(slices.Values(twin.Variables(l)))
				if !slices.Equal(got, fromCell) || !slices.Equal(got, fromTwin) {
					t.Fatalf("layer variables %v; the cell names %v, the twin %v", got, fromCell, fromTwin)
				}
				neurons, params := sampleNeurons(t, rng, twin, l, p)
				setNeurons(t, vars, neurons)
				out := exec.MustCall(input)
				gotS := tensors.MustCopyFlatData[float32](out[0])
				gotV := tensors.MustCopyFlatData[float32](out[1])

				compared, total, spikes, maxDiff := 0, 0, 0, 0.0
				for b := range batch {
					for f := range nf {
						pi := f
						if tc.cfg.ChannelShared {
							pi = f % pshape[0]
						}
						cur := make([]float64, steps)
						for k := range steps {
							cur[k] = float64(in[(b*steps+k)*nf+f])
						}
						tr, err := sim.Run(params[pi], cur)
						if err != nil {
							t.Fatal(err)
						}
						total += steps
						for k := range steps {
							idx := (b*steps+k)*nf + f
							if math.Abs(tr.VPre[k]-tc.cfg.Vth) < 1e-4 && float32(tr.Spikes[k]) != gotS[idx] {
								break // a legitimate float32/float64 flip at a near-threshold tie
							}
							if int(gotS[idx]) != tr.Spikes[k] || float32(tr.Spikes[k]) != gotS[idx] {
								t.Fatalf("batch %d neuron %d step %d: spike %g, sim %d (v_pre %g, sim %g)",
									b, f, k, gotS[idx], tr.Spikes[k], gotV[idx], tr.VPre[k])
							}
							if d := math.Abs(float64(gotV[idx]) - tr.VPre[k]); d > 1e-4*math.Max(1, math.Abs(tr.VPre[k])) {
								t.Fatalf("batch %d neuron %d step %d: v_pre %g, sim %g (|diff| %g)",
									b, f, k, gotV[idx], tr.VPre[k], d)
							}
							maxDiff = math.Max(maxDiff, math.Abs(float64(gotV[idx])-tr.VPre[k]))
							spikes += tr.Spikes[k]
							compared++
						}
					}
				}
				if compared < total*9/10 {
					t.Errorf("compared only %d of %d steps before a near-threshold tie", compared, total)
				}
				if spikes < total/100 {
					t.Errorf("only %d spikes in %d compared steps: the test input does not exercise spiking", spikes, compared)
				}
				t.Logf("compared %d/%d steps, %d spikes, max |v_pre - sim| = %.2g", compared, total, spikes, maxDiff)
			})
		}
	}
}

package neuron

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/theory"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// oracleCase is a layer configuration with random parameters to hold against package sim.
type oracleCase struct {
	name string
	cfg  Config
	dims []int // input dimensions [batch, time, features...]
	// xla: also run on XLA CPU. Every case runs on SimpleGo, which has no compile step; XLA compiles the
	// unrolled graph for 10-25 s at T = 400 on a 2-core machine, so it runs M = 0 and M = 3 only.
	xla bool
}

// layerParams holds random float32 values of the layer's variables (flattened over P).
type layerParams struct {
	omega     []float32 // rad/s (CT or DT target)
	betaHat   []float32 // [M*P]
	lambdaHat []float32 // [M*P]
}

// randomParams draws f* uniformly in [1, min(60, fmax)] Hz, β̂ in [−1.5, 1.5] and λ̂ in [−3, 2], redrawing
// a neuron whose subthreshold closed loop is unstable or barely damped: with the TS module inside the
// FS feedback loop (Algorithm 1), some (β, λ) destabilize a neuron whose FS module alone is stable.
func randomParams(t *testing.T, rng *rand.Rand, cfg Config, p int) layerParams {
	t.Helper()
	m := cfg.Order
	lp := layerParams{betaHat: make([]float32, m*p), lambdaHat: make([]float32, m*p)}
	if cfg.Kind.HasTargetFrequency() {
		lp.omega = make([]float32, p)
	}
	fmax, _ := cfg.MaxTargetHz()
	for i := range p {
		for try := 0; ; try++ {
			if try == 100 {
				t.Fatal("no stable random parameters found")
			}
			if lp.omega != nil {
				lp.omega[i] = float32(theory.RadPerSecFromHz(1 + rng.Float64()*(math.Min(60, fmax)-1)))
			}
			for j := range m {
				lp.betaHat[j*p+i] = float32(3*rng.Float64() - 1.5)
				lp.lambdaHat[j*p+i] = float32(5*rng.Float64() - 3)
			}
			if wellDamped(t, simParams(t, cfg, lp, i, p)) {
				break
			}
		}
	}
	return lp
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

// setVariables creates the layer's variables in ctx with the values of lp.
func setVariables(ctx *context.Context, cfg Config, pshape []int, lp layerParams) {
	if lp.omega != nil {
		name := VarOmegaStar
		if cfg.DTExact {
			name = VarOmegaStarDT
		}
		ctx.VariableWithValue(name, tensors.FromFlatDataAndDimensions(lp.omega, pshape...))
	}
	if cfg.Order > 0 {
		ts := append([]int{cfg.Order}, pshape...)
		ctx.VariableWithValue(VarBetaHat, tensors.FromFlatDataAndDimensions(lp.betaHat, ts...))
		ctx.VariableWithValue(VarLambdaHat, tensors.FromFlatDataAndDimensions(lp.lambdaHat, ts...))
	}
}

// simParams returns the float64 parameters of neuron i (index into P) as package sim wants them.
func simParams(t *testing.T, cfg Config, lp layerParams, i, p int) sim.Params {
	t.Helper()
	k := cfg.Constants()
	sp := sim.Params{Mu: k.Mu(), Rho: k.Rho(), Dt: cfg.Dt, Vth: cfg.Vth}
	if lp.omega != nil {
		w := float64(lp.omega[i])
		var kappa float64
		if cfg.DTExact {
			kb, err := theory.KappaBarForTarget(k.MuBar(), k.RhoBar(), w*cfg.Dt)
			if err != nil {
				t.Fatal(err)
			}
			kappa = k.KappaFromBar(kb)
		} else {
			kappa = theory.KappaStar(k.Mu(), k.Rho(), w)
		}
		r := cfg.Ratio()
		sp.Eta, sp.Gamma = math.Sqrt(kappa*r), math.Sqrt(kappa/r)
	}
	for j := range cfg.Order {
		sp.Beta = append(sp.Beta, math.Tanh(float64(lp.betaHat[j*p+i])))
		sp.Lambda = append(sp.Lambda, 1/(1+math.Exp(-float64(lp.lambdaHat[j*p+i]))))
	}
	return sp
}

// TestLayerMatchesSim runs the graph layer and package sim on the same random parameters and inputs and
// requires identical spikes and v_pre within 1e-4, up to the first step where the float64 voltage lies
// within 1e-4 of the threshold and the spikes differ there (float32 may legitimately decide such a tie the
// other way, after which the trajectories part); at least 90% of all steps must be compared.
func TestLayerMatchesSim(t *testing.T) {
	const T = 400
	mk := func(kind Kind, order int, edit func(*Config)) Config {
		c := DefaultConfig(kind, order)
		if edit != nil {
			edit(&c)
		}
		return c
	}
	cases := []oracleCase{
		{"lif", mk(LIF, 0, nil), []int{2, T, 3}, false},
		{"adaptlif", mk(AdaptLIF, 0, nil), []int{1, T, 3}, false},
		{"fs-frozen", mk(FSFrozen, 0, nil), []int{1, T, 3}, false},
		{"fs M=0", mk(FS, 0, nil), []int{2, T, 4}, true},
		{"fsts M=1", mk(FSTS, 1, nil), []int{2, T, 3}, false},
		{"fsts M=2 ratio 2.5", mk(FSTS, 2, func(c *Config) { c.EtaGammaRatio = 2.5 }), []int{2, T, 3}, false},
		{"fsts M=3", mk(FSTS, 3, nil), []int{2, T, 3}, true},
		{"fsts M=2 gsc dt-exact", mk(FSTS, 2, func(c *Config) {
			c.TauM, c.TauA, c.Dt, c.FMaxHz, c.DTExact = 0.1, 0.5, 0.01, 30, true
		}), []int{1, T, 3}, false},
		{"fsts M=1 channel-shared", mk(FSTS, 1, func(c *Config) { c.ChannelShared = true }), []int{1, T, 2, 3}, false},
	}
	for _, tb := range testBackends(t) {
		for ci, tc := range cases {
			if tb.name == "xla:cpu" && !tc.xla {
				continue
			}
			t.Run(tb.name+"/"+tc.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ci)+1, 7))
				pshape, err := ParamShape(tc.dims, tc.cfg.ChannelShared)
				if err != nil {
					t.Fatal(err)
				}
				p := 1
				for _, d := range pshape {
					p *= d
				}
				lp := randomParams(t, rng, tc.cfg, p)
				ctx := context.New()
				setVariables(ctx, tc.cfg, pshape, lp)

				batch, steps := tc.dims[0], tc.dims[1]
				nf := 1
				for _, d := range tc.dims[2:] {
					nf *= d
				}
				in := make([]float32, batch*steps*nf)
				for i := range in {
					in[i] = float32(0.3 + 0.6*rng.NormFloat64())
				}
				exec := context.MustNewExec(tb.b, ctx.Checked(false), func(ctx *context.Context, x *Node) []*Node {
					s, v := LayerWithVoltage(ctx, x, tc.cfg)
					return []*Node{s, v}
				})
				out := exec.MustExec(tensors.FromFlatDataAndDimensions(in, tc.dims...))
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
						tr, err := sim.Run(simParams(t, tc.cfg, lp, pi, p), cur)
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

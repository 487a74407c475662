package scan

import (
	"math"
	"os"
	"sync"
	"testing"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// TestMain lowers XLA's LLVM optimization level for this test binary unless XLA_FLAGS is set: the
// unrolled graphs compile faster, and the tests check values, not speed.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("XLA_FLAGS"); !ok {
		_ = os.Setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
	}
	os.Exit(m.Run())
}

type testBackend struct {
	name string
	b    backends.Backend
}

var (
	backendsOnce sync.Once
	backendsList []testBackend
	backendsErr  string
)

// testBackends returns XLA CPU (when its PJRT plugin is installed) and SimpleGo in its sequential
// configuration; with FITS_REQUIRE_XLA=1 a missing XLA fails the test.
func testBackends(t *testing.T) []testBackend {
	t.Helper()
	backendsOnce.Do(func() {
		if _, ok := xla.Plugins()["cpu"]; !ok {
			backendsErr = "no XLA CPU PJRT plugin found (run `make setup`)"
		} else if b, err := xla.New("xla:cpu"); err != nil {
			backendsErr = "XLA CPU backend failed: " + err.Error()
		} else {
			backendsList = append(backendsList, testBackend{"xla:cpu", b})
		}
		if b, err := xla.New(xla.SimpleGoConfig); err == nil {
			backendsList = append(backendsList, testBackend{xla.SimpleGoConfig, b})
		}
	})
	if backendsErr != "" {
		if os.Getenv("FITS_REQUIRE_XLA") == "1" {
			t.Fatalf("FITS_REQUIRE_XLA=1: %s", backendsErr)
		}
		t.Logf("skipping XLA CPU: %s", backendsErr)
	}
	if len(backendsList) == 0 {
		t.Skip("no GoMLX backend available")
	}
	return backendsList
}

// coefficientsOf returns the coefficients of the layer whose variables are in ctx's current scope, built
// from those variables as package neuron builds them (Ω* clamped, κ* by Theorem 1 or the DT-exact
// inverse, η = √(κr), γ = √(κ/r), β = tanh(β̂), λ = σ(λ̂)), and the trainable variable nodes they depend on
// with their names. The TS stages are taken out of [M, P…] by a one-hot contraction, whose gradient runs on
// SimpleGo (a Slice's gradient needs Pad, which SimpleGo lacks).
func coefficientsOf(t testing.TB, ctx *context.Context, g *Graph, cfg neuron.Config) (neuron.Coefficients, []*Node, []string) {
	t.Helper()
	k := cfg.Constants()
	c := neuron.Coefficients{
		MuBar: k.MuBar(), RhoBar: k.RhoBar(), Vth: cfg.Vth, Surrogate: cfg.Surrogate, DetachReset: cfg.DetachReset,
	}
	get := func(name string) *Node {
		v := ctx.GetVariableByScopeAndName(ctx.Scope(), name)
		if v == nil {
			t.Fatalf("no variable %q in scope %q", name, ctx.Scope())
		}
		return v.ValueGraph(g)
	}
	var vars []*Node
	var names []string
	switch cfg.Kind {
	case neuron.LIF:
		return c, nil, nil
	case neuron.AdaptLIF:
		eta, gamma := get(neuron.VarEta), get(neuron.VarGamma)
		c.EtaDt, c.GammaDt = MulScalar(eta, cfg.Dt), MulScalar(gamma, cfg.Dt)
		return c, []*Node{eta, gamma}, []string{neuron.VarEta, neuron.VarGamma}
	}
	name := neuron.VarOmegaStar
	if cfg.DTExact {
		name = neuron.VarOmegaStarDT
	}
	omegaVar := get(name)
	fmax, err := cfg.MaxTargetHz()
	if err != nil {
		t.Fatal(err)
	}
	omega := ClipScalar(omegaVar, 0, 2*math.Pi*fmax)
	var kappaBar *Node
	if cfg.DTExact {
		kappaBar = neuron.KappaBarDTExact(MulScalar(omega, cfg.Dt), k.MuBar(), k.RhoBar())
	} else {
		kappaBar = MulScalar(neuron.KappaStar(omega, k.Mu(), k.Rho()), cfg.Dt*cfg.Dt)
	}
	sq := Sqrt(kappaBar)
	r := cfg.Ratio()
	c.EtaDt, c.GammaDt = MulScalar(sq, math.Sqrt(r)), DivScalar(sq, math.Sqrt(r))
	vars, names = append(vars, omegaVar), append(names, name)
	if cfg.Kind != neuron.FSTS {
		return c, vars, names
	}
	betaHat, lambdaHat := get(neuron.VarBetaHat), get(neuron.VarLambdaHat)
	beta, lambda := Tanh(betaHat), Sigmoid(lambdaHat)
	m := cfg.Order
	for j := range m {
		mask := make([]float64, m)
		mask[j] = 1
		dims := make([]int, betaHat.Rank())
		for i := range dims {
			dims[i] = 1
		}
		dims[0] = m
		oneHot := BroadcastToDims(Reshape(ConvertDType(Const(g, mask), betaHat.DType()), dims...), betaHat.Shape().Dimensions...)
		c.Beta = append(c.Beta, ReduceSum(Mul(beta, oneHot), 0))
		c.Lambda = append(c.Lambda, ReduceSum(Mul(lambda, oneHot), 0))
	}
	vars = append(vars, betaHat, lambdaHat)
	names = append(names, neuron.VarBetaHat, neuron.VarLambdaHat)
	return c, vars, names
}

package neuron

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/sim"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// testOrder returns the smallest TS order among 0, 1 and 2 that the kind accepts.
func testOrder(t *testing.T, k Kind) int {
	t.Helper()
	for m := range 3 {
		if k.CheckOrder(m) == nil {
			return m
		}
	}
	t.Fatalf("kind %s accepts none of the orders 0, 1, 2", k)
	return 0
}

// TestRegistry checks every registered cell against the registry's contract: a summary, a valid default
// configuration, the order rule, a float64 twin in package sim under the same name (and no twin without
// a cell), and capabilities that agree with the read-back functions.
func TestRegistry(t *testing.T) {
	if len(Kinds()) < 5 {
		t.Fatalf("only %d kinds registered: %v", len(Kinds()), Kinds())
	}
	for _, k := range Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			cell, err := k.Cell()
			if err != nil {
				t.Fatal(err)
			}
			if cell.Summary() == "" || k.Summary() != cell.Summary() {
				t.Errorf("summary %q", cell.Summary())
			}
			m := testOrder(t, k)
			cfg := DefaultConfig(k, m)
			if cfg.Kind != k || cfg.Order != m {
				t.Errorf("DefaultConfig(%s, %d) has kind %s and order %d", k, m, cfg.Kind, cfg.Order)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("DefaultConfig: %v", err)
			}
			if k.HasTS() {
				if err := k.CheckOrder(0); err == nil || !strings.Contains(err.Error(), "order") {
					t.Errorf("a TS kind accepted order 0 (%v)", err)
				}
			} else {
				if DefaultConfig(k, 3).Order != 0 {
					t.Error("DefaultConfig kept an order for a kind without a TS module")
				}
				if err := k.CheckOrder(2); err == nil || !strings.Contains(err.Error(), "no TS module") {
					t.Errorf("CheckOrder(2) = %v, want a 'no TS module' error", err)
				}
			}
			layout := cell.State(cfg)
			if layout.Adaptation != k.HasAdaptation() || StateComponents(cfg) != layout.Components() {
				t.Errorf("state layout %+v, HasAdaptation %v, StateComponents %d", layout, k.HasAdaptation(), StateComponents(cfg))
			}
			if _, err := sim.LookupTwin(k.String()); err != nil {
				t.Errorf("no float64 twin: %v", err)
			}
		})
	}
	names := slices.Sorted(slices.Values(KindNames()))
	if twins := sim.TwinNames(); !slices.Equal(names, twins) {
		t.Errorf("kinds %v, float64 twins %v: every kind needs exactly one twin of the same name", names, twins)
	}
	if _, err := Kind("resonate").Cell(); err == nil {
		t.Error("Cell of an unregistered kind")
	}
	if Kind("resonate").HasAdaptation() || Kind("resonate").HasTargetFrequency() || Kind("resonate").HasTS() ||
		StateComponents(Config{Kind: "resonate"}) != 0 || Kind("resonate").Summary() != "" {
		t.Error("an unregistered kind reports capabilities")
	}
}

func TestRegisterRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind Kind
		cell Cell
	}{
		{"taken name", FS, fsCell{noTS(FS)}},
		{"upper case", "LIF2", lifCell{}},
		{"empty", "", lifCell{}},
		{"space", "my cell", lifCell{}},
		{"nil cell", "nil-cell", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(Kinds())
			defer func() {
				if recover() == nil {
					t.Error("Register did not panic")
				}
				if len(Kinds()) != n {
					t.Error("a rejected cell was registered")
				}
			}()
			Register(tc.kind, 99, tc.cell)
		})
	}
}

// TestCheckpointVariables pins the variables of the paper's kinds: names (checkpoints store them), shapes
// and trainability. For every registered kind, the variables created are those the cell names.
func TestCheckpointVariables(t *testing.T) {
	if VarOmegaStar != "omega_star" || VarOmegaStarDT != "omega_star_dt" || VarBetaHat != "beta_hat" ||
		VarLambdaHat != "lambda_hat" || VarEta != "eta" || VarGamma != "gamma" {
		t.Fatal("a variable name changed: existing checkpoints would no longer load")
	}
	tb := testBackends(t)[len(testBackends(t))-1] // SimpleGo: no compilation
	type variable struct {
		dims      []int
		trainable bool
	}
	dtExact := DefaultConfig(FS, 0)
	dtExact.DTExact = true
	omegaDT := dtExact
	omegaDT.TargetCoordinate = TargetOmega
	learnable := DefaultConfig(AdaptLIF, 0)
	learnable.AdaptLIFLearnable = true
	omegaFS := DefaultConfig(FS, 0)
	omegaFS.TargetCoordinate = TargetOmega
	build := func(t *testing.T, cfg Config) map[string]*model.Variable {
		scope := model.NewStore().RootScope()
		scope.SetParam(model.ParamInitialSeed, int64(3))
		exec := model.MustNewExec(tb.b, scope.Store(), func(_ *model.Scope, x *Node) *Node { return Layer(scope.At("n"), x, cfg) })
		exec.MustCall(tensors.FromFlatDataAndDimensions(make([]float32, 2*4), 1, 2, 4))
		return layerVariables(scope.At("n"))
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want map[string]variable
	}{
		{"lif", DefaultConfig(LIF, 0), map[string]variable{}},
		{"adaptlif", DefaultConfig(AdaptLIF, 0), map[string]variable{}},
		{"adaptlif learnable", learnable, map[string]variable{"eta": {[]int{4}, true}, "gamma": {[]int{4}, true}}},
		{"fs-frozen", DefaultConfig(FSFrozen, 0), map[string]variable{"log_target_hz": {[]int{4}, false}}},
		{"fs", DefaultConfig(FS, 0), map[string]variable{"log_target_hz": {[]int{4}, true}}},
		{"fs omega", omegaFS, map[string]variable{"omega_star": {[]int{4}, true}}},
		{"fs dt-exact", dtExact, map[string]variable{"log_target_hz_dt": {[]int{4}, true}}},
		{"fs dt-exact omega", omegaDT, map[string]variable{"omega_star_dt": {[]int{4}, true}}},
		{"fsts M=2", DefaultConfig(FSTS, 2), map[string]variable{
			"log_target_hz": {[]int{4}, true}, "beta_hat": {[]int{2, 4}, true}, "lambda_hat": {[]int{2, 4}, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := build(t, tc.cfg)
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.want))) {
				t.Fatalf("variables %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.want)))
			}
			for name, w := range tc.want {
				v := got[name]
				if !slices.Equal(v.Shape().Dimensions, w.dims) || v.Trainable != w.trainable {
					t.Errorf("%s: shape %s trainable %v, want %v trainable %v", name, v.Shape(), v.Trainable, w.dims, w.trainable)
				}
			}
		})
	}
	for _, k := range Kinds() {
		t.Run("registered/"+k.String(), func(t *testing.T) {
			cfg := DefaultConfig(k, testOrder(t, k))
			cell, _ := k.Cell()
			got := slices.Sorted(maps.Keys(build(t, cfg)))
			if want := slices.Sorted(slices.Values(cell.Variables(cfg))); !slices.Equal(got, want) {
				t.Errorf("variables %v, the cell names %v", got, want)
			}
		})
	}
}

// TestLayerCoefficients checks the contract of LayerCoefficients for every registered kind: nodes of the
// parameter shape P, adaptation coefficients exactly when the state carries a, M stage coefficients, and
// the shared constants μ̄, ρ̄, Vth, surrogate and DetachReset from the configuration.
func TestLayerCoefficients(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1]
	for _, k := range Kinds() {
		for _, shared := range []bool{false, true} {
			cfg := DefaultConfig(k, testOrder(t, k))
			cfg.ChannelShared, cfg.DetachReset, cfg.Vth = shared, true, 0.7
			pshape, _ := ParamShape([]int{1, 1, 2, 3}, shared)
			var co Coefficients
			exec := model.MustNewExec(tb.b, model.NewStore(), func(scope *model.Scope, x *Node) *Node {
				co = LayerCoefficients(scope, x.Graph(), x.DType(), cfg, pshape)
				return ReduceAllSum(x)
			})
			exec.MustCall(tensors.FromFlatDataAndDimensions(make([]float32, 6), 1, 1, 2, 3))
			kc := cfg.Constants()
			if co.MuBar != kc.MuBar() || co.RhoBar != kc.RhoBar() || co.Vth != 0.7 || !co.DetachReset || co.Surrogate != cfg.Surrogate {
				t.Errorf("%s: shared constants %+v", k, co)
			}
			if (co.EtaDt != nil) != k.HasAdaptation() || (co.GammaDt != nil) != k.HasAdaptation() {
				t.Errorf("%s: adaptation coefficients present %v, HasAdaptation %v", k, co.EtaDt != nil, k.HasAdaptation())
			}
			if len(co.Beta) != cfg.Order || len(co.Lambda) != cfg.Order {
				t.Errorf("%s: %d betas, %d lambdas for M = %d", k, len(co.Beta), len(co.Lambda), cfg.Order)
			}
			for _, n := range append(append([]*Node{co.EtaDt, co.GammaDt}, co.Beta...), co.Lambda...) {
				if n != nil && !slices.Equal(n.Shape().Dimensions, pshape) {
					t.Errorf("%s channel-shared=%v: coefficient of shape %s, want %v", k, shared, n.Shape(), pshape)
				}
			}
		}
	}
}

// TestReadBack checks TargetFrequenciesHz and TSCoefficients against the capabilities of every kind.
func TestReadBack(t *testing.T) {
	tb := testBackends(t)[len(testBackends(t))-1]
	for _, k := range Kinds() {
		cfg := DefaultConfig(k, testOrder(t, k))
		scope := model.NewStore().RootScope()
		exec := model.MustNewExec(tb.b, scope.Store(), func(_ *model.Scope, x *Node) *Node { return Layer(scope, x, cfg) })
		exec.MustCall(tensors.FromFlatDataAndDimensions(make([]float32, 3), 1, 1, 3))
		f, err := TargetFrequenciesHz(scope, cfg)
		if k.HasTargetFrequency() != (err == nil) {
			t.Errorf("%s: HasTargetFrequency %v, TargetFrequenciesHz error %v", k, k.HasTargetFrequency(), err)
		}
		if err == nil && (len(f) != 3 || math.Abs(f[0]-cfg.FMinHz) > 1e-5 || math.Abs(f[2]-cfg.FMaxHz) > 1e-4) {
			t.Errorf("%s: initial targets %v Hz, want log-spaced over [%g, %g]", k, f, cfg.FMinHz, cfg.FMaxHz)
		}
		beta, _, err := TSCoefficients(scope, cfg)
		if k.HasTS() != (err == nil) || (err == nil && len(beta) != cfg.Order) {
			t.Errorf("%s: HasTS %v, TSCoefficients %d stages, error %v", k, k.HasTS(), len(beta), err)
		}
	}
}

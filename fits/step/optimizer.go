package step

import (
	"errors"
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/optimizer"
	"github.com/gomlx/gomlx/ml/train/optimizer/cosineschedule"
)

// Optimizer applies gradients with Adam and a learning rate annealed from LR to 0 by a cosine over
// TotalSteps steps (the paper's recipe, Section 4 "Training details"; no weight decay), and keeps the target
// frequencies stable with the frequency guard (Guard). Its state (Adam's moments, the step counter) lives
// in the store's variables and travels with the checkpoint.
//
// The released code's recipe: Adam with ε = 1e-8, CosineAnnealingLR(T_max = epochs, η_min = 0) stepped once
// per epoch (EpochSteps = the steps of an epoch: the learning rate of epoch e, 0-based, is
// LR·(1 + cos(πe/E))/2 over E = TotalSteps/EpochSteps epochs), and the guard at 0.98 of the Jury bound.
// This toolkit's first recipe: ε = 1e-7, the cosine stepped every step (EpochSteps = 0), no guard.
type Optimizer struct {
	// LR is the peak learning rate, TotalSteps the length of the cosine schedule in steps.
	LR         float64
	TotalSteps int
	// EpochSteps > 0 steps the cosine once per epoch of EpochSteps steps; 0 steps it every step. It must
	// divide TotalSteps.
	EpochSteps int
	// Epsilon is Adam's ε; 0 means DefaultAdamEpsilon.
	Epsilon float64
	// Guard maps the name (without scope) of each target-frequency variable to its cap in the variable's
	// coordinate (ln f_safe, or 2πf_safe for Ω*; see FrequencyGuardCap). For each guarded variable,
	// before the Adam step the gradient components that would raise an entry already at or above its cap
	// (value ≥ cap and gradient < 0) are zeroed; after the step the entries above the cap are projected
	// onto it and their negative first moments are zeroed (the released code's FrequencyGuard). Apply
	// counts the projected entries (Projections). Nil: no guard.
	Guard map[string]float64
	// Scales multiplies the learning rate of the variables with these names (the name without its scope,
	// e.g. neuron.VarOmegaStar): each such variable moves Scale times Adam's step. Empty: one learning rate
	// for all. Set it before the first Apply.
	Scales map[string]float64

	scope       *model.Scope
	exec        *model.Exec
	names       []string // the gradients' variable names, in the exec's input order
	times       timer
	projections int64 // entries projected by the guard since the last Projections call
}

// DefaultAdamEpsilon is the released code's Adam ε (PyTorch's default).
const DefaultAdamEpsilon = 1e-8

// Projections returns the number of entries the frequency guard projected onto their cap since the last
// call, and resets the count.
func (o *Optimizer) Projections() int64 {
	n := o.projections
	o.projections = 0
	return n
}

// NewOptimizer returns the optimizer of the trainable variables of scope (the run's root scope).
func NewOptimizer(backend compute.Backend, scope *model.Scope, lr float64, totalSteps int) (*Optimizer, error) {
	if !(lr > 0) || totalSteps < 1 {
		return nil, fmt.Errorf("step: learning rate %g and %d steps", lr, totalSteps)
	}
	o := &Optimizer{LR: lr, TotalSteps: totalSteps, scope: scope, times: timer{}}
	var err error
	o.exec, err = model.NewExec(backend, scope.Store(), o.graph)
	return o, err
}

// graph applies one Adam step from the gradients given as inputs (in the order of o.names), and returns
// the learning rate used and the number of entries the guard projected.
func (o *Optimizer) graph(scope *model.Scope, grads []*Node) []*Node {
	g := grads[0].Graph()
	neuron.SetTraining(scope, g, true) // the cosine schedule only runs in a training graph
	byName := make(map[string]*Node, len(grads))
	for i, name := range o.names {
		byName[name] = grads[i]
	}
	// The optimizer expects the gradients in the order it visits the trainable variables: that of
	// scope.IterVariables.
	var ordered []*Node
	guarded := map[*model.Variable]float64{} // the variables of the frequency guard and their caps
	for v := range scope.IterVariables() {
		if !v.Trainable {
			continue
		}
		grad, ok := byName[v.Path()]
		if !ok {
			panic(fmt.Errorf("step: no gradient for the trainable variable %s", v.Path()))
		}
		value := v.NodeValue(g)
		if c, ok := o.Guard[v.Name()]; ok {
			// The guard's first half: zero the components that would raise an entry already on its cap.
			outward := LogicalAnd(GreaterOrEqual(value, Scalar(g, value.DType(), c)), LessThan(grad, ZerosLike(grad)))
			grad = Where(outward, ZerosLike(grad), grad)
			guarded[v] = c
		}
		ordered = append(ordered, grad)
	}
	type scaled struct {
		v     *model.Variable
		old   *Node
		scale float64
	}
	var toScale []scaled
	for v := range scope.IterVariables() {
		if s, ok := o.Scales[v.Name()]; ok && v.Trainable && s != 1 {
			toScale = append(toScale, scaled{v, v.NodeValue(g), s})
		}
	}
	if len(ordered) != len(grads) {
		panic(fmt.Errorf("step: %d gradients for %d trainable variables", len(grads), len(ordered)))
	}
	if o.EpochSteps > 0 {
		o.epochCosine(scope, g)
	} else {
		cosineschedule.New(scope, g, dtypes.Float32).PeriodSteps(o.TotalSteps).LearningRate(o.LR).Done()
	}
	eps := o.Epsilon
	if eps == 0 {
		eps = DefaultAdamEpsilon
	}
	opt, ok := optimizer.Adam().LearningRate(o.LR).Epsilon(eps).Done().(interface {
		UpdateGraphWithGradients(scope *model.Scope, grads []*Node, lossDType dtypes.DType)
	})
	if !ok {
		panic(errors.New("step: the Adam optimizer cannot take precomputed gradients"))
	}
	opt.UpdateGraphWithGradients(scope, ordered, dtypes.Float32)
	// A scaled variable moves Scale times the step Adam took: θ ← θ₀ + s·(θ_Adam − θ₀). Adam's moments
	// are those of the plain gradients, as with a per-variable learning rate.
	for _, s := range toScale {
		s.v.SetNodeValue(Add(s.old, MulScalar(Sub(s.v.NodeValue(g), s.old), s.scale)))
	}
	projected := o.project(scope, g, guarded)
	return []*Node{optimizer.LearningRateVar(scope, dtypes.Float32, o.LR).NodeValue(g), projected}
}

// project clamps each guarded variable to its cap after the Adam step, zeroes the negative first moments
// of the clamped entries, and returns the number of clamped entries as a float32 scalar.
func (o *Optimizer) project(scope *model.Scope, g *Graph, guarded map[*model.Variable]float64) *Node {
	count := ScalarZero(g, dtypes.Float32)
	for v, c := range guarded {
		value := v.NodeValue(g)
		capNode := Scalar(g, value.DType(), c)
		over := GreaterThan(value, capNode)
		v.SetNodeValue(Where(over, BroadcastToShape(capNode, value.Shape()), value))
		count = Add(count, ReduceAllSum(ConvertDType(over, dtypes.Float32)))
		// Adam keeps the first moment of variable scope/name as scope "/AdamOptimizer"+scope, name
		// name+"_1st_moment" (GoMLX's optimizers package).
		adamScope := model.ScopeSeparator + optimizer.AdamDefaultScope + v.Scope()
		m1 := scope.Store().GetVariable(model.JoinPath(adamScope, v.Name()+"_1st_moment"))
		if m1 == nil {
			panic(fmt.Errorf("step: no first moment of Adam for %s in %s", v.Path(), adamScope))
		}
		m := m1.NodeValue(g)
		m1.SetNodeValue(Where(LogicalAnd(over, LessThan(m, ZerosLike(m))), ZerosLike(m), m))
	}
	return count
}

// epochCosine sets the learning rate of this step to LR·(1 + cos(πe/E))/2, e = ⌊step/EpochSteps⌋ the
// 0-based epoch of the global step before Adam increments it and E = TotalSteps/EpochSteps epochs:
// PyTorch's CosineAnnealingLR(T_max = E, η_min = 0) stepped once per epoch.
func (o *Optimizer) epochCosine(scope *model.Scope, g *Graph) {
	stepNow := optimizer.GetGlobalStepVar(scope).NodeValue(g) // int64, the steps taken so far
	epoch := ConvertDType(Div(stepNow, Scalar(g, stepNow.DType(), int64(o.EpochSteps))), dtypes.Float64)
	epochs := float64(o.TotalSteps / o.EpochSteps)
	lr := MulScalar(OnePlus(Cos(MulScalar(epoch, math.Pi/epochs))), o.LR/2)
	optimizer.LearningRateVar(scope, dtypes.Float32, o.LR).SetNodeValue(ConvertDType(lr, dtypes.Float32))
}

// Apply updates the variables with the gradients (by variable name, as Engine.Gradients returns them) and
// returns the learning rate used. The gradients are not finalized.
func (o *Optimizer) Apply(grads map[string]*tensors.Tensor) (lr float64, err error) {
	if o.names == nil {
		for _, v := range TrainableIn(o.scope, "") {
			o.names = append(o.names, v.Path())
		}
	}
	if len(grads) != len(o.names) {
		return 0, fmt.Errorf("step: %d gradients for %d trainable variables", len(grads), len(o.names))
	}
	args := make([]any, len(o.names))
	for i, name := range o.names {
		t, ok := grads[name]
		if !ok {
			return 0, fmt.Errorf("step: no gradient for the trainable variable %s", name)
		}
		args[i] = t
	}
	if o.EpochSteps < 0 || (o.EpochSteps > 0 && o.TotalSteps%o.EpochSteps != 0) {
		return 0, fmt.Errorf("step: %d steps per epoch do not divide the schedule's %d steps", o.EpochSteps, o.TotalSteps)
	}
	outs, err := o.times.exec(o.exec, args...)
	if err != nil {
		return 0, err
	}
	v, err := scalars(outs)
	if err != nil {
		return 0, err
	}
	o.projections += int64(v[1])
	return v[0], nil
}

// CompileSeconds estimates the time spent compiling the update graph.
func (o *Optimizer) CompileSeconds() float64 { return o.times.compileSeconds() }

// Close frees the compiled graph.
func (o *Optimizer) Close() { o.exec.Finalize() }

package step

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers/cosineschedule"
)

// Optimizer applies gradients with Adam and a learning rate annealed from LR to 0 by a cosine over
// TotalSteps steps (the paper's recipe, Section 4 "Training details"; no weight decay). Its state (Adam's
// moments, the step counter) lives in the context's variables and travels with the checkpoints.
type Optimizer struct {
	// LR is the peak learning rate, TotalSteps the length of the cosine schedule.
	LR         float64
	TotalSteps int
	// Scales multiplies the learning rate of the variables with these names (the name without its scope,
	// e.g. neuron.VarOmegaStar): each such variable moves Scale times Adam's step. Empty: one learning rate
	// for all. Set it before the first Apply.
	Scales map[string]float64

	ctx   *context.Context
	exec  *context.Exec
	names []string // the gradients' variable names, in the exec's input order
	times timer
}

// NewOptimizer returns the optimizer of the trainable variables of ctx (the run's root context).
func NewOptimizer(backend backends.Backend, ctx *context.Context, lr float64, totalSteps int) (*Optimizer, error) {
	if !(lr > 0) || totalSteps < 1 {
		return nil, fmt.Errorf("step: learning rate %g and %d steps", lr, totalSteps)
	}
	o := &Optimizer{LR: lr, TotalSteps: totalSteps, ctx: ctx, times: timer{}}
	var err error
	o.exec, err = context.NewExec(backend, ctx.Checked(false), o.graph)
	return o, err
}

// graph applies one Adam step from the gradients given as inputs (in the order of o.names), and returns
// the learning rate used.
func (o *Optimizer) graph(ctx *context.Context, grads []*Node) *Node {
	g := grads[0].Graph()
	ctx.SetTraining(g, true) // the cosine schedule only runs in a training graph
	byName := make(map[string]*Node, len(grads))
	for i, name := range o.names {
		byName[name] = grads[i]
	}
	// The optimizer expects the gradients in the order it visits the trainable variables: that of
	// ctx.IterVariables.
	var ordered []*Node
	for v := range ctx.IterVariables() {
		if !v.Trainable {
			continue
		}
		grad, ok := byName[v.ScopeAndName()]
		if !ok {
			panic(fmt.Errorf("step: no gradient for the trainable variable %s", v.ScopeAndName()))
		}
		v.ValueGraph(g)
		ordered = append(ordered, grad)
	}
	type scaled struct {
		v     *context.Variable
		old   *Node
		scale float64
	}
	var toScale []scaled
	for v := range ctx.IterVariables() {
		if s, ok := o.Scales[v.Name()]; ok && v.Trainable && s != 1 {
			toScale = append(toScale, scaled{v, v.ValueGraph(g), s})
		}
	}
	if len(ordered) != len(grads) {
		panic(fmt.Errorf("step: %d gradients for %d trainable variables", len(grads), len(ordered)))
	}
	cosineschedule.New(ctx, g, dtypes.Float32).PeriodSteps(o.TotalSteps).LearningRate(o.LR).Done()
	opt, ok := optimizers.Adam().LearningRate(o.LR).Done().(interface {
		UpdateGraphWithGradients(ctx *context.Context, grads []*Node, lossDType dtypes.DType)
	})
	if !ok {
		panic(errors.New("step: the Adam optimizer cannot take precomputed gradients"))
	}
	opt.UpdateGraphWithGradients(ctx, ordered, dtypes.Float32)
	// A scaled variable moves Scale times the step Adam took: θ ← θ₀ + s·(θ_Adam − θ₀). Adam's moments
	// are those of the plain gradients, as with a per-variable learning rate.
	for _, s := range toScale {
		s.v.SetValueGraph(Add(s.old, MulScalar(Sub(s.v.ValueGraph(g), s.old), s.scale)))
	}
	return optimizers.LearningRateVar(ctx, dtypes.Float32, o.LR).ValueGraph(g)
}

// Apply updates the variables with the gradients (by variable name, as Engine.Gradients returns them) and
// returns the learning rate used. The gradients are not finalized.
func (o *Optimizer) Apply(grads map[string]*tensors.Tensor) (lr float64, err error) {
	if o.names == nil {
		for _, v := range TrainableIn(o.ctx, "") {
			o.names = append(o.names, v.ScopeAndName())
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
	outs, err := o.times.exec(o.exec, args...)
	if err != nil {
		return 0, err
	}
	v, err := scalars(outs)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// CompileSeconds estimates the time spent compiling the update graph.
func (o *Optimizer) CompileSeconds() float64 { return o.times.compileSeconds() }

// Close frees the compiled graph.
func (o *Optimizer) Close() { o.exec.Finalize() }

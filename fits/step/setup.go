package step

import (
	"fmt"

	"github.com/fits-snn/fits/fits/model"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// InitVariables creates and initializes the network's variables in ctx (the network's scope) as
// model.Net.Forward would, by building the network once on a single time step of a single example: the
// same variables, created in the same order from the same random number generator, as any full-size graph
// would create them, without compiling one. Variables that already exist (e.g. loaded from a checkpoint)
// are left as they are.
func InitVariables(backend backends.Backend, ctx *context.Context, net model.Net) error {
	if err := net.Validate(); err != nil {
		return err
	}
	exec, err := context.NewExec(backend, ctx.Checked(false), func(ctx *context.Context, x *Node) *Node {
		ctx.SetTraining(x.Graph(), false)
		out := net.Forward(ctx, x, nil)
		last := out.Spikes[len(out.Spikes)-1]
		if out.Logits != nil {
			return ReduceAllSum(out.Logits)
		}
		return ReduceAllSum(last)
	})
	if err != nil {
		return err
	}
	defer exec.Finalize()
	x := tensors.FromShape(shapes.Make(dtypes.Float32, append([]int{1, 1}, net.InputDims...)...))
	defer x.MustFinalizeAll()
	outs, err := exec.Exec(x)
	if err != nil {
		return fmt.Errorf("step: initializing the variables: %w", err)
	}
	for _, t := range outs {
		t.MustFinalizeAll()
	}
	return nil
}

// Masks draws the time-shared dropout masks of a network's training steps (model.Net.DropoutMasks) from the
// random number generator of its context, whose state is saved with the checkpoints: a resumed run draws
// the same masks as an uninterrupted one, and every engine receives the same masks.
type Masks struct {
	net  model.Net
	exec *context.Exec
}

// NewMasks returns the mask sampler of net; ctx is any scope of the run's context.
func NewMasks(backend backends.Backend, ctx *context.Context, net model.Net) (*Masks, error) {
	m := &Masks{net: net}
	if net.Dropout <= 0 {
		return m, nil
	}
	var err error
	m.exec, err = context.NewExec(backend, ctx.Checked(false), func(ctx *context.Context, mask *Node) []*Node {
		return net.DropoutMasks(ctx, mask.Graph(), dtypes.Float32, mask.Shape().Dimensions[0])
	})
	return m, err
}

// Draw returns one mask per block for a batch of the size of exampleMask ([batch]), or nil when the network
// has no dropout. The caller owns the tensors.
func (m *Masks) Draw(exampleMask *tensors.Tensor) ([]*tensors.Tensor, error) {
	if m.exec == nil {
		return nil, nil
	}
	return m.exec.Exec(exampleMask)
}

// Close frees the compiled graph.
func (m *Masks) Close() {
	if m.exec != nil {
		m.exec.Finalize()
	}
}

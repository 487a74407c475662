package neuron

import (
	"fmt"
	"slices"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
)

// StateComponents returns the number of tensors that make up a layer's carried state between two time
// steps, each of the per-step shape [batch, d1, …, dn]: the post-reset voltage V; the adaptation a for
// every kind whose cell carries it (all but LIF); and the stage values V0…VM of the TS cascade when M ≥ 1
// (see StateLayout). It is 0 for an unregistered kind.
func StateComponents(cfg Config) int {
	cell, err := cfg.Kind.Cell()
	if err != nil {
		return 0
	}
	return cell.State(cfg).Components()
}

// LayerFrom is Layer started from a carried state instead of zero: it runs Algorithm 1 over current
// [batch, K, d1, …, dn] (K ≥ 1 steps) from init and returns the spikes [batch, K, d1, …, dn] and the state
// after the last step. The state is StateComponents(cfg) tensors of shape [batch, d1, …, dn] in the order
// of the cell's StateLayout: V, a (absent for LIF), V0, …, VM (present when M ≥ 1); nil init means the
// zero state, as in Layer.
//
// Running a sequence in pieces, each piece from the previous piece's final state, gives exactly the spikes
// of one Layer call over the whole sequence: it is the same graph code, one step at a time.
func LayerFrom(scope *model.Scope, current *Node, cfg Config, init []*Node) (spikes *Node, final []*Node) {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Errorf("neuron.LayerFrom: %w", err))
	}
	if init != nil {
		if len(init) != StateComponents(cfg) {
			panic(fmt.Errorf("neuron.LayerFrom: %d state tensors, want %d for %s with M = %d",
				len(init), StateComponents(cfg), cfg.Kind, cfg.Order))
		}
		want := append([]int{current.Shape().Dimensions[0]}, current.Shape().Dimensions[2:]...)
		for i, s := range init {
			if !slices.Equal(s.Shape().Dimensions, want) {
				panic(fmt.Errorf("neuron.LayerFrom: state tensor %d has shape %s, want dimensions %v", i, s.Shape(), want))
			}
		}
	}
	spikes, _, final = run(scope, current, cfg, false, init)
	return spikes, final
}

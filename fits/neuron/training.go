package neuron

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // GoMLX's graph DSL is meant to be dot-imported.
	"github.com/gomlx/gomlx/ml/model"
)

// GraphParamTraining is the graph parameter that says whether a graph trains (dropout draws masks): the
// toolkit's own flag, set by SetTraining and read by IsTraining.
//
// It is not GoMLX's training flag (model.Store.SetTraining) because that flag also decides how a graph
// reads the variables: on a backend that prefers constants (the pure-Go one), GoMLX embeds the value a
// variable has when the graph is built as a constant of every graph not marked as training, so a compiled
// graph that is called again after the optimizer (another graph) or a checkpoint changed the variables would
// compute with the old values. Every graph of the toolkit that reads variables marks itself as training for
// GoMLX (VariablesAsParameters), and says with this flag whether it trains.
const GraphParamTraining = "/fits_training"

// VariablesAsParameters makes graph g read the variables of scope's store as graph parameters, set at every
// call, on every backend (see GraphParamTraining). Call it before the graph first reads a variable;
// LayerCoefficients and SetTraining call it.
func VariablesAsParameters(scope *model.Scope, g *Graph) {
	scope.SetTraining(g, true)
}

// SetTraining records whether graph g trains (see IsTraining), and makes it read the variables as
// parameters (VariablesAsParameters).
func SetTraining(scope *model.Scope, g *Graph, training bool) {
	VariablesAsParameters(scope, g)
	model.SetGraphParam(g, GraphParamTraining, training)
}

// IsTraining reports whether SetTraining marked graph g as training (false when it was not called).
func IsTraining(g *Graph) bool {
	v, _ := model.GetGraphParam(g, GraphParamTraining)
	training, _ := v.(bool) // false when v is nil (not set)
	return training
}

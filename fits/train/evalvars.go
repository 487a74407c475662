package train

import "github.com/gomlx/gomlx/ml/model"

// EvaluateWith is Evaluate of a modified network: it loads the latest checkpoint in dir, calls modify on
// the loaded store (the root scope; the network's variables are under ModelScope) before the
// network is built, and measures the modified network as Evaluate does. The checkpoint on disk is not
// changed. Variables are loaded lazily: modify reaches one with scope.Store().GetVariable(model.JoinPath(scope,
// name)), which reads it from the checkpoint, and replaces its value with Variable.SetValue; the network
// then runs with that value. A nil modify makes EvaluateWith equal to Evaluate.
//
// It serves inference-time perturbations of trained parameters, e.g. the target-frequency reset and
// shuffle of the paper's Table A.8 (package fits/analysis).
func EvaluateWith(dir string, opts Options, modify func(scope *model.Scope) error) (*EvalResult, error) {
	return evaluateCheckpoint(dir, opts, modify)
}

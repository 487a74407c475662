package train

import (
	"fmt"
	"os"

	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// Import says where a run that another program trained came from (Result.Imported; package fits/interop
// writes it). Paths are the file's last two elements (its folder and name), never absolute.
type Import struct {
	// Format names the layout read: "released-pytorch" (the authors' released code).
	Format string `json:"format"`
	// From is the checkpoint file (e.g. "fits_o1_w512/best.pth") and SHA256 its hash.
	From   string `json:"from"`
	SHA256 string `json:"sha256"`
	// Config is where the configuration came from: "checkpoint" (the one stored in it) or a file name.
	Config string `json:"config"`
	// Epoch is the epoch after which the checkpoint's weights were saved (the run's selected epoch).
	Epoch int `json:"epoch"`
	// History holds the released per-epoch records verbatim (metrics.json), nil when there was none.
	History []map[string]any `json:"history,omitempty"`
}

// ImportedVariable is one variable of an imported network: its path under ModelScope (e.g.
// "hidden_0/dense/weights"), its value and whether training would update it.
type ImportedVariable struct {
	Path      string
	Value     *tensors.Tensor
	Trainable bool
}

// WriteImportedRun writes a run of cfg into dir, an existing folder that holds no run: one checkpoint with
// cfg, the training history (the epochs up to the one whose weights vars hold) and the network's
// variables, then result.json. The run then evaluates, analyses and loads like one that TrainModel
// wrote. The variables must be those NewNetwork's network creates for cfg (the importer checks names and
// shapes; Evaluate fails otherwise).
func WriteImportedRun(dir string, cfg Config, history []Epoch, vars []ImportedVariable, res *Result) error {
	if err := cfg.Validate(); err != nil {
		return &InputError{Err: err}
	}
	if HoldsRun(dir) {
		return fmt.Errorf("%w: %s", ErrRunExists, dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("run folder %s does not exist", dir)
	}
	scope, err := loadContext(cfg.Seed)
	if err != nil {
		return err
	}
	cfg.SetParams(scope)
	if err := storeState(scope, history, 0); err != nil {
		return err
	}
	params := 0
	for _, v := range vars {
		created, err := scope.Store().CreateVariable(mlmodel.JoinPath("/"+modelScope, v.Path), v.Value)
		if err != nil {
			return fmt.Errorf("variable %s: %w", v.Path, err)
		}
		created.SetTrainable(v.Trainable)
		if v.Trainable {
			params += v.Value.Shape().Size()
		}
	}
	scope.SetParam(paramParameterCount, params)
	if err := saveCheckpoint(scope.Store(), dir, nil); err != nil {
		return err
	}
	res.ParameterCount = params
	return WriteResult(dir, res)
}

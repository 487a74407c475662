package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
)

// Checkpoint files are GoMLX checkpoints (pkg/ml/context/checkpoints): pairs checkpoint-*.json (the
// hyperparameters, the training state and the variables' layout) and checkpoint-*.bin (the variables,
// uncompressed). A pair is complete when its JSON parses and the binary file holds every byte the JSON
// promises.

// keepCheckpoints is the number of epoch checkpoints kept in a run's directory.
const keepCheckpoints = 2

// Keys of the training state stored as context parameters next to the Config, so that they are saved
// atomically with the variables in each checkpoint.
const (
	paramHistory        = "train_history"         // JSON of []Epoch
	paramWallSeconds    = "train_wall_seconds"    // float64, summed over segments
	paramParameterCount = "train_parameter_count" // int, trainable scalars of the model
)

// checkpointLayout is the part of a checkpoint's JSON that completeness checks need.
type checkpointLayout struct {
	BinFormat string `json:"BinFormat"`
	Variables []struct {
		Pos, Length int
	} `json:"Variables"`
}

// repairCheckpoints removes incomplete checkpoint pairs from dir (those a killed process left while
// saving) and returns the number of complete ones left.
func repairCheckpoints(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	complete := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, "checkpoint-") {
			continue
		}
		base, isJSON := strings.CutSuffix(name, checkpoints.JsonNameSuffix)
		if !isJSON {
			// A binary file without its JSON is an interrupted save.
			if b, ok := strings.CutSuffix(name, checkpoints.BinDataSuffix); ok {
				if _, err := os.Stat(filepath.Join(dir, b+checkpoints.JsonNameSuffix)); errors.Is(err, os.ErrNotExist) {
					_ = os.Remove(filepath.Join(dir, name))
				}
			}
			continue
		}
		if checkpointComplete(dir, base) {
			complete++
			continue
		}
		_ = os.Remove(filepath.Join(dir, base+checkpoints.JsonNameSuffix))
		_ = os.Remove(filepath.Join(dir, base+checkpoints.BinDataSuffix))
	}
	return complete, nil
}

func checkpointComplete(dir, base string) bool {
	b, err := os.ReadFile(filepath.Join(dir, base+checkpoints.JsonNameSuffix))
	if err != nil {
		return false
	}
	var layout checkpointLayout
	if err := json.Unmarshal(b, &layout); err != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, base+checkpoints.BinDataSuffix))
	if err != nil {
		return false
	}
	need := int64(0)
	for _, v := range layout.Variables {
		need = max(need, int64(v.Pos+v.Length))
	}
	if layout.BinFormat == "" || strings.Contains(strings.ToLower(layout.BinFormat), "uncompressed") {
		return st.Size() == need
	}
	return st.Size() > 0
}

// openCheckpoints repairs dir and attaches a checkpoint handler to ctx, which loads the latest complete
// checkpoint if there is one (its hyperparameters replace ctx's). It reports whether one was loaded.
func openCheckpoints(ctx *context.Context, dir string) (*checkpoints.Handler, bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, err
	}
	n, err := repairCheckpoints(dir)
	if err != nil {
		return nil, false, err
	}
	h, err := checkpoints.Build(ctx).Dir(dir).Keep(keepCheckpoints).
		WithCompression(checkpoints.BinUncompressed).Done()
	if err != nil {
		return nil, false, fmt.Errorf("checkpoints in %s: %w", dir, err)
	}
	return h, n > 0, nil
}

// HasCheckpoint reports whether dir holds at least one complete checkpoint.
func HasCheckpoint(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if base, ok := strings.CutSuffix(e.Name(), checkpoints.JsonNameSuffix); ok &&
			strings.HasPrefix(base, "checkpoint-") && checkpointComplete(dir, base) {
			return true
		}
	}
	return false
}

// loadState reads the training state stored in ctx's parameters.
func loadState(ctx *context.Context) ([]Epoch, float64, error) {
	var history []Epoch
	if s := context.GetParamOr(ctx, paramHistory, ""); s != "" {
		if err := json.Unmarshal([]byte(s), &history); err != nil {
			return nil, 0, fmt.Errorf("corrupt training history in checkpoint: %w", err)
		}
	}
	return history, context.GetParamOr(ctx, paramWallSeconds, 0.0), nil
}

// storeState writes the training state into ctx's parameters (saved with the next checkpoint).
func storeState(ctx *context.Context, history []Epoch, wall float64) error {
	b, err := json.Marshal(history)
	if err != nil {
		return err
	}
	ctx.SetParam(paramHistory, string(b))
	ctx.SetParam(paramWallSeconds, wall)
	return nil
}

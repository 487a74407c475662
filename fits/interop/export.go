package interop

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"
	"github.com/nlpodyssey/safetensors"
)

// Files of an exported folder besides config.json and metrics.json.
const (
	// WeightsFile holds the state dict under the released names, float32 (safetensors).
	WeightsFile = "model.safetensors"
	// CheckpointInfoFile holds {"epoch", "valid_acc", "test_acc"}, the rest of best.pth's dict
	// (peers/released_fixture.py convert writes best.pth from the three files).
	CheckpointInfoFile = "checkpoint.json"
)

// exportDatasets maps this toolkit's datasets to the released scripts' names (the inverse of
// releasedDatasets); other datasets keep their names.
func exportDataset(name string) string {
	for rel, ours := range releasedDatasets {
		if ours == name {
			return rel
		}
	}
	return name
}

// ExportReleased writes the run of this toolkit in runDir (its newest intact checkpoint) into outDir, an
// existing folder, in the released layout: WeightsFile (the state dict of fits/models.py's FiTSNet),
// config.json (the released configuration keys), CheckpointInfoFile and, when the run has a history,
// metrics.json. opts loads the run's dataset (its neuron constants: Δt, the f* range). Runs the released
// code cannot represent (another nesting for M ≥ 2, another surrogate, the forward clip, a convolutional
// network, a readout other than the dataset's released one, the learnable adaptive LIF) are an
// *InputError naming the setting.
func ExportReleased(runDir, outDir string, opts train.Options) error {
	scope := mlmodel.NewStore().RootScope()
	if _, _, err := train.LoadCheckpointAll(scope, runDir); err != nil {
		return err
	}
	cfg := train.ConfigFromContext(scope).Resolved()
	history, err := train.HistoryFromContext(scope)
	if err != nil {
		return err
	}
	ds, err := train.LoadDataset(cfg, opts)
	if err != nil {
		return err
	}
	n, err := train.NeuronConfigFor(cfg, ds)
	if err != nil {
		return err
	}
	kind, order := cfg.Kind(), cfg.Order()
	refuse := func(format string, args ...any) error {
		return inputErrorf("%s: the released code cannot represent this run: "+format, append([]any{runDir}, args...)...)
	}
	switch {
	case len(ds.Train.FeatureShape) > 1:
		return refuse("its network is convolutional")
	case order >= 2 && cfg.TSMix != string(neuron.TSMixOfficial):
		return refuse("ts_mix %s with M = %d (the released code nests the lambda-mix innermost first)", cfg.TSMix, order)
	case cfg.Surrogate != train.SurrogateTriangle:
		return refuse("surrogate %s (the released code's is the triangle)", cfg.Surrogate)
	case cfg.ForwardClip:
		return refuse("the forward clip of f*")
	case cfg.Readout != string(train.DefaultReadout(cfg.Dataset)):
		return refuse("readout %s (the released code reads dataset %s out by %s)", cfg.Readout, cfg.Dataset, train.DefaultReadout(cfg.Dataset))
	case kind == neuron.AdaptLIF && cfg.AdaptLIF != train.AdaptLIFFixed:
		return refuse("the learnable adaptive LIF")
	case kind != neuron.FS && kind != neuron.FSTS && kind != neuron.FSFrozen && kind != neuron.LIF && kind != neuron.AdaptLIF:
		return refuse("neuron kind %s", kind)
	}
	get := func(path string) (*Tensor, error) {
		v := scope.Store().GetVariable(mlmodel.JoinPath("/"+train.ModelScope, path))
		if v == nil {
			return nil, fmt.Errorf("%s: its checkpoint has no variable %s", runDir, path)
		}
		t, err := v.Value()
		if err != nil {
			return nil, err
		}
		return tensorFromGoMLX(t)
	}
	state := map[string]*Tensor{}
	// dense puts the dense map under prefix (weights transposed to PyTorch's [out, in]) under the names
	// weight and bias.
	dense := func(prefix, weight, bias string) error {
		w, err := get(prefix + "dense/weights")
		if err != nil {
			return err
		}
		b, err := get(prefix + "dense/biases")
		state[weight], state[bias] = transpose(w), b
		return err
	}
	for i := range 2 {
		p := fmt.Sprintf("hidden_%d/", i)
		if err := dense(p, fmt.Sprintf(stateWeight, i), fmt.Sprintf(stateBias, i)); err != nil {
			return err
		}
		switch kind {
		case neuron.FS, neuron.FSTS, neuron.FSFrozen:
			f, err := get(p + "neuron/" + neuron.TargetVariable(n))
			if err != nil {
				return err
			}
			if n.TargetCoordinate == neuron.TargetOmega {
				for j, v := range f.Data {
					f.Data[j] = float32(math.Log(float64(v) / (2 * math.Pi)))
				}
			}
			state[fmt.Sprintf(stateFRaw, i)] = f
		default:
			k := 0.0
			if kind == neuron.AdaptLIF {
				k = n.Constants().AdaptLIFKappa()
			}
			state[fmt.Sprintf(stateKappa, i)] = &Tensor{Shape: []int{cfg.Width}, Data: slices.Repeat([]float32{float32(k)}, cfg.Width)}
		}
		if order > 0 {
			beta, err := get(p + "neuron/" + neuron.VarBetaHat)
			if err != nil {
				return err
			}
			lam, err := get(p + "neuron/" + neuron.VarLambdaHat)
			if err != nil {
				return err
			}
			state[fmt.Sprintf(stateBeta, i)] = beta
			if order <= 2 {
				for m, name := range []string{stateLam1, stateLam2}[:order] {
					state[fmt.Sprintf(name, i)] = &Tensor{Shape: []int{cfg.Width}, Data: lam.Data[m*cfg.Width : (m+1)*cfg.Width]}
				}
			} else {
				state[fmt.Sprintf(stateLamAll, i)] = lam
			}
		}
	}
	if err := dense(model.ReadoutScope+"/", stateOutWeight, stateOutBias); err != nil {
		return err
	}
	if err := writeSafetensors(filepath.Join(outDir, WeightsFile), state); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(outDir, ConfigFile), exportConfig(cfg, n, ds.Train.F, ds.Classes)); err != nil {
		return err
	}
	info := map[string]any{"epoch": len(history), "valid_acc": nil, "test_acc": nil}
	if len(history) > 0 {
		last := history[len(history)-1]
		info["valid_acc"], info["test_acc"] = last.ValAcc, last.TestAcc
		records := make([]map[string]any, len(history))
		for i, e := range history {
			rec := map[string]any{"epoch": e.Epoch, "train_loss": e.Loss, "train_acc": e.TrainAcc, "lr": e.LR,
				"test_acc": e.TestAcc, "freq_projected": e.FreqProjected}
			if e.ValAcc != nil {
				rec["valid_acc"] = *e.ValAcc
			}
			records[i] = rec
		}
		if err := writeJSONFile(filepath.Join(outDir, MetricsFile), map[string]any{"history": records}); err != nil {
			return err
		}
	}
	return writeJSONFile(filepath.Join(outDir, CheckpointInfoFile), info)
}

// exportConfig returns the released configuration keys of a run (see docs/interop.md).
func exportConfig(cfg train.Config, n neuron.Config, features, classes int) map[string]any {
	typ := "fits"
	switch cfg.Kind() {
	case neuron.LIF:
		typ = "lif"
	case neuron.AdaptLIF:
		typ = "adaptive_lif"
	}
	c := map[string]any{
		"seed": cfg.Seed, "epochs": cfg.Epochs, "lr": cfg.LR, "wd": 0.0, "batch_size": cfg.Batch,
		"eval_batch_size": 256, "neuron_type": typ, "hidden_dims": []int{cfg.Width, cfg.Width},
		"dropout": cfg.Dropout, "order": cfg.Order(), "chunk_size": 32, "implicit": true,
		"tau_m": n.TauM, "tau_a": n.TauA, "dt": n.Dt, "ratio_eta_gamma": 1.0,
		"f_min": n.FMinHz, "f_max": n.FMaxHz, "freq_init": string(n.FInit), "learn_freq": cfg.Kind() != neuron.FSFrozen,
		"freq_param": "ct", "freq_guard": cfg.FreqGuardSafety > 0, "guard_safety": cfg.FreqGuardSafety,
		"backend": "auto", "threshold": 1.0, "surrogate": "triangle", "surrogate_alpha": n.Surrogate.Scale,
		"lam_init": n.LambdaHatInit, "dataset": exportDataset(cfg.Dataset), "n_class": classes,
		"in_features": features,
	}
	if c["freq_init"] == "" {
		c["freq_init"] = "log"
	}
	if cfg.FreqGuardSafety == 0 {
		c["guard_safety"] = 0.98
	}
	switch cfg.Protocol {
	case train.BestTest, train.FinalEpoch:
		c["eval_mode"] = "test_only"
	case train.ValSplit:
		c["eval_mode"], c["valid_frac"], c["valid_split_seed"] = "valid_split", train.ValFraction, train.ValSplitSeed
	}
	return c
}

// tensorFromGoMLX copies a float32 GoMLX tensor.
func tensorFromGoMLX(t *tensors.Tensor) (*Tensor, error) {
	flat, err := tensors.CopyFlatData[float32](t)
	if err != nil {
		return nil, err
	}
	return &Tensor{Shape: slices.Clone(t.Shape().Dimensions), Data: flat}, nil
}

// writeSafetensors writes state as float32 tensors in the safetensors format.
func writeSafetensors(file string, state map[string]*Tensor) error {
	views := make(map[string]safetensors.TensorView, len(state))
	for name, t := range state {
		data := make([]byte, 0, 4*len(t.Data))
		for _, v := range t.Data {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
		shape := make([]uint64, len(t.Shape))
		for i, d := range t.Shape {
			shape[i] = uint64(d)
		}
		view, err := safetensors.NewTensorView(safetensors.F32, shape, data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		views[name] = view
	}
	b, err := safetensors.Serialize(views, map[string]string{"format": "pt"})
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

func writeJSONFile(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

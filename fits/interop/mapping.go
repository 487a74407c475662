package interop

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/theory"
	"github.com/fits-snn/fits/fits/train"
	"github.com/gomlx/gomlx/core/tensors"
)

// FormatReleased is train.Import.Format of a run read from the released code.
const FormatReleased = "released-pytorch"

// releasedDatasets maps the released scripts' dataset names (their config's "dataset") to this toolkit's
// registered datasets.
var releasedDatasets = map[string]string{
	"SHD":          "shd",
	"SSC":          "ssc",
	"GSC_v0.02_35": "gsc",
	"smnist":       "smnist",
}

// datasetShapes are the input features and classes of the datasets a released run can name: a checkpoint
// whose first dense layer or readout disagrees is refused.
var datasetShapes = map[string][2]int{
	"shd": {140, 20}, "ssc": {140, 35}, "gsc": {40, 35}, "smnist": {1, 10},
	"synthetic": {140, 8}, "synthetic-long": {140, 8}, "synthetic-shallow": {140, 8},
}

// ignoredKeys are configuration keys of the released code that change how a run executes or is logged,
// not the network it trains or what the weights mean (paths, workers, the Triton chunking, wandb, the
// GSC mel cache, informational counts).
var ignoredKeys = []string{
	"results_dir", "data_dir", "workers", "eval_batch_size", "chunk_size", "backend",
	"use_wandb", "wandb_project", "wandb_run_name",
	"skip_prepare", "cache_mels", "mel_cache_dir", "ensure_mel_cache",
	"n_params", "orig_units", "lam_init",
}

// configReader reads typed keys of a released configuration and remembers which it read, so that every key
// left over is reported as unknown.
type configReader struct {
	cfg  map[string]any
	used map[string]bool
	err  error
}

func (r *configReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *configReader) get(key string) (any, bool) {
	r.used[key] = true
	v, ok := r.cfg[key]
	return v, ok && v != nil
}

func (r *configReader) float(key string, def float64) float64 {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			r.fail("configuration key %s is %v, not a finite number", key, x)
		}
		return x
	case int:
		return float64(x)
	case string: // PyYAML reads "3e-3" as a string; the released code converts it
		var f float64
		if _, err := fmt.Sscan(x, &f); err == nil {
			return f
		}
	}
	r.fail("configuration key %s is %v, not a number", key, v)
	return def
}

func (r *configReader) required(key string) float64 {
	if _, ok := r.get(key); !ok {
		r.fail("the configuration has no %s", key)
		return 0
	}
	return r.float(key, 0)
}

func (r *configReader) int(key string, def int) int { return readAs(r, key, def, "an integer") }

func (r *configReader) string(key, def string) string { return readAs(r, key, def, "a string") }

// readAs returns key's value when it is a T, def when the key is absent or null.
func readAs[T any](r *configReader, key string, def T, what string) T {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	if x, ok := v.(T); ok {
		return x
	}
	r.fail("configuration key %s is %v, not %s", key, v, what)
	return def
}

func (r *configReader) bool(key string, def bool) bool {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "1", "yes", "on":
			return true
		case "false", "0", "no", "off":
			return false
		}
	}
	r.fail("configuration key %s is %v, not a boolean", key, v)
	return def
}

// wantFloat and wantInt fail unless key (default def) has the value the toolkit supports.
func (r *configReader) wantFloat(key string, def, supported float64, why string) {
	want(r, key, r.float(key, def), supported, why)
}

func (r *configReader) wantInt(key string, def, supported int, why string) {
	want(r, key, r.int(key, def), supported, why)
}

func want[T comparable](r *configReader, key string, v, supported T, why string) {
	if v != supported {
		r.fail("configuration key %s = %v is not supported: %s", key, v, why)
	}
}

// Mapped is a released run as this toolkit describes it.
type Mapped struct {
	Config    train.Config
	Variables []train.ImportedVariable
	// Features and Classes are the network's input features per step and output classes.
	Features, Classes int
}

// MapOptions adjust how a released run is read.
type MapOptions struct {
	// Dataset, when not empty, names the dataset of this toolkit (a registered name of package data) that
	// the run trained on, overriding the configuration's dataset key.
	Dataset string
	// Small says the run trained on the dataset's reduced version (data.Options.Small), as the PyTorch
	// peer's fixtures do on the synthetic task.
	Small bool
}

// MapReleased maps a released run onto this toolkit: the configuration onto a train.Config and the state
// dict onto the variables of the network train.NewNetwork builds for it. Every key the released code
// does not write, every setting the toolkit cannot represent, every missing, extra or misshapen tensor is
// an *InputError naming it.
func MapReleased(r *Released, opts MapOptions) (*Mapped, error) {
	cfg, net, err := mapConfig(r.Config, opts.Dataset)
	if err != nil {
		return nil, inputErrorf("%s: %v", configName(r), err)
	}
	cfg.Small = opts.Small
	m := &Mapped{Config: cfg}
	if err := m.mapState(r.State, net); err != nil {
		return nil, inputErrorf("%s: %v", r.Checkpoint, err)
	}
	if shape, ok := datasetShapes[cfg.Dataset]; ok && (shape[0] != m.Features || shape[1] != m.Classes) {
		return nil, inputErrorf("%s: the network takes %d input features and has %d classes; dataset %s has %d and %d",
			r.Checkpoint, m.Features, m.Classes, cfg.Dataset, shape[0], shape[1])
	}
	if r.Epoch > m.Config.Epochs {
		m.Config.Epochs = r.Epoch
	}
	if len(r.History) > m.Config.Epochs {
		m.Config.Epochs = len(r.History)
	}
	if err := m.Config.Validate(); err != nil {
		return nil, inputErrorf("%s: %v", configName(r), err)
	}
	return m, nil
}

func configName(r *Released) string {
	if r.ConfigSource == "checkpoint" {
		return r.Checkpoint + " (its config)"
	}
	return r.ConfigSource
}

// netKeys are what a released configuration says about the network's shape beyond train.Config: its
// hidden layers and, when given (nonzero), its classes and input features.
type netKeys struct{ layers, classes, features int }

// mapConfig maps the configuration keys (see docs/interop.md).
func mapConfig(c map[string]any, datasetFlag string) (train.Config, netKeys, error) {
	var net netKeys
	r := &configReader{cfg: c, used: map[string]bool{}}
	cfg := train.DefaultConfig().WithReleasedSemantics()

	// The dataset and its protocol.
	name := r.string("dataset", "")
	task := r.string("task", "")
	if datasetFlag != "" {
		name = datasetFlag
	}
	ds, ok := releasedDatasets[name]
	switch {
	case name == "" && datasetFlag == "":
		return cfg, net, fmt.Errorf("the configuration names no dataset (give --dataset)")
	case name == "psmnist" || task == "psmnist":
		return cfg, net, fmt.Errorf("dataset psmnist (permuted sMNIST) has no counterpart in this toolkit")
	case !ok && slices.Contains(data.Names(), name):
		ds = name
	case !ok:
		return cfg, net, fmt.Errorf("dataset %q is neither one of the released code's (%s) nor a dataset of this toolkit (give --dataset)",
			name, strings.Join(slices.Sorted(maps.Keys(releasedDatasets)), ", "))
	}
	cfg.Dataset = ds
	cfg.Readout = string(model.ReadoutSum)
	if ds == "smnist" {
		cfg.Readout = string(model.ReadoutMean)
	}
	net.classes = r.int("n_class", 0)
	switch mode := r.string("eval_mode", ""); {
	case ds == "ssc" || ds == "gsc":
		cfg.Protocol = train.OfficialVal
	case mode == "valid_split":
		cfg.Protocol = train.ValSplit
		r.wantFloat("valid_frac", 0.2, 0.2, "this toolkit's SHD* split holds out 20%")
		r.wantInt("valid_split_seed", 0, 0, "this toolkit's SHD* split uses seed 0")
	case mode == "" || mode == "test_only":
		cfg.Protocol = train.BestTest
	default:
		r.fail("configuration key eval_mode = %q is not one of test_only, valid_split", mode)
	}
	r.float("valid_frac", 0.2)
	r.int("valid_split_seed", 0)
	if ds == "shd" || ds == "ssc" {
		r.wantInt("time_window", 250, 250, "this toolkit bins "+ds+" into 250 steps")
		r.wantInt("in_features", 140, 140, "this toolkit bins "+ds+" into 140 channels")
	} else {
		r.int("time_window", 0)
		net.features = r.int("in_features", 0)
	}
	if ds == "gsc" {
		r.wantInt("mel_max_len", 100, 100, "this toolkit's GSC front end keeps 100 frames")
		r.wantInt("audio_sr", 16000, 16000, "this toolkit reads GSC at 16 kHz")
	}

	// The network.
	dims, _ := r.get("hidden_dims")
	widths, ok := dims.([]any)
	if !ok || len(widths) == 0 {
		return cfg, net, fmt.Errorf("the configuration has no hidden_dims list")
	}
	for _, w := range widths {
		if n, ok := w.(int); !ok || n < 1 || n != widths[0] {
			return cfg, net, fmt.Errorf("hidden_dims %v is not supported: this toolkit's networks have hidden layers of one width", dims)
		}
	}
	if len(widths) != 2 {
		return cfg, net, fmt.Errorf("hidden_dims %v is not supported: this toolkit's networks have two hidden layers", dims)
	}
	cfg.Width, net.layers = widths[0].(int), len(widths)
	order := r.int("order", 1)
	learnFreq := r.bool("learn_freq", true)
	switch typ := strings.ToLower(r.string("neuron_type", "fits")); typ {
	case "fits":
		switch {
		case order < 0:
			r.fail("configuration key order = %d is negative", order)
		case !learnFreq && order > 0:
			r.fail("learn_freq = false with order %d is not supported: this toolkit freezes f* only without a TS module (fs-frozen)", order)
		case !learnFreq:
			cfg = cfg.WithNeuron(neuron.FSFrozen, 0)
		case order == 0:
			cfg = cfg.WithNeuron(neuron.FS, 0)
		default:
			cfg = cfg.WithNeuron(neuron.FSTS, order)
		}
	case "lif":
		cfg = cfg.WithNeuron(neuron.LIF, 0)
	case "adaptive_lif":
		cfg = cfg.WithNeuron(neuron.AdaptLIF, 0)
		cfg.AdaptLIF = train.AdaptLIFFixed
	default:
		r.fail("configuration key neuron_type = %q is not one of fits, lif, adaptive_lif", typ)
	}
	cfg.TauM, cfg.TauA, cfg.Dt = r.required("tau_m"), r.required("tau_a"), r.required("dt")
	cfg.FMinHz, cfg.FMaxHz = r.required("f_min"), r.required("f_max")
	switch fi := r.string("freq_init", "log"); fi {
	case "log", "linear":
		cfg.FInit = fi
	default:
		r.fail("configuration key freq_init = %q is not supported (log, linear)", fi)
	}
	if fp := r.string("freq_param", "ct"); fp != "ct" {
		r.fail("configuration key freq_param = %q is not supported: this toolkit's runs train the continuous-time target (ct)", fp)
	}
	if !r.bool("implicit", true) {
		r.fail("configuration key implicit = false is not supported: this toolkit runs the semi-implicit update")
	}
	r.wantFloat("ratio_eta_gamma", 1, 1, "this toolkit's runs use eta = gamma")
	r.wantFloat("threshold", 1, 1, "this toolkit's runs fire at Vth = 1")
	if s := r.string("surrogate", "triangle"); s != "triangle" {
		r.fail("configuration key surrogate = %q is not supported: this toolkit's runs use the triangle", s)
	}
	cfg.Surrogate, cfg.SurrogateAlpha = train.SurrogateTriangle, r.float("surrogate_alpha", 2)
	r.float("lam_init", -3)

	// Training.
	cfg.Seed = int64(r.int("seed", 0))
	cfg.Epochs = r.int("epochs", 100)
	cfg.Batch = r.int("batch_size", 128)
	cfg.LR = r.float("lr", 1e-3)
	cfg.Dropout = r.float("dropout", 0)
	r.wantFloat("wd", 0, 0, "this toolkit's Adam has no weight decay")
	cfg.FreqGuardSafety = r.float("guard_safety", 0.98)
	if !r.bool("freq_guard", true) {
		cfg.FreqGuardSafety = 0
	}
	for _, k := range ignoredKeys {
		r.used[k] = true
	}
	if r.err != nil {
		return cfg, net, r.err
	}
	for _, k := range slices.Sorted(maps.Keys(c)) {
		if !r.used[k] {
			return cfg, net, fmt.Errorf("configuration key %q is not one the released code writes", k)
		}
	}
	return cfg, net, nil
}

// Names of the released state dict (fits/models.py FiTSNet, fits/neuron.py FiTSNeuron and LIFNeuron).
const (
	stateWeight    = "neuron_layers.%d.linear.weight"
	stateBias      = "neuron_layers.%d.linear.bias"
	stateFRaw      = "neuron_layers.%d.f_raw"
	stateBeta      = "neuron_layers.%d.ap_beta_raw"
	stateLam1      = "neuron_layers.%d.lam1_raw"
	stateLam2      = "neuron_layers.%d.lam2_raw"
	stateLamAll    = "neuron_layers.%d.ap_lam_raw"
	stateKappa     = "neuron_layers.%d.kappa_fixed"
	stateOutWeight = "output.weight"
	stateOutBias   = "output.bias"
)

// mapState takes every tensor of the state dict onto the toolkit's variables, checking shapes.
func (m *Mapped) mapState(state map[string]*Tensor, net netKeys) error {
	layers := net.layers
	used := map[string]bool{}
	var err error
	// take returns the tensor name, checking its shape and values; after the first problem, kept in err, it
	// returns zeros of the shape.
	take := func(name string, shape ...int) *Tensor {
		t, ok := state[name]
		switch {
		case err != nil:
		case !ok:
			err = fmt.Errorf("its state dict has no tensor %s", name)
		case !slices.Equal(t.Shape, shape):
			err = fmt.Errorf("tensor %s has shape %v, want %v", name, t.Shape, shape)
		default:
			used[name] = true
			for i, v := range t.Data {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					err = fmt.Errorf("tensor %s holds a value that is not finite (element %d)", name, i)
					break
				}
			}
		}
		if err != nil {
			n := 1
			for _, d := range shape {
				n *= d
			}
			return &Tensor{Shape: shape, Data: make([]float32, n)}
		}
		return t
	}
	cfg := m.Config
	w0, ok := state[fmt.Sprintf(stateWeight, 0)]
	if !ok || len(w0.Shape) != 2 {
		return fmt.Errorf("its state dict has no %s of shape [width, features]", fmt.Sprintf(stateWeight, 0))
	}
	out, ok := state[stateOutWeight]
	if !ok || len(out.Shape) != 2 {
		return fmt.Errorf("its state dict has no %s of shape [classes, width]", stateOutWeight)
	}
	m.Features, m.Classes = w0.Shape[1], out.Shape[0]
	if net.classes != 0 && net.classes != m.Classes {
		return fmt.Errorf("its configuration says n_class %d, its readout has %d rows", net.classes, m.Classes)
	}
	if net.features != 0 && net.features != m.Features {
		return fmt.Errorf("its configuration says in_features %d, its first layer takes %d", net.features, m.Features)
	}
	kind, order, width := cfg.Kind(), cfg.Order(), cfg.Width
	in := m.Features
	for i := range layers {
		scope := fmt.Sprintf("hidden_%d/", i)
		m.add(scope+"dense/weights", transpose(take(fmt.Sprintf(stateWeight, i), width, in)), true)
		m.add(scope+"dense/biases", take(fmt.Sprintf(stateBias, i), width), true)
		switch kind {
		case neuron.FS, neuron.FSTS, neuron.FSFrozen:
			m.add(scope+"neuron/"+neuron.VarLogTargetHz, take(fmt.Sprintf(stateFRaw, i), width), kind != neuron.FSFrozen)
		case neuron.LIF, neuron.AdaptLIF:
			if k := take(fmt.Sprintf(stateKappa, i), width); err == nil {
				if e := checkFixedKappa(k, kind, cfg); e != nil {
					err = fmt.Errorf("tensor %s: %v", fmt.Sprintf(stateKappa, i), e)
				}
			}
		}
		if order > 0 {
			m.add(scope+"neuron/"+neuron.VarBetaHat, take(fmt.Sprintf(stateBeta, i), order, width), true)
			lam := &Tensor{Shape: []int{order, width}}
			if order <= 2 {
				for _, name := range []string{stateLam1, stateLam2}[:order] {
					lam.Data = append(lam.Data, take(fmt.Sprintf(name, i), width).Data...)
				}
			} else {
				lam.Data = take(fmt.Sprintf(stateLamAll, i), order, width).Data
			}
			m.add(scope+"neuron/"+neuron.VarLambdaHat, lam, true)
		}
		in = width
	}
	m.add(model.ReadoutScope+"/dense/weights", transpose(take(stateOutWeight, m.Classes, width)), true)
	m.add(model.ReadoutScope+"/dense/biases", take(stateOutBias, m.Classes), true)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(state)) {
		if !used[k] {
			return fmt.Errorf("its state dict holds the tensor %s, which a %s network of %d layers with M = %d does not have",
				k, kind, layers, order)
		}
	}
	return nil
}

// checkFixedKappa checks the released LIF's fixed coupling buffer: 0 for the plain LIF, κ_CT(Ω* = 0) for the
// adaptive one (this toolkit computes it from τm and τa and does not store it).
func checkFixedKappa(k *Tensor, kind neuron.Kind, cfg train.Config) error {
	want := 0.0
	if kind == neuron.AdaptLIF {
		want = theory.Constants{TauM: cfg.TauM, TauA: cfg.TauA, Dt: cfg.Dt}.AdaptLIFKappa()
	}
	for _, v := range k.Data {
		if math.Abs(float64(v)-want) > 1e-5*math.Max(1, want) {
			return fmt.Errorf("holds %g, want %g (the fixed coupling of %s at tau_m %g s, tau_a %g s)", v, want, kind, cfg.TauM, cfg.TauA)
		}
	}
	return nil
}

func (m *Mapped) add(path string, t *Tensor, trainable bool) {
	m.Variables = append(m.Variables, train.ImportedVariable{
		Path: path, Value: tensors.FromFlatDataAndDimensions(append([]float32(nil), t.Data...), t.Shape...), Trainable: trainable,
	})
}

// transpose returns the [cols, rows] transpose of a [rows, cols] tensor (PyTorch's Linear weight [out, in]
// to GoMLX's Dense weights [in, out], and back).
func transpose(t *Tensor) *Tensor {
	rows, cols := t.Shape[0], t.Shape[1]
	out := &Tensor{Shape: []int{cols, rows}, Data: make([]float32, len(t.Data))}
	for i := range rows {
		for j := range cols {
			out.Data[j*rows+i] = t.Data[i*cols+j]
		}
	}
	return out
}

// runFrom names a checkpoint by its folder and file name, never by an absolute path.
func runFrom(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return filepath.Base(file)
	}
	return filepath.Join(filepath.Base(filepath.Dir(abs)), filepath.Base(abs))
}

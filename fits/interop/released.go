package interop

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fits-snn/fits/internal/filesafe"
)

// Files of a run folder of the released code (experiments/common.py's fit; the older per-dataset layout
// writes the same).
const (
	CheckpointFile = "best.pth"
	ConfigFile     = "config.json"
	MetricsFile    = "metrics.json"
)

// maxJSONBytes caps config.json and metrics.json (a psMNIST config carries a 784-entry permutation).
const maxJSONBytes = 64 << 20

// Released is a run of the released code as read from its folder: the checkpoint's state dict and
// configuration, and the per-epoch history of metrics.json.
type Released struct {
	// Checkpoint is the path of the .pth file read and SHA256 its hash (hex).
	Checkpoint string
	SHA256     string
	// Config is the run's configuration with the older key names (tau_mem, tau_b) renamed;
	// ConfigSource is "checkpoint" when it came from the .pth file, else the JSON file's path.
	Config       map[string]any
	ConfigSource string
	// State maps the state dict's names to tensors.
	State map[string]*Tensor
	// Epoch is the epoch the checkpoint was saved after; ValidAcc and TestAcc are its accuracies (nil when
	// the checkpoint holds None).
	Epoch             int
	ValidAcc, TestAcc *float64
	// History holds metrics.json's records (nil when the folder has no metrics.json: a run stopped before
	// its last epoch).
	History []map[string]any
}

// configAliases are the key names of older released runs and the names they stand for (the released
// examples/inspect_checkpoint.py renames them the same way).
var configAliases = map[string]string{"tau_mem": "tau_m", "tau_b": "tau_a"}

// checkpointKeys are the keys of the dict that the released fit saves; epoch and state are required.
var checkpointKeys = []string{"epoch", "state", "config", "valid_acc", "test_acc"}

// ReadReleased reads a released run: from is its folder (which holds best.pth) or a .pth file. The
// configuration is the one stored in the checkpoint; a checkpoint without one takes configFile, or
// config.json beside it when configFile is empty. metrics.json beside the checkpoint, when present, gives
// the history. Every problem is an *InputError naming the file and what is wrong.
func ReadReleased(from, configFile string) (*Released, error) {
	ckpt := from
	if st, err := os.Stat(from); err != nil {
		return nil, &InputError{Err: err}
	} else if st.IsDir() {
		ckpt = filepath.Join(from, CheckpointFile)
		if _, err := os.Lstat(ckpt); err != nil {
			return nil, inputErrorf("%s holds no %s: not a run folder of the released code", from, CheckpointFile)
		}
	}
	obj, err := ReadPth(ckpt)
	if err != nil {
		return nil, err
	}
	top, ok := obj.(map[string]any)
	if !ok {
		return nil, inputErrorf("%s holds a pickled %s, not the dict {epoch, state, config, ...} of the released code", ckpt, typeName(obj))
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if !slices.Contains(checkpointKeys, k) {
			return nil, inputErrorf("%s holds the key %q, which the released code does not save (keys: %s)", ckpt, k, strings.Join(checkpointKeys, ", "))
		}
	}
	r := &Released{Checkpoint: ckpt}
	if r.SHA256, err = filesafe.SumFile(ckpt); err != nil {
		return nil, &InputError{Err: err}
	}
	if r.State, err = stateDict(top["state"]); err != nil {
		return nil, inputErrorf("%s: %v", ckpt, err)
	}
	epoch, ok := top["epoch"].(int)
	if !ok || epoch < 1 {
		return nil, inputErrorf("%s: its epoch is %v, want a number of at least 1", ckpt, top["epoch"])
	}
	r.Epoch = epoch
	for _, acc := range []struct {
		key string
		dst **float64
	}{{"valid_acc", &r.ValidAcc}, {"test_acc", &r.TestAcc}} {
		switch v := top[acc.key].(type) {
		case nil:
		case float64:
			if !(v >= 0 && v <= 1) {
				return nil, inputErrorf("%s: %s is %v, not an accuracy in [0, 1]", ckpt, acc.key, v)
			}
			*acc.dst = &v
		default:
			return nil, inputErrorf("%s: %s is %v, not an accuracy", ckpt, acc.key, v)
		}
	}
	if err := r.readConfig(top["config"], configFile); err != nil {
		return nil, err
	}
	metrics := filepath.Join(filepath.Dir(ckpt), MetricsFile)
	if _, err := os.Lstat(metrics); err == nil {
		if r.History, err = readHistory(metrics); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readConfig sets r.Config from the checkpoint's config (embedded) or from a JSON file.
func (r *Released) readConfig(embedded any, configFile string) error {
	var cfg map[string]any
	switch c := embedded.(type) {
	case map[string]any:
		if configFile != "" {
			return inputErrorf("%s stores its own configuration; --config is only for checkpoints without one", r.Checkpoint)
		}
		cfg, r.ConfigSource = c, "checkpoint"
	case nil:
		if configFile == "" {
			configFile = filepath.Join(filepath.Dir(r.Checkpoint), ConfigFile)
		}
		b, err := readSmall(configFile, maxJSONBytes)
		if err != nil {
			return inputErrorf("%s stores no configuration and %v", r.Checkpoint, err)
		}
		if err := json.Unmarshal(b, &cfg); err != nil || cfg == nil {
			return inputErrorf("%s is not a JSON object of configuration keys: %v", configFile, err)
		}
		cfg, r.ConfigSource = normalizeJSON(cfg).(map[string]any), configFile
	default:
		return inputErrorf("%s: its config is a %s, not a dict", r.Checkpoint, typeName(embedded))
	}
	r.Config = make(map[string]any, len(cfg))
	for k, v := range cfg {
		if to, ok := configAliases[k]; ok {
			if _, both := cfg[to]; both {
				return inputErrorf("%s: the configuration has both %s and its older name %s", r.Checkpoint, to, k)
			}
			k = to
		}
		r.Config[k] = v
	}
	return nil
}

// normalizeJSON turns encoding/json's float64 numbers that are whole into int, as the pickle holds them.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case float64:
		if x == float64(int(x)) && x >= -1<<53 && x <= 1<<53 {
			return int(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeJSON(e)
		}
	}
	return v
}

// readHistory reads metrics.json: {"history": [{"epoch": 1, ...}, ...]}, epochs numbered 1, 2, ...
func readHistory(file string) ([]map[string]any, error) {
	b, err := readSmall(file, maxJSONBytes)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	var m struct {
		History []map[string]any `json:"history"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, inputErrorf("%s is not the released {\"history\": [...]}: %v", file, err)
	}
	for i, rec := range m.History {
		if e, ok := rec["epoch"].(float64); !ok || int(e) != i+1 {
			return nil, inputErrorf("%s: record %d is epoch %v, want %d", file, i+1, rec["epoch"], i+1)
		}
	}
	return m.History, nil
}

// stateDict checks that v is a dict of tensors.
func stateDict(v any) (map[string]*Tensor, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("its state is a %s, not a state dict", typeName(v))
	}
	out := make(map[string]*Tensor, len(m))
	for k, e := range m {
		t, ok := e.(*Tensor)
		if !ok {
			return nil, fmt.Errorf("state entry %q is a %s, not a tensor", k, typeName(e))
		}
		out[k] = t
	}
	return out, nil
}

// readSmall reads a regular file of at most limit bytes.
func readSmall(file string, limit int64) ([]byte, error) {
	st, err := os.Stat(file)
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", file)
	case st.Size() > limit:
		return nil, fmt.Errorf("%s holds %d bytes, more than %d", file, st.Size(), limit)
	}
	return os.ReadFile(file)
}

// typeName names the Python type a converted value had.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	case *Tensor:
		return "tensor"
	case string:
		return "str"
	case int:
		return "int"
	case float64:
		return "float"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

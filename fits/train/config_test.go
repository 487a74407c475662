package train

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/ml/model"
)

// TestConfigParamKeys pins the hyperparameter keys and value types under which SetParams stores a Config:
// checkpoints carry them, so a checkpoint written before a change must still load.
func TestConfigParamKeys(t *testing.T) {
	want := map[string]string{
		"dataset": "string", "dataset_small": "bool", "dataset_train_limit": "int", "dataset_test_limit": "int",
		"model": "string", "m": "int", "width": "int", "epochs": "int", "batch_size": "int",
		"learning_rate": "float64", "dropout": "float64", "seed": "int64", "protocol": "string", "readout": "string",
		"executor": "string", "chunk": "int", "target_lr_scale": "float64", "ts_mix": "string", "surrogate": "string",
		"surrogate_alpha": "float64", "target_coordinate": "string", "f_init": "string", "freq_guard_safety": "float64",
		"forward_clip": "bool", "dropout_mode": "string", "lr_schedule": "string", "adam_epsilon": "float64",
		"bias_init": "string", "adaptlif": "string", "val_split": "string", "input_counts": "bool", "frontend": "string",
		"tau_m": "float64", "tau_a": "float64", "dt": "float64", "f_min_hz": "float64", "f_max_hz": "float64",
	}
	scope := model.NewStore().RootScope()
	DefaultConfig().SetParams(scope)
	for key, typ := range want {
		if v, found := scope.GetParam(key); !found || fmt.Sprintf("%T", v) != typ {
			t.Errorf("param %q = %T (found %v), want a %s", key, v, found, typ)
		}
	}
	if n := reflect.TypeFor[Config]().NumField(); n != len(want) {
		t.Errorf("Config has %d fields, %d pinned keys: pin the new field's key here", n, len(want))
	}
}

// TestConfigTags checks that every field of Config declares its JSON key, hyperparameter key, flag and
// help text, and that no two fields share one.
func TestConfigTags(t *testing.T) {
	seen := map[string]string{}
	for f := range reflect.TypeFor[Config]().Fields() {
		for _, tag := range []string{"json", "param", "flag", "help"} {
			v := f.Tag.Get(tag)
			if v == "" {
				t.Errorf("field %s has no %s tag", f.Name, tag)
			}
			if tag != "help" && seen[tag+" "+v] != "" {
				t.Errorf("fields %s and %s share the %s tag %q", seen[tag+" "+v], f.Name, tag, v)
			}
			seen[tag+" "+v] = f.Name
		}
	}
}

// TestConfigParamsRoundTripAllFields stores a Config whose every field differs from DefaultConfig's and
// reads it back.
func TestConfigParamsRoundTripAllFields(t *testing.T) {
	c := DefaultConfig().Legacy()
	c.Dataset, c.Small, c.TrainLimit, c.TestLimit, c.Model, c.M = "shd", true, 9, 4, "fsts", 2
	c.Width, c.Epochs, c.Batch, c.LR, c.Dropout, c.Seed = 33, 7, 5, 1.5e-3, 0.25, 42
	c.Protocol, c.Executor, c.Chunk, c.TargetLRScale, c.SurrogateAlpha = OfficialVal, "loop", 3, 44, 3.5
	c.FreqGuardSafety, c.FInit, c.AudioFrontEnd = 0.5, "linear", "released"
	c.TauM, c.TauA, c.Dt, c.FMinHz, c.FMaxHz = 1, 2, 3, 4, 5
	d := reflect.ValueOf(DefaultConfig())
	for f, v := range reflect.ValueOf(c).Fields() {
		if v.Equal(d.FieldByIndex(f.Index)) {
			t.Errorf("field %s has its default value: the round trip would not see it", f.Name)
		}
	}
	scope := model.NewStore().RootScope()
	c.SetParams(scope)
	if got := ConfigFromContext(scope); got != c {
		t.Errorf("round trip gave %+v, want %+v", got, c)
	}
}

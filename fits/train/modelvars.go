package train

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fits-snn/fits/fits/step"
	"github.com/gomlx/compute"
	mlmodel "github.com/gomlx/gomlx/ml/model"
)

// A checkpoint's variables are checked against the network its configuration describes, so that a
// renamed, missing, reshaped or retyped weight is refused instead of silently re-initialised or of
// failing deep inside the graph code.

// modelVariables returns the variables of the model scope in a checkpoint's layout: full path (without
// GoMLX's "var:" prefix) to dtype and dimensions, written as a shape.
func modelVariables(jsonData string) (map[string]string, error) {
	layout, err := parseLayout([]byte(jsonData))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, v := range layout.Variables {
		name := strings.TrimPrefix(v.ParameterName, "var:")
		if strings.HasPrefix(name, "/"+modelScope+"/") {
			out[name] = fmt.Sprintf("(%s)%v", v.DType, v.Dimensions)
		}
	}
	return out, nil
}

// checkModelNames checks, after the network was built on store with a checkpoint loaded, that the
// network took every variable of the checkpoint's model scope and found every one it needs there.
func checkModelNames(store *mlmodel.Store, name, jsonData string) error {
	want, err := modelVariables(jsonData)
	if err != nil {
		return err
	}
	var have []string
	for v := range store.IterVariables() {
		if strings.HasPrefix(v.Path(), "/"+modelScope+"/") {
			have = append(have, v.Path())
		}
	}
	for _, p := range have {
		if _, ok := want[p]; !ok {
			return inputErrorf("checkpoint %s has no variable %s, which the network of its configuration needs (renamed or removed?)", name, p)
		}
	}
	for p := range want {
		if !slices.Contains(have, p) {
			return inputErrorf("checkpoint %s holds a variable %s that the network of its configuration does not have (renamed?)", name, p)
		}
	}
	return nil
}

// diagnoseModelVariables builds the network of net afresh (without the checkpoint) and compares its
// variables with the checkpoint's: it returns an *InputError naming the first variable whose name, dtype
// or dimensions differ, nil when none does (the failure lies elsewhere).
func diagnoseModelVariables(b compute.Backend, net Network, name, jsonData string) error {
	want, err := modelVariables(jsonData)
	if err != nil {
		return err
	}
	scope, err := loadContext(0)
	if err != nil {
		return nil
	}
	if err := step.InitVariables(b, scope.At("%s", modelScope), net.Net); err != nil {
		return nil
	}
	for v := range scope.Store().IterVariables() {
		if !strings.HasPrefix(v.Path(), "/"+modelScope+"/") {
			continue
		}
		got := fmt.Sprintf("(%s)%v", v.Shape().DType, v.Shape().Dimensions)
		saved, ok := want[v.Path()]
		switch {
		case !ok:
			return inputErrorf("checkpoint %s has no variable %s, which the network of its configuration needs (renamed or removed?)", name, v.Path())
		case saved != got:
			return inputErrorf("checkpoint %s: variable %s is %s, the network of its configuration needs %s", name, v.Path(), saved, got)
		}
	}
	return nil
}

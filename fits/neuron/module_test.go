package neuron_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// scratchProgram is a user's program in a module of its own: a small GoMLX model (a dense map, then a FiTS
// layer) built and run with the pure-Go backend.
const scratchProgram = `package main

import (
	"fmt"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/gomlx/compute/gobackend"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

func main() {
	cfg := neuron.DefaultConfig(neuron.FSTS, 2)
	build := func(scope *model.Scope, x *Node) *Node {
		current := layers.Dense(scope.At("dense"), x, false, 4)
		return neuron.Layer(scope.At("fits"), current, cfg)
	}
	x := make([]float32, 2*50*3)
	for i := range x {
		x[i] = 0.5
	}
	spikes := model.MustCallOnce(gobackend.GetBackend(), model.NewStore(), build, tensors.FromFlatDataAndDimensions(x, 2, 50, 3))
	fmt.Println(spikes.Shape().Dimensions)
}
`

// TestScratchModule builds and runs a program of a module that requires the GoMLX version this module
// requires and imports the neuron layer (the module replaced by this checkout, every dependency from the
// module cache: no download), as a GoMLX user's module would.
func TestScratchModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program (-short)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion, gomlx := "", ""
	for line := range strings.Lines(string(goMod)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "go" {
			goVersion = f[1]
		} else if len(f) >= 2 && f[0] == "github.com/gomlx/gomlx" {
			gomlx = f[1]
		}
	}
	if goVersion == "" || gomlx == "" {
		t.Fatal("go.mod names no go version or does not require github.com/gomlx/gomlx")
	}
	dir := t.TempDir()
	mod := "module scratch\n\ngo " + goVersion + "\n\n" +
		"require (\n\tgithub.com/fits-snn/fits v0.0.0-00010101000000-000000000000\n\tgithub.com/gomlx/gomlx " + gomlx + "\n)\n\n" +
		"replace github.com/fits-snn/fits => " + root + "\n"
	for name, content := range map[string][]byte{"go.mod": []byte(mod), "go.sum": goSum, "main.go": []byte(scratchProgram)} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "run", "-mod=mod", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run in a scratch module: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "[2 50 4]" {
		t.Fatalf("the scratch program printed %q, want the spikes' shape [2 50 4]", got)
	}
}

package nb

import (
	_ "github.com/fits-snn/fits/data/all" // notebooks load every dataset by name
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute"
)

// Backend returns the GoMLX backend the notebooks compute with, chosen once per process as the CLI chooses
// it ($GOMLX_BACKEND, else XLA CUDA when its plugin and a GPU are present, else XLA CPU, else SimpleGo),
// and its configuration name (e.g. "xla:cpu") for result files. Library packages take the backend as an
// argument; notebooks pass this one.
func Backend() (compute.Backend, string, error) {
	b, err := xla.Backend()
	if err != nil {
		return nil, "", err
	}
	return b, xla.Current().Config, nil
}

package train_test

import (
	"encoding/json"
	"fmt"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/train"
)

// A run's neuron in the neuron package's types: WithNeuron sets the kind and the TS order, Kind and Order
// read them back, and checkpoints and result.json keep storing them under "model" and "m".
func ExampleConfig_WithNeuron() {
	cfg := train.DefaultConfig().WithNeuron(neuron.FSTS, 2)
	fmt.Println(cfg.Kind(), cfg.Order(), cfg.Validate() == nil)

	b, _ := json.Marshal(cfg)
	var stored struct {
		Model string `json:"model"`
		M     int    `json:"m"`
	}
	_ = json.Unmarshal(b, &stored)
	fmt.Printf("stored as model %q, m %d\n", stored.Model, stored.M)

	fmt.Println(cfg.WithNeuron(neuron.FS, 2).Validate())
	// Output:
	// fsts 2 true
	// stored as model "fsts", m 2
	// --m: kind fs has no TS module: order must be 0, got 2
}

package model_test

import (
	"fmt"

	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
)

// DefaultConfig describes the paper's feed-forward network; Net turns it into the blocks every engine of
// fits/step runs: here one of SHD's (700 input channels, two hidden layers of 128 FiTS neurons with one TS
// stage, 20 classes), each block a dense synapse followed by a layer of neurons. The readout is
// DefaultConfig's; the released SHD recipe (fits/train) sets the sum over time instead.
func ExampleConfig_Net() {
	cfg := model.DefaultConfig(neuron.FSTS, 1, 128, 20)
	net := cfg.Net(700)
	for _, b := range net.Blocks {
		fmt.Printf("%s: dense synapse %v, neurons %s, order M = %d\n", b.Scope, b.OutDims, b.Neuron.Kind, b.Neuron.Order)
	}
	fmt.Printf("readout %s over time, %d classes\n", net.Readout, net.Classes)
	// Output:
	// hidden_0: dense synapse [128], neurons fsts, order M = 1
	// hidden_1: dense synapse [128], neurons fsts, order M = 1
	// readout mean over time, 20 classes
}

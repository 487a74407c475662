// Package all registers every dataset of the toolkit with package data, so that data.Load finds
// them by name: "synthetic", "smnist", "smnist-row", "shd", "shd-val", "ssc", "gsc",
// "dvsgesture", "dvsgesture-fixture" (synthetic recordings generated on first use) and "espeak-digits"
// (generated with espeak-ng on first use). Import it for its side effect:
//
//	import _ "github.com/fits-snn/fits/data/all"
//
// The SHD/SSC reader links the HDF5 C library (Debian package libhdf5-dev).
package all

import (
	_ "github.com/fits-snn/fits/data/dvs"
	_ "github.com/fits-snn/fits/data/espeak"
	_ "github.com/fits-snn/fits/data/gsc"
	_ "github.com/fits-snn/fits/data/mnist"
	_ "github.com/fits-snn/fits/data/shd"
	_ "github.com/fits-snn/fits/data/synth"
)

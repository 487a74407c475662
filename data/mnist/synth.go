package mnist

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/fits-snn/fits/data/idx"
)

// WriteSynth writes the four MNIST files (gzipped IDX, official names) with n synthetic images per
// split: digit d is a bright bar at row 2 + 2d plus pixel noise, so the files have the exact format
// and labels 0..9 but are not handwriting.
func WriteSynth(dir string, n int, seed uint64) error { return WriteSynthSizes(dir, n, n, seed) }

// WriteSynthSizes is WriteSynth with train images in the training files and test in the test files
// (60000 and 10000 in the real MNIST).
func WriteSynthSizes(dir string, train, test int, seed uint64) error {
	if train < 1 || test < 1 {
		return fmt.Errorf("need at least one image per split, got %d and %d", train, test)
	}
	rng := rand.New(rand.NewPCG(seed, 0x3a15))
	for _, stem := range []string{"train", "t10k"} {
		n := train
		if stem == "t10k" {
			n = test
		}
		img := make([]byte, n*Pixels)
		lbl := make([]byte, n)
		for i := 0; i < n; i++ {
			d := i % Classes
			lbl[i] = byte(d)
			im := img[i*Pixels : (i+1)*Pixels]
			for p := range im {
				im[p] = byte(rng.IntN(40))
			}
			for c := 4; c < 24; c++ {
				im[(2+2*d)*Cols+c] = 255
			}
		}
		if err := idx.WriteFile(filepath.Join(dir, stem+"-images-idx3-ubyte.gz"), &idx.Array{Type: idx.Uint8, Dims: []int{n, Rows, Cols}, Data: img}); err != nil {
			return err
		}
		if err := idx.WriteFile(filepath.Join(dir, stem+"-labels-idx1-ubyte.gz"), &idx.Array{Type: idx.Uint8, Dims: []int{n}, Data: lbl}); err != nil {
			return err
		}
	}
	return nil
}

package gsc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// SynthConfig describes a synthetic Speech Commands folder in the official layout.
type SynthConfig struct {
	PerWord  int     // clips per word; the first goes to the validation list, the second to the test list
	Words    int     // how many of the 35 words get clips (the others get empty folders), 1..35
	Duration float64 // seconds per clip (1.0 in the real data; shorter clips exist there too)
	Seed     uint64
}

// WriteSynth writes root/WORD/SPEAKER_nohash_N.wav clips (16 kHz mono 16-bit PCM), a
// _background_noise_ folder, validation_list.txt and testing_list.txt. Word w is a tone sweeping
// from 200·1.08^w Hz upward by a factor 1.5 over the clip, with noise, so classes differ in
// their Mel bands.
func WriteSynth(root string, c SynthConfig) error {
	if c.PerWord < 1 || c.Words < 1 || c.Words > Classes || !(c.Duration > 0) {
		return fmt.Errorf("bad synthetic GSC configuration %+v", c)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x65c))
	var valid, test []string
	for w, word := range Words {
		if err := os.MkdirAll(filepath.Join(root, word), 0o755); err != nil {
			return err
		}
		if w >= c.Words {
			continue
		}
		f0 := 200 * math.Pow(1.08, float64(w))
		for k := 0; k < c.PerWord; k++ {
			name := fmt.Sprintf("%08x_nohash_%d.wav", rng.Uint32(), k%3)
			n := int(c.Duration * SampleRate)
			x := make([]float64, n)
			phase := 0.0
			for i := range x {
				f := f0 * math.Pow(1.5, float64(i)/float64(n))
				phase += 2 * math.Pi * f / SampleRate
				x[i] = 0.4*math.Sin(phase) + 0.02*rng.NormFloat64()
			}
			if err := WriteWAV(filepath.Join(root, word, name), x, SampleRate); err != nil {
				return err
			}
			switch k {
			case 0:
				valid = append(valid, word+"/"+name)
			case 1:
				test = append(test, word+"/"+name)
			}
		}
	}
	noise := filepath.Join(root, "_background_noise_")
	if err := os.MkdirAll(noise, 0o755); err != nil {
		return err
	}
	if err := WriteWAV(filepath.Join(noise, "white_noise.wav"), make([]float64, 1600), SampleRate); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, ValidList), []byte(strings.Join(valid, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, TestList), []byte(strings.Join(test, "\n")+"\n"), 0o644)
}

package gsc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data/progress"
)

// SynthConfig describes a synthetic Speech Commands folder in the official layout.
type SynthConfig struct {
	PerWord  int     // clips per word; the first goes to the validation list, the second to the test list
	Words    int     // how many of the 35 words get clips (the others get empty folders), 1..35
	Duration float64 // seconds per clip (1.0 in the real data; shorter clips exist there too)
	Seed     uint64
	// Clips > 0 writes Clips clips in all, word after word in turn over the Words words, instead of PerWord
	// per word: the first Valid of them go to the validation list, the next Test to the test list, the rest
	// train (OfficialSynthConfig: the official list sizes).
	Clips, Valid, Test int
}

// Official sizes of Speech Commands v0.02: 105829 clips, of which validation_list.txt names 9981 and
// testing_list.txt 11005; the other 84843 train.
const (
	OfficialClips = 105829
	OfficialValid = 9981
	OfficialTest  = 11005
)

// OfficialSynthConfig is the configuration of a full-size stand-in: 1 s clips of all 35 words, as many
// in each list as the official lists name.
func OfficialSynthConfig(seed uint64) SynthConfig {
	return SynthConfig{Words: Classes, Duration: 1.0, Seed: seed, Clips: OfficialClips, Valid: OfficialValid, Test: OfficialTest}
}

// SplitSizes returns the clips of each split that WriteSynth writes for c: Train, Validation, Test.
func (c SynthConfig) SplitSizes() map[string]int {
	if c.Clips > 0 {
		return map[string]int{Train: c.Clips - c.Valid - c.Test, Validation: c.Valid, Test: c.Test}
	}
	train := max(0, c.PerWord-2)
	valid, test := min(c.PerWord, 1), min(max(c.PerWord-1, 0), 1)
	return map[string]int{Train: c.Words * train, Validation: c.Words * valid, Test: c.Words * test}
}

// WriteSynth writes root/WORD/SPEAKER_nohash_N.wav clips (16 kHz mono 16-bit PCM), a
// _background_noise_ folder, validation_list.txt and testing_list.txt. Word w is a tone sweeping
// from 200·1.08^w Hz upward by a factor 1.5 over the clip, with noise, so classes differ in
// their Mel bands.
//
// With c.Clips > 0 it writes c.Clips clips, clip j of word j mod c.Words, the first c.Valid in the
// validation list and the next c.Test in the test list; progress goes to bar (one step per clip) when it
// is not nil.
func WriteSynth(root string, c SynthConfig) error { return WriteSynthProgress(root, c, nil) }

// WriteSynthProgress is WriteSynth with progress on bar (nil for none).
func WriteSynthProgress(root string, c SynthConfig, bar *progress.Bar) error {
	if c.Words < 1 || c.Words > Classes || !(c.Duration > 0) || (c.Clips <= 0 && c.PerWord < 1) ||
		c.Clips > 0 && (c.Valid < 0 || c.Test < 0 || c.Valid+c.Test > c.Clips) {
		return fmt.Errorf("bad synthetic GSC configuration %+v", c)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x65c))
	var valid, test []string
	for _, word := range Words {
		if err := os.MkdirAll(filepath.Join(root, word), 0o755); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	clip := func(w, k int) (string, error) {
		word := Words[w]
		name := fmt.Sprintf("%08x_nohash_%d.wav", rng.Uint32(), k%3)
		for names[word+"/"+name] { // a speaker hash drawn twice for the same word and repetition
			name = fmt.Sprintf("%08x_nohash_%d.wav", rng.Uint32(), k%3)
		}
		names[word+"/"+name] = true
		f0 := 200 * math.Pow(1.08, float64(w))
		n := int(c.Duration * SampleRate)
		x := make([]float64, n)
		phase := 0.0
		for i := range x {
			f := f0 * math.Pow(1.5, float64(i)/float64(n))
			phase += 2 * math.Pi * f / SampleRate
			x[i] = 0.4*math.Sin(phase) + 0.02*rng.NormFloat64()
		}
		if bar != nil {
			bar.Add(1)
		}
		return word + "/" + name, WriteWAV(filepath.Join(root, word, name), x, SampleRate)
	}
	// Clip j is clip k of word w; its place s in the order of the lists puts it in the validation list
	// below nv and in the test list below nv+nt.
	n, nv, nt := c.Clips, c.Valid, c.Test
	if c.Clips <= 0 {
		n, nv, nt = c.Words*c.PerWord, 1, 1
	}
	for j := range n {
		w, k, s := j%c.Words, j/c.Words, j
		if c.Clips <= 0 {
			w, k, s = j/c.PerWord, j%c.PerWord, j%c.PerWord
		}
		p, err := clip(w, k)
		if err != nil {
			return err
		}
		switch {
		case s < nv:
			valid = append(valid, p)
		case s < nv+nt:
			test = append(test, p)
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

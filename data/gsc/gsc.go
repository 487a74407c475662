// Package gsc reads Google Speech Commands v0.02 (GSC): one-second 16 kHz mono WAV clips of 35
// spoken words, and turns them into features [T=100, F=40] with a front end (FrontEnd): by default the
// released code's recipe (package data/melspec: librosa's magnitude mel spectrogram in dB, z-scored per
// clip), or the earlier log-Mel features (package data/mel, "logmel").
//
// Folder layout of the extracted archive: one folder per word holding clips named
// SPEAKER_nohash_N.wav, a _background_noise_ folder (ignored), and the official split lists
// validation_list.txt and testing_list.txt, one "word/file.wav" path per line. Every clip in a word
// folder that neither list names belongs to the training split.
package gsc

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fits-snn/fits/data"
)

// Words are the 35 classes of v0.02 in label order (sorted alphabetically).
var Words = []string{
	"backward", "bed", "bird", "cat", "dog", "down", "eight", "five", "follow", "forward",
	"four", "go", "happy", "house", "learn", "left", "marvin", "nine", "no", "off",
	"on", "one", "right", "seven", "sheila", "six", "stop", "three", "tree", "two",
	"up", "visual", "wow", "yes", "zero",
}

// Classes is the number of words.
const Classes = 35

// Split names and the official list files.
const (
	Train      = "train"
	Validation = "valid"
	Test       = "test"
	ValidList  = "validation_list.txt"
	TestList   = "testing_list.txt"
)

// Splits lists the split names.
var Splits = []string{Train, Validation, Test}

// Label returns the class index of a word, or -1.
func Label(word string) int {
	if i, ok := slices.BinarySearch(Words, word); ok {
		return i
	}
	return -1
}

// Clip is one utterance: its path relative to the dataset root ("word/file.wav") and its label.
type Clip struct {
	Path  string
	Label int32
}

func readList(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		word, _, ok := strings.Cut(line, "/")
		if !ok || Label(word) < 0 || !strings.HasSuffix(line, ".wav") {
			return nil, fmt.Errorf("%s:%d: %q is not a word/file.wav path of the 35 words", path, n, line)
		}
		out[line] = true
	}
	return out, sc.Err()
}

// List returns the clips of every split found under root, sorted by path. It fails with a
// data.FileError when a split list is missing, names an unknown word, or names a clip that is not
// there, and when a word folder holds something named *.wav that is not a file.
func List(root string) (_ map[string][]Clip, err error) {
	defer func() { err = data.BadFile(err) }()
	valid, err := readList(filepath.Join(root, ValidList))
	if err != nil {
		return nil, err
	}
	test, err := readList(filepath.Join(root, TestList))
	if err != nil {
		return nil, err
	}
	out := map[string][]Clip{}
	seen := map[string]bool{}
	for label, w := range Words {
		ents, err := os.ReadDir(filepath.Join(root, w))
		if err != nil {
			return nil, fmt.Errorf("%s: missing word folder %q: %w", root, w, err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".wav") {
				continue
			}
			if !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 {
				return nil, fmt.Errorf("%s: %s/%s is a %s, not a WAV file", root, w, e.Name(), kindOf(e.Type()))
			}
			rel := w + "/" + e.Name()
			seen[rel] = true
			split := Train
			switch {
			case valid[rel] && test[rel]:
				return nil, fmt.Errorf("%s: %s is in both %s and %s", root, rel, ValidList, TestList)
			case valid[rel]:
				split = Validation
			case test[rel]:
				split = Test
			}
			out[split] = append(out[split], Clip{Path: rel, Label: int32(label)})
		}
	}
	for _, l := range []struct {
		name string
		set  map[string]bool
	}{{ValidList, valid}, {TestList, test}} {
		for rel := range l.set {
			if !seen[rel] {
				return nil, fmt.Errorf("%s: %s names %s, which is not there", root, l.name, rel)
			}
		}
	}
	for _, s := range out {
		sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
	}
	return out, nil
}

// kindOf names a file type that is not a regular file.
func kindOf(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

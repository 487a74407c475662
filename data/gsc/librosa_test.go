package gsc

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data/melspec"
	"github.com/fits-snn/fits/internal/pyref"
)

// librosaTolerance bounds |ours − librosa's| per feature after the z-score.
const librosaTolerance = 2e-3

// TestReleasedFrontEndMatchesLibrosa makes clips at test time (spoken words from espeak-ng resampled to
// 16 kHz, a chirp, noise, a clip shorter than 1 s, one longer), has librosa 0.11 compute the released
// code's features of each WAV file (testdata/librosa_features.py) and compares them with ours, computed
// from the same file, within librosaTolerance.
func TestReleasedFrontEndMatchesLibrosa(t *testing.T) {
	py := pyref.Python(t, "librosa", "soundfile", "numpy")
	dir := t.TempDir()
	out, err := pyref.Run(py, filepath.Join("testdata", "librosa_features.py"), dir)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Librosa string `json:"librosa"`
		Espeak  bool   `json:"espeak"`
		Clips   []struct {
			Name     string      `json:"name"`
			Path     string      `json:"path"`
			Samples  int         `json:"samples"`
			Features [][]float64 `json:"features"`
		} `json:"clips"`
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	if ref.Librosa != "0.11.0" {
		t.Errorf("librosa %s in the virtualenv, requirements.txt pins 0.11.0", ref.Librosa)
	}
	if !ref.Espeak {
		if pyref.Required() {
			t.Error("espeak-ng is missing: no spoken clips compared (make setup installs it)")
		} else {
			t.Log("espeak-ng is missing: spoken clips skipped")
		}
	}
	c := melspec.Released()
	ex, err := melspec.New(c)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, c.Frames*c.Bands)
	short, long := false, false
	for _, cl := range ref.Clips {
		x, err := ReadWAV(cl.Path, SampleRate)
		if err != nil {
			t.Fatal(err)
		}
		if len(x) != cl.Samples {
			t.Fatalf("%s: %d samples read, librosa read %d", cl.Name, len(x), cl.Samples)
		}
		short = short || len(x) < SampleRate
		long = long || len(x) > SampleRate
		if err := ex.Features(x, got); err != nil {
			t.Fatal(err)
		}
		if len(cl.Features) != c.Frames {
			t.Fatalf("%s: librosa gave %d frames", cl.Name, len(cl.Features))
		}
		worst, at := 0.0, 0
		for f, row := range cl.Features {
			if len(row) != c.Bands {
				t.Fatalf("%s: frame %d has %d bands", cl.Name, f, len(row))
			}
			for b, want := range row {
				if d := math.Abs(float64(got[f*c.Bands+b]) - want); d > worst || math.IsNaN(d) {
					worst, at = d, f*c.Bands+b
				}
			}
		}
		t.Logf("%-16s %6d samples: max |ours − librosa %s| = %.2g (frame %d, band %d)", cl.Name, len(x), ref.Librosa, worst, at/c.Bands, at%c.Bands)
		if !(worst <= librosaTolerance) {
			t.Errorf("%s: max difference %.3g at frame %d band %d (ours %v, librosa %v), tolerance %g",
				cl.Name, worst, at/c.Bands, at%c.Bands, got[at], cl.Features[at/c.Bands][at%c.Bands], librosaTolerance)
		}
	}
	if !short || !long {
		t.Errorf("the clips do not include one shorter and one longer than 1 s")
	}
	if n := len(ref.Clips); n < 4 || (ref.Espeak && !strings.HasPrefix(ref.Clips[0].Name, "speech")) {
		t.Errorf("%d clips compared", n)
	}
}

// TestReleasedFrontEndGolden compares our features of a committed 0.3 s chirp with librosa 0.11.0's,
// computed once by testdata/librosa_features.py and stored rounded to 1e-6: 31 frames of spectrum, then
// the zero padding (every padded value the same after the z-score).
func TestReleasedFrontEndGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "chirp-300ms.librosa.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Frames int         `json:"frames"`
		Values [][]float64 `json:"values"`
		Pad    float64     `json:"pad"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	x, err := ReadWAV(filepath.Join("testdata", "chirp-300ms.wav"), SampleRate)
	if err != nil {
		t.Fatal(err)
	}
	c := melspec.Released()
	ex, _ := melspec.New(c)
	got := make([]float32, c.Frames*c.Bands)
	if err := ex.Features(x, got); err != nil {
		t.Fatal(err)
	}
	if g.Frames != 31 || len(g.Values) != 31 {
		t.Fatalf("golden file holds %d frames", len(g.Values))
	}
	worst := 0.0
	for f := range c.Frames {
		for b := range c.Bands {
			want := g.Pad
			if f < g.Frames {
				want = g.Values[f][b]
			}
			worst = max(worst, math.Abs(float64(got[f*c.Bands+b])-want))
		}
	}
	if worst > librosaTolerance {
		t.Errorf("max difference from librosa %.3g, tolerance %g", worst, librosaTolerance)
	}
	t.Logf("max |ours − librosa 0.11.0| = %.2g", worst)
}

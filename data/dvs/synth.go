package dvs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data/aedat"
)

// SynthConfig describes a synthetic DVS Gesture folder in the official layout.
type SynthConfig struct {
	Users        int     // recordings userNN_synthetic.aedat, one per user
	TrainUsers   int     // the first TrainUsers recordings go to trials_to_train.txt, the rest to test
	Gesture      float64 // seconds per gesture
	EventsPerSec int     // events per second of gesture
	Seed         uint64
}

// WriteSynth writes recordings in which every user performs the 11 gestures in turn; gesture c is
// a blob circling the sensor centre at 0.5 + 0.25·c rotations per second, clockwise for even c.
func WriteSynth(root string, c SynthConfig) error {
	if c.Users < 1 || c.TrainUsers < 0 || c.TrainUsers > c.Users || !(c.Gesture > 0) || c.EventsPerSec < 1 {
		return fmt.Errorf("bad synthetic DVS configuration %+v", c)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0xd5))
	var train, test []string
	for u := 1; u <= c.Users; u++ {
		name := fmt.Sprintf("user%02d_synthetic.aedat", u)
		var evs []aedat.Polarity
		var labels strings.Builder
		labels.WriteString("class,startTime_usec,endTime_usec\n")
		t0 := int64(1_000_000) + int64(rng.IntN(1000))
		gus := int64(c.Gesture * 1e6)
		for g := 0; g < Classes; g++ {
			start := t0 + int64(g)*(gus+200_000)
			fmt.Fprintf(&labels, "%d,%d,%d\n", g+1, start, start+gus)
			n := int(float64(c.EventsPerSec) * c.Gesture)
			rot := 0.5 + 0.25*float64(g)
			if g%2 == 1 {
				rot = -rot
			}
			for k := 0; k < n; k++ {
				t := start + gus*int64(k)/int64(n)
				a := 2 * math.Pi * rot * float64(t-start) / 1e6
				x := 64 + 40*math.Cos(a) + 3*rng.NormFloat64()
				y := 64 + 40*math.Sin(a) + 3*rng.NormFloat64()
				xi, yi := int(math.Round(x)), int(math.Round(y))
				if xi < 0 || xi > 127 || yi < 0 || yi > 127 {
					continue
				}
				evs = append(evs, aedat.Polarity{T: t, X: uint16(xi), Y: uint16(yi), On: rng.IntN(2) == 1})
			}
		}
		f, err := os.Create(filepath.Join(root, name))
		if err != nil {
			return err
		}
		if err := aedat.Write(f, []string{"Format: RAW", "Source 1: DVS128"}, evs, 4096); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, strings.TrimSuffix(name, ".aedat")+"_labels.csv"), []byte(labels.String()), 0o644); err != nil {
			return err
		}
		if u <= c.TrainUsers {
			train = append(train, name)
		} else {
			test = append(test, name)
		}
	}
	if err := os.WriteFile(filepath.Join(root, TrainList), []byte(strings.Join(train, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, TestList), []byte(strings.Join(test, "\n")+"\n"), 0o644)
}

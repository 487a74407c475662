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

// SynthConfig describes a synthetic DVS Gesture folder in the official layout (see WriteSynth).
type SynthConfig struct {
	Users        int     // recordings userNN_synthetic.aedat, one per user
	TrainUsers   int     // the first TrainUsers recordings go to trials_to_train.txt, the rest to test
	Gesture      float64 // seconds per gesture
	EventsPerSec int     // events per second of gesture (all blobs and the background noise together)
	Seed         uint64
	// Recordings, when not nil, lists the recordings to write instead of one per user (Users and
	// TrainUsers are then ignored): OfficialRecordings gives the official split sizes.
	Recordings []SynthRecording
}

// SynthRecording is one recording of a synthetic DVS Gesture folder: userNN_LIGHTING.aedat, performing
// the first Gestures of the 11 gestures, in the training or the test list.
type SynthRecording struct {
	User     int
	Lighting string
	Gestures int
	Train    bool
}

// Official sizes of DVS Gesture: 1077 training gestures in the 98 recordings of users 1-23 and 264 test
// gestures in the 24 recordings of users 24-29 (trials_to_train.txt, trials_to_test.txt).
const (
	OfficialTrainGestures   = 1077
	OfficialTestGestures    = 264
	OfficialTrainRecordings = 98
	OfficialTestRecordings  = 24
)

// lightings are the lighting conditions of the recordings' names.
var lightings = []string{"fluorescent", "fluorescent_led", "lab", "led", "natural"}

// OfficialRecordings returns the recordings of a full-size stand-in with the official split sizes:
// users 1-23 train in 98 recordings (four lighting conditions each, a fifth for the first six users),
// users 24-29 test in four each; every recording holds the 11 gestures except one training recording
// with 10, so the splits hold 1077 and 264 gestures.
func OfficialRecordings() []SynthRecording {
	var out []SynthRecording
	for u := 1; u <= 29; u++ {
		n := 4
		if u <= 6 {
			n = 5
		}
		for l := range n {
			out = append(out, SynthRecording{User: u, Lighting: lightings[l], Gestures: Classes, Train: u <= 23})
		}
	}
	out[len(out)-1-OfficialTestRecordings].Gestures = Classes - 1 // the last training recording
	return out
}

// SplitSizes returns the gestures of each split that WriteSynth writes for c: Train and Test.
func (c SynthConfig) SplitSizes() map[string]int {
	out := map[string]int{Train: 0, Test: 0}
	for _, r := range c.recordings() {
		if r.Train {
			out[Train] += r.Gestures
		} else {
			out[Test] += r.Gestures
		}
	}
	return out
}

// recordings returns c.Recordings, or one recording of the 11 gestures per user.
func (c SynthConfig) recordings() []SynthRecording {
	if c.Recordings != nil {
		return c.Recordings
	}
	out := make([]SynthRecording, c.Users)
	for u := range out {
		out[u] = SynthRecording{User: u + 1, Lighting: "synthetic", Gestures: Classes, Train: u < c.TrainUsers}
	}
	return out
}

// Sensor noise and variation of the synthetic recordings.
const (
	// synthBlobSigma is the spread of a blob's events around its centre, in sensor pixels.
	synthBlobSigma = 3.0
	// synthNoise is the fraction of events that are background noise, uniform over the sensor.
	synthNoise = 0.05
	// synthFlip is the probability that an event of a blob has the polarity opposite to its edge's.
	synthFlip = 0.1
	// synthShift is the standard deviation of a user's offset of every gesture's centre, in pixels.
	synthShift = 3.0
	// synthAmpVar and synthRateVar are the relative half-ranges of a user's amplitude and rate factors.
	synthAmpVar, synthRateVar = 0.15, 0.1
)

// pathKind is the shape of a synthetic gesture's trajectory.
type pathKind int

const (
	pathCircleCW  pathKind = iota // x = cx + ax·cos φ, y = cy + ay·sin φ (clockwise on the sensor, y down)
	pathCircleCCW                 // as pathCircleCW with y = cy − ay·sin φ
	pathLine                      // x = cx + ax·sin φ, y = cy + ay·sin φ: back and forth along a line
	pathClap                      // two blobs mirrored about cx: x = cx ± (ax + ax·cos φ)/2, y = cy
	pathDrums                     // two blobs at cx ± ax bouncing vertically in antiphase, amplitude ay
	pathWander                    // a Lissajous figure with random frequencies, amplitudes and phases
)

// synthGesture is one class of the synthetic recordings: a trajectory of one or two blobs in sensor
// pixels, repeated at Hz cycles per second (φ = 2π·Hz·t + a random phase).
type synthGesture struct {
	path   pathKind
	cx, cy float64 // centre, sensor pixels (x to the right, y down)
	ax, ay float64 // amplitudes, pixels
	hz     float64 // cycles per second
}

// synthGestures are the 11 synthetic classes, loosely after the DVS Gesture classes of the same label:
// where on the sensor the motion happens, its shape (circles in either direction, strokes, two hands),
// and its rate, 0.7–4 Hz, inside the target-frequency range [0.5, 5] Hz that the paper uses for DVS Gesture.
var synthGestures = [Classes]synthGesture{
	{pathClap, 64, 64, 20, 0, 2},             // hand clapping: two blobs meeting at the centre
	{pathLine, 92, 44, 16, 0, 1.5},           // right hand wave: horizontal strokes, upper right
	{pathLine, 36, 44, 16, 0, 1.5},           // left hand wave: horizontal strokes, upper left
	{pathCircleCW, 88, 68, 22, 22, 1},        // right arm clockwise
	{pathCircleCCW, 88, 68, 22, 22, 1},       // right arm counter-clockwise
	{pathCircleCW, 40, 68, 22, 22, 1},        // left arm clockwise
	{pathCircleCCW, 40, 68, 22, 22, 1},       // left arm counter-clockwise
	{pathCircleCW, 64, 76, 12, 8, 2.5},       // arm roll: small fast circles below the centre
	{pathDrums, 64, 88, 20, 10, 3},           // air drums: two blobs striking in turn, lower half
	{pathLine, 76, 84, 0, 14, 4},             // air guitar: fast vertical strokes, lower right
	{pathWander, 64, 64, 30, 24, math.NaN()}, // other gestures: a random slow figure
}

// blobs returns the positions and velocities (pixels, pixels per radian of φ) of the gesture's blobs at
// phase φ; wander holds the random figure of pathWander (x and y frequency ratios and phases).
func (g synthGesture) blobs(phi float64, wander [4]float64) (pos, vel [][2]float64) {
	s, c := math.Sincos(phi)
	switch g.path {
	case pathCircleCW:
		return [][2]float64{{g.cx + g.ax*c, g.cy + g.ay*s}}, [][2]float64{{-g.ax * s, g.ay * c}}
	case pathCircleCCW:
		return [][2]float64{{g.cx + g.ax*c, g.cy - g.ay*s}}, [][2]float64{{-g.ax * s, -g.ay * c}}
	case pathLine:
		return [][2]float64{{g.cx + g.ax*s, g.cy + g.ay*s}}, [][2]float64{{g.ax * c, g.ay * c}}
	case pathClap:
		d := g.ax * (1 + c) / 2
		return [][2]float64{{g.cx - d, g.cy}, {g.cx + d, g.cy}}, [][2]float64{{g.ax * s / 2, 0}, {-g.ax * s / 2, 0}}
	case pathDrums:
		return [][2]float64{{g.cx - g.ax, g.cy + g.ay*s}, {g.cx + g.ax, g.cy - g.ay*s}}, [][2]float64{{0, g.ay * c}, {0, -g.ay * c}}
	default: // pathWander: φ advances at 1 rad per radian; the figure's own ratios are in wander.
		sx, cx := math.Sincos(wander[0]*phi + wander[2])
		sy, cy := math.Sincos(wander[1]*phi + wander[3])
		return [][2]float64{{g.cx + g.ax*sx, g.cy + g.ay*sy}}, [][2]float64{{g.ax * wander[0] * cx, g.ay * wander[1] * cy}}
	}
}

// WriteSynth writes recordings in which every user performs the 11 gestures in turn, each a synthetic
// motion of one or two bright blobs (see synthGestures): where it happens on the sensor, the shape of its
// path and its rate (0.7–4 Hz) carry the class. Events of a blob scatter around its centre (σ = 3 pixels);
// an event ahead of the blob's motion is ON and one behind it OFF (as a moving bright edge makes them),
// with 10 % of polarities flipped; 5 % of the events are background noise. Every gesture starts at a
// random phase of its cycle, and each user has an own offset of the centres (σ = 3 pixels), amplitude
// (±15 %) and rate (±10 %), so that test users differ from training users. "Other gestures" is a
// Lissajous figure with random frequencies in [0.5, 1.5] Hz per gesture.
func WriteSynth(root string, c SynthConfig) error {
	if c.Recordings == nil && (c.Users < 1 || c.TrainUsers < 0 || c.TrainUsers > c.Users) || !(c.Gesture > 0) || c.EventsPerSec < 1 {
		return fmt.Errorf("bad synthetic DVS configuration %+v", c)
	}
	for _, r := range c.Recordings {
		if r.User < 0 || r.User > 99 || r.Gestures < 1 || r.Gestures > Classes || r.Lighting == "" {
			return fmt.Errorf("bad synthetic DVS recording %+v", r)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0xd5))
	var train, test []string
	for _, rec := range c.recordings() {
		name := fmt.Sprintf("user%02d_%s.aedat", rec.User, rec.Lighting)
		shiftX, shiftY := synthShift*rng.NormFloat64(), synthShift*rng.NormFloat64()
		amp := 1 + synthAmpVar*(2*rng.Float64()-1)
		rate := 1 + synthRateVar*(2*rng.Float64()-1)
		var evs []aedat.Polarity
		var labels strings.Builder
		labels.WriteString("class,startTime_usec,endTime_usec\n")
		t0 := int64(1_000_000) + int64(rng.IntN(1000))
		gus := int64(c.Gesture * 1e6)
		for l := range rec.Gestures {
			start := t0 + int64(l)*(gus+200_000)
			fmt.Fprintf(&labels, "%d,%d,%d\n", l+1, start, start+gus)
			g := synthGestures[l]
			g.cx, g.cy, g.ax, g.ay, g.hz = g.cx+shiftX, g.cy+shiftY, g.ax*amp, g.ay*amp, g.hz*rate
			var wander [4]float64
			if g.path == pathWander {
				// φ = 2π·t: the figure's frequencies in Hz are the ratios.
				g.hz = 1
				wander = [4]float64{0.5 + rng.Float64(), 0.5 + rng.Float64(), 2 * math.Pi * rng.Float64(), 2 * math.Pi * rng.Float64()}
			}
			phase := 2 * math.Pi * rng.Float64()
			n := int(float64(c.EventsPerSec) * c.Gesture)
			for k := range n {
				t := start + gus*int64(k)/int64(n)
				var x, y float64
				on := rng.IntN(2) == 1
				if rng.Float64() < synthNoise {
					x, y = 128*rng.Float64(), 128*rng.Float64()
				} else {
					pos, vel := g.blobs(2*math.Pi*g.hz*float64(t-start)/1e6+phase, wander)
					b := rng.IntN(len(pos))
					dx, dy := synthBlobSigma*rng.NormFloat64(), synthBlobSigma*rng.NormFloat64()
					x, y = pos[b][0]+dx, pos[b][1]+dy
					on = dx*vel[b][0]+dy*vel[b][1] > 0
					if rng.Float64() < synthFlip {
						on = !on
					}
				}
				xi, yi := int(math.Floor(x)), int(math.Floor(y))
				if xi < 0 || xi > 127 || yi < 0 || yi > 127 {
					continue
				}
				evs = append(evs, aedat.Polarity{T: t, X: uint16(xi), Y: uint16(yi), On: on})
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
		if rec.Train {
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

// Package dvs reads the IBM DVS128 Gesture dataset — AEDAT 3.1 recordings (package data/aedat)
// with per-recording gesture labels — and turns each labelled gesture into event-count frames.
//
// Folder layout (the extracted DvsGesture.tar.gz): userNN_LIGHTING.aedat recordings, beside each
// a userNN_LIGHTING_labels.csv with the header "class,startTime_usec,endTime_usec" and one row per
// gesture (class 1..11, times in µs on the recording's clock), and the official split lists
// trials_to_train.txt and trials_to_test.txt naming the recordings (.aedat) of each split.
//
// Framing (the paper's representation): the events of a gesture from its start time on are
// counted in T = 50 frames of Δt = 20 ms (the first 1.0 s of the gesture; later events are not
// used), in 2 polarity channels (0 = OFF, 1 = ON), on the 128×128 sensor downsampled to 64×64 by
// summing 2×2 pixel blocks. A sample is a uint8 tensor [T, 2, 64, 64]; counts above 255 are
// clipped and counted.
package dvs

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/aedat"
)

// Classes is the number of gestures; file classes 1..11 become labels 0..10.
const Classes = 11

// Gestures names the classes in label order.
var Gestures = []string{
	"hand clapping", "right hand wave", "left hand wave", "right arm clockwise",
	"right arm counter-clockwise", "left arm clockwise", "left arm counter-clockwise",
	"arm roll", "air drums", "air guitar", "other gestures",
}

// Split names and list files.
const (
	Train     = "train"
	Test      = "test"
	TrainList = "trials_to_train.txt"
	TestList  = "trials_to_test.txt"
)

// Segment is one labelled gesture of a recording: label 0..10 and times in µs.
type Segment struct {
	Label      int32
	Start, End int64
}

// ReadLabels parses a _labels.csv file. Errors are data.FileErrors.
func ReadLabels(path string) (_ []Segment, err error) {
	defer func() { err = data.BadFile(err) }()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	segs, err := parseLabels(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return segs, nil
}

func parseLabels(r io.Reader) ([]Segment, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || len(rows[0]) != 3 || strings.TrimSpace(rows[0][0]) != "class" {
		return nil, fmt.Errorf("want the header class,startTime_usec,endTime_usec")
	}
	var out []Segment
	for i, row := range rows[1:] {
		if len(row) != 3 {
			return nil, fmt.Errorf("line %d: %d fields, want 3", i+2, len(row))
		}
		var v [3]int64
		for j, s := range row {
			if v[j], err = strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
				return nil, fmt.Errorf("line %d: %q is not an integer", i+2, s)
			}
		}
		if v[0] < 1 || v[0] > Classes {
			return nil, fmt.Errorf("line %d: class %d outside 1..%d", i+2, v[0], Classes)
		}
		if v[1] < 0 || v[2] <= v[1] {
			return nil, fmt.Errorf("line %d: bad time range [%d, %d) µs", i+2, v[1], v[2])
		}
		out = append(out, Segment{Label: int32(v[0] - 1), Start: v[1], End: v[2]})
	}
	return out, nil
}

// ReadTrials reads a split list: recording file names, one per line, blank lines ignored. Errors are
// data.FileErrors.
func ReadTrials(path string) (_ []string, err error) {
	defer func() { err = data.BadFile(err) }()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if !strings.HasSuffix(s, ".aedat") || strings.ContainsAny(s, `/\`) {
			return nil, fmt.Errorf("%s:%d: %q is not a recording file name", path, n, s)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// Framing turns events into count frames [T, 2, Out, Out].
type Framing struct {
	T      int     // frames (50)
	Dt     float64 // frame length, seconds (0.02)
	Sensor int     // sensor width and height in pixels (128)
	Out    int     // output width and height (64); Sensor must be a multiple of Out
}

// DefaultFraming is the paper's representation: 50 frames of 20 ms, 128×128 → 64×64.
func DefaultFraming() Framing { return Framing{T: 50, Dt: 0.02, Sensor: 128, Out: 64} }

// Check validates the parameters.
func (f Framing) Check() error {
	if f.T <= 0 || !(f.Dt > 0) || f.Sensor <= 0 || f.Out <= 0 || f.Sensor%f.Out != 0 || f.Dt*1e6 < 1 {
		return fmt.Errorf("bad framing %+v: need T > 0, Dt >= 1 µs, Sensor a multiple of Out", f)
	}
	return nil
}

// SampleShape returns [T, 2, Out, Out].
func (f Framing) SampleShape() []int { return []int{f.T, 2, f.Out, f.Out} }

// Tag names the framing for cache files, e.g. "t50-dt20ms-64".
func (f Framing) Tag() string { return fmt.Sprintf("t%d-dt%gms-%d", f.T, f.Dt*1000, f.Out) }

// Stats counts events used and lost.
type Stats struct {
	Events  int // events inside the frames
	Clipped int // events lost to clipping at 255
}

// Bin counts the events with start <= t < start + T·Dt into dst, a zeroed [T, 2, Out, Out] uint8
// tensor: event (t, x, y, p) adds 1 at [(t−start)/Dt, p, y·Out/Sensor, x·Out/Sensor]. evs must be
// sorted by time. Addresses outside the sensor are an error.
func (f Framing) Bin(evs []aedat.Polarity, start int64, dst []uint8) (Stats, error) {
	var st Stats
	if len(dst) != f.T*2*f.Out*f.Out {
		return st, fmt.Errorf("frame buffer of %d, need %d", len(dst), f.T*2*f.Out*f.Out)
	}
	dtUs := int64(f.Dt*1e6 + 0.5)
	end := start + int64(f.T)*dtUs
	i := sort.Search(len(evs), func(i int) bool { return evs[i].T >= start })
	scale := f.Sensor / f.Out
	for ; i < len(evs) && evs[i].T < end; i++ {
		e := evs[i]
		if int(e.X) >= f.Sensor || int(e.Y) >= f.Sensor {
			return st, fmt.Errorf("event at %d µs: address (%d, %d) outside the %d×%d sensor", e.T, e.X, e.Y, f.Sensor, f.Sensor)
		}
		k := int((e.T - start) / dtUs)
		p := 0
		if e.On {
			p = 1
		}
		j := ((k*2+p)*f.Out+int(e.Y)/scale)*f.Out + int(e.X)/scale
		if dst[j] == 255 {
			st.Clipped++
			continue
		}
		dst[j]++
		st.Events++
	}
	return st, nil
}

// Recording is one .aedat file with its labels.
type Recording struct {
	Name     string
	Events   []aedat.Polarity // in time order (aedat.Read rejects a recording whose timestamps run backwards)
	Segments []Segment
}

// ReadRecording reads dir/name and dir/name-without-.aedat + "_labels.csv".
func ReadRecording(dir, name string) (*Recording, error) {
	_, evs, err := aedat.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, data.BadFile(fmt.Errorf("%s: the recording holds no polarity events", filepath.Join(dir, name)))
	}
	segs, err := ReadLabels(filepath.Join(dir, strings.TrimSuffix(name, ".aedat")+"_labels.csv"))
	if err != nil {
		return nil, err
	}
	return &Recording{Name: name, Events: evs, Segments: segs}, nil
}

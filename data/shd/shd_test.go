package shd

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/h5"
)

func TestBinByHand(t *testing.T) {
	b := Binning{Channels: 10, Group: 5, T: 4, Duration: 1.0, Counts: true} // 2 features, bins of 0.25 s
	times := []float64{0.0, 0.1, 0.26, 0.99, 1.0, 0.5, 0.3}
	units := []int64{0, 4, 5, 9, 1, 7, 9}
	dst := make([]uint8, 8)
	st, err := b.Bin(times, units, dst)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint8{
		2, 0, // 0.0 and 0.1 s, channels 0 and 4
		0, 2, // 0.26 and 0.3 s, channels 5 and 9
		0, 1, // 0.5 s, channel 7
		0, 1, // 0.99 s, channel 9; 1.0 s is past the end
	}
	if !bytes.Equal(dst, want) || st.Late != 1 || st.Spikes != 7 || st.Clipped != 0 {
		t.Fatalf("bins %v stats %+v, want %v with one late spike", dst, st, want)
	}
	// Binary inputs: a bin with several spikes is 1.
	b.Counts = false
	clear(dst)
	st, err = b.Bin(times, units, dst)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint8{1, 0, 0, 1, 0, 1, 0, 1}; !bytes.Equal(dst, want) || st.Merged != 2 || st.Late != 1 {
		t.Fatalf("binary bins %v stats %+v, want %v with 2 merged spikes", dst, st, want)
	}
	b.Counts = true
	// Clipping at MaxCount.
	many := make([]float64, 300)
	mu := make([]int64, 300)
	clear(dst)
	st, _ = b.Bin(many, mu, dst)
	if dst[0] != MaxCount || st.Clipped != 300-MaxCount {
		t.Fatalf("clip: bin %d stats %+v", dst[0], st)
	}
	for _, tc := range []struct {
		times []float64
		units []int64
		want  string
	}{
		{[]float64{0.1}, []int64{10}, "unit 10 outside 0..9"},
		{[]float64{-0.1}, []int64{1}, "negative"},
		{[]float64{0.1, 0.2}, []int64{1}, "2 spike times but 1"},
	} {
		if _, err := b.Bin(tc.times, tc.units, make([]uint8, 8)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Bin(%v, %v): %v, want %q", tc.times, tc.units, err, tc.want)
		}
	}
	if err := (Binning{Channels: 700, Group: 0, T: 250, Duration: 1}).Check(); err == nil {
		t.Error("group 0 accepted")
	}
	if DefaultBinning().Features() != 140 || DefaultBinning().Dt() != 0.004 {
		t.Error("default binning is not 140 features of 4 ms")
	}
}

// fixture is three hand-made SHD samples.
func fixture() (*Spikes, []int32) {
	return &Spikes{
		Times: []float64{0.001, 0.0039, 0.0041, 0.9999, 1.2, 0.5, 0.5, 0.5},
		Units: []int64{0, 4, 5, 699, 3, 10, 11, 14},
		Offs:  []int{0, 5, 5, 8}, // sample 1 has no spikes
	}, []int32{3, 19, 0}
}

func TestConvertFixture(t *testing.T) {
	dir := t.TempDir()
	sp, labels := fixture()
	src := filepath.Join(dir, "shd_train.h5")
	if err := WriteFile(src, sp, labels, WriteOptions{Keys: []string{"a", "b"}, Speakers: []int64{1, 2, 3}, Gender: []string{"female"}, Age: []int64{30}, BodyHeight: []float64{1.7}}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(src, SHDClasses)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := f.ReadExtra()
	f.Close()
	if err != nil || len(ex.Keys) != 2 || ex.Speaker[2] != 3 || ex.Gender[0] != "female" || ex.Age[0] != 30 {
		t.Fatalf("extra %+v %v", ex, err)
	}
	dst := filepath.Join(dir, "out.fitsds")
	b := DefaultBinning()
	st, err := Convert(src, dst, SHD, "train", SHDClasses, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Spikes != 8 || st.Late != 1 || st.Merged != 3 {
		t.Errorf("stats %+v", st)
	}
	r, err := cache.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The tensor computed by hand: [3, 250, 140].
	want := make([]float32, 3*250*140)
	at := func(n, tb, f int) *float32 { return &want[(n*250+tb)*140+f] }
	*at(0, 0, 0) = 1     // 0.001 s unit 0, 0.0039 s unit 4: binary inputs
	*at(0, 1, 1) = 1     // 0.0041 s unit 5
	*at(0, 249, 139) = 1 // 0.9999 s unit 699; 1.2 s dropped
	*at(2, 125, 2) = 1   // 0.5 s units 10, 11, 14
	for i := range want {
		if x[i] != want[i] {
			t.Fatalf("element %d (sample %d, bin %d, feature %d) = %v, want %v", i, i/35000, i%35000/140, i%140, x[i], want[i])
		}
	}
	if got := r.Labels(); got[0] != 3 || got[1] != 19 || got[2] != 0 {
		t.Errorf("labels %v", got)
	}
	var meta CacheMeta
	if err := r.Meta(&meta); err != nil || meta.Binning != b || meta.Dt != 0.004 || meta.Keys[1] != "b" {
		t.Errorf("meta %+v %v", meta, err)
	}
}

func TestFloat64Times(t *testing.T) {
	dir := t.TempDir()
	sp, labels := fixture()
	src := filepath.Join(dir, "x.h5")
	if err := WriteFile(src, sp, labels, WriteOptions{TimeType: h5.F64}); err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(src, filepath.Join(dir, "x.fitsds"), SHD, "train", SHDClasses, DefaultBinning(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	sp, labels := fixture()
	write := func(name string, fn func(f *h5.File) error) string {
		p := filepath.Join(dir, name)
		f, err := h5.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	units := func() []float64 {
		u := make([]float64, len(sp.Units))
		for i, v := range sp.Units {
			u[i] = float64(v)
		}
		return u
	}
	good := func(f *h5.File) error {
		f.CreateGroup("spikes")
		f.WriteVLen("spikes/times", h5.F32, sp.Times, sp.Offs)
		return f.WriteVLen("spikes/units", h5.U16, units(), sp.Offs)
	}
	noUnits := write("nounits.h5", func(f *h5.File) error {
		f.CreateGroup("spikes")
		f.WriteVLen("spikes/times", h5.F32, sp.Times, sp.Offs)
		return f.WriteInts("labels", h5.U16, []int64{1, 2, 3})
	})
	intTimes := write("inttimes.h5", func(f *h5.File) error {
		f.CreateGroup("spikes")
		f.WriteVLen("spikes/times", h5.U16, sp.Times, sp.Offs)
		f.WriteVLen("spikes/units", h5.U16, units(), sp.Offs)
		return f.WriteInts("labels", h5.U16, []int64{1, 2, 3})
	})
	badLabel := write("badlabel.h5", func(f *h5.File) error {
		good(f)
		return f.WriteInts("labels", h5.U16, []int64{1, 20, 3})
	})
	fewLabels := write("fewlabels.h5", func(f *h5.File) error {
		good(f)
		return f.WriteInts("labels", h5.U16, []int64{1, 2})
	})
	rowMismatch := write("rows.h5", func(f *h5.File) error {
		f.CreateGroup("spikes")
		f.WriteVLen("spikes/times", h5.F32, sp.Times, sp.Offs)
		f.WriteVLen("spikes/units", h5.U16, units(), []int{0, 4, 5, 8})
		return f.WriteInts("labels", h5.U16, []int64{1, 2, 3})
	})
	badUnit := write("unit.h5", func(f *h5.File) error {
		f.CreateGroup("spikes")
		f.WriteVLen("spikes/times", h5.F32, []float64{0.1}, []int{0, 1})
		f.WriteVLen("spikes/units", h5.U16, []float64{700}, []int{0, 1})
		return f.WriteInts("labels", h5.U16, []int64{1})
	})
	okPath := filepath.Join(dir, "ok.h5")
	if err := WriteFile(okPath, sp, labels, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(okPath)
	truncated := filepath.Join(dir, "truncated.h5")
	os.WriteFile(truncated, raw[:len(raw)*2/3], 0o644)
	for _, tc := range []struct {
		path, want string
	}{
		{noUnits, "missing dataset spikes/units"},
		{intTimes, "spikes/times is vlen of 16-bit integer"},
		{badLabel, "label 20 of sample 1 outside 0..19"},
		{fewLabels, "2 labels but 3 spike time rows"},
		{rowMismatch, "sample 0 has 5 spike times but 4 units"},
		{badUnit, "unit 700 outside 0..699"},
		{truncated, "truncated file"},
		{filepath.Join(dir, "absent.h5"), "no such file"},
	} {
		_, err := Convert(tc.path, filepath.Join(dir, "out.fitsds"), SHD, "train", SHDClasses, DefaultBinning(), nil)
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want the file name and %q", filepath.Base(tc.path), err, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "out.fitsds")); err == nil {
			t.Errorf("%s: a cache was written", filepath.Base(tc.path))
		}
		if !data.IsBadFile(err) {
			t.Errorf("%s: %v is not a data.FileError", filepath.Base(tc.path), err)
		}
	}
}

// FuzzLayout writes HDF5 files whose layout the fuzzer chooses — which of spikes/times, spikes/units and
// labels exist, their element types (VLEN of floats or integers, plain floats, integers or strings), their
// row counts and contents — and converts them: Open's layout checks and Convert must accept a file only
// when it is a valid SHD/SSC split (rows of equal count and length, labels in range, channels in range),
// and fail otherwise with a data.FileError naming the file; never panic. Only well-formed HDF5 is written:
// the checks of this package are under test, not the C library's parser.
func FuzzLayout(f *testing.F) {
	f.Add(uint8(7), uint8(0), uint8(0), uint8(0), []byte{2, 0, 3}, []byte{1, 5, 2}, []byte{10, 20, 30, 40, 50})
	f.Add(uint8(7), uint8(0), uint8(0), uint8(0), []byte{1, 1}, []byte{1, 2}, []byte{200, 0})
	f.Add(uint8(3), uint8(1), uint8(2), uint8(0), []byte{1}, []byte{25}, []byte{7})
	f.Add(uint8(7), uint8(3), uint8(4), uint8(2), []byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, present, timesKind, unitsKind, labelsKind uint8, timesRows, unitsRows, values []byte) {
		if len(timesRows) > 16 || len(unitsRows) > 16 || len(values) > 256 {
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "shd_train.h5")
		w, err := h5.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		// rows returns flat values and offsets for rows of the given lengths, cycling through values.
		rows := func(lengths []byte, scale float64) ([]float64, []int) {
			var vals []float64
			offs := []int{0}
			for _, n := range lengths {
				for range int(n % 8) {
					v := 0.0
					if len(values) > 0 {
						v = float64(values[len(vals)%len(values)]) * scale
					}
					vals = append(vals, v)
				}
				offs = append(offs, len(vals))
			}
			return vals, offs
		}
		// write writes dataset name in one of five forms: 0 VLEN of floats, 1 VLEN of integers, 2 plain
		// floats, 3 plain integers, 4 strings.
		write := func(name string, kind uint8, lengths []byte, scale float64) error {
			vals, offs := rows(lengths, scale)
			switch kind % 5 {
			case 0:
				return w.WriteVLen(name, h5.F32, vals, offs)
			case 1:
				return w.WriteVLen(name, h5.U16, vals, offs)
			case 2:
				return w.WriteFloats(name, h5.F64, vals)
			case 3:
				ints := make([]int64, len(lengths))
				for i, n := range lengths {
					ints[i] = int64(n) - 3 // negative labels too
				}
				return w.WriteInts(name, h5.I64, ints)
			}
			strs := make([]string, len(lengths))
			return w.WriteStrings(name, strs)
		}
		must := func(err error) {
			if err != nil {
				w.Abort()
				t.Fatal(err)
			}
		}
		must(w.CreateGroup("spikes"))
		if present&1 != 0 {
			must(write("spikes/times", timesKind, timesRows, 0.01))
		}
		if present&2 != 0 {
			must(write("spikes/units", unitsKind+1, unitsRows, 4))
		}
		if present&4 != 0 {
			must(write("labels", labelsKind+3, timesRows, 1))
		}
		must(w.Close())

		file, err := Open(path, SHDClasses)
		if err != nil {
			if !data.IsBadFile(err) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open: %v is not a data.FileError naming the file", err)
			}
			return
		}
		for i, l := range file.Labels() {
			if l < 0 || l >= SHDClasses {
				t.Fatalf("Open accepted label %d of sample %d", l, i)
			}
		}
		file.Close()
		dst := filepath.Join(dir, "out.fitsds")
		_, err = Convert(path, dst, SHD, "train", SHDClasses, DefaultBinning(), nil)
		if err != nil {
			if !data.IsBadFile(err) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Convert: %v is not a data.FileError naming the file", err)
			}
			if _, err := os.Stat(dst); err == nil {
				t.Fatal("a failed conversion left a cache")
			}
			return
		}
		r, err := cache.Open(dst)
		if err != nil {
			t.Fatalf("the converted cache does not open: %v", err)
		}
		if r.Len() != len(timesRows) {
			t.Errorf("cache of %d samples from %d rows", r.Len(), len(timesRows))
		}
		r.Close()
	})
}

func TestLoadDatasetConvertsOnceAndHoldsOut(t *testing.T) {
	dir := t.TempDir()
	writeSynthSplits(t, dir, 100, 200, 1)
	var log bytes.Buffer
	d, err := LoadDataset(SHD, data.Options{Dir: dir}, DefaultBinning(), true, &log)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if d.Train.N != 80 || d.Val.N != 20 || d.Test.N != 100 || d.Train.T != 250 || d.Train.F != 140 || d.Dt != 0.004 {
		t.Fatalf("split sizes %d/%d/%d shape %d×%d", d.Train.N, d.Val.N, d.Test.N, d.Train.T, d.Train.F)
	}
	if !strings.Contains(log.String(), "convert shd_train.h5") {
		t.Errorf("no progress shown: %q", log.String())
	}
	cp := CachePath(dir, SHD, "train", DefaultBinning())
	st1, _ := os.Stat(cp)
	log.Reset()
	d2, err := LoadDataset(SHD, data.Options{Dir: dir}, DefaultBinning(), true, &log)
	if err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(cp)
	if log.Len() != 0 || !st1.ModTime().Equal(st2.ModTime()) {
		t.Errorf("second load converted again: %q", log.String())
	}
	// The held-out split is the same every time.
	for i := range d.Val.Labels {
		if d.Val.Labels[i] != d2.Val.Labels[i] {
			t.Fatal("validation split changed between loads")
		}
	}
	// A compressed download alone is gunzipped and converted.
	dir2 := t.TempDir()
	if _, err := LoadDataset(SHD, data.Options{Dir: dir2}, DefaultBinning(), false, nil); err == nil || !strings.Contains(err.Error(), "fits data download") {
		t.Errorf("empty folder: %v", err)
	}
}

// BenchmarkConvertSHD converts an SHD-sized file: 8156 samples of about 4000 spikes each.
func BenchmarkConvertSHD(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "shd_train.h5")
	sp, labels := writeSynth(b, src, SynthConfig{Samples: 8156, Classes: SHDClasses, MeanSpikes: 4000, Channels: Channels, Duration: 1.0, Seed: 7}, WriteOptions{})
	st, _ := os.Stat(src)
	b.Logf("fixture: %d samples, %d spikes, %.0f MB", len(labels), len(sp.Times), float64(st.Size())/1e6)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Convert(src, filepath.Join(dir, "out.fitsds"), SHD, "train", SHDClasses, DefaultBinning(), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(labels))/b.Elapsed().Seconds(), "samples/s")
}

// FuzzMutatedFile reads SHD and SSC files whose bytes the fuzzer mutates (byte flips in the HDF5
// structures, the global heap of the VLEN rows, the B-trees): Open and reading every sample and the
// metadata must either succeed or fail with a data.FileError naming the file — in particular, a file on
// which the HDF5 C library crashes or loops is reported as corrupt (checkIsolated), never a crash or a
// hang of this process.
func FuzzMutatedFile(f *testing.F) {
	dir := f.TempDir()
	for i, ds := range []string{SHD, SSC} {
		classes, _ := Classes(ds)
		p := filepath.Join(dir, ds+".h5")
		writeSynth(f, p, SynthConfig{Samples: 3, Classes: classes, MeanSpikes: 20, Channels: Channels, Duration: 1, Seed: uint64(i + 1)},
			WriteOptions{Keys: []string{"a"}, Speakers: []int64{1, 2, 3}})
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i))
	}
	// A mutation on which the library loops (testdata/loops.h5) is stopped well within the 10 s that the
	// fuzzer allows one input.
	checkBaseLimit = 3 * time.Second
	f.Fuzz(func(t *testing.T, content []byte, which uint8) {
		if len(content) > 1<<20 {
			return
		}
		ds := []string{SHD, SSC}[which%2]
		classes, _ := Classes(ds)
		path := filepath.Join(t.TempDir(), ds+"_train.h5")
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := Open(path, classes)
		if err == nil {
			defer file.Close()
			for start := 0; start < file.Len() && err == nil; start += 64 {
				_, err = file.Read(start, min(64, file.Len()-start))
			}
			if err == nil {
				_, err = file.ReadExtra()
			}
		}
		if err != nil && (!data.IsBadFile(err) || !strings.Contains(err.Error(), path)) {
			t.Fatalf("%v is not a data.FileError naming the file", err)
		}
	})
}

// crashingFile writes to path an SHD file with 20 random bytes overwritten, a mutation on which the HDF5
// C library (1.10–1.14) crashes in its VLEN read.
func crashingFile(t testing.TB, path string) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "a.h5")
	writeSynth(t, src, SynthConfig{Samples: 40, Classes: SHDClasses, MeanSpikes: 200, Channels: Channels, Duration: 1, Seed: 1}, WriteOptions{})
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(6, 7))
	for range 20 {
		b[r.IntN(len(b))] = byte(r.IntN(256))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCrashingFileIsolated: a file on which the HDF5 library crashes is reported as a corrupt file
// naming it; this process goes on.
func TestCrashingFileIsolated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shd_train.h5")
	crashingFile(t, path)
	f, err := Open(path, SHDClasses)
	if err == nil {
		f.Close()
		t.Fatal("the corrupt file opened")
	}
	if !data.IsBadFile(err) || !strings.Contains(err.Error(), path) {
		t.Fatalf("%v is not a data.FileError naming the file", err)
	}
	t.Log(err)
}

// writeSynthSplits writes a synthetic train and test file of samples SHD samples each (seed, mean spikes)
// into dir, as the official files are named.
func writeSynthSplits(t testing.TB, dir string, samples, meanSpikes int, seed uint64) {
	t.Helper()
	for _, split := range []string{"train", "test"} {
		writeSynth(t, filepath.Join(dir, FileName(SHD, split)),
			SynthConfig{Samples: samples, Classes: SHDClasses, MeanSpikes: meanSpikes, Channels: Channels, Duration: 0.9, Seed: seed}, WriteOptions{})
	}
}

// writeSynth writes to path a file of what c synthesizes, with the options o, and returns its spikes and
// labels.
func writeSynth(t testing.TB, path string, c SynthConfig, o WriteOptions) (*Spikes, []int32) {
	t.Helper()
	sp, labels, err := Synthesize(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, sp, labels, o); err != nil {
		t.Fatal(err)
	}
	return sp, labels
}

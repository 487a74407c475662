package gsc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/mel"
)

// wavBytes builds a canonical 44-byte-header PCM WAV by hand, independently of the encoder.
func wavBytes(rate, chans, bits int, samples []int16) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	data := len(samples) * 2
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+data))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, le, uint32(16))
	binary.Write(&b, le, uint16(1))
	binary.Write(&b, le, uint16(chans))
	binary.Write(&b, le, uint32(rate))
	binary.Write(&b, le, uint32(rate*chans*bits/8))
	binary.Write(&b, le, uint16(chans*bits/8))
	binary.Write(&b, le, uint16(bits))
	b.WriteString("data")
	binary.Write(&b, le, uint32(data))
	binary.Write(&b, le, samples)
	return b.Bytes()
}

func TestDecodeWAV(t *testing.T) {
	x, err := DecodeWAV(wavBytes(16000, 1, 16, []int16{0, 16384, -32768, 32767}), 16000)
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != 4 || x[1] != 0.5 || x[2] != -1 || x[3] != 32767.0/32768 {
		t.Fatalf("samples %v", x)
	}
	full := wavBytes(16000, 1, 16, make([]int16, 100))
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"rate", wavBytes(44100, 1, 16, []int16{1}), "sample rate 44100 Hz, want 16000 Hz"},
		{"stereo", wavBytes(16000, 2, 16, []int16{1, 2}), "2 channels"},
		{"8-bit", wavBytes(16000, 1, 8, []int16{1}), "8-bit"},
		{"text", []byte("hello world, not audio"), "not a valid WAV"},
		{"truncated", full[:44+50], "truncated"},
	} {
		if _, err := DecodeWAV(tc.in, 16000); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	p := filepath.Join(t.TempDir(), "a.wav")
	os.WriteFile(p, wavBytes(8000, 1, 16, []int16{1}), 0o644)
	if _, err := ReadWAV(p, 16000); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "8000 Hz") {
		t.Errorf("ReadWAV wrong rate: %v", err)
	}
}

func TestWriteWAVRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.wav")
	in := []float64{0, 0.25, -0.5, 0.999, -1, 2}
	if err := WriteWAV(p, in, SampleRate); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	if string(raw[:4]) != "RIFF" || string(raw[8:12]) != "WAVE" {
		t.Fatalf("header %q", raw[:12])
	}
	out, err := ReadWAV(p, SampleRate)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range in {
		want := math.Max(-1, math.Min(1, v))
		if math.Abs(out[i]-want) > 1.0/16000 {
			t.Errorf("sample %d: %v, want %v", i, out[i], want)
		}
	}
}

func TestLabels(t *testing.T) {
	if len(Words) != Classes || Label("backward") != 0 || Label("zero") != 34 || Label("silence") != -1 {
		t.Fatal("word list")
	}
	for i := 1; i < len(Words); i++ {
		if Words[i-1] >= Words[i] {
			t.Fatalf("words not sorted at %d", i)
		}
	}
}

func TestListConvertLoad(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "speech_commands_v0.02")
	if err := WriteSynth(root, SynthConfig{PerWord: 3, Words: Classes, Duration: 0.5, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	clips, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(clips[Train]) != 35 || len(clips[Validation]) != 35 || len(clips[Test]) != 35 {
		t.Fatalf("splits %d/%d/%d", len(clips[Train]), len(clips[Validation]), len(clips[Test]))
	}
	for _, f := range []FrontEnd{LogMelFrontEnd(mel.Default()), DefaultFrontEnd()} {
		var log bytes.Buffer
		d, err := LoadDataset(data.Options{Dir: dir}, f, &log)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		if d.Train.T != 100 || d.Train.F != 40 || d.Val.N != 35 || d.Dt != 0.01 {
			t.Fatalf("%s: T=%d F=%d val %d dt %v", f.Name, d.Train.T, d.Train.F, d.Val.N, d.Dt)
		}
		if f.Name == FrontEndLogMel {
			// Standardised train features: mean 0, std 1 per band.
			mean, std := BandStats(d.Train)
			for f := range mean {
				if math.Abs(mean[f]) > 1e-4 || math.Abs(std[f]-1) > 1e-3 {
					t.Fatalf("band %d: mean %v std %v after standardisation", f, mean[f], std[f])
				}
			}
		} else {
			// The released recipe's clips are z-scored one by one, and its conversion says that the
			// earlier default's caches are not used.
			if !strings.Contains(log.String(), "earlier default front end") {
				t.Errorf("no note on the log-Mel caches: %q", log.String())
			}
			x := d.Val.Example(7)
			var m float64
			for _, v := range x {
				m += float64(v)
			}
			if math.Abs(m/float64(len(x))) > 1e-4 {
				t.Errorf("clip mean %v after the z-score", m/float64(len(x)))
			}
		}
		// The cache holds the features equal to a direct computation.
		r, err := cache.Open(CachePath(dir, Test, f))
		if err != nil {
			t.Fatal(err)
		}
		var meta CacheMeta
		r.Meta(&meta)
		if meta.FrontEndID != f.ID() || meta.FrontEnd.Name != f.Name {
			t.Errorf("cache metadata %q %q, want %q", meta.FrontEndID, meta.FrontEnd.Name, f.ID())
		}
		want, err := ClipFeatures(filepath.Join(root, filepath.FromSlash(meta.Files[3])), f)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 4000)
		r.ReadBatch([]int{3}, got)
		r.Close()
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: cached feature %d = %v, direct %v", f.Name, i, got[i], want[i])
			}
		}
	}
}

// TestOldFrontEndCacheConvertedAgain puts a cache of another recipe (an earlier build's, without a
// front-end name) where the released recipe's cache goes and checks that it is converted again, with a
// message, and not reused.
func TestOldFrontEndCacheConvertedAgain(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthConfig{PerWord: 3, Words: 2, Duration: 0.3, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	f := DefaultFrontEnd()
	for _, split := range Splits {
		w, err := cache.Create(CachePath(dir, split, f), cache.Header{DType: cache.Float32, Shape: []int{100, 40}, Classes: Classes, Meta: json.RawMessage(`{"dataset":"gsc"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AppendFloat32(0, make([]float32, 4000)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	paths, err := EnsureCaches(dir, f, &log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(log.String(), "made by an earlier converter") != 3 || !strings.Contains(log.String(), "converting again") {
		t.Errorf("messages: %q", log.String())
	}
	r, err := cache.Open(paths[Train])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Len() != 2 {
		t.Errorf("train cache of %d clips, want the 2 of the folder", r.Len())
	}
	log.Reset()
	if _, err := EnsureCaches(dir, f, &log); err != nil || log.Len() != 0 {
		t.Errorf("second call: %v %q", err, log.String())
	}
}

func TestParseFrontEnd(t *testing.T) {
	for name, want := range map[string]string{"": FrontEndReleased, "released": FrontEndReleased, "LogMel": FrontEndLogMel} {
		f, err := ParseFrontEnd(name)
		if err != nil || f.Name != want || f.Check() != nil {
			t.Errorf("ParseFrontEnd(%q) = %+v, %v", name, f, err)
		}
	}
	if _, err := ParseFrontEnd("mfcc"); err == nil {
		t.Error("mfcc accepted")
	}
	if (FrontEnd{Name: FrontEndReleased}).Check() == nil {
		t.Error("a front end without parameters passes Check")
	}
	if DefaultFrontEnd().ID() == LogMelFrontEnd(mel.Default()).ID() || CachePath("d", Train, DefaultFrontEnd()) == CachePath("d", Train, LogMelFrontEnd(mel.Default())) {
		t.Error("the two front ends share a cache")
	}
}

func TestListErrors(t *testing.T) {
	root := t.TempDir()
	if err := WriteSynth(root, SynthConfig{PerWord: 2, Words: 2, Duration: 0.1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, TestList), []byte("bed/missing.wav\n"), 0o644)
	if _, err := List(root); err == nil || !strings.Contains(err.Error(), "bed/missing.wav, which is not there") {
		t.Errorf("missing clip: %v", err)
	}
	os.WriteFile(filepath.Join(root, TestList), []byte("silence/x.wav\n"), 0o644)
	if _, err := List(root); err == nil || !strings.Contains(err.Error(), "testing_list.txt:1") {
		t.Errorf("unknown word: %v", err)
	}
	os.Remove(filepath.Join(root, ValidList))
	if _, err := List(root); err == nil || !strings.Contains(err.Error(), ValidList) || !data.IsBadFile(err) {
		t.Errorf("no list: %v", err)
	}
	// A clip replaced by a directory is an error naming it, not a clip silently left out.
	root3 := t.TempDir()
	WriteSynth(root3, SynthConfig{PerWord: 3, Words: 1, Duration: 0.1, Seed: 2})
	clips3, _ := List(root3)
	dirClip := filepath.Join(root3, filepath.FromSlash(clips3[Train][0].Path))
	os.Remove(dirClip)
	os.Mkdir(dirClip, 0o755)
	if _, err := List(root3); err == nil || !strings.Contains(err.Error(), clips3[Train][0].Path+" is a directory") || !data.IsBadFile(err) {
		t.Errorf("directory as a clip: %v", err)
	}
	// A clip at the wrong rate stops the conversion with its name.
	root2 := t.TempDir()
	WriteSynth(root2, SynthConfig{PerWord: 3, Words: 1, Duration: 0.1, Seed: 2})
	clips, _ := List(root2)
	bad := filepath.Join(root2, filepath.FromSlash(clips[Train][0].Path))
	os.WriteFile(bad, wavBytes(22050, 1, 16, make([]int16, 100)), 0o644)
	dst := filepath.Join(root2, "x.fitsds")
	if err := Convert(root2, clips[Train], dst, Train, DefaultFrontEnd(), nil); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "22050") || !data.IsBadFile(err) {
		t.Errorf("wrong-rate clip: %v", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("cache written despite the error")
	}
}

// FuzzDecodeWAV checks that no input makes the WAV reader panic.
func FuzzDecodeWAV(f *testing.F) {
	f.Add(wavBytes(16000, 1, 16, []int16{1, 2, 3}))
	f.Add(wavBytes(16000, 1, 16, nil))
	f.Add(wavBytes(44100, 2, 16, []int16{1, 2}))
	f.Add(wavBytes(16000, 1, 16, make([]int16, 8))[:40])
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"))
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := DecodeWAV(in, 16000)
		if err == nil && len(x) > len(in) {
			t.Fatalf("%d samples from %d bytes", len(x), len(in))
		}
	})
}

// BenchmarkClip measures one clip of the conversion: read a 1 s WAV and compute its log-Mel.
func BenchmarkClip(b *testing.B) {
	p := filepath.Join(b.TempDir(), "a.wav")
	x := make([]float64, SampleRate)
	for i := range x {
		x[i] = 0.3 * math.Sin(float64(i)/3)
	}
	if err := WriteWAV(p, x, SampleRate); err != nil {
		b.Fatal(err)
	}
	e, _ := mel.New(mel.Default())
	out := make([]float32, 4000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		y, err := ReadWAV(p, SampleRate)
		if err != nil {
			b.Fatal(err)
		}
		e.LogMel(y, out)
	}
}

func TestRegisteredFrontEndOption(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthConfig{PerWord: 3, Words: 2, Duration: 0.3, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := data.Load("gsc", data.Options{Dir: dir, AudioFrontEnd: "mfcc"}); err == nil || !strings.Contains(err.Error(), `unknown front end "mfcc"`) {
		t.Errorf("unknown front end: %v", err)
	}
	for _, name := range []string{"", FrontEndLogMel} {
		if _, err := data.Load("gsc", data.Options{Dir: dir, AudioFrontEnd: name}); err != nil {
			t.Fatal(err)
		}
		f, _ := ParseFrontEnd(name)
		if _, err := os.Stat(CachePath(dir, Test, f)); err != nil {
			t.Errorf("front end %q: %v", name, err)
		}
	}
}

// TestSynthClips: the full-size configuration has the official list sizes; a small one of the same kind
// writes its clips into the lists as planned.
func TestSynthClips(t *testing.T) {
	full := OfficialSynthConfig(1).SplitSizes()
	if full[Train] != 84843 || full[Validation] != 9981 || full[Test] != 11005 {
		t.Errorf("full size %v", full)
	}
	root := filepath.Join(t.TempDir(), "speech_commands_v0.02")
	c := SynthConfig{Words: 4, Duration: 0.05, Seed: 3, Clips: 13, Valid: 3, Test: 2}
	if err := WriteSynth(root, c); err != nil {
		t.Fatal(err)
	}
	clips, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	want := c.SplitSizes()
	for _, s := range Splits {
		if len(clips[s]) != want[s] {
			t.Errorf("%s: %d clips, planned %d", s, len(clips[s]), want[s])
		}
	}
	if want[Train] != 8 {
		t.Errorf("plan %v", want)
	}
	if small := (SynthConfig{PerWord: 3, Words: 5}).SplitSizes(); small[Train] != 5 || small[Validation] != 5 || small[Test] != 5 {
		t.Errorf("per-word plan %v", small)
	}
}

// TestClipFeaturesMemoryOfItsOutput: the features of a long WAV (ten minutes, 18 MiB) are computed with
// the samples read where they lie, a frame at a time: the allocations stay near the size of the output
// (the whole file as float64 took 400 MB for a 63 MiB WAV), and the features are the bits of the
// whole-clip computation.
func TestClipFeaturesMemoryOfItsOutput(t *testing.T) {
	const n = 10 * 60 * SampleRate
	p := filepath.Join(t.TempDir(), "long.wav")
	samples := make([]int16, n)
	for i := range samples {
		samples[i] = int16(300 * math.Sin(float64(i)/7))
		if i > 5*SampleRate {
			samples[i] *= 20 // the loudest part long after the first second
		}
	}
	b := wavBytes(SampleRate, 1, 16, samples)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	b, samples = nil, nil
	for _, name := range FrontEndNames() {
		f, err := ParseFrontEnd(name)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got, err := ClipFeatures(p, f)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 { // reading it whole: 96 MB
			t.Errorf("%s: %d bytes allocated for %d values of output", name, alloc, len(got))
		}
		x, err := ReadWAV(p, f.SampleRate())
		if err != nil {
			t.Fatal(err)
		}
		e, _ := f.NewExtractor()
		want := make([]float32, len(got))
		if err := e.Features(x, want); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: value %d = %v, the whole clip gives %v", name, i, got[i], want[i])
			}
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fits-snn/fits/data/aedat"
	"github.com/fits-snn/fits/data/gsc"
	"github.com/fits-snn/fits/data/h5"
	"github.com/fits-snn/fits/data/shd"
	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/owned"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
)

// clearValidity returns the AEDAT 3.1 stream raw with the validity bit of every polarity event cleared.
func clearValidity(t *testing.T, raw []byte) []byte {
	t.Helper()
	out := append([]byte(nil), raw...)
	end := bytes.Index(out, []byte("#!END-HEADER\r\n"))
	if end < 0 {
		t.Fatal("no end of header")
	}
	le := binary.LittleEndian
	for o := end + len("#!END-HEADER\r\n"); o+28 <= len(out); {
		typ, size, capacity := le.Uint16(out[o:]), int(le.Uint32(out[o+4:])), int(le.Uint32(out[o+16:]))
		o += 28
		for i := 0; i < capacity && typ == 1; i++ {
			out[o+i*size] &^= 1
		}
		o += size * capacity
	}
	return out
}

// corpusCase is one line of testdata/bad-input.txt.
type corpusCase struct {
	line   int
	args   []string
	status int
	msg    string
}

// readCorpus parses testdata/bad-input.txt: "ARGS | STATUS | MESSAGE" per line, {tmp} in ARGS replaced
// by tmp; "#" starts a comment line.
func readCorpus(t *testing.T, tmp string) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "bad-input.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, " | ")
		if len(parts) != 3 {
			t.Fatalf("bad-input.txt:%d: want ARGS | STATUS | MESSAGE, got %q", n, line)
		}
		status, err := strconv.Atoi(strings.TrimSpace(parts[1]))
		if err != nil {
			t.Fatalf("bad-input.txt:%d: status %q", n, parts[1])
		}
		var args []string
		if a := strings.TrimSpace(parts[0]); a != "-" {
			args = strings.Fields(strings.ReplaceAll(a, "{tmp}", tmp))
		}
		msg := strings.ReplaceAll(strings.TrimSpace(parts[2]), "{tmp}", tmp)
		out = append(out, corpusCase{line: n, args: args, status: status, msg: msg})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBadInputCorpus runs every case of testdata/bad-input.txt in-process against fixtures built here
// (corrupt dataset files of every format, checkpoints, folders): each must exit with its status, print
// its message as one line on stderr (usage may precede it) and nothing on stdout, print no panic trace and
// no HDF5 diagnostic on the process's stderr, and leave no stray file: apart from converted caches
// (*.fitsds) of the intact splits, the fixture folder is as it was.
func TestBadInputCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dataset fixtures of every format")
	}
	xla.SetAnnounceWriter(nil)
	tmp := t.TempDir()
	buildFixtures(t, tmp)
	cases := readCorpus(t, tmp)
	if len(cases) < 60 {
		t.Fatalf("only %d cases in the corpus", len(cases))
	}
	for _, c := range cases {
		name := fmt.Sprintf("line%03d", c.line)
		t.Run(name, func(t *testing.T) {
			before := snapshot(t, tmp)
			var status int
			var stdout, stderr string
			printed := captureFD2(t, func() { status, stdout, stderr = run(c.args...) })
			cmdline := "fits " + strings.Join(c.args, " ")
			if status != c.status {
				t.Fatalf("%s: status %d, want %d\nstderr: %s", cmdline, status, c.status, stderr)
			}
			t.Logf("%s -> %d: %s", cmdline, status, strings.TrimSpace(stderr[strings.LastIndex(strings.TrimRight(stderr, "\n"), "\n")+1:]))
			if c.status != 0 && stdout != "" {
				t.Errorf("%s: stdout %q, want nothing", cmdline, stdout)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			errorLines := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "fits") && !strings.Contains(l, "warning:") {
					errorLines++
				}
			}
			switch {
			case len(c.args) == 0: // no command: the usage, which names the command line's form
				if !strings.Contains(stderr, c.msg) {
					t.Errorf("%s: stderr %q does not contain %q", cmdline, stderr, c.msg)
				}
			case !strings.Contains(last, c.msg) || !strings.HasPrefix(last, "fits") || errorLines != 1:
				t.Errorf("%s: want one error line, the last, containing %q; stderr:\n%s", cmdline, c.msg, stderr)
			}
			for _, s := range []string{stderr, printed} {
				if strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") || strings.Contains(s, "HDF5-DIAG") {
					t.Errorf("%s: a panic trace or library diagnostic was printed:\n%s", cmdline, s)
				}
			}
			after := snapshot(t, tmp)
			for p, st := range after {
				if strings.HasSuffix(p, ".fitsds") || filepath.Base(p) == owned.RecordFile {
					continue // a converted split's cache, and its folder's record of it
				}
				if was, ok := before[p]; !ok {
					t.Errorf("%s: left %s behind", cmdline, p)
				} else if was != st {
					t.Errorf("%s: changed %s", cmdline, p)
				}
			}
			for p := range before {
				if _, ok := after[p]; !ok {
					t.Errorf("%s: removed %s", cmdline, p)
				}
			}
		})
	}
}

// fileState is what snapshot records of a path.
type fileState struct {
	dir   bool
	size  int64
	mtime time.Time
}

func snapshot(t *testing.T, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := fileState{dir: d.IsDir()}
		if !st.dir {
			st.size, st.mtime = info.Size(), info.ModTime()
		}
		out[p] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// captureFD2 runs f with the process's file descriptor 2 sent to a file (what C libraries and the
// dataset converters print there) and returns what was printed.
func captureFD2(t *testing.T, f func()) string {
	t.Helper()
	file, err := os.CreateTemp("", "fd2-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(file.Name())
	defer file.Close()
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup2(int(file.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			syscall.Dup2(saved, 2)
			syscall.Close(saved)
		}()
		f()
	}()
	b, _ := os.ReadFile(file.Name())
	return string(b)
}

// buildFixtures writes into tmp the files and folders that the corpus names.
func buildFixtures(t *testing.T, tmp string) {
	t.Helper()
	p := func(parts ...string) string { return filepath.Join(append([]string{tmp}, parts...)...) }
	write := func(path string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	synth := func(format, dir string, samples int) {
		t.Helper()
		if status, _, stderr := run("data", "synth", "--format="+format, "--out="+dir, "--samples="+strconv.Itoa(samples)); status != 0 {
			t.Fatalf("data synth %s: %s", format, stderr)
		}
	}
	copyDir := func(from, to string) {
		t.Helper()
		if err := os.CopyFS(to, os.DirFS(from)); err != nil {
			t.Fatal(err)
		}
	}
	truncate := func(path string, frac float64) {
		t.Helper()
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, int64(frac*float64(st.Size()))); err != nil {
			t.Fatal(err)
		}
	}
	mustDo := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Plain files.
	write(p("file"), []byte("a file, not a folder\n"))
	write(p("in.txt"), []byte("0.5\n1\n0.2\n"))
	write(p("f32.txt"), []byte("0.5\n\n1e39\n"))
	write(p("f64.txt"), []byte("1e308\n1e308\n1e308\n"))
	write(p("empty.txt"), nil)
	write(p("text.txt"), []byte("0.5\none\n"))
	mustDo(os.MkdirAll(p("emptydir"), 0o755))
	write(p("binary.txt"), []byte("0.5\n\x00\x1b[31m\xff\xfe\n"))
	write(p("longword.txt"), []byte(strings.Repeat("x", 100000)))
	mustDo(syscall.Mkfifo(p("fifo"), 0o644))

	// SHD (and SSC): synthetic files in the official layout, then one fault per folder.
	synth("shd", p("shd-good"), 8)
	for _, d := range []string{"shd-trunc", "shd-text", "shd-label", "shd-layout", "shd-rows", "shd-zero", "shd-unit", "shd-types"} {
		copyDir(p("shd-good"), p(d))
	}
	truncate(p("shd-trunc", "shd_test.h5"), 0.6)
	write(p("shd-text", "shd_test.h5"), []byte("hello, not HDF5\n"))
	sp, labels, err := shd.Synthesize(shd.SynthConfig{Samples: 4, Classes: 20, MeanSpikes: 50, Channels: 700, Duration: 1, Seed: 1})
	mustDo(err)
	labels[2] = 99
	mustDo(shd.WriteFile(p("shd-label", "shd_test.h5"), sp, labels, shd.WriteOptions{}))
	labels[2] = 2
	sp.Units[0] = 800 // channel beyond the 700 of SHD
	mustDo(shd.WriteFile(p("shd-unit", "shd_test.h5"), sp, labels, shd.WriteOptions{}))
	sp.Units[0] = 1
	empty := &shd.Spikes{Offs: []int{0}}
	mustDo(shd.WriteFile(p("shd-zero", "shd_train.h5"), empty, nil, shd.WriteOptions{}))
	writeH5(t, p("shd-layout", "shd_test.h5"), func(f *h5.File) error { return f.WriteInts("labels", h5.U16, []int64{0, 1}) })
	writeH5(t, p("shd-rows", "shd_test.h5"), func(f *h5.File) error {
		mustDo(f.CreateGroup("spikes"))
		mustDo(f.WriteVLen("spikes/times", h5.F32, []float64{0.1, 0.2}, []int{0, 1, 2}))
		mustDo(f.WriteVLen("spikes/units", h5.U16, []float64{1, 2}, []int{0, 1, 2}))
		return f.WriteInts("labels", h5.U16, []int64{0, 1, 2})
	})
	writeH5(t, p("shd-types", "shd_test.h5"), func(f *h5.File) error {
		mustDo(f.CreateGroup("spikes"))
		mustDo(f.WriteFloats("spikes/times", h5.F32, []float64{0.1, 0.2}))
		mustDo(f.WriteVLen("spikes/units", h5.U16, []float64{1, 2}, []int{0, 1, 2}))
		return f.WriteInts("labels", h5.U16, []int64{0, 1})
	})
	write(p("cache-bad", "shd_train.t250-d1000ms-c700g5.fitsds"), []byte("FITSDS garbage, not a cache"))
	// A file on which the HDF5 C library crashes in its VLEN read (20 random bytes overwritten): read in
	// a child process first, it is reported as corrupt (data/shd's checkIsolated).
	crashSp, crashLabels, err := shd.Synthesize(shd.SynthConfig{Samples: 40, Classes: 20, MeanSpikes: 200, Channels: 700, Duration: 1, Seed: 1})
	mustDo(err)
	mustDo(os.MkdirAll(p("shd-crash"), 0o755))
	mustDo(shd.WriteFile(p("shd-crash", "shd_train.h5"), crashSp, crashLabels, shd.WriteOptions{}))
	crash, err := os.ReadFile(p("shd-crash", "shd_train.h5"))
	mustDo(err)
	rng := rand.New(rand.NewPCG(6, 7))
	for range 20 {
		crash[rng.IntN(len(crash))] = byte(rng.IntN(256))
	}
	write(p("shd-crash", "shd_train.h5"), crash)
	synth("ssc", p("ssc-trunc"), 8)
	truncate(p("ssc-trunc", "ssc_valid.h5"), 0.5)

	// GSC: 35 words × 3 clips, then one fault per folder.
	synth("gsc", p("gsc-good"), 3)
	clip := p("gsc-good", "yes")
	ents, err := os.ReadDir(clip)
	mustDo(err)
	clipName := ents[0].Name()
	for _, d := range []string{"gsc-8k", "gsc-dir", "gsc-trunc", "gsc-text", "gsc-stereo", "gsc-nolist", "gsc-list"} {
		copyDir(p("gsc-good"), p(d))
	}
	mustDo(gsc.WriteWAV(p("gsc-8k", "yes", clipName), make([]float64, 8000), 8000))
	mustDo(os.Remove(p("gsc-dir", "yes", clipName)))
	mustDo(os.Mkdir(p("gsc-dir", "yes", clipName), 0o755))
	truncate(p("gsc-trunc", "yes", clipName), 0.5)
	write(p("gsc-text", "yes", clipName), []byte("not a WAV file at all"))
	write(p("gsc-stereo", "yes", clipName), wavHeader(16000, 2, 16, 1000))
	mustDo(os.Remove(p("gsc-nolist", "validation_list.txt")))
	write(p("gsc-list", "testing_list.txt"), []byte("yes/"+clipName+"\nmaybe/x.wav\n"))
	// Single WAV files for fits data features.
	mustDo(gsc.WriteWAV(p("wav-8k.wav"), make([]float64, 800), 8000))
	write(p("wav-text.wav"), []byte("not a WAV file at all"))
	write(p("wav-stereo.wav"), wavHeader(16000, 2, 16, 1000))
	mustDo(gsc.WriteWAV(p("wav-empty.wav"), nil, 16000))
	write(p("wav-0bit.wav"), wavHeader(16000, 1, 0, 1000))
	// Issue 34: a 7-bit clip, no channels, rate 0, an odd-length data chunk, block align 0 (each named).
	write(p("wav-7bit.wav"), wavHeader(16000, 1, 7, 1000))
	write(p("wav-0ch.wav"), wavHeader(16000, 0, 16, 1000))
	write(p("wav-rate0.wav"), wavHeader(0, 1, 16, 1000))
	odd := append(wavHeader(16000, 1, 16, 1000), 0, 0) // 2001 data bytes and the pad byte
	binary.LittleEndian.PutUint32(odd[40:], 2001)
	binary.LittleEndian.PutUint32(odd[4:], 36+2002)
	write(p("wav-odd.wav"), odd)
	align0 := wavHeader(16000, 1, 16, 1000)
	binary.LittleEndian.PutUint16(align0[32:], 0)
	write(p("wav-align0.wav"), align0)
	write(p("wav-huge.wav"), wavHeader(16000, 1, 16, 1000))
	mustDo(os.Truncate(p("wav-huge.wav"), 80<<20)) // sparse: a 40-minute clip

	// MNIST (gzipped IDX).
	synth("mnist", p("mnist-good"), 20)
	for _, d := range []string{"mnist-magic", "mnist-trunc", "mnist-label", "mnist-count", "mnist-shape"} {
		copyDir(p("mnist-good"), p(d))
	}
	images := []byte{0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 28, 0, 0, 0, 28}
	images = append(images, make([]byte, 2*28*28)...)
	mustDo(os.Remove(p("mnist-magic", "train-images-idx3-ubyte.gz")))
	bad := append([]byte(nil), images...)
	bad[0] = 7
	write(p("mnist-magic", "train-images-idx3-ubyte"), bad)
	mustDo(os.Remove(p("mnist-trunc", "train-images-idx3-ubyte.gz")))
	write(p("mnist-trunc", "train-images-idx3-ubyte"), images[:100])
	mustDo(os.Remove(p("mnist-label", "train-labels-idx1-ubyte.gz")))
	labelFile := []byte{0, 0, 8, 1, 0, 0, 0, 20}
	for i := range 20 {
		labelFile = append(labelFile, byte(i%10))
	}
	labelFile[8+5] = 10
	write(p("mnist-label", "train-labels-idx1-ubyte"), labelFile)
	mustDo(os.Remove(p("mnist-count", "train-labels-idx1-ubyte.gz")))
	write(p("mnist-count", "train-labels-idx1-ubyte"), []byte{0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3})
	mustDo(os.Remove(p("mnist-shape", "train-images-idx3-ubyte.gz")))
	write(p("mnist-shape", "train-images-idx3-ubyte"), []byte{0, 0, 8, 2, 0, 0, 0, 20, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})

	// DVS Gesture (AEDAT 3.1 recordings, label CSVs, trial lists).
	synth("dvs", p("dvs-good"), 2)
	for _, d := range []string{"dvs-header", "dvs-trunc", "dvs-csv", "dvs-list", "dvs-dirrec", "dvs-noevents", "dvs-backwards", "dvs-invalid"} {
		copyDir(p("dvs-good"), p(d))
	}
	rec := p("dvs-header", "user01_synthetic.aedat")
	raw, err := os.ReadFile(rec)
	mustDo(err)
	write(rec, append([]byte("#!AER-DAT2.0\r\n"), raw[strings.Index(string(raw), "\n")+1:]...))
	truncate(p("dvs-trunc", "user01_synthetic.aedat"), 0.5)
	write(p("dvs-csv", "user01_synthetic_labels.csv"), []byte("class,startTime_usec,endTime_usec\n12,1000,2000\n"))
	write(p("dvs-list", "trials_to_train.txt"), []byte("../outside.aedat\n"))
	mustDo(os.Remove(p("dvs-dirrec", "user01_synthetic.aedat")))
	mustDo(os.Mkdir(p("dvs-dirrec", "user01_synthetic.aedat"), 0o755))
	end := strings.Index(string(raw), "#!END-HEADER")
	write(p("dvs-noevents", "user01_synthetic.aedat"), raw[:end+strings.Index(string(raw[end:]), "\n")+1])
	// Timestamps running backwards: the events of the recording in reverse order.
	hdrLines, evs, err := aedat.ReadFile(p("dvs-good", "user01_synthetic.aedat"))
	mustDo(err)
	slices.Reverse(evs)
	var rev bytes.Buffer
	mustDo(aedat.Write(&rev, hdrLines.Lines, evs, 4096))
	write(p("dvs-backwards", "user01_synthetic.aedat"), rev.Bytes())
	// Every event marked invalid (validity bit clear): a recording without events.
	write(p("dvs-invalid", "user01_synthetic.aedat"), clearValidity(t, raw))

	// Checkpoints: an empty run folder, a run whose every checkpoint is corrupt, a run saved by `fits
	// train` (configuration only), a folder holding only an interrupted save, and a demo folder holding a
	// user's file where a model's run would go.
	mustDo(os.MkdirAll(p("ck-empty"), 0o755))
	saveCheckpoint(t, p("ck-saved"))
	saveCheckpoint(t, p("ck-corrupt"))
	matches, _ := filepath.Glob(p("ck-corrupt", "checkpoint-*.bin"))
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		for i := range b {
			b[i] ^= 0x5a
		}
		write(m, b)
	}
	saveCheckpoint(t, p("ck-cut"))
	matches, _ = filepath.Glob(p("ck-cut", "checkpoint-*"))
	for _, m := range matches {
		switch {
		case strings.HasSuffix(m, ".sha256"):
			mustDo(os.Remove(m))
		case strings.HasSuffix(m, ".bin"):
			truncate(m, 0.5)
		}
	}
	// Checkpoints whose checksums are right but whose content is not: named and skipped like corrupt ones.
	saveCheckpointWith(t, p("ck-width16"), func(scope *model.Scope) { scope.SetParam("width", 16) })
	saveCheckpointWith(t, p("ck-eight"), func(scope *model.Scope) { scope.SetParam("width", "eight") })
	saveCheckpointWith(t, p("ck-izh"), func(scope *model.Scope) { scope.SetParam("model", "izh") })
	saveCheckpointWith(t, p("ck-nan"), func(scope *model.Scope) {
		scope.At("model").VariableWithValue("nanw", []float32{1, float32(math.NaN())})
	})
	saveCheckpointWith(t, p("ck-history"), func(scope *model.Scope) { scope.SetParam("train_history", `[{"epoch":1},{"epo`) })
	// Hand-edited and re-signed optimizer state: a negative second moment (the next epoch was NaN), a step
	// counter of 2^63-1 (it pinned the learning rate), a counter with an empty history (epochs relabelled).
	saveCheckpointWith(t, p("ck-moment"), func(scope *model.Scope) {
		scope.At("AdamOptimizer").At("model").VariableWithValue("w_2nd_moment", []float32{0, -1, 0})
	})
	saveCheckpointWith(t, p("ck-nanmoment"), func(scope *model.Scope) {
		scope.At("AdamOptimizer").At("model").VariableWithValue("w_2nd_moment", []float32{0, float32(math.NaN()), 0})
	})
	saveCheckpointWith(t, p("ck-step"), func(scope *model.Scope) { scope.VariableWithValue("global_step", int64(math.MaxInt64)) })
	saveCheckpointWith(t, p("ck-nohistory"), func(scope *model.Scope) {
		scope.SetParam("train_history", `[]`)
		scope.VariableWithValue("global_step", int64(4))
	})
	// Issue 34: a learned f* above the Jury bound (eval printed "loss NaN, firing rates -2147483648.00%").
	saveCheckpointWith(t, p("ck-fstar"), func(scope *model.Scope) {
		scope.SetParam("model", "fs")
		scope.At("model").At("hidden_0").VariableWithValue("log_target_hz", []float32{float32(math.Log(10)), float32(math.Log(1e6))})
	})
	write(p("demo-user", "lif-m0-e20-w64-b64-s1", "notes.txt"), []byte("my notes\n"))
	write(p("result-only", "result.json"), []byte("{}\n"))
	write(p("bad-result", "result.json"), []byte("{bad\n"))
}

// writeH5 writes an HDF5 file with the datasets that fill writes.
func writeH5(t *testing.T, path string, fill func(f *h5.File) error) {
	t.Helper()
	f, err := h5.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fill(f); err != nil {
		f.Abort()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// wavHeader returns a PCM WAV file of n zero frames with the given rate, channels and bit depth.
func wavHeader(rate, channels, bits, n int) []byte {
	data := n * channels * bits / 8
	b := make([]byte, 44+data)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], uint16(channels))
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*channels*bits/8))
	binary.LittleEndian.PutUint16(b[32:], uint16(channels*bits/8))
	binary.LittleEndian.PutUint16(b[34:], uint16(bits))
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	return b
}

// saveCheckpoint writes into dir a checkpoint as `fits train` saves it (the configuration below as
// hyperparameters, one variable, and the SHA-256 of both files), without training.
func saveCheckpoint(t *testing.T, dir string) { saveCheckpointWith(t, dir, nil) }

// saveCheckpointWith is saveCheckpoint with modify applied to the store before it is saved: content
// that is inconsistent although its checksums are right.
func saveCheckpointWith(t *testing.T, dir string, modify func(scope *model.Scope)) {
	t.Helper()
	cfg := train.DefaultConfig()
	cfg.Small, cfg.Model, cfg.Width, cfg.Epochs, cfg.Batch, cfg.LR, cfg.Seed = true, "lif", 8, 3, 32, 0.01, 3
	cfg.Protocol = train.ValSplit
	scope := model.NewStore().RootScope()
	cfg.SetParams(scope)
	scope.SetParam("train_history", `[{"epoch":1},{"epoch":2}]`)
	scope.At("model").VariableWithValue("w", []float32{1, 2, 3})
	// Adam's first moment of w: every checkpoint fits train writes holds the optimizer state (one without
	// it is an imported network, which --resume refuses).
	scope.At("AdamOptimizer").At("model").VariableWithValue("w_1st_moment", []float32{0, 0, 0})
	scope.At("model").At("hidden_0").At("dense").VariableWithValue("biases", make([]float32, 8))
	if modify != nil {
		modify(scope)
	}
	if scope.Store().GetVariable("/global_step") == nil {
		scope.VariableWithValue("global_step", int64(4)) // 2 epochs of 2 steps, as the history says
	}
	h, err := checkpoint.Build(scope.Store()).Dir(dir).WithCompression(checkpoint.BinUncompressed).Done()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Save(); err != nil {
		t.Fatal(err)
	}
	names, err := h.ListCheckpoints()
	if err != nil || len(names) != 1 {
		t.Fatalf("checkpoints %v, %v", names, err)
	}
	var sums strings.Builder
	for _, suffix := range []string{checkpoint.JsonNameSuffix, checkpoint.BinDataSuffix} {
		b, err := os.ReadFile(filepath.Join(dir, names[0]+suffix))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(b), names[0]+suffix)
	}
	if err := os.WriteFile(filepath.Join(dir, names[0]+".sha256"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if modify == nil && !train.HasCheckpoint(dir) {
		t.Fatalf("%s: the fixture checkpoint is not usable", dir)
	}
}

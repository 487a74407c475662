package train

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fits-snn/fits/internal/owned"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
)

// fakeCheckpoint writes checkpoint name into dir: a JSON layout of one float32 variable of n elements and
// its first Adam moment (zeros: the optimizer state that every checkpoint of TrainModel holds), their
// 2·n·4 bytes, and (withSums) their checksums.
func fakeCheckpoint(t *testing.T, dir, name string, n int, withSums bool) {
	t.Helper()
	size := strconv.Itoa(4 * n)
	js := []byte(`{"BinFormat":"uncompressed","Variables":[{"ParameterName":"/w","Dimensions":[` +
		strconv.Itoa(n) + `],"DType":"Float32","Pos":0,"Length":` + size + `},{"ParameterName":"/AdamOptimizer/w_1st_moment","Dimensions":[` +
		strconv.Itoa(n) + `],"DType":"Float32","Pos":` + size + `,"Length":` + size + `}]}`)
	bin := make([]byte, 8*n)
	for i := range 4 * n {
		bin[i] = byte(i)
	}
	write := func(suffix string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name+suffix), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(checkpoint.JsonNameSuffix, js)
	write(checkpoint.BinDataSuffix, bin)
	if withSums {
		write(sumSuffix, checksums([]string{name + checkpoint.JsonNameSuffix, name + checkpoint.BinDataSuffix}, [][]byte{js, bin}))
	}
}

// garble overwrites a file with random bytes of the same size.
func garble(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, st.Size())
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	return listDir(t, dir, false)
}

// TestSelectCheckpoint: the newest intact checkpoint is chosen, newer ones that are corrupt or
// unfinished are skipped with their reason, and a directory of an older version (no checksums at all)
// still loads.
func TestSelectCheckpoint(t *testing.T) {
	const a, b, c = "checkpoint-n0000001-a", "checkpoint-n0000002-b", "checkpoint-n0000003-c"
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string)
		chosen  string
		skipped []string // reasons, newest first
	}{
		{"all intact", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, true)
		}, b, nil},
		{"garbage over the newest weights", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, true)
			garble(t, filepath.Join(dir, b+".bin"))
		}, a, []string{b + ".bin does not match the SHA-256"}},
		{"newest JSON edited", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, true)
			os.WriteFile(filepath.Join(dir, b+".json"), []byte("{}"), 0o644)
		}, a, []string{b + ".json does not match"}},
		{"newest weights deleted", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, true)
			os.Remove(filepath.Join(dir, b+".bin"))
		}, a, []string{b + ".bin is missing"}},
		{"save killed before its checksums", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, false)
		}, a, []string{"no checksums: untrusted"}},
		{"save killed while writing", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, false)
			os.Truncate(filepath.Join(dir, b+".bin"), 5)
			fakeCheckpoint(t, dir, c, 2, false)
			os.Remove(filepath.Join(dir, c+".json"))
		}, a, []string{"no " + c + ".json", "cut short"}},
		{"every checksum deleted", func(t *testing.T, dir string) { // integrity cannot be switched off
			fakeCheckpoint(t, dir, a, 3, false)
			fakeCheckpoint(t, dir, b, 3, false)
		}, "", []string{"no checksums: untrusted", "no checksums: untrusted"}},
		{"newest weights a link to /dev/zero", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, true)
			os.Remove(filepath.Join(dir, b+".bin"))
			os.Symlink("/dev/zero", filepath.Join(dir, b+".bin"))
		}, a, []string{b + ".bin is a symbolic link"}},
		{"newest weights a FIFO", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, true)
			os.Remove(filepath.Join(dir, b+".bin"))
			if err := syscall.Mkfifo(filepath.Join(dir, b+".bin"), 0o644); err != nil {
				t.Skip(err)
			}
		}, a, []string{b + ".bin is not a regular file"}},
		{"layout inconsistent with its checksums right", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			js := []byte(`{"Variables":[{"ParameterName":"/w","Dimensions":[1000000000000],"DType":"Float32","Pos":0,"Length":12}]}`)
			bin := make([]byte, 12)
			os.WriteFile(filepath.Join(dir, b+".json"), js, 0o644)
			os.WriteFile(filepath.Join(dir, b+".bin"), bin, 0o644)
			os.WriteFile(filepath.Join(dir, b+sumSuffix), checksums([]string{b + ".json", b + ".bin"}, [][]byte{js, bin}), 0o644)
		}, a, []string{"do not fit"}},
		{"all corrupt", func(t *testing.T, dir string) {
			fakeCheckpoint(t, dir, a, 3, true)
			fakeCheckpoint(t, dir, b, 3, true)
			garble(t, filepath.Join(dir, a+".bin"))
			garble(t, filepath.Join(dir, b+".json"))
		}, "", []string{b + ".json", a + ".bin"}},
		{"empty", func(t *testing.T, dir string) {}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			before := names(t, dir)
			sel, err := selectCheckpoint(dir, true)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if sel.chosen != nil {
				got = sel.chosen.name
			}
			if got != tc.chosen {
				t.Errorf("chose %q, want %q", got, tc.chosen)
			}
			if len(sel.skipped) != len(tc.skipped) {
				t.Fatalf("skipped %+v, want %d", sel.skipped, len(tc.skipped))
			}
			for i, s := range sel.skipped {
				if !strings.Contains(s.reason, tc.skipped[i]) {
					t.Errorf("skipped %s: reason %q, want %q", s.name, s.reason, tc.skipped[i])
				}
			}
			if HasCheckpoint(dir) != (tc.chosen != "") {
				t.Errorf("HasCheckpoint = %v", !(tc.chosen != ""))
			}
			if after := names(t, dir); !slices.Equal(before, after) {
				t.Errorf("selecting changed the directory: %v -> %v", before, after)
			}
		})
	}
}

// TestPrepareResume: resuming removes this process's own unfinished saves, sets corrupt checkpoints
// aside (nothing deleted), refuses a directory with no intact checkpoint, and without Resume refuses any
// directory holding checkpoint files.
func TestPrepareResume(t *testing.T) {
	const a, b, c = "checkpoint-n0000001-a", "checkpoint-n0000002-b", "checkpoint-n0000003-c"
	dir := t.TempDir()
	fakeCheckpoint(t, dir, a, 3, true)
	fakeCheckpoint(t, dir, b, 3, true)
	fakeCheckpoint(t, dir, c, 3, false) // unfinished save
	garble(t, filepath.Join(dir, b+".bin"))
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)

	run := names(t, dir) // the run's files; notes.txt and what follows are the user's
	if err := owned.Note(dir, slices.DeleteFunc(run, func(n string) bool { return n == "notes.txt" })...); err != nil {
		t.Fatal(err)
	}
	user := map[string]string{"checkpoint-notes.json": "notes", "checkpoint-best.bin": "weights"}
	for n, c := range user {
		os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644)
	}
	fakeCheckpoint(t, dir, "checkpoint-n0000004-copy", 3, false) // a complete copy without its checksums

	if _, err := prepareResume(Options{Dir: dir}); !errors.Is(err, ErrRunExists) {
		t.Errorf("without Resume: %v, want ErrRunExists", err)
	}
	plan, err := prepareResume(Options{Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if plan.from == nil || plan.from.name != a || len(plan.setAside) != 1 || plan.setAside[0].Name != b ||
		!strings.Contains(plan.setAside[0].Reason, "kept as corrupt-"+b) {
		t.Errorf("resume from %v, set aside %+v", plan.from, plan.setAside)
	}
	if len(plan.unused) != 1 || plan.unused[0].Name != "checkpoint-n0000004-copy" || !strings.Contains(plan.unused[0].Reason, "left alone") {
		t.Errorf("unused %+v, want the copy, left alone", plan.unused)
	}
	if !slices.Equal(plan.foreign, []string{"checkpoint-best.bin", "checkpoint-notes.json"}) {
		t.Errorf("foreign files %v", plan.foreign)
	}
	want := []string{owned.RecordFile, "checkpoint-best.bin", a + ".bin", a + ".json", a + sumSuffix,
		"checkpoint-n0000004-copy.bin", "checkpoint-n0000004-copy.json", "checkpoint-notes.json",
		"corrupt-" + b + ".bin", "corrupt-" + b + ".json", "corrupt-" + b + sumSuffix, "notes.txt"}
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("files after prepareResume:\n got %v\nwant %v", got, want)
	}
	for n, c := range user {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != c {
			t.Errorf("%s: %q, %v", n, b, err)
		}
	}

	// Nothing intact: refused, nothing moved.
	garble(t, filepath.Join(dir, a+".json"))
	before := names(t, dir)
	_, err = prepareResume(Options{Dir: dir, Resume: true})
	var ce *CheckpointError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "no intact checkpoint") || !strings.Contains(err.Error(), a) {
		t.Errorf("all corrupt: %v", err)
	}
	if after := names(t, dir); !slices.Equal(before, after) {
		t.Errorf("a refused resume changed the directory: %v -> %v", before, after)
	}
	if _, _, err := LoadCheckpoint(model.NewStore().RootScope(), t.TempDir()); !errors.As(err, &ce) || !strings.Contains(err.Error(), "holds no checkpoint") {
		t.Errorf("empty directory: %v", err)
	}
}

// TestCorruptLatestCheckpoint trains a tiny network, overwrites the newest checkpoint's weights with
// random bytes of the same size, and checks that Evaluate and a resumed run (result.json deleted) both
// use the previous, intact checkpoint, that the resumed run ends exactly as the uninterrupted one, and
// that corrupting every checkpoint makes both refuse.
func TestCorruptLatestCheckpoint(t *testing.T) {
	cfg, _, base, full, want := trainTiny(t)
	list, err := checkpointNames(full.Dir)
	if err != nil || len(list) != keepCheckpoints {
		t.Fatalf("checkpoints after the run: %v, %v; want %d", list, err, keepCheckpoints)
	}
	for _, n := range list {
		if _, err := os.Stat(filepath.Join(full.Dir, n+sumSuffix)); err != nil {
			t.Errorf("no checksums for %s: %v", n, err)
		}
	}
	newest, previous := list[1], list[0]
	garble(t, filepath.Join(full.Dir, newest+checkpoint.BinDataSuffix))
	os.Remove(filepath.Join(full.Dir, ResultFile))

	ev, err := Evaluate(full.Dir, base)
	if err != nil {
		t.Fatal(err)
	}
	if ev.CheckpointName != previous || ev.Epoch != cfg.Epochs-1 || len(ev.Skipped) != 1 || ev.Skipped[0].Name != newest {
		t.Errorf("Evaluate used %s (epoch %d), skipped %+v; want %s (epoch %d), skipping %s",
			ev.CheckpointName, ev.Epoch, ev.Skipped, previous, cfg.Epochs-1, newest)
	}

	var warnings []string
	resumed := base
	resumed.Dir, resumed.Resume = full.Dir, true
	resumed.Warn = func(line string) { warnings = append(warnings, line) }
	got, err := TrainModel(cfg, resumed)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], newest) || !strings.Contains(warnings[0], "resuming from "+previous) {
		t.Errorf("warnings %q: want one naming %s and %s", warnings, newest, previous)
	}
	if !equalEpochs(metrics(got), metrics(want)) {
		t.Errorf("run resumed past a corrupt checkpoint differs from the uninterrupted one")
	}
	if r, err := ReadResult(full.Dir); err != nil || !equalEpochs(r.Epochs, want.Epochs) || r.BestTestAcc != want.BestTestAcc {
		t.Errorf("result.json after the resume: %v", err)
	}
	if _, err := os.Stat(filepath.Join(full.Dir, corruptPrefix+newest+checkpoint.BinDataSuffix)); err != nil {
		t.Errorf("the corrupt checkpoint was not kept aside: %v", err)
	}

	// Every checkpoint corrupt: Evaluate and resume refuse with a CheckpointError.
	list, _ = checkpointNames(full.Dir)
	for _, n := range list {
		garble(t, filepath.Join(full.Dir, n+checkpoint.BinDataSuffix))
	}
	var ce *CheckpointError
	if _, err := Evaluate(full.Dir, base); !errors.As(err, &ce) {
		t.Errorf("Evaluate with every checkpoint corrupt: %v", err)
	}
	if _, err := TrainModel(cfg, resumed); !errors.As(err, &ce) {
		t.Errorf("resume with every checkpoint corrupt: %v", err)
	}
}

// TestExtendEpochs: a finished run resumed with ExtendEpochs trains on to the new total and records it.
func TestExtendEpochs(t *testing.T) {
	cfg := tinyConfig()
	cfg.Epochs = 1
	opts, _ := trainedIn(t, cfg)
	opts.Resume, opts.ExtendEpochs = true, 2
	res, err := TrainModel(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Epochs) != 2 || res.Config.Epochs != 2 {
		t.Errorf("extended run: %d epochs, config %d", len(res.Epochs), res.Config.Epochs)
	}
	// Two segments: the first start trained epoch 1, the resume epoch 2.
	if len(res.Segments) != 2 || res.Resumes != 1 {
		t.Fatalf("segments %+v, resumes %d; want 2 segments, 1 resume", res.Segments, res.Resumes)
	}
	for i, seg := range res.Segments {
		if seg.FirstEpoch != i+1 || seg.LastEpoch != i+1 || seg.WallSeconds <= 0 || seg.Started == "" || seg.Engine == "" {
			t.Errorf("segment %d: %+v", i, seg)
		}
	}
	if res.CPUModel != res.Segments[1].CPU || res.Commit != res.Segments[1].Commit {
		t.Errorf("result's commit %q and CPU %q are not the last segment's", res.Commit, res.CPUModel)
	}
	if sum := res.Segments[0].WallSeconds + res.Segments[1].WallSeconds; sum > res.WallSeconds*1.0001 {
		t.Errorf("segments' wall times sum to %g s, above the run's %g s", sum, res.WallSeconds)
	}
	// The checkpoint of the finished run read as a partial result gives the same epochs and selection.
	part, err := PartialResult(opts.Dir)
	if err != nil || len(part.Epochs) != 2 || part.BestEpoch != res.BestEpoch || part.BestTestAcc != res.BestTestAcc ||
		len(part.Segments) != 2 || part.Config.Epochs != 2 || part.ParameterCount != res.ParameterCount {
		t.Errorf("partial result %+v, %v", part, err)
	}
	if _, err := PartialResult(t.TempDir()); err == nil {
		t.Error("PartialResult of an empty folder: no error")
	}
	saved, ck, _, err := SavedConfig(opts.Dir)
	if err != nil || saved.Epochs != 2 || ck.Epoch != 2 || !ck.Verified {
		t.Errorf("saved configuration %+v, checkpoint %+v, %v", saved, ck, err)
	}
}

// FuzzLoadCheckpoint feeds arbitrary checkpoint files, with or without matching checksums, to
// LoadCheckpoint and SavedConfig: they must return an error or a checkpoint, never panic or allocate what
// the files do not hold.
func FuzzLoadCheckpoint(f *testing.F) {
	f.Add([]byte(`{"BinFormat":"uncompressed","Variables":[{"ParameterName":"/w","Dimensions":[2],"DType":"Float32","Pos":0,"Length":8}],"Params":[{"Scope":"/","Key":"width","Value":4,"ValueType":"int"}]}`), []byte("12345678"), true)
	f.Add([]byte(`{"Variables":[{"ParameterName":"/w","Dimensions":[-1],"DType":"Float32","Pos":0,"Length":-4}]}`), []byte{}, true)
	f.Add([]byte(`{"Variables":[{"ParameterName":"/w","Dimensions":[4611686018427387904,4],"DType":"Int64","Pos":0,"Length":0}]}`), []byte{}, false)
	f.Add([]byte(`{"Params":[{"Scope":"/","Key":"epochs","Value":"many","ValueType":"int"},{"Scope":"/","Key":"train_history","Value":"[{]","ValueType":"string"}]}`), []byte{}, true)
	f.Add([]byte(`{"BinFormat":"gzip","Variables":[]}`), []byte("gomlx_00"), true)
	f.Fuzz(func(t *testing.T, js, bin []byte, withSums bool) {
		dir := t.TempDir()
		const name = "checkpoint-n0000001-x"
		os.WriteFile(filepath.Join(dir, name+checkpoint.JsonNameSuffix), js, 0o644)
		os.WriteFile(filepath.Join(dir, name+checkpoint.BinDataSuffix), bin, 0o644)
		if withSums {
			os.WriteFile(filepath.Join(dir, name+sumSuffix), checksums(
				[]string{name + checkpoint.JsonNameSuffix, name + checkpoint.BinDataSuffix}, [][]byte{js, bin}), 0o644)
		}
		ck, _, err := LoadCheckpoint(model.NewStore().RootScope(), dir)
		if err == nil && ck.Name != name {
			t.Errorf("loaded %q", ck.Name)
		}
		_, _, _, _ = SavedConfig(dir)
	})
}

// TestResumeLeavesUntrustedAlone: checkpoints without checksums that the run did not write (its checksums
// all deleted, or a copy) are never resumed from and never moved: the run starts again beside them.
func TestResumeLeavesUntrustedAlone(t *testing.T) {
	dir := t.TempDir()
	const a, b = "checkpoint-n0000001-a", "checkpoint-n0000002-b"
	fakeCheckpoint(t, dir, a, 3, false)
	fakeCheckpoint(t, dir, b, 3, false)
	before := names(t, dir)
	plan, err := prepareResume(Options{Dir: dir, Resume: true})
	if err != nil || plan.from != nil || len(plan.unused) != 2 {
		t.Fatalf("from %v, unused %+v, %v", plan.from, plan.unused, err)
	}
	if got := names(t, dir); !slices.Equal(got, before) {
		t.Errorf("files %v, want %v untouched", got, before)
	}
}

// TestLoadSegments: the segments saved with a checkpoint, and the one segment without a commit that stands
// for the epochs of a checkpoint written before segments were recorded.
func TestLoadSegments(t *testing.T) {
	for _, c := range []struct {
		name    string
		saved   string // the train_segments parameter ("" for none)
		epochs  int
		want    []Segment
		wantErr bool
	}{
		{"fresh run", "", 0, nil, false},
		{"older checkpoint", "", 15, []Segment{{FirstEpoch: 1, LastEpoch: 15, WallSeconds: 7}}, false},
		{"recorded", `[{"first_epoch":1,"last_epoch":3,"commit":"abc"},{"first_epoch":4,"last_epoch":5,"commit":"def"}]`, 5,
			[]Segment{{FirstEpoch: 1, LastEpoch: 3, Commit: "abc"}, {FirstEpoch: 4, LastEpoch: 5, Commit: "def"}}, false},
		{"beyond the history", `[{"first_epoch":1,"last_epoch":9}]`, 5, nil, true},
		{"corrupt", `[{`, 5, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			scope := model.NewStore().RootScope()
			if c.saved != "" {
				scope.SetParam(paramSegments, c.saved)
			}
			got, err := loadSegments(scope, c.epochs, 7)
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %v", err, c.wantErr)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("segments %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestFirstNonFinite: NaN and −∞ are never accepted in a checkpoint's float variables; +∞ only where
// allowed (Adam's second moment, whose float32 square of a gradient above 1.8e19 overflows).
func TestFirstNonFinite(t *testing.T) {
	f32 := func(v ...float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, tc := range []struct {
		name        string
		b           []byte
		allowPosInf bool
		want        int
	}{
		{"finite", f32(0, -3e38, 3e38), false, -1},
		{"+inf refused", f32(0, inf), false, 1},
		{"+inf allowed", f32(0, inf, 1), true, -1},
		{"-inf never", f32(0, 1, -inf), true, 2},
		{"NaN never", f32(nan), true, 0},
	} {
		if got := firstNonFinite(dtypes.Float32, tc.b, tc.allowPosInf); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	b64 := make([]byte, 16)
	binary.LittleEndian.PutUint64(b64[8:], math.Float64bits(math.Inf(1)))
	if got := firstNonFinite(dtypes.Float64, b64, false); got != 1 {
		t.Errorf("float64 +inf: %d, want 1", got)
	}
}

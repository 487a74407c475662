package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/data/gsc"
	"github.com/fits-snn/fits/internal/pyref"
)

func runDataCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(append([]string{"data"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// convertedCache runs `fits data convert --json` with args and opens the cache it names for split.
func convertedCache(t *testing.T, split string, args ...string) *cache.Reader {
	t.Helper()
	code, out, stderr := runDataCLI(t, append([]string{"convert", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("convert %v: %d %s", args, code, stderr)
	}
	var conv struct {
		Caches map[string]string `json:"caches"`
	}
	if err := json.Unmarshal([]byte(out), &conv); err != nil {
		t.Fatal(err)
	}
	r, err := cache.Open(conv.Caches[split])
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDataBadInput(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"fly"},
		{"download"},
		{"download", "--dataset=imagenet"},
		{"verify", "--dataset=x"},
		{"convert", "--dataset=shd", "--dir=" + filepath.Join(t.TempDir(), "absent")},
		{"convert", "--dataset=mnist", "--dir=" + t.TempDir()},
		{"synth", "--format=shd"},
		{"synth", "--format=wav", "--out=" + t.TempDir()},
		{"synth", "--format=shd", "--out=" + t.TempDir(), "--samples=-3"},
		{"synth", "--bogus"},
		{"synth", "--format=shd", "--out=" + t.TempDir(), "--full", "--samples=5"},
		{"synth", "--format=gsc", "--out=" + t.TempDir(), "--spikes=100"},
		{"synth", "--format=ssc", "--out=" + t.TempDir(), "--spikes=-1"},
		{"list", "extra"},
		{"espeak", "--speeds=fast"},
		{"espeak", "--pitches=120"},
		{"espeak", "--variants="},
		{"espeak", "--classes=20"},
		{"split", "--n=1"},
		{"split", "--seed=-1"},
		{"split", "--seed=4294967296"},
		{"split", "--dataset=gsc"},
		{"split", "--dataset=nope"},
		{"split", "--n=x"},
	} {
		code, _, stderr := runDataCLI(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || !strings.HasPrefix(lines[len(lines)-1], "fits data: ") || strings.Contains(stderr, "goroutine") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

func TestDataDownloadOffline(t *testing.T) {
	old := dataHTTPClient
	defer func() { dataHTTPClient = old }()
	dataHTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("network is unreachable")}
	}}}
	for _, ds := range []string{"shd", "gsc", "dvs"} {
		code, _, stderr := runDataCLI(t, "download", "--dataset="+ds, "--dir="+t.TempDir())
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "offline") {
			t.Errorf("%s offline: exit %d, stderr %q", ds, code, stderr)
		}
	}
}

func TestDataSynthConvert(t *testing.T) {
	for _, tc := range []struct {
		format string
		n      string
		caches []string // split names expected
		shape  []int
	}{
		{"shd", "30", []string{"test", "train"}, []int{250, 140}},
		{"ssc", "40", []string{"test", "train", "valid"}, []int{250, 140}},
		{"gsc", "3", []string{"test", "train", "valid"}, []int{100, 40}},
		{"dvs", "2", []string{"test", "train"}, []int{50, 2, 64, 64}},
	} {
		dir := t.TempDir()
		code, _, stderr := runDataCLI(t, "synth", "--format="+tc.format, "--out="+dir, "--samples="+tc.n)
		if code != 0 {
			t.Fatalf("synth %s: exit %d %s", tc.format, code, stderr)
		}
		code, out, stderr := runDataCLI(t, "convert", "--dataset="+tc.format, "--dir="+dir)
		if code != 0 {
			t.Fatalf("convert %s: exit %d %s", tc.format, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(tc.caches) {
			t.Fatalf("convert %s printed %q", tc.format, out)
		}
		for i, l := range lines {
			f := strings.Fields(l)
			if f[0] != tc.caches[i] {
				t.Errorf("%s: line %q, want split %s", tc.format, l, tc.caches[i])
			}
			r, err := cache.Open(f[1])
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Shape(); len(got) != len(tc.shape) || got[0] != tc.shape[0] || got[len(got)-1] != tc.shape[len(tc.shape)-1] {
				t.Errorf("%s: cache shape %v, want %v", tc.format, got, tc.shape)
			}
			r.Close()
		}
		if !strings.Contains(stderr, "100%") {
			t.Errorf("%s: no progress bar on stderr", tc.format)
		}
	}
}

func TestDataSynthMNISTAndVerify(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runDataCLI(t, "synth", "--format=mnist", "--out="+dir, "--samples=10"); code != 0 {
		t.Fatal(stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz")); err != nil {
		t.Fatal(err)
	}
	// Synthetic files do not match the real MNIST checksums: verify reports them and fails with status 2
	// (the files are at fault).
	code, out, _ := runDataCLI(t, "verify", "--dataset=mnist", "--dir="+dir)
	if code != 2 || !strings.Contains(out, "mismatch") {
		t.Errorf("verify synthetic mnist: exit %d, %q", code, out)
	}
	code, out, _ = runDataCLI(t, "verify", "--dataset=shd", "--dir="+t.TempDir(), "--json")
	if code != 2 || !strings.Contains(out, `"state":"missing"`) {
		t.Errorf("verify empty shd: exit %d, %q", code, out)
	}
	if code, out, _ := runDataCLI(t, "list", "--json"); code != 0 || !strings.Contains(out, `"dataset":"gsc"`) {
		t.Errorf("list: %d %q", code, out)
	}
}

func TestDataEspeak(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed")
	}
	dir := t.TempDir()
	code, out, stderr := runDataCLI(t, "espeak", "--out="+dir, "--variants=m1", "--test-variants=f2", "--speeds=170", "--pitches=50", "--classes=1,12")
	if code != 0 || !strings.Contains(out, "espeak_train.h5") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	code, out, stderr = runDataCLI(t, "convert", "--dataset=espeak", "--dir="+dir)
	if code != 0 || !strings.Contains(out, "espeak_test.") {
		t.Fatalf("convert: exit %d: %s %s", code, out, stderr)
	}
}

func TestDataSplit(t *testing.T) {
	code, out, stderr := runDataCLI(t, "split", "--dataset=shd", "--n=10", "--json")
	// numpy.random.RandomState(0).permutation(10) = [2 8 4 9 1 6 7 3 0 5]; int(0.2·10) = 2 validate.
	if want := `{"validation":[2,8],"train":[4,9,1,6,7,3,0,5]}` + "\n"; code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q, want %q; stderr %q", code, out, want, stderr)
	}
	code, out, _ = runDataCLI(t, "split", "--dataset=shd", "--json")
	var sp struct {
		Validation []int `json:"validation"`
		Train      []int `json:"train"`
	}
	if err := json.Unmarshal([]byte(out), &sp); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	if len(sp.Validation) != 1631 || len(sp.Train) != 6525 || sp.Validation[0] != 1529 {
		t.Errorf("default shd split: %d validate (first %d), %d train", len(sp.Validation), sp.Validation[0], len(sp.Train))
	}
	if !strings.HasPrefix(out, `{"validation":[`) {
		t.Errorf("JSON does not start with the validation list: %.40q", out)
	}
}

// TestDataSplitMatchesNumpy compares fits data split with the released code's own expression, run by numpy
// in the project virtualenv, for SHD's 8156 examples and other sizes and seeds.
func TestDataSplitMatchesNumpy(t *testing.T) {
	py := pyref.Python(t, "numpy")
	const script = `
import json, sys
import numpy as np
n, seed = int(sys.argv[1]), int(sys.argv[2])
idx = np.random.RandomState(seed).permutation(n)
k = max(1, int(n * 0.2))
print(json.dumps({"validation": idx[:k].tolist(), "train": idx[k:].tolist()}, separators=(",", ":")))
`
	for _, c := range [][2]string{{"8156", "0"}, {"8156", "3"}, {"2264", "0"}, {"7", "0"}, {"75466", "1"}} {
		want, err := exec.Command(py, "-c", script, c[0], c[1]).Output()
		if err != nil {
			t.Fatalf("numpy: %v", err)
		}
		code, out, stderr := runDataCLI(t, "split", "--dataset=shd", "--n="+c[0], "--seed="+c[1], "--json")
		if code != 0 || out != string(want) {
			t.Errorf("n=%s seed=%s: exit %d %s; output differs from numpy's (%d and %d bytes)", c[0], c[1], code, stderr, len(out), len(want))
		}
	}
}

// TestDataFeatures checks that fits data features prints, for one clip, exactly the features that the
// converted cache holds for it (what the network is fed), in the documented JSON form.
func TestDataFeatures(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runDataCLI(t, "synth", "--format=gsc", "--out="+dir, "--samples=3"); code != 0 {
		t.Fatal(stderr)
	}
	r := convertedCache(t, "test", "--dataset=gsc", "--dir="+dir)
	defer r.Close()
	var meta gsc.CacheMeta
	if err := r.Meta(&meta); err != nil || meta.FrontEnd.Name != gsc.FrontEndReleased {
		t.Fatalf("cache front end %+v %v, want the released recipe by default", meta.FrontEnd, err)
	}
	want := make([]float32, 4000)
	if err := r.ReadBatch([]int{2}, want); err != nil {
		t.Fatal(err)
	}
	wav := filepath.Join(gsc.Root(dir), filepath.FromSlash(meta.Files[2]))
	code, out, stderr := runDataCLI(t, "features", "--dataset=gsc", "--wav="+wav, "--json")
	if code != 0 {
		t.Fatalf("features: exit %d %s", code, stderr)
	}
	if !strings.HasPrefix(out, `{"frames":100,"bands":40,"values":[[`) {
		t.Errorf("JSON begins %.50q", out)
	}
	var got struct {
		Frames int         `json:"frames"`
		Bands  int         `json:"bands"`
		Values [][]float32 `json:"values"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Frames != 100 || got.Bands != 40 || len(got.Values) != 100 {
		t.Fatalf("%d frames × %d bands, %d rows", got.Frames, got.Bands, len(got.Values))
	}
	for f, row := range got.Values {
		for b, v := range row {
			if v != want[f*40+b] {
				t.Fatalf("frame %d band %d: printed %v, cache %v", f, b, v, want[f*40+b])
			}
		}
	}
	// The earlier front end stays available by name, in its own cache.
	code, out, _ = runDataCLI(t, "convert", "--dataset=gsc", "--dir="+dir, "--frontend=logmel")
	if code != 0 || !strings.Contains(out, ".mel40-t100-hop160.fitsds") {
		t.Errorf("convert --frontend=logmel: exit %d, %q", code, out)
	}
	if code, out, _ := runDataCLI(t, "features", "--wav="+wav, "--frontend=logmel"); code != 0 || !strings.Contains(out, "front end logmel") {
		t.Errorf("features --frontend=logmel: exit %d, %.80q", code, out)
	}
}

// TestDataConvertInputCounts checks binary SHD inputs by default and counts with --input-counts, each in
// its own cache.
func TestDataConvertInputCounts(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runDataCLI(t, "synth", "--format=shd", "--out="+dir, "--samples=20"); code != 0 {
		t.Fatal(stderr)
	}
	maxima := map[string]float32{}
	for _, flags := range [][]string{nil, {"--input-counts"}} {
		r := convertedCache(t, "train", append([]string{"--dataset=shd", "--dir=" + dir}, flags...)...)
		x, err := r.ReadAll()
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		var m float32
		for _, v := range x {
			m = max(m, v)
		}
		maxima[strings.Join(flags, "")] = m
	}
	if maxima[""] != 1 || maxima["--input-counts"] <= 1 {
		t.Errorf("largest input: %v binary, %v counts; want 1 and more than 1", maxima[""], maxima["--input-counts"])
	}
}

// TestSynthFullSizes: --full plans the official split sizes of every format (the plan, not the GBs of
// files), and the sizes without it are those written before --full existed.
func TestSynthFullSizes(t *testing.T) {
	for _, tc := range []struct {
		format string
		full   bool
		n      int
		want   map[string]int
	}{
		{"shd", true, 0, map[string]int{"train": 8156, "test": 2264}},
		{"ssc", true, 0, map[string]int{"train": 75466, "valid": 9981, "test": 20382}},
		{"gsc", true, 0, map[string]int{"train": 84843, "valid": 9981, "test": 11005}},
		{"dvs", true, 0, map[string]int{"train": 1077, "test": 264}},
		{"mnist", true, 0, map[string]int{"train": 60000, "test": 10000}},
		{"shd", false, 0, map[string]int{"train": 100, "test": 100}},
		{"ssc", false, 7, map[string]int{"train": 7, "valid": 7, "test": 7}},
		{"gsc", false, 0, map[string]int{"train": 35, "valid": 35, "test": 35}},
		{"dvs", false, 0, map[string]int{"train": 22, "test": 11}},
		{"mnist", false, 12, map[string]int{"train": 12, "test": 12}},
	} {
		got, err := synthSplits(tc.format, tc.full, tc.n)
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%s full=%v n=%d: %v %v, want %v", tc.format, tc.full, tc.n, got, err, tc.want)
		}
	}
	code, out, _ := runDataCLI(t, "synth", "--help")
	for _, want := range []string{"8156", "75466", "6180", "lauscher", "Cramer et al. 2020"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("synth --help (exit %d) does not say %q", code, want)
		}
	}
}

// TestDataLoad: fits data load reports each split's examples, encoding and bytes, held and as float32.
func TestDataLoad(t *testing.T) {
	code, out, stderr := runDataCLI(t, "load", "--dataset=synthetic", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Splits []dataLoadSplit `json:"splits"`
		Peak   int64           `json:"peak_rss_bytes"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Splits) != 3 || got.Peak <= 0 {
		t.Fatalf("%s", out)
	}
	for _, s := range got.Splits {
		if s.Encoding != "bytes" || s.Bytes*4 != s.DenseBytes || s.Examples == 0 {
			t.Errorf("%+v: want spike counts held as one byte per value", s)
		}
	}
	if code, _, _ := runDataCLI(t, "load", "--dataset=nope"); code != 2 {
		t.Errorf("unknown dataset: exit %d", code)
	}
}

// dataSplit is the JSON of fits data split (as writeSplitJSON writes it): validation first, as the released code slices it.
type dataSplit struct {
	Validation []int `json:"validation"`
	Train      []int `json:"train"`
}

// TestWriteSplitJSON: the streamed JSON of fits data split is the bytes json.Marshal gives dataSplit.
func TestWriteSplitJSON(t *testing.T) {
	for _, tc := range []struct{ val, train []int }{
		{[]int{2}, []int{0, 1, 3, 4}},
		{[]int{}, []int{7}},
		{[]int{1234567, 0}, []int{}},
	} {
		var got bytes.Buffer
		if err := writeSplitJSON(&got, tc.val, tc.train); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(dataSplit{Validation: tc.val, Train: tc.train})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want)+"\n" {
			t.Errorf("%v %v: got %q, want %q", tc.val, tc.train, got.String(), want)
		}
	}
}

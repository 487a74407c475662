package shd

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/cache"
	"github.com/fits-snn/fits/internal/pyref"
)

// TestIndexFloat16 checks bins that numpy's float16 arithmetic moves: floor(t / 1.0 · 250) on a float16
// array rounds t·250 to float16 before the floor (values from numpy 2.4.6).
func TestIndexFloat16(t *testing.T) {
	b := DefaultBinning()
	for _, c := range []struct {
		t            float64
		half, double int
	}{
		{0.083984375, 21, 20},
		{0.135986328125, 34, 33},
		{0.16796875, 42, 41},
		{0.5, 125, 125},
		{0.99951171875, 249, 249}, // the last float16 value below 1 s
		{1.0, 250, 250},
	} {
		if got := b.Index(c.t, Float16); got != c.half {
			t.Errorf("Index(%v, float16) = %d, want %d", c.t, got, c.half)
		}
		if got := b.Index(c.t, Float64); got != c.double {
			t.Errorf("Index(%v, float64) = %d, want %d", c.t, got, c.double)
		}
	}
}

// TestIndexMatchesNumpy compares Index with numpy evaluating the released code's expression
// floor(t / 1.0 * 250) on every float16 value in [0, 1.1] and on float32 and float64 times.
func TestIndexMatchesNumpy(t *testing.T) {
	py := pyref.Python(t, "numpy")
	const script = `
import json, sys
import numpy as np
out = {}
t16 = np.unique(np.arange(0, 1.1, 2**-13).astype(np.float16))
t32 = (np.arange(0, 110000, dtype=np.float64) * 1e-5).astype(np.float32)
t64 = np.arange(0, 110000, dtype=np.float64) * 1e-5
for name, t in (("16", t16), ("32", t32), ("64", t64)):
    out[name] = {"t": t.astype(np.float64).tolist(), "k": np.floor(t / 1.0 * 250).astype(np.float64).tolist()}
json.dump(out, sys.stdout)
`
	dir := t.TempDir()
	sp := filepath.Join(dir, "index.py")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := pyref.Run(py, sp)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]struct{ T, K []float64 }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	b := DefaultBinning()
	for name, p := range map[string]Precision{"16": Float16, "32": Float32, "64": Float64} {
		r := res[name]
		if len(r.T) < 1000 {
			t.Fatalf("float%s: %d values", name, len(r.T))
		}
		bad := 0
		for i, tv := range r.T {
			want := int(math.Min(r.K[i], 250))
			if got := b.Index(tv, p); got != want {
				if bad++; bad <= 5 {
					t.Errorf("float%s: Index(%v) = %d, numpy %d", name, tv, got, want)
				}
			}
		}
		if bad > 0 {
			t.Errorf("float%s: %d of %d bins differ from numpy", name, bad, len(r.T))
		}
	}
}

// writeOldCache writes at path what an earlier build wrote: a uint8 cache of one example of binning b, class
// 0, all zeros but value at position at, with the metadata meta.
func writeOldCache(t *testing.T, path string, b Binning, meta json.RawMessage, at int, value uint8) {
	t.Helper()
	w, err := cache.Create(path, cache.Header{DType: cache.Uint8, Shape: []int{b.T, b.Features()}, Classes: SHDClasses, Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]uint8, b.T*b.Features())
	x[at] = value
	if err := w.AppendUint8(0, x); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOldCacheConvertedAgain writes a cache as an earlier build did (no front-end name in its metadata)
// and one of the other input representation, and checks that loading converts both again and says so.
func TestOldCacheConvertedAgain(t *testing.T) {
	dir := t.TempDir()
	writeSynthSplits(t, dir, 12, 300, 2)
	b := DefaultBinning()
	// An earlier build's cache: counts, no front-end name, at the path of today's binary cache.
	old := CachePath(dir, SHD, "train", b)
	writeOldCache(t, old, b, json.RawMessage(`{"dataset":"shd","split":"train"}`), 0, 7)
	var log bytes.Buffer
	paths, err := EnsureCaches(dir, SHD, b, &log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "made by an earlier converter") || !strings.Contains(log.String(), "converting again") {
		t.Errorf("no message about the old cache: %q", log.String())
	}
	r, err := cache.Open(paths["train"])
	if err != nil {
		t.Fatal(err)
	}
	all, _ := r.ReadAll()
	r.Close()
	if r.Len() != 12 {
		t.Errorf("the old cache was reused: %d samples", r.Len())
	}
	for _, v := range all {
		if v != 0 && v != 1 {
			t.Fatalf("binary cache holds %v", v)
		}
	}
	// Counts go to their own cache; the binary one stays.
	log.Reset()
	bc := b
	bc.Counts = true
	pc, err := EnsureCaches(dir, SHD, bc, &log)
	if err != nil {
		t.Fatal(err)
	}
	if pc["train"] == paths["train"] {
		t.Errorf("counts and binary caches share %s", pc["train"])
	}
	if ok, why := cache.Reusable(paths["train"], b.FrontEnd()); !ok {
		t.Errorf("binary cache no longer reusable: %v", why)
	}
	if ok, why := cache.Reusable(pc["train"], b.FrontEnd()); ok || why == nil {
		t.Errorf("a counts cache passes for a binary one")
	}
	log.Reset()
	if _, err := EnsureCaches(dir, SHD, b, &log); err != nil || log.Len() != 0 {
		t.Errorf("third load: %v, %q", err, log.String())
	}
}

// TestUint8BinaryCacheConvertedAgain: a binary cache of today's recipe in the layout of the builds before
// bit caches (one uint8 per value) is converted again into bits, with a message; the loaded set holds
// bits, and the same values as the counts it replaced would have read.
func TestUint8BinaryCacheConvertedAgain(t *testing.T) {
	dir := t.TempDir()
	writeSynthSplits(t, dir, 9, 300, 3)
	b := DefaultBinning()
	// The earlier layout: convert as uint8 under today's recipe name.
	old := CachePath(dir, SHD, "train", b)
	mj, _ := json.Marshal(CacheMeta{FrontEnd: b.FrontEnd(), Dataset: SHD, Split: "train", Binning: b, Dt: b.Dt()})
	writeOldCache(t, old, b, mj, 3, 1)
	var log bytes.Buffer
	d, err := LoadDataset(SHD, data.Options{Dir: dir}, b, false, &log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "holds its samples as uint8 (an earlier layout), this build stores them as bit; converting again") {
		t.Errorf("no message about the uint8 layout: %q", log.String())
	}
	if d.Train.N != 9 || d.Train.Encoding() != data.Bits || d.Test.Encoding() != data.Bits {
		t.Errorf("train: %d examples as %v, test as %v", d.Train.N, d.Train.Encoding(), d.Test.Encoding())
	}
	if d.Train.StorageBytes() != int64(9*data.BitsLen(b.T*b.Features())) {
		t.Errorf("%d bytes for 9 examples of bits", d.Train.StorageBytes())
	}
	// A second load reuses the caches and says nothing.
	log.Reset()
	if _, err := EnsureCaches(dir, SHD, b, &log); err != nil || log.Len() != 0 {
		t.Errorf("second load: %v, %q", err, log.String())
	}
}

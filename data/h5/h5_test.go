package h5

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFixture(t *testing.T, path string) {
	t.Helper()
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			f.Abort()
			t.Fatal(err)
		}
	}
	must(f.CreateGroup("spikes"))
	must(f.CreateGroup("extra"))
	must(f.WriteVLen("spikes/times", F32, []float64{0.5, 0.25, 1.5, 0.125}, []int{0, 2, 2, 4}))
	must(f.WriteVLen("spikes/units", U16, []float64{3, 699, 0, 65535}, []int{0, 2, 2, 4}))
	must(f.WriteVLen("spikes/times64", F64, []float64{0.1}, []int{0, 1}))
	must(f.WriteInts("labels", U16, []int64{0, 19, 7}))
	must(f.WriteFloats("extra/age", F32, []float64{21.5, 30}))
	must(f.WriteStrings("extra/keys", []string{"english zero", "german neun"}))
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("file visible before Close")
	}
	must(f.Close())
}

func TestRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.h5")
	writeFixture(t, p)
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Info("spikes/times")
	if err != nil || info.String() != "vlen of float32" || info.Dims[0] != 3 {
		t.Fatalf("times info %v %v", info, err)
	}
	if info, _ := f.Info("spikes/units"); info.String() != "vlen of 16-bit integer" {
		t.Fatalf("units info %v", info)
	}
	if info, _ := f.Info("labels"); info.String() != "16-bit integer" {
		t.Fatalf("labels info %v", info)
	}
	vals, offs, err := f.ReadVLenFloats("spikes/times", 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 4 || vals[2] != 1.5 || len(offs) != 4 || offs[1] != 2 || offs[2] != 2 || offs[3] != 4 {
		t.Fatalf("times %v %v", vals, offs)
	}
	uv, uo, err := f.ReadVLenInts("spikes/units", 1, 2)
	if err != nil || len(uv) != 2 || uv[1] != 65535 || uo[1] != 0 || uo[2] != 2 {
		t.Fatalf("units rows 1..2: %v %v %v", uv, uo, err)
	}
	if v, _, err := f.ReadVLenFloats("spikes/times64", 0, 1); err != nil || v[0] != 0.1 {
		t.Fatalf("times64 %v %v", v, err)
	}
	labels, err := f.ReadInts("labels")
	if err != nil || len(labels) != 3 || labels[1] != 19 {
		t.Fatalf("labels %v %v", labels, err)
	}
	age, err := f.ReadFloats("extra/age")
	if err != nil || age[0] != 21.5 {
		t.Fatalf("age %v %v", age, err)
	}
	keys, err := f.ReadStrings("extra/keys")
	if err != nil || len(keys) != 2 || keys[1] != "german neun" {
		t.Fatalf("keys %q %v", keys, err)
	}
	if n, err := f.Len("labels"); n != 3 || err != nil {
		t.Fatalf("Len %d %v", n, err)
	}
	if !f.Exists("spikes/units") || f.Exists("spikes/nothing") || f.Exists("nothing/at/all") {
		t.Fatal("Exists")
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.h5")
	writeFixture(t, p)
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"missing", func() error { _, err := f.ReadInts("nope/labels"); return err }, "nope/labels: missing dataset"},
		{"class", func() error { _, err := f.ReadInts("spikes/times"); return err }, "want integer elements, got vlen of float32"},
		{"vlen base", func() error { _, _, err := f.ReadVLenFloats("spikes/units", 0, 1); return err }, "want a vlen of float, got vlen of 16-bit integer"},
		{"not vlen", func() error { _, _, err := f.ReadVLenInts("labels", 0, 1); return err }, "want variable-length array elements, got 16-bit integer"},
		{"rows", func() error { _, _, err := f.ReadVLenFloats("spikes/times", 2, 2); return err }, "rows [2, 4) outside the 3 rows"},
		{"group", func() error { _, err := f.ReadInts("spikes"); return err }, "spikes"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want the file name and %q", tc.name, err, tc.want)
		}
	}
	f.Close()

	raw, _ := os.ReadFile(p)
	trunc := filepath.Join(dir, "trunc.h5")
	os.WriteFile(trunc, raw[:len(raw)/2], 0o644)
	if f, err := Open(trunc); err == nil {
		// Some truncations still open; reading must then fail.
		_, _, err = f.ReadVLenFloats("spikes/times", 0, 3)
		f.Close()
		if err == nil {
			t.Error("truncated file read without error")
		}
	} else if !strings.Contains(err.Error(), trunc) {
		t.Errorf("truncated: %v", err)
	}
	text := filepath.Join(dir, "text.h5")
	os.WriteFile(text, []byte("hello"), 0o644)
	if _, err := Open(text); err == nil || !strings.Contains(err.Error(), "not an HDF5 file") {
		t.Errorf("text file: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "absent.h5")); err == nil {
		t.Error("absent file opened")
	}
	// An aborted file leaves nothing behind.
	w, err := Create(filepath.Join(dir, "aborted.h5"))
	if err != nil {
		t.Fatal(err)
	}
	w.Abort()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("%d entries after Abort", len(ents))
	}
}

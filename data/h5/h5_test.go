package h5

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fits-snn/fits/data"
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
		if !data.IsBadFile(err) {
			t.Errorf("%s: %v is not a data.FileError", tc.name, err)
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
	} else if !strings.Contains(err.Error(), trunc) || !data.IsBadFile(err) {
		t.Errorf("truncated: %v", err)
	}
	text := filepath.Join(dir, "text.h5")
	os.WriteFile(text, []byte("hello"), 0o644)
	if _, err := Open(text); err == nil || !strings.Contains(err.Error(), "not an HDF5 file") {
		t.Errorf("text file: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "absent.h5")); !data.IsBadFile(err) {
		t.Errorf("absent file: %v, want a data.FileError", err)
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

// TestSilentOnEveryThread opens truncated files from many OS threads: the HDF5 library (built
// thread-safe, with a per-thread error stack) must print nothing on the process's stderr, and every
// error must carry the library's message.
func TestSilentOnEveryThread(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.h5")
	writeFixture(t, p)
	raw, _ := os.ReadFile(p)
	trunc := filepath.Join(dir, "trunc.h5")
	if err := os.WriteFile(trunc, raw[:len(raw)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	// Send file descriptor 2 to a file while the goroutines run.
	capture, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup2(int(capture.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a fresh thread for each goroutine: it exits with the goroutine
			_, errs[i] = Open(trunc)
		}()
	}
	wg.Wait()
	syscall.Dup2(saved, 2)
	syscall.Close(saved)
	capture.Close()
	printed, _ := os.ReadFile(capture.Name())
	if len(printed) > 0 {
		t.Errorf("the HDF5 library printed on stderr:\n%s", printed)
	}
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "truncated") || !data.IsBadFile(err) {
			t.Errorf("goroutine %d: %v, want a data.FileError naming the truncation", i, err)
		}
	}
}

// TestCreateRemovesStale: a file that a killed writer left under the temporary name of the same
// destination is removed by the next Create; other files stay.
func TestCreateRemovesStale(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".x.h5.tmp12345")
	other := filepath.Join(dir, ".y.h5.tmp12345")
	for _, n := range []string{stale, other} {
		if err := os.WriteFile(n, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFixture(t, filepath.Join(dir, "x.h5"))
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another destination's temporary file was touched: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "x.h5")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("x.h5: %v, %v; want permissions 0644", st, err)
	}
}

// TestVLenWriter writes a VLEN dataset in blocks of rows and reads back what WriteVLen would have written.
func TestVLenWriter(t *testing.T) {
	p := filepath.Join(t.TempDir(), "v.h5")
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.CreateVLen("times", F32, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRows(0, []float64{0.5, 0.25}, []int{0, 2, 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRows(2, []float64{1.5, 0.125, 3}, []int{0, 1, 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRows(3, []float64{1}, []int{0, 1, 1}); err == nil {
		t.Error("rows past the end accepted")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	vals, offs, err := r.ReadVLenFloats("times", 0, 4)
	if err != nil || len(vals) != 5 || vals[2] != 1.5 || vals[4] != 3 || offs[1] != 2 || offs[2] != 2 || offs[3] != 3 || offs[4] != 5 {
		t.Fatalf("read back %v %v %v", vals, offs, err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConvertRemovesStaleTemporaryFiles: what killed conversions left in a dataset folder (hidden
// temporary caches of the same names) is removed by the next conversion there; other hidden files stay.
func TestConvertRemovesStaleTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	if status, _, stderr := run("data", "synth", "--format=shd", "--out="+dir, "--samples=4"); status != 0 {
		t.Fatal(stderr)
	}
	var stale []string
	for i, name := range []string{"shd_train", "shd_train", "shd_test"} {
		p := filepath.Join(dir, "."+name+".t250-d1000ms-c700g5.fitsds.tmp"+string(rune('1'+i))+"0817")
		if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
			t.Fatal(err)
		}
		stale = append(stale, p)
	}
	other := filepath.Join(dir, ".notes.tmp1")
	if err := os.WriteFile(other, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if status, _, stderr := run("data", "convert", "--dataset=shd", "--dir="+dir); status != 0 {
		t.Fatal(stderr)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file that is not a temporary cache was touched: %v", err)
	}
}

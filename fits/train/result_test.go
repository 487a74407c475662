package train

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteResultRemovesStale: a temporary result that a killed process left in a run folder is removed
// by the next WriteResult there; other files stay.
func TestWriteResultRemovesStale(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".result.json.tmp2718281828")
	keep := filepath.Join(dir, "notes.txt")
	for _, p := range []string{stale, keep} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteResult(dir, &Result{Dataset: "synthetic"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary result still there: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("notes.txt: %v", err)
	}
	if r, err := ReadResult(dir); err != nil || r.Dataset != "synthetic" {
		t.Errorf("ReadResult: %+v, %v", r, err)
	}
}

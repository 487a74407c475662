package train

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	if err := WriteResult(dir, &Result{Dataset: "synthetic", Epochs: []Epoch{{Epoch: 1, TestAcc: 0.5}}, BestEpoch: 1, BestTestAcc: 0.5}); err != nil {
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

// TestReadResultChecksValues: a hand-edited result.json whose values no run writes — no epochs ({}), an
// accuracy of 2.0 or 1e308, a negative wall time — is an *InputError naming the value.
func TestReadResultChecksValues(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"empty", `{}`, "no epochs"},
		{"accuracy 2", `{"best_test_acc":2,"epochs":[{"epoch":1,"test_acc":0.5}]}`, "best_test_acc 2 is outside [0, 1]"},
		{"accuracy 1e308", `{"epochs":[{"epoch":1,"test_acc":1e308}]}`, "epoch 1 test_acc 1e+308 is outside [0, 1]"},
		{"negative wall", `{"wall_seconds":-5,"epochs":[{"epoch":1}]}`, "wall_seconds -5 is not a finite number of seconds"},
		{"relabelled", `{"epochs":[{"epoch":2}]}`, "epoch entry 1 is numbered 2"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ResultFile), []byte(tc.json), 0o644)
		_, err := ReadResult(dir)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an InputError with %q", tc.name, err, tc.want)
		}
	}
}

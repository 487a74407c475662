package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoKeepsUserFiles runs `fits demo` (one model, one epoch) into a folder that holds a user's file:
// the file stays; a second run reuses the run; --retrain trains into a new folder beside it; a model
// folder holding a user's file is refused and left as it was.
func TestDemoKeepsUserFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("trains twice")
	}
	saved := demoModels
	demoModels = demoModels[:1] // plain LIF
	defer func() { demoModels = saved }()
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"demo", "--json", "--out=" + dir, "--epochs=1", "--width=2", "--batch=64"}
	runDir := filepath.Join(dir, "lif-m0-e1-w2-b64-s1")
	for i, want := range []string{`"reused":false`, `"reused":true`} {
		status, stdout, stderr := run(args...)
		if status != 0 || !strings.Contains(stdout, want) || !strings.Contains(stdout, runDir) {
			t.Fatalf("run %d: status %d, stdout %s\nstderr %s", i+1, status, stdout, stderr)
		}
	}
	status, stdout, stderr := run(append(args, "--retrain")...)
	if status != 0 || !strings.Contains(stdout, runDir+"-2") {
		t.Fatalf("--retrain: status %d, stdout %s\nstderr %s", status, stdout, stderr)
	}
	for _, p := range []string{notes, filepath.Join(runDir, "result.json"), filepath.Join(runDir+"-2", "result.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}

	// A folder where the run of other settings would go, holding a user's file: refused, untouched.
	other := filepath.Join(dir, "lif-m0-e2-w2-b64-s1")
	mine := filepath.Join(other, "mine.txt")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, stderr = run("demo", "--out="+dir, "--epochs=2", "--width=2", "--batch=64")
	if status != 2 || !strings.Contains(stderr, other) || !strings.Contains(stderr, "move it away") {
		t.Errorf("conflicting folder: status %d, stderr %q", status, stderr)
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
		t.Errorf("the user's file: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Errorf("%d entries in the refused folder, want the user's file only", len(entries))
	}
}

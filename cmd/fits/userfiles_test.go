package main

import (
	"crypto/sha256"
	"fmt"
	"github.com/fits-snn/fits/data/download"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/internal/owned"
)

// userContent is what plantUserFile writes: a file of the user's that no command may replace.
const userContent = "the user's own file, not to be replaced\n"

// plantUserFile writes a user's file at path (creating its folder).
func plantUserFile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(userContent), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkUserFile fails the test unless path still holds what plantUserFile wrote.
func checkUserFile(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != userContent {
		t.Errorf("the user's %s was replaced or removed (%v)", path, err)
	}
}

// TestWritersNeverReplaceUserFiles plants a user's file where each writing command would put one of the
// same name: the command exits 2 naming it, the file keeps its bytes, and nothing else is written. A
// folder the command wrote itself may be written again.
func TestWritersNeverReplaceUserFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string // the planted file, relative to --out
		args []string
	}{
		{"synth shd", "shd_train.h5", []string{"data", "synth", "--format=shd", "--samples=2"}},
		{"synth ssc", "ssc_valid.h5", []string{"data", "synth", "--format=ssc", "--samples=2"}},
		{"synth mnist", "t10k-labels-idx1-ubyte.gz", []string{"data", "synth", "--format=mnist", "--samples=2"}},
		{"figures", "01_target_magnitude.png", []string{"figures", "--only=01_target_magnitude"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			plantUserFile(t, filepath.Join(dir, tc.file))
			args := append(append([]string(nil), tc.args...), "--out="+dir)
			status, stdout, stderr := run(args...)
			if status != 2 || stdout != "" || !strings.Contains(stderr, tc.file+" already exists and was not written by fits") {
				t.Errorf("status %d, stdout %q, stderr %s", status, stdout, stderr)
			}
			checkUserFile(t, filepath.Join(dir, tc.file))
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("a refused command left %d entries in the folder, want only the user's file", len(ents))
			}
			// Into a fresh folder, twice: the second run replaces what the first wrote.
			fresh := filepath.Join(t.TempDir(), "out")
			args[len(args)-1] = "--out=" + fresh
			for i := range 2 {
				if status, _, stderr := run(args...); status != 0 {
					t.Fatalf("run %d into its own folder: status %d: %s", i+1, status, stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(fresh, owned.RecordFile)); err != nil {
				t.Errorf("no record of the files written: %v", err)
			}
			// A file it wrote and the user changed since is the user's.
			plantUserFile(t, filepath.Join(fresh, tc.file))
			if status, _, _ := run(args...); status != 2 {
				t.Errorf("over a changed file: status %d, want 2", status)
			}
			checkUserFile(t, filepath.Join(fresh, tc.file))
		})
	}
}

// TestVerifyDoesNotVouchForPlantedFiles: files whose only checksum is the folder's own SHA256SUMS (which
// whoever planted them can write) are reported unverified by `fits data verify`, never ok.
func TestVerifyDoesNotVouchForPlantedFiles(t *testing.T) {
	m, _ := download.Lookup("shd")
	dir := t.TempDir()
	var sums strings.Builder
	for _, f := range m.Files {
		content := []byte("planted " + f.Name)
		if err := os.WriteFile(filepath.Join(dir, f.Name), content, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(content), f.Name)
	}
	if err := os.WriteFile(filepath.Join(dir, download.SumsFile), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := run("data", "verify", "--dataset=shd", "--dir="+dir)
	if strings.Contains(stdout, "ok ") || !strings.Contains(stdout, "unverified") || !strings.Contains(stderr, "unverified") {
		t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", status, stdout, stderr)
	}
}

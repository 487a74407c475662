package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/internal/owned"
)

func TestFiguresCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "figs")
	status, stdout, stderr := run("figures", "--out="+dir, "--only=04,01_target_vs_kappa", "--json")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	var got figuresOutput
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	wantNames := []string{"01_target_vs_kappa", "04_pole_vs_target"}
	if !slices.Equal(got.Figures, wantNames) {
		t.Errorf("figures %q, want %q", got.Figures, wantNames)
	}
	if len(got.Files) != 4 {
		t.Fatalf("files %q", got.Files)
	}
	for _, name := range wantNames {
		for _, ext := range []string{".svg", ".png"} {
			p := filepath.Join(dir, name+ext)
			st, err := os.Stat(p)
			if err != nil || st.Size() == 0 {
				t.Errorf("%s: %v", p, err)
			}
			if !slices.Contains(got.Files, p) {
				t.Errorf("%s not reported", p)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 5 { // and the record of the files written (package owned)
		t.Errorf("%d files written, want 4 and %s", len(entries), owned.RecordFile)
	}
}

func TestFiguresCommandTextAndList(t *testing.T) {
	dir := t.TempDir()
	status, stdout, stderr := run("figures", "--out="+dir, "--only=01")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if n := strings.Count(stdout, "wrote "); n != 2 {
		t.Errorf("%d lines of output, want 2:\n%s", n, stdout)
	}
	status, stdout, _ = run("figures", "--list")
	if status != 0 || len(strings.Fields(stdout)) != 10 || !strings.HasPrefix(stdout, "01_target_magnitude\n") {
		t.Errorf("--list: status %d, output\n%s", status, stdout)
	}
}

func TestFiguresCommandBadInput(t *testing.T) {
	cases := [][]string{
		{"figures", "--only=07"},
		{"figures", "--out="},
		{"figures", "--bogus"},
		{"figures", "extra"},
	}
	for _, args := range cases {
		status, _, stderr := run(args...)
		if status != 2 {
			t.Errorf("%q: status %d, want 2 (stderr %q)", args, status, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: stderr not one line: %q", args, stderr)
		}
	}
}

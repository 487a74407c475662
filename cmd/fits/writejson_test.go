package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteJSONRefusesIndistinct: strings that JSON cannot tell apart are bad input, and nothing is printed.
func TestWriteJSONRefusesIndistinct(t *testing.T) {
	var buf bytes.Buffer
	err := writeJSON(&buf, map[string]any{"a": "caf\xe9", "b": "caf\xe8"})
	if err == nil || !badInputError(err) || !strings.Contains(err.Error(), "--json: ") || buf.Len() != 0 {
		t.Errorf("alike strings: %v, %q", err, buf.Bytes())
	}
}

// TestJSONRunPathsRoundTrip: fits sweep --dry-run --json under a folder whose name is Latin-1 gives the
// root and every run's folder back byte for byte through their _base64 members.
func TestJSONRunPathsRoundTrip(t *testing.T) {
	_, id := sweepTable(t)
	root := filepath.Join(t.TempDir(), "r\xe9sultats")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Skipf("this file system refuses a Latin-1 name: %v", err)
	}
	status, stdout, stderr := run("sweep", "--experiments="+id, "--seeds=1-2", "--mode=quick", "--out="+root, "--dry-run", "--json")
	var out struct {
		RootBase64 string `json:"root_base64"`
		Runs       []struct {
			Dir       string `json:"dir"`
			DirBase64 string `json:"dir_base64"`
		} `json:"runs"`
	}
	if status != 0 || json.Unmarshal([]byte(stdout), &out) != nil || len(out.Runs) != 2 {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	if b, _ := base64.StdEncoding.DecodeString(out.RootBase64); string(b) != root {
		t.Errorf("root_base64 %q gives %q, want %q", out.RootBase64, b, root)
	}
	for _, r := range out.Runs {
		b, _ := base64.StdEncoding.DecodeString(r.DirBase64)
		if !strings.HasPrefix(string(b), root+string(filepath.Separator)) || !strings.Contains(r.Dir, "\ufffd") {
			t.Errorf("run dir %q, dir_base64 gives %q, want a folder under %q", r.Dir, b, root)
		}
	}
}

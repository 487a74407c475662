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

// TestWriteJSONKeepsRawBytes: a string that is not UTF-8 (a Latin-1 file name) keeps its member as
// json.Marshal writes it and gets a NAME_base64 member with its exact bytes, in an object, in an array of
// strings (null for the valid ones) and nested; an output whose strings are all UTF-8 is json.Marshal's,
// byte for byte. Before, every such byte came out as U+FFFD and the path was lost.
func TestWriteJSONKeepsRawBytes(t *testing.T) {
	type run struct {
		Dir  string   `json:"dir"`
		Seed int      `json:"seed"`
		Tags []string `json:"tags,omitempty"`
	}
	latin := "runs/r\xe9sultats/seed-0"
	v := map[string]any{
		"root": "runs/r\xe9sultats",
		"runs": []run{{Dir: latin, Seed: 0}, {Dir: "runs/ok", Seed: 1, Tags: []string{"a", "b\xff"}}},
		"list": []string{"x", latin},
		"html": "<&>",
		"n":    1.5e-7,
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Root       string `json:"root"`
		RootBase64 string `json:"root_base64"`
		Runs       []struct {
			Dir        string    `json:"dir"`
			DirBase64  *string   `json:"dir_base64"`
			Seed       int       `json:"seed"`
			TagsBase64 []*string `json:"tags_base64"`
		} `json:"runs"`
		HTML string  `json:"html"`
		N    float64 `json:"n"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	var list struct {
		ListBase64 []*string `json:"list_base64"`
	}
	json.Unmarshal(buf.Bytes(), &list)
	decode := func(s *string) string {
		if s == nil {
			return "<null>"
		}
		b, err := base64.StdEncoding.DecodeString(*s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	switch {
	case got.Root != "runs/r\ufffdsultats" || decode(&got.RootBase64) != "runs/r\xe9sultats":
		t.Errorf("root %q, root_base64 %q", got.Root, got.RootBase64)
	case len(got.Runs) != 2 || decode(got.Runs[0].DirBase64) != latin || got.Runs[1].DirBase64 != nil || got.Runs[1].Seed != 1:
		t.Errorf("runs: %s", buf.Bytes())
	case len(got.Runs[1].TagsBase64) != 2 || got.Runs[1].TagsBase64[0] != nil || decode(got.Runs[1].TagsBase64[1]) != "b\xff":
		t.Errorf("tags: %s", buf.Bytes())
	case len(list.ListBase64) != 2 || list.ListBase64[0] != nil || decode(list.ListBase64[1]) != latin:
		t.Errorf("list: %s", buf.Bytes())
	case got.HTML != "<&>" || got.N != 1.5e-7 || !strings.Contains(buf.String(), `"html":"\u003c\u0026\u003e"`) || !strings.Contains(buf.String(), `"n":1.5e-7`):
		t.Errorf("other members changed: %s", buf.Bytes())
	}

	// All UTF-8 (a U+FFFD of its own included): json.Marshal's bytes, nothing added.
	valid := map[string]any{"dir": "runs/résultats/\ufffd", "runs": []run{{Dir: "a"}}}
	buf.Reset()
	if err := writeJSON(&buf, valid); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(valid)
	if buf.String() != string(want)+"\n" {
		t.Errorf("valid output changed:\n%s\nwant\n%s", buf.Bytes(), want)
	}

	// Two strings that JSON writes alike cannot be told apart: refused, not guessed.
	buf.Reset()
	err := writeJSON(&buf, map[string]any{"a": "caf\xe9", "b": "caf\xe8"})
	if err == nil || !badInputError(err) || !strings.Contains(err.Error(), "differ only in bytes that are not UTF-8") || buf.Len() != 0 {
		t.Errorf("alike strings: %v, %q", err, buf.Bytes())
	}
	err = writeJSON(&buf, map[string]any{"a": "caf\ufffd", "b": "caf\xe8"})
	if err == nil || !badInputError(err) {
		t.Errorf("a U+FFFD of its own beside a replaced byte: %v", err)
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

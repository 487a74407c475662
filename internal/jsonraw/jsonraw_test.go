package jsonraw

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestMarshalKeepsRawBytes: a string that is not UTF-8 (a Latin-1 file name) keeps its member as
// json.Marshal writes it and gets a NAME_base64 member with its exact bytes, in an object, in an array of
// strings (null for the valid ones) and nested; an output whose strings are all UTF-8 is json.Marshal's,
// byte for byte. Before, every such byte came out as U+FFFD and the path was lost.
func TestMarshalKeepsRawBytes(t *testing.T) {
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
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.NewBuffer(b)
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
	b, err = Marshal(valid)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(valid)
	if string(b) != string(want) {
		t.Errorf("valid output changed:\n%s\nwant\n%s", b, want)
	}

	// Two strings that JSON writes alike cannot be told apart: refused, not guessed.
	var indistinct *IndistinctError
	_, err = Marshal(map[string]any{"a": "caf\xe9", "b": "caf\xe8"})
	if !errors.As(err, &indistinct) || !strings.Contains(err.Error(), "differ only in bytes that are not UTF-8") {
		t.Errorf("alike strings: %v", err)
	}
	for _, pair := range [][]string{{"caf\ufffd", "caf\xe8"}, {"caf\xe8", "caf\ufffd"}} { // both orders
		if _, err = Marshal(pair); !errors.As(err, &indistinct) {
			t.Errorf("a U+FFFD of its own beside a replaced byte, %q: %v", pair, err)
		}
	}
	var key *KeyError
	if _, err = Marshal(map[string]int{"caf\xe9": 1}); !errors.As(err, &key) {
		t.Errorf("a key that is not UTF-8: %v", err)
	}

	// Indented as json.MarshalIndent indents, the member beside still there.
	b, err = MarshalIndent(map[string]string{"dir": "r\xe9"}, "", "  ")
	if err != nil || string(b) != "{\n  \"dir\": \"r\ufffd\",\n  \"dir_base64\": \"cuk=\"\n}" {
		t.Errorf("indented: %v\n%s", err, b)
	}
}

func ExampleMarshal() {
	b, _ := Marshal(map[string]any{"dir": "runs/r\xe9sultats", "seed": 0})
	fmt.Println(string(b))
	// Output:
	// {"dir":"runs/r�sultats","dir_base64":"cnVucy9y6XN1bHRhdHM=","seed":0}
}

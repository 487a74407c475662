package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/train"
)

// tinyRun are the flags of the smallest run the hostile cases train: a few seconds.
var tinyRun = []string{"--dataset=synthetic", "--width=8", "--batch=16", "--train-limit=32", "--test-limit=32", "--quiet"}

func tinyTrain(t *testing.T, out string, extra ...string) {
	t.Helper()
	args := append(append([]string{"train"}, tinyRun...), append(extra, "--out="+out)...)
	if status, _, stderr := run(args...); status != 0 {
		t.Fatalf("%v: status %d, stderr %q", args, status, stderr)
	}
}

// newestCheckpoint returns the base name of the newest checkpoint of dir.
func newestCheckpoint(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "checkpoint-n*.sha256"))
	if len(m) == 0 {
		t.Fatalf("%s holds no checkpoint", dir)
	}
	return strings.TrimSuffix(filepath.Base(m[len(m)-1]), ".sha256")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResumeTouchesOnlyItsOwnFiles: resuming a finished run leaves a user's checkpoint-notes.json, a
// checkpoint-best.bin and a complete copy of a checkpoint without its .sha256 where they are (they were
// deleted as "unfinished saves"), names them in a warning, and rewrites nothing (result.json kept its
// wall time and its backend); a signed checkpoint of another run (width 16) copied in
// is refused with status 2 naming the width (it was taken over, and result.json became the other run's).
func TestResumeTouchesOnlyItsOwnFiles(t *testing.T) {
	root := t.TempDir()
	r := filepath.Join(root, "R")
	tinyTrain(t, r, "--epochs=2")
	newest := newestCheckpoint(t, r)
	user := map[string]string{}
	plantUserFile(t, filepath.Join(r, "checkpoint-notes.json"))
	plantUserFile(t, filepath.Join(r, "checkpoint-best.bin"))
	copyName := "checkpoint-n0000090-copy"
	copyFile(t, filepath.Join(r, newest+".json"), filepath.Join(r, copyName+".json"))
	copyFile(t, filepath.Join(r, newest+".bin"), filepath.Join(r, copyName+".bin"))
	for _, f := range []string{"checkpoint-notes.json", "checkpoint-best.bin", copyName + ".json", copyName + ".bin", train.ResultFile} {
		b, _ := os.ReadFile(filepath.Join(r, f))
		user[f] = string(b)
	}
	// Twice: the first resume must have left nothing that changes the second. (--backend=go cannot be
	// tested here: the backend is chosen once per process.)
	for _, extra := range [][]string{nil, {"--epochs=2"}} {
		args := append([]string{"train", "--resume", "--quiet", "--out=" + r}, extra...)
		status, _, stderr := run(args...)
		if status != 0 {
			t.Fatalf("%v: status %d, stderr %q", args, status, stderr)
		}
		for _, f := range []string{"checkpoint-notes.json", "checkpoint-best.bin", copyName} {
			if !strings.Contains(stderr, f) || !strings.Contains(stderr, "left alone") {
				t.Errorf("%v: no warning naming %s: %q", extra, f, stderr)
			}
		}
		for f, c := range user {
			if b, err := os.ReadFile(filepath.Join(r, f)); err != nil || string(b) != c {
				t.Errorf("%v: %s changed or removed (%v)", extra, f, err)
			}
		}
	}

	// A renamed weight variable, re-signed: eval and resume refuse it naming the variable (it re-initialised
	// that layer silently).
	edited := resignedCopy(t, root, r, newest, func(l map[string]any) {
		v := variableOf(t, l, "/model/hidden_1/dense/weights")
		v["ParameterName"] = strings.Replace(v["ParameterName"].(string), "weights", "weightz", 1)
	})
	for _, args := range [][]string{{"eval", "--checkpoint=" + edited}, {"train", "--resume", "--quiet", "--epochs=3", "--extend", "--out=" + edited}} {
		status, _, stderr := run(args...)
		if status != 2 || !strings.Contains(stderr, "/model/hidden_1/dense/weight") || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v of a renamed variable: status %d, stderr %q; want 2 naming it", args[0], status, stderr)
		}
	}

	other := filepath.Join(root, "W16")
	tinyTrain(t, other, "--epochs=1", "--width=16")
	foreign := newestCheckpoint(t, other)
	copied := "checkpoint-n0000095" + strings.TrimPrefix(foreign, foreign[:len("checkpoint-n0000000")])
	for _, suffix := range []string{".json", ".bin"} {
		copyFile(t, filepath.Join(other, foreign+suffix), filepath.Join(r, copied+suffix))
	}
	sums, _ := os.ReadFile(filepath.Join(other, foreign+".sha256"))
	os.WriteFile(filepath.Join(r, copied+".sha256"), []byte(strings.ReplaceAll(string(sums), foreign, copied)), 0o644)
	status, _, stderr := run("train", "--resume", "--quiet", "--out="+r)
	if status != 2 || !strings.Contains(stderr, "width 16") || !strings.Contains(stderr, "width 8") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("a checkpoint of another run: status %d, stderr %q; want 2 naming the widths", status, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(r, train.ResultFile)); string(b) != user[train.ResultFile] {
		t.Error("result.json changed")
	}
}

// TestResumeRefusesFolderWithoutCheckpoint: --resume of a folder without a checkpoint (a run killed in its
// first epoch) exits 2 instead of starting a new run with the default model and width.
func TestResumeRefusesFolderWithoutCheckpoint(t *testing.T) {
	dir := t.TempDir()
	status, _, stderr := run("train", "--resume", "--quiet", "--out="+dir)
	if status != 2 || !strings.Contains(stderr, "holds no checkpoint") {
		t.Errorf("status %d, stderr %q", status, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the refused resume left %d entries", len(ents))
	}
}

// resignedCopy writes into a new folder of root a copy of checkpoint name of dir whose JSON layout edit has
// changed, signed again (as a hand edit would be).
func resignedCopy(t *testing.T, root, dir, name string, edit func(layout map[string]any)) string {
	t.Helper()
	out, err := os.MkdirTemp(root, "edited")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, name+".json"))
	bin, _ := os.ReadFile(filepath.Join(dir, name+".bin"))
	var layout map[string]any
	if err := json.Unmarshal(raw, &layout); err != nil {
		t.Fatal(err)
	}
	edit(layout)
	js, err := json.Marshal(layout)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, name+".json"), js, 0o644)
	os.WriteFile(filepath.Join(out, name+".bin"), bin, 0o644)
	os.WriteFile(filepath.Join(out, name+".sha256"), []byte(fmt.Sprintf("%x  %s\n%x  %s\n",
		sha256.Sum256(js), name+".json", sha256.Sum256(bin), name+".bin")), 0o644)
	return out
}

// variableOf returns the layout entry of the variable whose name ends in suffix.
func variableOf(t *testing.T, layout map[string]any, suffix string) map[string]any {
	t.Helper()
	for _, v := range layout["Variables"].([]any) {
		if m := v.(map[string]any); strings.HasSuffix(m["ParameterName"].(string), suffix) {
			return m
		}
	}
	t.Fatalf("no variable ending in %s", suffix)
	return nil
}

// TestEditedCheckpointsRefused: a checkpoint edited by hand and signed again — a transposed weight
// matrix, a weight stored as Int32, a configuration whose TS order M differs from the variables' — is
// refused by eval and by resume with status 2 and one line naming the variable (they used to load, or to
// fail deep in GoMLX).
func TestEditedCheckpointsRefused(t *testing.T) {
	root := t.TempDir()
	r := filepath.Join(root, "fsts")
	tinyTrain(t, r, "--epochs=1", "--model=fsts", "--m=1")
	name := newestCheckpoint(t, r)
	for _, c := range []struct {
		what, want string
		edit       func(layout map[string]any)
	}{
		{"transposed weights", "hidden_0/dense/weights", func(l map[string]any) {
			v := variableOf(t, l, "/model/hidden_0/dense/weights")
			d := v["Dimensions"].([]any)
			v["Dimensions"] = []any{d[1], d[0]}
		}},
		{"Int32 biases", "hidden_0/dense/biases", func(l map[string]any) {
			variableOf(t, l, "/model/hidden_0/dense/biases")["DType"] = "Int32"
		}},
		{"M = 2 in the configuration", "beta_hat", func(l map[string]any) {
			for _, p := range l["Params"].([]any) {
				if m := p.(map[string]any); m["Key"] == "m" {
					m["Value"] = 2
				}
			}
		}},
	} {
		dir := resignedCopy(t, root, r, name, c.edit)
		for _, args := range [][]string{{"eval", "--checkpoint=" + dir}, {"train", "--resume", "--quiet", "--epochs=2", "--extend", "--out=" + dir}} {
			status, _, stderr := run(args...)
			if status != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("%s, %s: status %d, stderr %q; want 2 and one line naming %s", c.what, args[0], status, stderr, c.want)
			}
		}
	}
}

package owned

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPublish: files a command wrote are replaced; a user's file, a changed file, a symbolic link on the
// way (even one to a folder) are refused before anything moves.
func TestPublish(t *testing.T) {
	dir := t.TempDir()
	stage := func(files map[string]string) string {
		s, err := Stage(dir)
		if err != nil {
			t.Fatal(err)
		}
		for rel, c := range files {
			p := filepath.Join(s, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	if _, err := Publish(stage(map[string]string{"a": "1", "sub/b": "2"}), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(stage(map[string]string{"a": "3", "sub/b": "4"}), dir); err != nil {
		t.Fatalf("replacing its own files: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "3" {
		t.Errorf("a = %q, want 3", b)
	}
	os.WriteFile(filepath.Join(dir, "user"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(dir, "a"), []byte("changed"), 0o644)
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "link"))
	os.Symlink(filepath.Join(outside, "f"), filepath.Join(dir, "flink"))
	for _, rel := range []string{"user", "a", "link/x", "flink"} {
		_, err := Publish(stage(map[string]string{rel: "new", "c": "new"}), dir)
		var conflict *ConflictError
		if !errors.As(err, &conflict) {
			t.Errorf("%s: %v, want a conflict", rel, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "c")); err == nil {
			t.Errorf("%s: a refused publish moved c", rel)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside the folder through a link: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user")); string(b) != "mine" {
		t.Errorf("user file = %q", b)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if len(e.Name()) > len(StagingPrefix) && e.Name()[:len(StagingPrefix)] == StagingPrefix {
			t.Errorf("staging folder %s left", e.Name())
		}
	}
}

// TestOwns: a file is owned while the record lists it with its current content; a changed file, a file
// the record does not list and a link are not, and Forget drops an entry.
func TestOwns(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(dir, "b"), []byte("2"), 0o644)
	if err := Note(dir, "a", "b"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "user"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(dir, "b"), []byte("changed"), 0o644)
	os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link"))
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rel         string
		owns, lists bool
	}{{"a", true, true}, {"b", false, true}, {"user", false, false}, {"link", false, false}, {"missing", false, false}} {
		if got := r.Owns(c.rel); got != c.owns {
			t.Errorf("Owns(%s) = %v, want %v", c.rel, got, c.owns)
		}
		if got := r.Lists(c.rel); got != c.lists {
			t.Errorf("Lists(%s) = %v, want %v", c.rel, got, c.lists)
		}
	}
	r.Forget("a")
	if r.Owns("a") || r.Lists("a") {
		t.Error("a still listed after Forget")
	}
}

// TestCheckNamesWhatIsInTheWay: a symbolic link on the way to a file, or a file where a folder is needed,
// is named in the conflict (not the file behind it, which may not exist); a foreign file is named itself.
func TestCheckNamesWhatIsInTheWay(t *testing.T) {
	dir := t.TempDir()
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir, "wav")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Check(dir, []string{"wav/train.txt", "wav/test.txt", "notes/a.txt", "notes", "free/x.txt"})
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("Check: %v, want a *ConflictError", err)
	}
	if want := []string{"wav", "notes"}; !slices.Equal(conflict.Paths, want) {
		t.Errorf("conflicting paths %q, want %q", conflict.Paths, want)
	}
	if msg := err.Error(); !strings.Contains(msg, filepath.Join(dir, "wav")+" already exists") || strings.Contains(msg, "train.txt") {
		t.Errorf("message %q does not name the link", msg)
	}
}

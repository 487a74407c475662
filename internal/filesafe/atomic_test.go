package filesafe

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	for _, content := range []string{"first", "second, longer than the first"} {
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != 0o644 {
			t.Errorf("permissions %v, want 0644", st.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left in the folder, want only the destination", len(entries))
	}
	// A destination in a missing folder fails and leaves nothing behind.
	if err := WriteFile(filepath.Join(dir, "missing", "x"), []byte("x")); err == nil {
		t.Error("write into a missing folder succeeded")
	}
	// Renaming onto a folder fails; the temporary file is removed.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "sub"), []byte("x")); err == nil {
		t.Error("rename onto a non-empty folder succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries after a failed write, want 2 (result.json, sub)", len(entries))
	}
}

// TestRemoveStale: a later write removes the temporary files that a killed writer left for the same
// destination, and nothing else: not a live writer's, not other names.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	stale := []string{".result.json.tmp123", ".result.json.tmp4"}
	keep := []string{".result.json.tmpx", ".other.json.tmp7", "result.json.tmp5", ".result.json.tmp", "notes.txt"}
	for _, n := range append(append([]string(nil), stale...), keep...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := CreateTemp(path) // a writer still at work
	if err != nil {
		t.Fatal(err)
	}
	defer Discard(live)
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("stale %s not removed by CreateTemp: %v", n, err)
		}
	}
	if err := WriteFile(path, []byte("done")); err != nil {
		t.Fatal(err)
	}
	for _, n := range append(keep, filepath.Base(live.Name()), "result.json") {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v (only stale temporary files may go)", n, err)
		}
	}
	if removed, err := RemoveStale(filepath.Join(dir, "missing", "x")); err != nil || removed != nil {
		t.Errorf("missing folder: %v, %v", removed, err)
	}
}

func TestIsTemp(t *testing.T) {
	for _, tc := range []struct {
		name, dest string
		want       bool
	}{
		{".a.fitsds.tmp3858", "a.fitsds", true},
		{".a.fitsds.tmp", "a.fitsds", false},
		{".a.fitsds.tmp12x", "a.fitsds", false},
		{"a.fitsds.tmp12", "a.fitsds", false},
		{".b.fitsds.tmp12", "a.fitsds", false},
	} {
		if got := IsTemp(tc.name, tc.dest); got != tc.want {
			t.Errorf("IsTemp(%q, %q) = %v", tc.name, tc.dest, got)
		}
	}
}

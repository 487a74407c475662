package filesafe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadRegular(path, 5); err != nil || string(b) != "12345" {
		t.Errorf("read %q, %v", b, err)
	}
	var nr *NotRegularError
	if _, err := ReadRegular(path, 4); !errors.As(err, &nr) || !strings.Contains(err.Error(), path+" holds 5 bytes, more than the 4") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadRegular(dir, 1<<20); !errors.As(err, &nr) || err.Error() != dir+" is not a regular file" {
		t.Errorf("a folder: %v", err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "missing"), 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Skip(err)
	}
	if _, err := ReadRegular(link, 1<<20); !errors.As(err, &nr) || err.Error() != link+" is a symbolic link, not a regular file" {
		t.Errorf("a symbolic link: %v", err)
	}
}

func TestSums(t *testing.T) {
	s := Sums{"b.json": Sum([]byte("b")), "a.bin": Sum([]byte("a"))}
	want := Sum([]byte("a")) + "  a.bin\n" + Sum([]byte("b")) + "  b.json\n"
	if got := string(s.Bytes()); got != want {
		t.Errorf("Bytes:\n%s want\n%s", got, want)
	}
	if p, err := ParseSums(s.Bytes()); err != nil || len(p) != 2 || p["a.bin"] != s["a.bin"] || p["b.json"] != s["b.json"] {
		t.Errorf("ParseSums(Bytes()) = %v, %v", p, err)
	}
	h := Sum(nil)
	// sha256sum's binary mark, a Windows line end, a blank line, a name with spaces or a leading "*".
	p, err := ParseSums([]byte(h + " *x.bin\r\n\n" + h + "  with space\n" + h + "  *star\n"))
	if err != nil || len(p) != 3 || p["x.bin"] != h || p["with space"] != h || p["*star"] != h {
		t.Errorf("ParseSums: %q, %v", p, err)
	}
	for _, bad := range []string{h + " x", h[1:] + "  x", "z" + h[1:] + "  x", h + "  ", h + "\tx"} {
		if p, err := ParseSums([]byte(h + "  ok\n" + bad + "\n")); err == nil || p["ok"] != h {
			t.Errorf("ParseSums(%q): %v, %v; want the well-formed line kept and an error", bad, p, err)
		}
	}
	files := map[string][]byte{"a.bin": []byte("a"), "b.json": []byte("b")}
	if err := s.Verify(files); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		files map[string][]byte
		want  string
	}{
		{map[string][]byte{"a.bin": []byte("A"), "b.json": []byte("b")}, "a.bin does not match"},
		{map[string][]byte{"a.bin": nil, "b.json": []byte("b")}, "a.bin is missing"},
		{map[string][]byte{"a.bin": []byte("a")}, "lists 2 files, want 1"},
		{map[string][]byte{"a.bin": []byte("a"), "b.json": []byte("b"), "c": nil}, "does not list c"},
	} {
		if err := s.Verify(tc.files); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Verify: %v, want %q", err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := SumFile(path); err != nil || got != Sum([]byte("a")) {
		t.Errorf("SumFile: %s, %v", got, err)
	}
}

// TestCommitNew: the temporary file is put in place only where nothing is; what is there is left.
func TestCommitNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new")
	for i, content := range []string{"first", "second"} {
		tmp, err := CreateTemp(path)
		if err != nil {
			t.Fatal(err)
		}
		tmp.WriteString(content)
		err = CommitNew(tmp, path)
		if (i == 0) != (err == nil) || (i == 1 && !errors.Is(err, fs.ErrExist)) {
			t.Errorf("commit %d: %v", i, err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("holds %q, want the first", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left in the folder, want 1", len(entries))
	}
}

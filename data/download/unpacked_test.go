package download

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
)

// zipOf builds a zip archive of the given members (name -> content), in order.
func zipOf(t *testing.T, members ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.Create(m[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(m[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDownloadUnzipRecordsAndVerifies: a .h5.zip archive that passed its pinned MD5 is unzipped into the
// .h5 file, whose SHA-256 is recorded in UNPACKED.json; Verify says ok for both; a changed .h5 is a
// mismatch for Verify, refused by CheckUnpacked and not replaced by a second download.
func TestDownloadUnzipRecordsAndVerifies(t *testing.T) {
	h5 := strings.Repeat("\x89HDF\r\n\x1a\n spikes ", 3000)
	zipped := zipOf(t, [2]string{"__MACOSX/._a.h5", "resource fork"}, [2]string{"a.h5", h5})
	srv, _ := server(t, map[string][]byte{"a.h5.zip": zipped})
	dir := t.TempDir()
	m := Manifest{Files: []File{{Name: "a.h5.zip", URLs: []string{srv.URL + "/a.h5.zip"}, MD5: md5Hex(zipped), Unzip: true,
		Alt: &File{Name: "a.h5.gz", Gunzip: true}}}}
	if err := Download(context.Background(), m, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	h5Path := filepath.Join(dir, "a.h5")
	if b, _ := os.ReadFile(h5Path); string(b) != h5 {
		t.Fatalf("unzipped %d bytes, want the member's %d", len(b), len(h5))
	}
	if _, err := os.Stat(filepath.Join(dir, "__MACOSX")); err == nil {
		t.Error("a member other than the .h5 file was extracted")
	}
	man, _ := os.ReadFile(filepath.Join(dir, UnpackedFile))
	if !strings.Contains(string(man), `"a.h5.zip"`) || !strings.Contains(string(man), shaHex(zipped)) || !strings.Contains(string(man), shaHex([]byte(h5))) {
		t.Errorf("%s:\n%s", UnpackedFile, man)
	}
	st, err := Verify(m, dir, nil)
	if err != nil || len(st) != 2 || st[0].State != "ok" || st[1].Name != "a.h5" || st[1].State != "ok" {
		t.Fatalf("verify %+v %v", st, err)
	}
	if err := CheckUnpacked(h5Path, nil); err != nil {
		t.Errorf("an unchanged .h5: %v", err)
	}
	// A second download keeps the .h5 (recorded, unchanged).
	if err := Download(context.Background(), m, dir, Options{}); err != nil {
		t.Fatal(err)
	}

	// One changed byte.
	changed := []byte(h5)
	changed[100] ^= 1
	os.WriteFile(h5Path, changed, 0o644)
	st, _ = Verify(m, dir, nil)
	if st[0].State != "ok" || st[1].State != "mismatch" || !strings.Contains(st[1].Detail, "changed since fits unpacked it from a.h5.zip") {
		t.Errorf("a changed .h5: %+v", st)
	}
	err = CheckUnpacked(h5Path, nil)
	if !data.IsBadFile(err) || !strings.Contains(err.Error(), "changed since fits unpacked it from a.h5.zip") {
		t.Errorf("reading a changed .h5: %v", err)
	}
	err = Download(context.Background(), m, dir, Options{})
	if !data.IsBadFile(err) || !strings.Contains(err.Error(), "is not what") {
		t.Errorf("downloading over a changed .h5: %v", err)
	}
	if b, _ := os.ReadFile(h5Path); !bytes.Equal(b, changed) {
		t.Error("the changed .h5 was replaced")
	}

	// Only the earlier .h5.gz form: checked instead (no digest pinned for it), the .h5 no more verified.
	os.WriteFile(h5Path, []byte(h5), 0o644)
	os.Remove(filepath.Join(dir, "a.h5.zip"))
	os.WriteFile(filepath.Join(dir, "a.h5.gz"), gz([]byte(h5)), 0o644)
	st, _ = Verify(m, dir, nil)
	if len(st) != 2 || st[0].Name != "a.h5.gz" || st[0].State != "unverified" || st[1].State != "unverified" {
		t.Errorf("the .h5.gz form: %+v", st)
	}
}

// TestUnpackNeverReplacesUserFiles: unzipping or gunzipping next to a user's file of the unpacked name
// (other content, a symbolic link) or a user's UNPACKED.json refuses, naming it, and leaves it; a file of
// the same content is adopted.
func TestUnpackNeverReplacesUserFiles(t *testing.T) {
	h5 := "\x89HDF\r\n\x1a\n the dataset"
	for _, tc := range []struct {
		name    string
		archive string
		content []byte
		unpack  func(src, dst string) error
	}{
		{"unzip", "a.h5.zip", zipOf(t, [2]string{"a.h5", h5}), func(src, dst string) error { return Unzip(src, dst, nil) }},
		{"gunzip", "a.h5.gz", gz([]byte(h5)), func(src, dst string) error { return Gunzip(src, dst, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, tc.archive), filepath.Join(dir, "a.h5")
			os.WriteFile(src, tc.content, 0o644)
			os.WriteFile(dst, []byte("the user's own a.h5"), 0o644)
			err := tc.unpack(src, dst)
			if !data.IsBadFile(err) || !strings.Contains(err.Error(), dst+" already exists and is not what") {
				t.Errorf("over a user's file: %v", err)
			}
			if b, _ := os.ReadFile(dst); string(b) != "the user's own a.h5" {
				t.Errorf("the user's file now holds %q", b)
			}
			if _, err := os.Stat(filepath.Join(dir, UnpackedFile)); err == nil {
				t.Error("a refused unpacking wrote the manifest")
			}
			outside := filepath.Join(t.TempDir(), "target")
			os.Remove(dst)
			os.Symlink(outside, dst)
			if err := tc.unpack(src, dst); !data.IsBadFile(err) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("over a symbolic link: %v", err)
			}
			if _, err := os.Stat(outside); err == nil {
				t.Error("written through a symbolic link")
			}
			// The same content, unpacked by hand: adopted and recorded.
			os.Remove(dst)
			os.WriteFile(dst, []byte(h5), 0o644)
			if err := tc.unpack(src, dst); err != nil {
				t.Fatalf("over the same content: %v", err)
			}
			if err := CheckUnpacked(dst, nil); err != nil {
				t.Error(err)
			}
			// A user's file named like the manifest.
			os.Remove(dst)
			os.WriteFile(filepath.Join(dir, UnpackedFile), []byte("my notes"), 0o644)
			if err := tc.unpack(src, dst); !data.IsBadFile(err) || !strings.Contains(err.Error(), "is not the manifest of unpacked files") {
				t.Errorf("a user's %s: %v", UnpackedFile, err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, UnpackedFile)); string(b) != "my notes" {
				t.Errorf("the user's %s now holds %q", UnpackedFile, b)
			}
			if _, err := os.Stat(dst); err == nil {
				t.Error("unpacked although the manifest could not be written")
			}
		})
	}
}

// TestUnzipBadArchives: a zip without the member, with two of it, whose member declares more than
// MaxUnpacked, or that is not a zip, is a data.FileError and writes nothing.
func TestUnzipBadArchives(t *testing.T) {
	var huge bytes.Buffer
	zw := zip.NewWriter(&huge)
	w, _ := zw.CreateRaw(&zip.FileHeader{Name: "a.h5", Method: zip.Store, CompressedSize64: 3, UncompressedSize64: MaxUnpacked + 1})
	w.Write([]byte("abc"))
	zw.Close()
	var stored bytes.Buffer
	zw = zip.NewWriter(&stored)
	w, _ = zw.CreateHeader(&zip.FileHeader{Name: "a.h5", Method: zip.Store})
	w.Write([]byte("the spikes of the dataset"))
	zw.Close()
	corrupt := bytes.Replace(stored.Bytes(), []byte("spikes"), []byte("spikEs"), 1)
	for _, tc := range []struct {
		name    string
		archive []byte
		want    string
	}{
		{"no member", zipOf(t, [2]string{"b.h5", "x"}), "holds 0 files named a.h5"},
		{"two members", zipOf(t, [2]string{"a.h5", "x"}, [2]string{"sub/a.h5", "y"}), "holds 2 files named a.h5"},
		{"declared size", huge.Bytes(), "more than the cap"},
		{"not a zip", []byte("not a zip archive"), "zip: not a valid zip file"},
		{"corrupt member", corrupt, "checksum error"},
	} {
		dir := t.TempDir()
		src := filepath.Join(dir, "a.h5.zip")
		os.WriteFile(src, tc.archive, 0o644)
		err := Unzip(src, filepath.Join(dir, "a.h5"), nil)
		var fe *data.FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a bad file with %q", tc.name, err, tc.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s: %d entries left in the folder, want the archive only", tc.name, len(ents))
		}
	}
}

// TestPinnedHeidelbergDigests: every SHD and SSC split is downloaded as its .h5.zip archive against an MD5
// pinned in the repository (not fetched from the host), with the .h5.gz form as its alternative.
func TestPinnedHeidelbergDigests(t *testing.T) {
	for ds, n := range map[string]int{"shd": 2, "ssc": 3} {
		m, _ := Lookup(ds)
		if len(m.Files) != n {
			t.Fatalf("%s: %d files", ds, len(m.Files))
		}
		for _, f := range m.Files {
			if !strings.HasSuffix(f.Name, ".h5.zip") || !f.Unzip || len(f.MD5) != 32 || f.MD5List != "" ||
				f.Alt == nil || f.Alt.Name != strings.TrimSuffix(f.Name, ".zip")+".gz" || !f.Alt.Gunzip {
				t.Errorf("%s: %+v", f.Name, f)
			}
		}
	}
}

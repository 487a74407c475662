package download

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/fits-snn/fits/data"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// tarGz returns a gzip-compressed tar archive of regular files, {name, content} each, in order.
func tarGz(files ...[2]string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(f[1]))
	}
	tw.Close()
	return gz(buf.Bytes())
}

func shaHex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
func md5Hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// server serves files with Range support (http.ServeContent) and counts range requests.
func server(t *testing.T, files map[string][]byte) (*httptest.Server, *atomic.Int32) {
	var ranges atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Range") != "" {
			ranges.Add(1)
		}
		http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(srv.Close)
	return srv, &ranges
}

func TestDownloadResumeVerifyGunzip(t *testing.T) {
	payload := bytes.Repeat([]byte("spikes "), 20000)
	gzData := gz(payload)
	srv, ranges := server(t, map[string][]byte{
		"a.h5.gz":     gzData,
		"md5sums.txt": []byte(md5Hex(gzData) + "  a.h5.gz\n"),
	})
	dir := t.TempDir()
	// A partial earlier download: the first third.
	os.WriteFile(filepath.Join(dir, PartName("a.h5.gz")), gzData[:len(gzData)/3], 0o644)
	m := Manifest{Dataset: "x", Files: []File{{Name: "a.h5.gz", URLs: []string{srv.URL + "/a.h5.gz"}, MD5List: srv.URL + "/md5sums.txt", Gunzip: true}}}
	var log bytes.Buffer
	if err := Download(context.Background(), m, dir, Options{Progress: &log}); err != nil {
		t.Fatal(err)
	}
	if ranges.Load() != 1 {
		t.Errorf("%d range requests, want 1 (resume)", ranges.Load())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a.h5"))
	if !bytes.Equal(got, payload) {
		t.Fatal("gunzipped content differs")
	}
	if _, err := os.Stat(filepath.Join(dir, PartName("a.h5.gz"))); !os.IsNotExist(err) {
		t.Error(".part left behind")
	}
	sums, _ := os.ReadFile(filepath.Join(dir, SumsFile))
	if !strings.Contains(string(sums), shaHex(gzData)+"  a.h5.gz") {
		t.Errorf("SHA256SUMS = %q", sums)
	}
	// No digest of a.h5.gz is pinned in the manifest: the folder's own SHA256SUMS, which anyone who can
	// plant the file can write, is no proof, so offline verification does not say "ok".
	// The gunzipped file is what fits unpacked from it, so no more verified than it.
	st, err := Verify(m, dir, nil)
	if err != nil || len(st) != 2 || st[0].State != "unverified" || !strings.Contains(st[0].Detail, SumsFile) ||
		st[1].Name != "a.h5" || st[1].State != "unverified" || st[1].SHA256 != shaHex(payload) {
		t.Fatalf("verify %+v %v", st, err)
	}
	planted := t.TempDir()
	os.WriteFile(filepath.Join(planted, "a.h5.gz"), []byte("planted"), 0o644)
	os.WriteFile(filepath.Join(planted, SumsFile), []byte(shaHex([]byte("planted"))+"  a.h5.gz\n"), 0o644)
	if st, err := Verify(m, planted, nil); err != nil || st[0].State != "unverified" {
		t.Fatalf("a planted file vouched for by a planted %s: %+v %v", SumsFile, st, err)
	}
	pinned := Manifest{Files: []File{{Name: "a.h5.gz", SHA256: shaHex([]byte("other"))}}}
	if st, _ := Verify(pinned, planted, nil); st[0].State != "mismatch" {
		t.Errorf("a planted file against a pinned digest: %q", st[0].State)
	}
	// Offline, a second Download accepts the file recorded in SHA256SUMS and fetches nothing.
	srv.Close()
	if err := Download(context.Background(), m, dir, Options{}); err != nil {
		t.Fatalf("offline second run: %v", err)
	}
	// Corrupt the file: Verify reports the mismatch.
	os.WriteFile(filepath.Join(dir, "a.h5.gz"), []byte("x"), 0o644)
	st, _ = Verify(Manifest{Files: []File{{Name: "a.h5.gz"}}}, dir, nil)
	if st[0].State != "mismatch" {
		t.Errorf("corrupt file state %q", st[0].State)
	}
	// Without the record, being offline is an error.
	os.Remove(filepath.Join(dir, SumsFile))
	if err := Download(context.Background(), m, dir, Options{}); !errors.Is(err, ErrOffline) {
		t.Fatalf("offline without record: %v", err)
	}
}

func TestDownloadChecksumMismatchAndMissing(t *testing.T) {
	srv, _ := server(t, map[string][]byte{"f.bin": []byte("hello")})
	dir := t.TempDir()
	m := Manifest{Files: []File{{Name: "f.bin", URLs: []string{srv.URL + "/f.bin"}, SHA256: shaHex([]byte("other"))}}}
	err := Download(context.Background(), m, dir, Options{})
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.Algo != "SHA-256" {
		t.Fatalf("want a SHA-256 mismatch, got %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("mismatching download left %d files", len(ents))
	}
	m.Files[0].URLs = []string{srv.URL + "/nothing"}
	if err := Download(context.Background(), m, dir, Options{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: %v", err)
	}
	st, _ := Verify(m, dir, nil)
	if st[0].State != "missing" {
		t.Errorf("state %q", st[0].State)
	}
	m.Files[0].SHA256 = shaHex([]byte("hello"))
	m.Files[0].URLs = []string{srv.URL + "/f.bin"}
	if err := Download(context.Background(), m, dir, Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestDownloadOffline(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	m := Manifest{Files: []File{{Name: "f", URLs: []string{url + "/f"}, SHA256: strings.Repeat("0", 64)}}}
	err := Download(context.Background(), m, t.TempDir(), Options{})
	if !errors.Is(err, ErrOffline) {
		t.Fatalf("want ErrOffline, got %v", err)
	}
}

func TestUntar(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.tar.gz")
	os.WriteFile(src, tarGz([2]string{"yes/0a7c2a8d_nohash_0.wav", "RIFF"}, [2]string{"testing_list.txt", "yes/0a7c2a8d_nohash_0.wav\n"}), 0o644)
	out := filepath.Join(dir, "out")
	if err := Untar(src, out, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "yes", "0a7c2a8d_nohash_0.wav")); string(b) != "RIFF" {
		t.Errorf("extracted %q", b)
	}
	// The SHA-256 of every extracted file is recorded with the archive's.
	if man, _ := os.ReadFile(filepath.Join(out, UnpackedFile)); !strings.Contains(string(man), `"yes/0a7c2a8d_nohash_0.wav": "`+shaHex([]byte("RIFF"))) {
		t.Errorf("%s:\n%s", UnpackedFile, man)
	}
	os.WriteFile(src, tarGz([2]string{"../evil", "x"}), 0o644)
	if err := Untar(src, out, nil); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("path traversal: %v", err)
	}
	os.WriteFile(src, tarGz([2]string{"a", "b"})[:20], 0o644)
	if err := Untar(src, out, nil); err == nil {
		t.Error("truncated archive extracted")
	}
	// Extracting again replaces what the first extraction wrote.
	os.WriteFile(src, tarGz([2]string{"yes/0a7c2a8d_nohash_0.wav", "RIFF2"}), 0o644)
	if err := Untar(src, out, nil); err != nil {
		t.Errorf("extracting over its own files: %v", err)
	}
}

// TestUntarNeverReplacesOrFollows: an entry never replaces a user's file in the target folder, never
// writes through a symbolic link that exists there, and an entry without a file name is bad input.
func TestUntarNeverReplacesOrFollows(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	outside := filepath.Join(dir, "outside")
	os.MkdirAll(filepath.Join(out, "yes"), 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(out, "mine.txt"), []byte("mine"), 0o644)
	os.Symlink(outside, filepath.Join(out, "link"))
	os.Symlink(filepath.Join(outside, "f"), filepath.Join(out, "flink"))
	src := filepath.Join(dir, "a.tar.gz")
	for _, tc := range []struct{ entry, want string }{
		{"mine.txt", "already exists and was not written by fits"},
		{"link/evil", "symbolic link"},
		{"flink", "symbolic link"},
		{".", "not a file name"},
		{UnpackedFile, "reserves"},
		{"", "not a file name"},
	} {
		os.WriteFile(src, tarGz([2]string{tc.entry, "x"}), 0o644)
		err := Untar(src, out, nil)
		var fe *data.FileError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &fe) {
			t.Errorf("entry %q: %v, want bad input with %q", tc.entry, err, tc.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "mine.txt")); string(b) != "mine" {
		t.Errorf("the user's file now holds %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside the target folder: %v", ents)
	}
}

func TestManifests(t *testing.T) {
	for _, n := range Datasets() {
		m, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			if len(f.URLs) == 0 || (f.SHA256 == "" && f.MD5 == "" && f.MD5List == "") {
				t.Errorf("%s/%s: no URL or no checksum source", n, f.Name)
			}
			if f.SHA256 != "" && len(f.SHA256) != 64 || f.MD5 != "" && len(f.MD5) != 32 {
				t.Errorf("%s/%s: malformed checksum", n, f.Name)
			}
		}
	}
	if _, err := Lookup("imagenet"); err == nil {
		t.Error("unknown dataset accepted")
	}
	t.Setenv("FITS_DATA", "/x")
	if got := DefaultDir("shd"); got != filepath.FromSlash("/x/shd") {
		t.Errorf("DefaultDir %q", got)
	}
}

// The MNIST files shipped with GoMNIST match the pinned checksums.
func TestMNISTChecksumsMatchShippedFiles(t *testing.T) {
	m, _ := Lookup("mnist")
	dir := filepath.Join(os.Getenv("GOMODCACHE"), "github.com", "petar", "!go!m!n!i!s!t@v0.0.0-20150320212226-2fbe10d0fa63", "data")
	if os.Getenv("GOMODCACHE") == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, "go", "pkg", "mod", "github.com", "petar", "!go!m!n!i!s!t@v0.0.0-20150320212226-2fbe10d0fa63", "data")
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skip("GoMNIST not in the module cache")
	}
	st, err := Verify(m, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.State != "ok" {
			t.Errorf("%s: %s %s", s.Name, s.State, s.Detail)
		}
	}
}

func TestResolveDir(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "shd"), 0o755)
	if got := ResolveDir(root, "shd"); got != filepath.Join(root, "shd") {
		t.Errorf("root with shd/: %q", got)
	}
	if got := ResolveDir(root, "gsc"); got != root {
		t.Errorf("dataset folder: %q", got)
	}
	t.Setenv("FITS_DATA", root)
	if got := ResolveDir("", "gsc"); got != filepath.Join(root, "gsc") {
		t.Errorf("default: %q", got)
	}
}

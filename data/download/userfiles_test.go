package download

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/internal/owned"
)

// countingServer serves files (with Range support) and counts every request.
func countingServer(t *testing.T, files map[string][]byte) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		b, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestDownloadNeverReplacesUserFiles: Download never replaces a user's file in the dataset folder: a
// SHA256SUMS it did not write is never rewritten (refused before anything is fetched, kept when the
// download leaves its content as it is), a file of an archive's name that does not match the pinned digest
// is refused unless fits downloaded it, a browser's NAME.part is not touched, and a link planted at the
// name of the partial download is not followed.
func TestDownloadNeverReplacesUserFiles(t *testing.T) {
	content := []byte("the archive's bytes")
	srv, requests := countingServer(t, map[string][]byte{"f.bin": content})
	manifest := func(sha string) Manifest {
		return Manifest{Files: []File{{Name: "f.bin", URLs: []string{srv.URL + "/f.bin"}, SHA256: sha}}}
	}
	m := manifest(shaHex(content))
	const user = "the user's own file\n"
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	refused := func(t *testing.T, err error, want string) {
		t.Helper()
		if !data.IsBadFile(err) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "fits never replaces a file it did not write") {
			t.Errorf("got %v, want bad input with %q", err, want)
		}
	}

	t.Run("user's SHA256SUMS", func(t *testing.T) {
		dir := t.TempDir()
		write(filepath.Join(dir, SumsFile), user)
		requests.Store(0)
		err := Download(context.Background(), m, dir, Options{})
		refused(t, err, filepath.Join(dir, SumsFile)+" already exists and was not written by fits")
		if requests.Load() != 0 {
			t.Errorf("%d requests before refusing", requests.Load())
		}
		if read(filepath.Join(dir, SumsFile)) != user {
			t.Error("the user's SHA256SUMS was replaced")
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("the refused download left %d entries", len(ents))
		}
	})

	t.Run("user's SHA256SUMS that stays as it is", func(t *testing.T) {
		dir := t.TempDir()
		write(filepath.Join(dir, "f.bin"), string(content))
		same := shaHex(content) + "  f.bin\n"
		write(filepath.Join(dir, SumsFile), same)
		if err := Download(context.Background(), m, dir, Options{}); err != nil {
			t.Fatal(err)
		}
		if read(filepath.Join(dir, SumsFile)) != same {
			t.Error("SHA256SUMS rewritten")
		}
	})

	t.Run("user's file of the archive's name", func(t *testing.T) {
		dir := t.TempDir()
		write(filepath.Join(dir, "f.bin"), user)
		requests.Store(0)
		err := Download(context.Background(), m, dir, Options{})
		refused(t, err, "SHA-256 mismatch")
		if read(filepath.Join(dir, "f.bin")) != user || requests.Load() != 0 {
			t.Errorf("the user's file holds %q after %d requests", read(filepath.Join(dir, "f.bin")), requests.Load())
		}
	})

	t.Run("a folder or a link of the archive's name", func(t *testing.T) {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, "f.bin"), 0o755)
		refused(t, Download(context.Background(), m, dir, Options{}), "is not a regular file")
		dir = t.TempDir()
		os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "f.bin"))
		refused(t, Download(context.Background(), m, dir, Options{}), "is not a regular file")
		if _, err := os.Lstat(filepath.Join(dir, "elsewhere")); err == nil {
			t.Error("written through the link")
		}
	})

	t.Run("browser's .part and a link at the partial download", func(t *testing.T) {
		dir := t.TempDir()
		write(filepath.Join(dir, "f.bin.part"), user)
		if err := Download(context.Background(), m, dir, Options{}); err != nil {
			t.Fatal(err)
		}
		if read(filepath.Join(dir, "f.bin.part")) != user || read(filepath.Join(dir, "f.bin")) != string(content) {
			t.Error("the browser's partial download was touched, or the file not downloaded")
		}
		dir = t.TempDir()
		target := filepath.Join(dir, "target")
		write(target, user)
		os.Symlink(target, filepath.Join(dir, PartName("f.bin")))
		err := Download(context.Background(), m, dir, Options{})
		var fe *data.FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "not a partial download of fits") {
			t.Errorf("a link at the partial download: %v", err)
		}
		if read(target) != user {
			t.Error("written through the link")
		}
	})

	t.Run("fits's own download that no longer verifies", func(t *testing.T) {
		dir := t.TempDir()
		old := []byte("an earlier release")
		srvOld, _ := countingServer(t, map[string][]byte{"f.bin": old})
		mOld := Manifest{Files: []File{{Name: "f.bin", URLs: []string{srvOld.URL + "/f.bin"}, SHA256: shaHex(old)}}}
		if err := Download(context.Background(), mOld, dir, Options{}); err != nil {
			t.Fatal(err)
		}
		if rec, err := owned.Open(dir); err != nil || !rec.Replaceable("f.bin") || !rec.Replaceable(SumsFile) {
			t.Fatalf("the download and %s are not recorded as fits's (%v)", SumsFile, err)
		}
		// The pinned digest changed (a new release): fits replaces its own download and SHA256SUMS.
		if err := Download(context.Background(), m, dir, Options{}); err != nil {
			t.Fatal(err)
		}
		if read(filepath.Join(dir, "f.bin")) != string(content) || !strings.Contains(read(filepath.Join(dir, SumsFile)), shaHex(content)) {
			t.Error("not downloaded again")
		}
		// Once the user changed SHA256SUMS, it is theirs.
		write(filepath.Join(dir, SumsFile), user)
		write(filepath.Join(dir, "f.bin"), string(old)) // fits's file as it was: no longer recorded
		refused(t, Download(context.Background(), m, dir, Options{}), "SHA-256 mismatch")
		os.Remove(filepath.Join(dir, "f.bin"))
		refused(t, Download(context.Background(), m, dir, Options{}), SumsFile+" already exists")
		if read(filepath.Join(dir, SumsFile)) != user {
			t.Error("the user's SHA256SUMS was replaced")
		}
	})

	t.Run("SHA256SUMS that is no regular file", func(t *testing.T) {
		dir := t.TempDir()
		os.Symlink("/dev/zero", filepath.Join(dir, SumsFile))
		var fe *data.FileError
		if err := Download(context.Background(), m, dir, Options{}); !errors.As(err, &fe) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("download: %v", err)
		}
		if _, err := Verify(m, dir, nil); !errors.As(err, &fe) {
			t.Errorf("verify: %v", err)
		}
	})
}

// TestUntarAfterKilledExtraction: an extraction killed before it recorded its files (no .fits-owned, no
// UNPACKED.json entry, no marker) is run again: the files it left, of exactly the entries' content, are
// kept and recorded (they used to be refused as the user's, leaving the download stuck); a file of other
// content is still the user's and refused.
func TestUntarAfterKilledExtraction(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.tar.gz")
	os.WriteFile(src, tarGz([2]string{"yes/a.wav", "RIFF a"}, [2]string{"yes/b.wav", "RIFF b"}, [2]string{"testing_list.txt", "yes/a.wav\n"}), 0o644)
	if err := Untar(src, dir, nil); err != nil {
		t.Fatal(err)
	}
	// What a kill before the records were written leaves: the files alone, one of them missing.
	os.Remove(filepath.Join(dir, owned.RecordFile))
	os.Remove(filepath.Join(dir, UnpackedFile))
	os.Remove(filepath.Join(dir, "yes", "b.wav"))
	if err := Untar(src, dir, nil); err != nil {
		t.Fatalf("extracting again after a kill: %v", err)
	}
	rec, _ := owned.Open(dir)
	for _, f := range []string{"yes/a.wav", "yes/b.wav", "testing_list.txt"} {
		if !rec.Replaceable(f) {
			t.Errorf("%s not recorded", f)
		}
	}
	if m, err := readUnpacked(dir); err != nil || len(m.Archives["a.tar.gz"].Files) != 3 {
		t.Errorf("%s: %+v %v", UnpackedFile, m, err)
	}
	// A file of other content that fits did not write is refused and kept.
	os.Remove(filepath.Join(dir, owned.RecordFile))
	os.WriteFile(filepath.Join(dir, "yes", "a.wav"), []byte("the user's"), 0o644)
	if err := Untar(src, dir, nil); !data.IsBadFile(err) || !strings.Contains(err.Error(), "already exists and was not written by fits") {
		t.Errorf("over the user's file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "yes", "a.wav")); string(b) != "the user's" {
		t.Errorf("the user's file now holds %q", b)
	}
}

// TestConcurrentDownloadsOfOneFile: a second download of the same file into the same folder while the
// first is fetching it is refused at once (bad input naming it), instead of both writing one partial file;
// the first completes; a download that fetched nothing leaves no partial file.
func TestConcurrentDownloadsOfOneFile(t *testing.T) {
	content := bytes.Repeat([]byte("spikes "), 100_000)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		w.Write(content[:1000])
		w.(http.Flusher).Flush()
		once.Do(func() { close(started) })
		<-release
		w.Write(content[1000:])
	}))
	defer srv.Close()
	m := Manifest{Files: []File{{Name: "f.bin", URLs: []string{srv.URL + "/f.bin"}, SHA256: shaHex(content)}}}
	dir := t.TempDir()
	first := make(chan error, 1)
	go func() { first <- Download(context.Background(), m, dir, Options{}) }()
	<-started
	err := Download(context.Background(), m, dir, Options{})
	close(release)
	if !data.IsBadFile(err) || !strings.Contains(err.Error(), "is being downloaded by another fits process") {
		t.Errorf("second download: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first download: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.bin")); !bytes.Equal(b, content) {
		t.Error("the download is not the file")
	}
	// Offline: nothing fetched, no partial file left.
	srv.Close()
	other := t.TempDir()
	if err := Download(context.Background(), m, other, Options{}); err == nil {
		t.Fatal("downloaded from a closed server")
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Errorf("a failed download left %v", ents)
	}
}

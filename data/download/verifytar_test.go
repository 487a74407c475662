package download_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fits-snn/fits/data/download"
	"github.com/fits-snn/fits/data/dvs"
	"github.com/fits-snn/fits/data/gsc"
	"github.com/fits-snn/fits/internal/archivetest"
)

// synthArchive writes a small dataset of format ("gsc" or "dvs") in the official layout and returns it as
// the official archive would hold it, with the paths of its files relative to the dataset folder.
func synthArchive(t *testing.T, format string) (archive []byte, files []string) {
	t.Helper()
	root := t.TempDir()
	prefix := "./"
	switch format {
	case "gsc":
		if err := gsc.WriteSynth(root, gsc.SynthConfig{PerWord: 1, Words: 25, Duration: 0.05, Seed: 1}); err != nil {
			t.Fatal(err)
		}
	case "dvs":
		prefix = "DvsGesture/"
		if err := dvs.WriteSynth(root, dvs.SynthConfig{Users: 2, TrainUsers: 1, Gesture: 0.05, EventsPerSec: 200, Seed: 1}); err != nil {
			t.Fatal(err)
		}
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(filepath.Join(strings.TrimPrefix(prefix, "./"), rel)))
		}
		return nil
	})
	sort.Strings(files)
	return archivetest.TarGz(t, root, prefix), files
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestVerifyExtractedFiles: the files extracted from the GSC and DVS archives (small synthetic archives in
// the official layout) are verified: every file of a verified archive must be in the folder with the
// content of its entry ("ok", however it was extracted); a changed, missing or replaced one is named
// ("mismatch" or "missing", counted as failed); with the archive not verified (replaced or removed) the
// files are checked against UNPACKED.json and are at best "unverified".
func TestVerifyExtractedFiles(t *testing.T) {
	for _, format := range []string{"gsc", "dvs"} {
		t.Run(format, func(t *testing.T) {
			archive, files := synthArchive(t, format)
			name := map[string]string{"gsc": "speech_commands_v0.02.tar.gz", "dvs": "DvsGesture.tar.gz"}[format]
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(archive))
			}))
			defer srv.Close()
			m := download.Manifest{Dataset: format, Files: []download.File{{Name: name, URLs: []string{srv.URL + "/" + name}, SHA256: sha(archive), Untar: true}}}
			fresh := func(t *testing.T) string {
				dir := t.TempDir()
				if err := download.Download(context.Background(), m, dir, download.Options{}); err != nil {
					t.Fatal(err)
				}
				return dir
			}
			verify := func(t *testing.T, dir string) []download.Status {
				t.Helper()
				st, err := download.Verify(m, dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			// rows returns the Status of the extracted files and the files listed after it.
			rows := func(t *testing.T, st []download.Status) (download.Status, map[string]download.Status) {
				t.Helper()
				if len(st) < 2 || st[1].Files == 0 {
					t.Fatalf("no Status of the extracted files: %+v", st)
				}
				listed := map[string]download.Status{}
				for _, s := range st[2:] {
					if s.Of != name {
						t.Errorf("a row not of %s: %+v", name, s)
					}
					listed[s.Name] = s
				}
				return st[1], listed
			}

			t.Run("ok", func(t *testing.T) {
				dir := fresh(t)
				st := verify(t, dir)
				all, listed := rows(t, st)
				if st[0].State != "ok" || all.State != "ok" || all.Files != len(files) || all.Failed != 0 || len(listed) != 0 {
					t.Errorf("%+v", st)
				}
				if n, bad, unv := download.Counts(st); n != 1+len(files) || bad != 0 || unv != 0 {
					t.Errorf("counts %d %d %d", n, bad, unv)
				}
			})

			t.Run("changed, missing, a folder", func(t *testing.T) {
				dir := fresh(t)
				changed, removed, folder := files[0], files[1], files[2]
				p := filepath.Join(dir, filepath.FromSlash(changed))
				b, _ := os.ReadFile(p)
				b[len(b)-1] ^= 1
				os.WriteFile(p, b, 0o644)
				os.Remove(filepath.Join(dir, filepath.FromSlash(removed)))
				os.Remove(filepath.Join(dir, filepath.FromSlash(folder)))
				os.Mkdir(filepath.Join(dir, filepath.FromSlash(folder)), 0o755)
				st := verify(t, dir)
				all, listed := rows(t, st)
				if all.State != "mismatch" || all.Failed != 3 || !strings.Contains(all.Detail, "3 of ") {
					t.Errorf("the extracted files: %+v", all)
				}
				if s := listed[changed]; s.State != "mismatch" || !strings.Contains(s.Detail, "changed since fits extracted it") {
					t.Errorf("changed: %+v", s)
				}
				if s := listed[removed]; s.State != "missing" {
					t.Errorf("removed: %+v", s)
				}
				if s := listed[folder]; s.State != "mismatch" || !strings.Contains(s.Detail, "not a regular file") {
					t.Errorf("a folder: %+v", s)
				}
				if n, bad, _ := download.Counts(st); n != 1+len(files) || bad != 3 {
					t.Errorf("counts %d %d", n, bad)
				}
			})

			t.Run("extracted by hand", func(t *testing.T) {
				// No record: the verified archive vouches for files of the same content, and names others.
				dir := t.TempDir()
				os.WriteFile(filepath.Join(dir, name), archive, 0o644)
				if err := download.Untar(filepath.Join(dir, name), dir, nil); err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(dir, download.UnpackedFile))
				p := filepath.Join(dir, filepath.FromSlash(files[0]))
				os.WriteFile(p, []byte("planted"), 0o644)
				all, listed := rows(t, verify(t, dir))
				if all.State != "mismatch" || all.Failed != 1 || listed[files[0]].State != "mismatch" || !strings.HasSuffix(listed[files[0]].Detail, "differs from its entry in "+name) {
					t.Errorf("%+v %+v", all, listed)
				}
			})

			t.Run("archive not verified", func(t *testing.T) {
				dir := fresh(t)
				os.WriteFile(filepath.Join(dir, name), []byte("another archive"), 0o644)
				st := verify(t, dir)
				all, _ := rows(t, st)
				if st[0].State != "mismatch" || all.State != "unverified" || !strings.Contains(all.Detail, "another "+name) {
					t.Errorf("replaced archive: %+v", st)
				}
				if n, bad, unv := download.Counts(st); n != 1+len(files) || bad != 1 || unv != len(files) {
					t.Errorf("counts %d %d %d", n, bad, unv)
				}
				os.Remove(filepath.Join(dir, name))
				p := filepath.Join(dir, filepath.FromSlash(files[0]))
				os.WriteFile(p, []byte("planted"), 0o644)
				st = verify(t, dir)
				all, listed := rows(t, st)
				if st[0].State != "missing" || all.State != "mismatch" || listed[files[0]].State != "mismatch" ||
					!strings.Contains(listed[files[0]].Detail, "changed since fits extracted it from "+name) {
					t.Errorf("removed archive, changed file: %+v", st)
				}
				// Without the record nothing is known of the files.
				os.Remove(filepath.Join(dir, download.UnpackedFile))
				if st := verify(t, dir); len(st) != 1 {
					t.Errorf("no archive, no record: %+v", st)
				}
			})

			t.Run("many failures listed up to a bound", func(t *testing.T) {
				dir := fresh(t)
				for _, f := range files {
					os.Remove(filepath.Join(dir, filepath.FromSlash(f)))
				}
				all, listed := rows(t, verify(t, dir))
				if format == "gsc" && len(files) <= 20 {
					t.Fatalf("only %d files: the bound is not reached", len(files))
				}
				if all.Failed != len(files) || len(listed) != min(len(files), 20) || (len(files) > 20) != strings.Contains(all.Detail, "(the first 20 listed)") {
					t.Errorf("%d failed, %d listed, of %d", all.Failed, len(listed), len(files))
				}
			})
		})
	}
}

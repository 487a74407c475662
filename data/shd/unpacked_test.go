package shd

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/download"
)

// TestArchivesUnpackedAndChecked: SHD split files in the official HDF5 layout, downloaded in either form
// (shd_train.h5.zip as the download fetches it, shd_test.h5.gz as earlier downloads did), are unpacked
// byte for byte, recorded in UNPACKED.json, verified by `data verify`'s Verify, and converted; a .h5
// changed since (one byte) is refused before it is read and reported as a mismatch.
func TestArchivesUnpackedAndChecked(t *testing.T) {
	dir := t.TempDir()
	orig := map[string][]byte{}
	for i, split := range []string{"train", "test"} {
		p := filepath.Join(t.TempDir(), FileName(SHD, split))
		writeSynth(t, p, SynthConfig{Samples: 12, Classes: SHDClasses, MeanSpikes: 100, Channels: Channels, Duration: 0.9, Seed: uint64(i + 1)},
			WriteOptions{Keys: []string{"a"}, Speakers: make([]int64, 12)})
		var err error
		if orig[split], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create(FileName(SHD, "train"))
	w.Write(orig["train"])
	zw.Close()
	var gbuf bytes.Buffer
	gw := gzip.NewWriter(&gbuf)
	gw.Write(orig["test"])
	gw.Close()
	os.WriteFile(filepath.Join(dir, "shd_train.h5.zip"), zbuf.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "shd_test.h5.gz"), gbuf.Bytes(), 0o644)

	if _, err := EnsureCaches(dir, SHD, DefaultBinning(), nil); err != nil {
		t.Fatal(err)
	}
	for split, want := range orig {
		if got, _ := os.ReadFile(filepath.Join(dir, FileName(SHD, split))); !bytes.Equal(got, want) {
			t.Errorf("%s: the unpacked file differs from the archived one", split)
		}
	}
	// Verified against the archives they came from, each as pinned here.
	m := download.Manifest{Files: []download.File{
		{Name: "shd_train.h5.zip", MD5: md5Hex(zbuf.Bytes()), Unzip: true},
		{Name: "shd_test.h5.gz", MD5: md5Hex(gbuf.Bytes()), Gunzip: true},
	}}
	st, err := download.Verify(m, dir, nil)
	if err != nil || len(st) != 4 {
		t.Fatalf("verify %+v %v", st, err)
	}
	for _, s := range st {
		if s.State != "ok" {
			t.Errorf("%s: %s %s", s.Name, s.State, s.Detail)
		}
	}

	// One byte of the unpacked training file changed (in its data, so the HDF5 still opens).
	train := filepath.Join(dir, FileName(SHD, "train"))
	b := append([]byte(nil), orig["train"]...)
	b[len(b)/2] ^= 0x01
	os.WriteFile(train, b, 0o644)
	for _, split := range []string{"train", "test"} {
		os.Remove(CachePath(dir, SHD, split, DefaultBinning()))
	}
	_, err = EnsureCaches(dir, SHD, DefaultBinning(), nil)
	if !data.IsBadFile(err) || !strings.Contains(err.Error(), "shd_train.h5 changed since fits unpacked it from shd_train.h5.zip") {
		t.Errorf("converting a changed file: %v", err)
	}
	if _, err := os.Stat(CachePath(dir, SHD, "train", DefaultBinning())); err == nil {
		t.Error("a changed file was converted")
	}
	st, _ = download.Verify(m, dir, nil)
	if st[1].Name != "shd_train.h5" || st[1].State != "mismatch" || st[3].State != "ok" {
		t.Errorf("verify after the change: %+v", st)
	}
}

func md5Hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

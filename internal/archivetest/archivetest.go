// Package archivetest builds archives for tests: the files of a folder as a gzip-compressed tar archive in
// the layout of the official dataset archives. Only tests use it.
package archivetest

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TarGz packs the files under root as a gzip-compressed tar archive: a folder entry before its files,
// every name behind prefix ("./" for Speech Commands, "DvsGesture/" for DVS Gesture, "" for none; with a
// prefix, root itself is an entry too).
func TarGz(t testing.TB, root, prefix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := prefix + filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				name = prefix
			}
			if name == "" {
				return nil
			}
			return tw.WriteHeader(&tar.Header{Name: strings.TrimSuffix(name, "/") + "/", Mode: 0o755, Typeflag: tar.TypeDir})
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err = cmp.Or(err, tw.Close(), zw.Close()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

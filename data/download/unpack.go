package download

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/progress"
	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/fits-snn/fits/internal/owned"
)

// Gunzip writes the decompressed content of src to dst (at most MaxUnpacked bytes) through a temporary
// file, and records both in the folder's UnpackedFile. A dst that exists is kept when it holds what src
// unpacks to (recorded there, or checked by decompressing without writing), else refused as a file fits
// did not write (a data.FileError naming it): Gunzip never replaces a file.
func Gunzip(src, dst string, w io.Writer) error {
	return unpackOne(src, "", dst, gzipPayload(src), w, "gunzip")
}

// isWriteError reports whether an error of io.Copy came from writing a file (a full disk, say) rather
// than from reading the source.
func isWriteError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "write"
}

// Untar extracts a gzip-compressed tar archive into dir. Only regular files and folders are
// extracted; entries that would land outside dir are an error. Extraction never follows a symbolic link
// that exists in dir, and never replaces a file it did not write: an existing file is replaced only when
// an earlier extraction (or another fits command) wrote it and it is unchanged since (the record of
// package owned), and kept (recorded) when it holds exactly the entry's content (what an extraction that
// was killed before recording its files left); any other existing file, link or entry without a file name
// is bad input naming it.
func Untar(src, dir string, w io.Writer) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	// The compressed bytes read are hashed and counted as they pass.
	archiveHash := sha256.New()
	bar := progress.NewBytes(w, "extract "+filepath.Base(src), st.Size())
	zr, err := gzip.NewReader(bufio.NewReaderSize(io.TeeReader(f, io.MultiWriter(archiveHash, bar)), 1<<20))
	if err != nil {
		return data.BadFile(fmt.Errorf("%s: %w", src, err))
	}
	unpacked := map[string]string{}
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	rec, err := owned.Open(root)
	if err != nil {
		return err
	}
	// What was extracted is recorded (under the folder's lock, beside what other commands record
	// meanwhile), even when a later entry fails.
	recorded := false
	record := func() error {
		recorded = true
		return owned.Update(root, func(r *owned.Record) error {
			for name, sum := range unpacked {
				r.NoteSum(name, sum)
			}
			return nil
		})
	}
	defer func() {
		if !recorded {
			record()
		}
	}()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return data.BadFile(fmt.Errorf("%s: %w", src, err))
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			return data.BadFile(fmt.Errorf("%s: entry %q escapes the target folder", src, h.Name))
		}
		if h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeReg {
			continue // links and devices are not extracted
		}
		if name == "." || strings.TrimSpace(h.Name) == "" {
			if h.Typeflag == tar.TypeDir {
				continue // the target folder itself
			}
			return data.BadFile(fmt.Errorf("%s: entry %q is not a file name", src, h.Name))
		}
		if name == owned.RecordFile || name == UnpackedFile || strings.HasPrefix(filepath.Base(name), owned.StagingPrefix) {
			return data.BadFile(fmt.Errorf("%s: entry %q has a name that fits reserves", src, h.Name))
		}
		if p, ok := linkOnTheWay(root, name); ok {
			return data.BadFile(fmt.Errorf("%s: entry %q: %s exists in the target folder and is a symbolic link or a file (not followed, not replaced)", src, h.Name, p))
		}
		target := filepath.Join(root, name)
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		}
		if !rec.Replaceable(name) {
			// A file of exactly the entry's content is adopted (what an extraction that was killed before
			// it recorded its files left, or a hand extraction of the same archive); any other is the user's.
			fh := sha256.New()
			if _, err := io.Copy(fh, tr); err != nil {
				return data.BadFile(fmt.Errorf("%s: %s: %w", src, h.Name, err))
			}
			sum := hex.EncodeToString(fh.Sum(nil))
			have := "" // a file fits cannot read is not the entry's content either
			if st, err := os.Lstat(target); err == nil && st.Mode().IsRegular() {
				have, _ = fileSHA256(target, nil)
			}
			if have != sum {
				return data.BadFile(fmt.Errorf("%s: entry %q: %s already exists and was not written by fits (move it away and download again)", src, h.Name, target))
			}
			rec.NoteSum(name, sum)
			unpacked[filepath.ToSlash(name)] = sum
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		out, err := filesafe.CreateTemp(target)
		if err != nil {
			return err
		}
		fh := sha256.New()
		if _, err := io.Copy(io.MultiWriter(out, fh), tr); err != nil {
			filesafe.Discard(out)
			if isWriteError(err) {
				return fmt.Errorf("%s: %w", target, err)
			}
			return data.BadFile(fmt.Errorf("%s: %s: %w", src, h.Name, err))
		}
		if err := filesafe.Commit(out, target); err != nil {
			return err
		}
		sum := hex.EncodeToString(fh.Sum(nil))
		rec.NoteSum(name, sum) // a later entry of the same name may replace it
		unpacked[filepath.ToSlash(name)] = sum
	}
	bar.Done()
	if err := record(); err != nil {
		return err
	}
	if _, err := io.Copy(archiveHash, f); err != nil { // what the decompressor left unread
		return err
	}
	return recordUnpacked(root, filepath.Base(src), hex.EncodeToString(archiveHash.Sum(nil)), unpacked)
}

// linkOnTheWay returns the first existing path from root down to the parent of name (relative) that is
// not a real folder: a symbolic link (even to a folder) or a file.
func linkOnTheWay(root, name string) (string, bool) {
	parts := strings.Split(name, string(filepath.Separator))
	p := root
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if err != nil {
			return "", false // missing: created as a folder
		}
		if !st.IsDir() {
			return p, true
		}
	}
	if st, err := os.Lstat(filepath.Join(root, name)); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return filepath.Join(root, name), true
	}
	return "", false
}

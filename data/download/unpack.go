package download

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/progress"
	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/fits-snn/fits/internal/owned"
)

// UnpackedFile is the name of the manifest, in a dataset folder, of the files unpacked from its archives:
// for each archive (by file name) its SHA-256 when it was unpacked and the SHA-256 of every file unpacked
// from it (paths relative to the folder, with forward slashes), as JSON:
//
//	{"archives": {"shd_train.h5.zip": {"sha256": "…", "files": {"shd_train.h5": "…"}}}}
//
// fits writes it (and only it: a user's file of this name is never replaced) when it unpacks an archive,
// and checks the unpacked files against it: Verify reports a changed file as a mismatch, and CheckUnpacked
// refuses to read one.
const UnpackedFile = "UNPACKED.json"

// MaxUnpacked caps the bytes that one unpacked file (a gunzipped or unzipped HDF5 file) may hold: a
// payload that inflates beyond it is refused as corrupt, before it fills the disk. The largest file of the
// datasets, ssc_train.h5, holds a few GB.
const MaxUnpacked = 64 << 30

// maxManifest bounds the size of UnpackedFile a reader accepts (the extracted GSC archive lists about
// 106 000 files, some 12 MB).
const maxManifest = 256 << 20

// unpackedArchive is one archive's entry in UnpackedFile.
type unpackedArchive struct {
	SHA256 string            `json:"sha256"`
	Files  map[string]string `json:"files"`
}

// unpackedManifest is the content of UnpackedFile.
type unpackedManifest struct {
	Archives map[string]*unpackedArchive `json:"archives"`
}

// lookup returns the archive that file (relative slash path) was unpacked from and the SHA-256 recorded
// for it.
func (m *unpackedManifest) lookup(file string) (archive string, a *unpackedArchive, sum string) {
	for _, n := range slices.Sorted(maps.Keys(m.Archives)) {
		if s, ok := m.Archives[n].Files[file]; ok {
			return n, m.Archives[n], s
		}
	}
	return "", nil, ""
}

// readUnpacked reads dir's UnpackedFile; a folder without one has an empty manifest. A file of that name
// that is not such a manifest (a user's, or damaged) is an error naming it.
func readUnpacked(dir string) (*unpackedManifest, error) {
	m := &unpackedManifest{Archives: map[string]*unpackedArchive{}}
	p := filepath.Join(dir, UnpackedFile)
	notOurs := func(why string) error {
		return data.BadFile(fmt.Errorf("%s is not the manifest of unpacked files that fits writes (%s): fits never replaces a file it did not write; move it away and unpack again", p, why))
	}
	b, err := filesafe.ReadRegular(p, maxManifest)
	var refused *filesafe.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return m, nil
	case errors.As(err, &refused) && refused.Mode.IsRegular():
		return nil, notOurs(fmt.Sprintf("%d bytes, more than %d", refused.Size, maxManifest))
	case errors.As(err, &refused):
		return nil, notOurs("not a regular file")
	case err != nil:
		return nil, err
	}
	if err := json.Unmarshal(b, m); err != nil || m.Archives == nil {
		return nil, notOurs("no archives")
	}
	for n, a := range m.Archives {
		if a == nil || len(a.SHA256) != 64 || a.Files == nil {
			return nil, notOurs("a malformed entry for " + n)
		}
	}
	return m, nil
}

// recordUnpacked adds (or replaces) the entry of archive in dir's UnpackedFile.
func recordUnpacked(dir, archive, archiveSHA string, files map[string]string) error {
	m, err := readUnpacked(dir)
	if err != nil {
		return err
	}
	m.Archives[archive] = &unpackedArchive{SHA256: archiveSHA, Files: files}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return filesafe.WriteFile(filepath.Join(dir, UnpackedFile), append(b, '\n'))
}

// fileSHA256 returns the hex SHA-256 of the file path.
func fileSHA256(path string, w io.Writer) (string, error) {
	sha, _, err := hashFile(path, w, nil)
	return sha, err
}

// CheckUnpacked checks, before path is read, a file that fits unpacked from an archive: when the
// UnpackedFile of its folder records it, its content must still have the SHA-256 recorded, else the error
// (a data.FileError) says it changed. A file that the manifest does not list (one unpacked by hand, or
// written by another program) is not checked; `fits data verify` reports it as unverified.
func CheckUnpacked(path string, w io.Writer) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	m, err := readUnpacked(dir)
	if err != nil {
		return err
	}
	archive, _, want := m.lookup(base)
	if archive == "" {
		return nil
	}
	got, err := fileSHA256(path, w)
	if err != nil {
		return data.BadFile(err)
	}
	if got != want {
		return data.BadFile(fmt.Errorf("%s changed since fits unpacked it from %s (SHA-256 %s recorded in %s, %s now): move it away and run again to unpack the archive anew",
			path, archive, want, UnpackedFile, got))
	}
	return nil
}

// payload opens the content of an archive that unpacks to one file.
type payload func() (r io.Reader, size int64, closeFn func(), err error)

// unpackOne writes the content of the one-file archive src (opened by open) to dst, in the same folder,
// and records both in the folder's UnpackedFile; archiveSHA is src's SHA-256 ("" to compute it). A dst
// that exists is kept when it holds exactly what src unpacks to (recorded, or checked by unpacking
// without writing); any other file at dst is the user's or was changed since: bad input naming it,
// nothing written.
func unpackOne(src, archiveSHA, dst string, open payload, w io.Writer, label string) error {
	dir := filepath.Dir(dst)
	m, err := readUnpacked(dir)
	if err != nil {
		return err
	}
	if archiveSHA == "" {
		if archiveSHA, err = fileSHA256(src, w); err != nil {
			return err
		}
	}
	rel := filepath.Base(dst)
	var sum string
	if st, err := os.Lstat(dst); err == nil {
		if !st.Mode().IsRegular() {
			return data.BadFile(fmt.Errorf("%s exists and is not a regular file: not replaced by what %s unpacks to (move it away)", dst, src))
		}
		if sum, err = fileSHA256(dst, w); err != nil {
			return err
		}
		if a := m.Archives[filepath.Base(src)]; a != nil && a.SHA256 == archiveSHA && a.Files[rel] == sum {
			return nil // unpacked from this archive before, unchanged since
		}
		want, err := inflate(open, io.Discard, src, label, w)
		if err != nil {
			return err
		}
		if want != sum {
			return data.BadFile(fmt.Errorf("%s already exists and is not what %s unpacks to (it was changed since, or is another file): fits never replaces a file it did not write; move it away and run again", dst, src))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	} else {
		tmp, err := filesafe.CreateTemp(dst)
		if err != nil {
			return err
		}
		if sum, err = inflate(open, tmp, src, label, w); err != nil {
			filesafe.Discard(tmp)
			return err
		}
		if err := filesafe.CommitNew(tmp, dst); errors.Is(err, fs.ErrExist) {
			return data.BadFile(fmt.Errorf("%s already exists and was not written by fits: fits never replaces a file it did not write (move it away and run again)", dst))
		} else if err != nil {
			return err
		}
	}
	return recordUnpacked(dir, filepath.Base(src), archiveSHA, map[string]string{rel: sum})
}

// inflate copies the payload to out (at most MaxUnpacked bytes) and returns its SHA-256.
func inflate(open payload, out io.Writer, src, label string, w io.Writer) (string, error) {
	r, size, closeFn, err := open()
	if err != nil {
		return "", err
	}
	defer closeFn()
	bar := progress.NewBytes(w, label+" "+filepath.Base(src), size)
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h, bar), io.LimitReader(r, MaxUnpacked+1))
	if err != nil {
		if isWriteError(err) {
			return "", err
		}
		return "", data.BadFile(fmt.Errorf("%s: %w (truncated or corrupt archive)", src, err))
	}
	if n > MaxUnpacked {
		return "", data.BadFile(fmt.Errorf("%s: unpacks to more than %d bytes (the cap of one unpacked file): refused as corrupt", src, int64(MaxUnpacked)))
	}
	bar.Done()
	return hex.EncodeToString(h.Sum(nil)), nil
}

// gzipPayload opens the decompressed content of the gzip file src.
func gzipPayload(src string) payload {
	return func() (io.Reader, int64, func(), error) {
		f, err := os.Open(src)
		if err != nil {
			return nil, 0, nil, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, 0, nil, data.BadFile(fmt.Errorf("%s: %w", src, err))
		}
		return zr, 0, func() { f.Close() }, nil
	}
}

// zipPayload opens the content of the one member of the zip archive src whose base name is member (a
// regular file; folders, other files and the resource forks under __MACOSX/ are ignored). The member's
// declared size must not exceed MaxUnpacked; the zip reader checks its size and CRC-32 as it reads.
func zipPayload(src, member string) payload {
	return func() (io.Reader, int64, func(), error) {
		zr, err := zip.OpenReader(src)
		if err != nil {
			return nil, 0, nil, data.BadFile(fmt.Errorf("%s: %w", src, err))
		}
		fail := func(err error) (io.Reader, int64, func(), error) {
			zr.Close()
			return nil, 0, nil, data.BadFile(fmt.Errorf("%s: %w", src, err))
		}
		var found []*zip.File
		for _, f := range zr.File {
			name := path.Clean(strings.ReplaceAll(f.Name, `\`, "/"))
			if strings.HasPrefix(name, "__MACOSX/") || f.FileInfo().IsDir() || path.Base(name) != member {
				continue
			}
			found = append(found, f)
		}
		if len(found) != 1 {
			return fail(fmt.Errorf("holds %d files named %s, want exactly one", len(found), member))
		}
		f := found[0]
		if !f.Mode().IsRegular() {
			return fail(fmt.Errorf("%s is not a regular file", f.Name))
		}
		if f.UncompressedSize64 > MaxUnpacked {
			return fail(fmt.Errorf("%s declares %d bytes, more than the cap of %d", f.Name, f.UncompressedSize64, int64(MaxUnpacked)))
		}
		rc, err := f.Open()
		if err != nil {
			return fail(fmt.Errorf("%s: %w", f.Name, err))
		}
		return rc, int64(f.UncompressedSize64), func() { rc.Close(); zr.Close() }, nil
	}
}

// Unzip writes the member of the zip archive src named like dst (its base name) to dst, through a
// temporary file, and records it in the folder's UnpackedFile. A dst that exists is kept when it holds
// what src unpacks to, else refused (unpackOne).
func Unzip(src, dst string, w io.Writer) error {
	return unpackOne(src, "", dst, zipPayload(src, filepath.Base(dst)), w, "unzip")
}

// CheckExtracted checks, before the files of dataset folder dir are read (converted), every file that
// dir's UnpackedFile records as extracted from a tar archive: a file that changed since (or that is no
// longer a regular file) is a data.FileError naming it. Files that are missing are left to the reader, and
// files the record does not list are not checked (`fits data verify` checks them against the archive).
func CheckExtracted(dir string, w io.Writer) error {
	m, err := readUnpacked(dir)
	if err != nil {
		return err
	}
	for _, a := range slices.Sorted(maps.Keys(m.Archives)) {
		if !strings.HasSuffix(a, ".tar.gz") && !strings.HasSuffix(a, ".tgz") {
			continue
		}
		files := m.Archives[a].Files
		names := slices.Sorted(maps.Keys(files))
		var bar *progress.Bar
		if len(names) > 5000 {
			bar = progress.New(w, "check the files of "+a, int64(len(names)))
		}
		for _, n := range names {
			p := filepath.Join(dir, filepath.FromSlash(n))
			st, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				bar.Add(1)
				continue
			}
			if err != nil {
				return data.BadFile(err)
			}
			if !st.Mode().IsRegular() {
				return data.BadFile(fmt.Errorf("%s is not a regular file, where fits extracted one from %s: move it away and run 'fits data download' again", p, a))
			}
			got, err := fileSHA256(p, nil)
			if err != nil {
				return data.BadFile(err)
			}
			if got != files[n] {
				return data.BadFile(fmt.Errorf("%s changed since fits extracted it from %s (SHA-256 %s recorded in %s, %s now): move it away and run 'fits data download' again",
					p, a, files[n], UnpackedFile, got))
			}
			bar.Add(1)
		}
		bar.Done()
	}
	return nil
}

// maxListedFailures bounds how many of the missing or changed files extracted from one archive Verify
// reports one by one (its Status counts them all).
const maxListedFailures = 20

// maxTarEntries bounds the files of a tar archive that hashTar records (the GSC archive holds about
// 106 000): an archive with more is not compared file by file.
const maxTarEntries = 1 << 21

// tarEntries reads the gzip-compressed tar archive r and returns the SHA-256 of every file that Untar
// extracts from it, by slash path relative to the target folder; nil when the archive cannot be read as a
// tar.gz (it then fails its checksum, or no checksum is known). Verify reads it as it hashes the archive
// (hashFile), so that the archive is read once.
func tarEntries(r io.Reader) map[string]string {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil
	}
	entries := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return entries
		}
		if err != nil {
			return nil
		}
		name, ok := extractedName(h)
		if !ok {
			continue
		}
		eh := sha256.New()
		if _, err := io.Copy(eh, tr); err != nil || len(entries) >= maxTarEntries {
			return nil
		}
		entries[name] = hex.EncodeToString(eh.Sum(nil))
	}
}

// extractedName returns the slash path, relative to the target folder, of the file that Untar extracts
// from entry h; ok is false for the entries it does not extract as files (folders, links, devices) or
// refuses (paths out of the folder, names fits reserves).
func extractedName(h *tar.Header) (string, bool) {
	if h.Typeflag != tar.TypeReg || strings.TrimSpace(h.Name) == "" {
		return "", false
	}
	name := path.Clean(filepath.ToSlash(filepath.Clean(filepath.FromSlash(h.Name))))
	if name == "." || name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) || filepath.IsAbs(name) {
		return "", false
	}
	if name == owned.RecordFile || name == UnpackedFile || strings.HasPrefix(path.Base(name), owned.StagingPrefix) {
		return "", false
	}
	return name, true
}

// verifyUntarred checks the files extracted from the tar archive f into dir (archive is the archive's
// own Status; entries the SHA-256 of its files, nil when it could not be read). It returns one Status for
// all of them (Files, Failed), followed by one for each of the first maxListedFailures files that are
// missing or changed (Of: f.Name):
//
//   - the archive verified ok: every file it holds must be in dir with the same content ("ok"), however it
//     was extracted; a file missing or different is a failure, and so is the whole ("mismatch");
//   - otherwise, the files that UnpackedFile records as extracted from it are checked against the record:
//     unchanged they are only "unverified" (the record is the folder's own), changed or missing they are
//     failures ("mismatch"). With no record nothing is reported.
func verifyUntarred(f File, dir string, archive Status, entries map[string]string, m *unpackedManifest, w io.Writer) ([]Status, error) {
	rec := m.Archives[f.Name]
	ref, fromArchive := entries, archive.State == "ok" && entries != nil
	if !fromArchive {
		if rec == nil {
			return nil, nil
		}
		ref = rec.Files
	}
	names := slices.Sorted(maps.Keys(ref))
	sum := Status{Name: f.Name + " (extracted)", Path: dir, Files: len(names)}
	var failed []Status
	var bar *progress.Bar // only where there are many (GSC's 106 000)
	if len(names) > 5000 {
		bar = progress.New(w, "verify files of "+f.Name, int64(len(names)))
	}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		st := Status{Name: n, Path: p, Of: f.Name}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			st.State, st.Detail = "missing", "extracted from "+f.Name
		case err != nil:
			return nil, err
		case !fi.Mode().IsRegular():
			st.State, st.Detail = "mismatch", "not a regular file, where "+f.Name+" holds one"
		default:
			sha, err := fileSHA256(p, nil)
			if err != nil {
				return nil, err
			}
			st.SHA256 = sha
			switch {
			case sha == ref[n]:
			case fromArchive && rec != nil && rec.Files[n] == ref[n]:
				st.State, st.Detail = "mismatch", "differs from its entry in "+f.Name+": changed since fits extracted it"
			case fromArchive:
				st.State, st.Detail = "mismatch", "differs from its entry in "+f.Name
			default:
				st.State, st.Detail = "mismatch", fmt.Sprintf("changed since fits extracted it from %s: SHA-256 %s recorded in %s", f.Name, ref[n], UnpackedFile)
			}
		}
		bar.Add(1)
		if st.State != "" {
			sum.Failed++
			if len(failed) < maxListedFailures {
				failed = append(failed, st)
			}
		}
	}
	bar.Done()
	switch {
	case sum.Failed > 0:
		listed := ""
		if sum.Failed > len(failed) {
			listed = fmt.Sprintf(" (the first %d listed)", len(failed))
		}
		sum.State, sum.Detail = "mismatch", fmt.Sprintf("%d of %d files extracted from %s are missing or changed%s", sum.Failed, sum.Files, f.Name, listed)
	case fromArchive:
		sum.State, sum.Detail = "ok", fmt.Sprintf("%d files as in %s", sum.Files, f.Name)
	case archive.SHA256 != "" && archive.SHA256 != rec.SHA256:
		sum.State, sum.Detail = "unverified", fmt.Sprintf("%d files as fits extracted them from another %s than the one now present", sum.Files, f.Name)
	default:
		sum.State, sum.Detail = "unverified", fmt.Sprintf("%d files as fits extracted them from %s, which is not verified here (%s)", sum.Files, f.Name, archive.State)
	}
	return append([]Status{sum}, failed...), nil
}

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

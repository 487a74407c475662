package download

import (
	"archive/tar"
	"compress/gzip"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fits-snn/fits/data/progress"
	"github.com/fits-snn/fits/internal/owned"
)

// maxListedFailures bounds how many of the missing or changed files extracted from one archive Verify
// reports one by one (its Status counts them all).
const maxListedFailures = 20

// maxTarEntries bounds the files of a tar archive that hashTar records (the GSC archive holds about
// 106 000): an archive with more is not compared file by file.
const maxTarEntries = 1 << 21

// hashTar returns the SHA-256 and MD5 of the gzip-compressed tar archive path, read once, and the SHA-256
// of every file that Untar extracts from it, by slash path relative to the target folder. entries is nil
// when the archive cannot be read as a tar.gz (it then fails its checksum, or no checksum is known).
func hashTar(path string, w io.Writer) (sha, md string, entries map[string]string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", nil, err
	}
	var bar *progress.Bar
	if st.Size() > 64<<20 {
		bar = progress.NewBytes(w, "checksum "+filepath.Base(path), st.Size())
	}
	hs, hm := sha256.New(), md5.New()
	tee := io.TeeReader(f, io.MultiWriter(hs, hm, barWriter{bar}))
	entries = map[string]string{}
	zr, zerr := gzip.NewReader(tee)
	if zerr != nil {
		entries = nil
	} else {
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err != nil {
				if err != io.EOF {
					entries = nil
				}
				break
			}
			name, ok := extractedName(h)
			if !ok {
				continue
			}
			eh := sha256.New()
			if _, err := io.Copy(eh, tr); err != nil || len(entries) >= maxTarEntries {
				entries = nil
				break
			}
			entries[name] = hex.EncodeToString(eh.Sum(nil))
		}
	}
	if _, err := io.Copy(io.Discard, tee); err != nil { // what the decompressor left unread
		return "", "", nil, fmt.Errorf("%s: %w", path, err)
	}
	bar.Done()
	return hex.EncodeToString(hs.Sum(nil)), hex.EncodeToString(hm.Sum(nil)), entries, nil
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
	names := make([]string, 0, len(ref))
	for n := range ref {
		names = append(names, n)
	}
	sort.Strings(names)
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

package download

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/progress"
	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/fits-snn/fits/internal/owned"
)

// ErrOffline marks a failure to reach any host of a file (no network, DNS failure, refused
// connection, timeout). Test it with errors.Is.
var ErrOffline = errors.New("dataset host unreachable (offline?)")

// ChecksumError reports a file whose content does not match its expected checksum.
type ChecksumError struct {
	Path, Algo, Want, Got string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s: %s mismatch: want %s, got %s", e.Path, e.Algo, e.Want, e.Got)
}

// Options control a download.
type Options struct {
	Progress io.Writer    // progress bars and notes (nil: silent)
	Client   *http.Client // nil: a client with a 30 s connection timeout
}

func (o *Options) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	d := &net.Dialer{Timeout: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}}
}

func (o *Options) logf(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// isOffline tells network failures (no route, DNS, refused, timeout) from HTTP-level answers.
func isOffline(err error) bool {
	var ne net.Error // *net.OpError and *net.DNSError among them
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}

// Download fetches every file of the manifest into dir (created if needed), skipping files that
// are already present and verified, then unpacks them as the manifest says.
//
// It never replaces a file it did not write: a file of a manifest's name that does not match its
// checksum is replaced only when fits downloaded it (package owned records it); a SHA256SUMS that fits did
// not write is never rewritten (a download that would change it is refused before fetching); the partial
// download is a file of a name fits reserves (PartName), never a symbolic link followed.
func Download(ctx context.Context, m Manifest, dir string, o Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sums, err := openSums(dir)
	if err != nil {
		return err
	}
	lists := map[string]map[string]string{}
	for _, f := range m.Files {
		sha, err := obtain(ctx, f, dir, sums, lists, o)
		if err != nil {
			return err
		}
		if err := unpack(f, dir, sha, o); err != nil {
			return err
		}
	}
	return sums.save()
}

// obtain makes the file f of the manifest present and verified in dir, fetching it unless it is there
// already, and returns its SHA-256; lists holds the hosts' MD5 lists fetched so far, by URL.
func obtain(ctx context.Context, f File, dir string, sums *sumsRecord, lists map[string]map[string]string, o Options) (string, error) {
	path := filepath.Join(dir, f.Name)
	want := expected{sha: f.SHA256, md5: f.MD5}
	if want.sha == "" && want.md5 == "" && f.MD5List != "" {
		list, ok := lists[f.MD5List]
		if !ok {
			var err error
			if list, err = fetchMD5List(ctx, o.client(), f.MD5List); err != nil {
				// Offline with a file already downloaded and recorded: check it against the record.
				if rec := sums.sums[f.Name]; rec != "" && errors.Is(err, ErrOffline) {
					if _, cerr := checkFile(path, expected{sha: rec}, o.Progress); cerr == nil {
						o.logf("%s: present, matches %s (host unreachable)", path, SumsFile)
						return rec, nil
					}
				}
				return "", err
			}
			lists[f.MD5List] = list
		}
		if want.md5 = list[f.Name]; want.md5 == "" {
			return "", fmt.Errorf("%s does not list %s", f.MD5List, f.Name)
		}
	}
	if st, err := os.Lstat(path); err == nil {
		if !st.Mode().IsRegular() {
			return "", data.BadFile(fmt.Errorf("%s exists and is not a regular file: fits never replaces a file it did not write (move it away and run again)", path))
		}
		if want.sha == "" && want.md5 == "" {
			want.sha = sums.sums[f.Name]
		}
		sha, err := checkFile(path, want, o.Progress)
		if err == nil {
			o.logf("%s: present, checksum verified", path)
			sums.sums[f.Name] = sha
			return sha, nil
		}
		var ce *ChecksumError
		if !errors.As(err, &ce) {
			return "", err
		}
		if !ownedFile(dir, f.Name) {
			return "", data.BadFile(fmt.Errorf("%v: fits never replaces a file it did not write (move it away and run again to download it)", err))
		}
		o.logf("%s: %v; downloading again", path, err)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := sums.checkWritable(); err != nil {
		return "", err
	}
	part := filepath.Join(dir, PartName(f.Name))
	unlock, err := lockPart(part, path)
	if err != nil {
		return "", err
	}
	err = fetch(ctx, o.client(), f, part, o.Progress)
	var sha string
	if err == nil {
		if sha, err = checkFile(part, want, o.Progress); err != nil {
			os.Remove(part)
		}
	}
	if err == nil {
		err = placeDownload(part, dir, f.Name, sha)
	}
	unlock()
	if err != nil {
		return "", err
	}
	sums.sums[f.Name] = sha
	return sha, sums.save()
}

// PartName is the name, in the dataset folder, of the partial download of the file name: a hidden name
// of fits's own (".NAME.fits-part"), so that a user's NAME.part (a browser's unfinished download of the
// same file) is never appended to nor removed.
func PartName(name string) string { return "." + name + ".fits-part" }

// lockPart takes, without waiting, an exclusive lock on the partial download part of the file dst (creating
// it empty when missing) and returns the function that releases it: a second download of the same file
// into the same folder at the same time is refused (bad input), instead of both writing one partial file.
func lockPart(part, dst string) (func(), error) {
	if st, err := os.Lstat(part); err == nil && !st.Mode().IsRegular() {
		return nil, data.BadFile(fmt.Errorf("%s is not a partial download of fits (not a regular file): move it away and run again", part))
	}
	f, err := filesafe.TryLockFile(part, os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, filesafe.ErrLocked) {
		return nil, data.BadFile(fmt.Errorf("%s is being downloaded by another fits process (its partial download %s is locked): wait for it to end, then run again", dst, part))
	}
	if err != nil {
		return nil, data.BadFile(fmt.Errorf("%s: cannot write the partial download: %w", part, err))
	}
	return func() {
		// An empty partial download (nothing was fetched) is not left behind.
		if a, err := f.Stat(); err == nil && a.Size() == 0 {
			if b, err := os.Lstat(part); err == nil && os.SameFile(a, b) {
				os.Remove(part)
			}
		}
		f.Close()
	}, nil
}

// ownedFile reports whether the file rel of dir is one that fits wrote and that has not changed since
// (package owned).
func ownedFile(dir, rel string) bool {
	rec, err := owned.Open(dir)
	return err == nil && rec.Replaceable(rel)
}

// placeDownload moves the verified partial download part (of SHA-256 sha) to dir/name and records it as
// written by fits. A file at dir/name is replaced only when fits wrote it (ownedFile); one that appeared
// meanwhile is left as it is (bad input naming it).
func placeDownload(part, dir, name, sha string) error {
	dst := filepath.Join(dir, name)
	exists := func() error {
		return data.BadFile(fmt.Errorf("%s already exists and was not written by fits: fits never replaces a file it did not write (move it away and run again)", dst))
	}
	if _, err := os.Lstat(dst); err == nil {
		if !ownedFile(dir, name) {
			return exists()
		}
		if err := os.Rename(part, dst); err != nil {
			return err
		}
	} else {
		// A hard link fails when anything appeared at dst since; where there are none, rename.
		switch err := os.Link(part, dst); {
		case err == nil:
			os.Remove(part)
		case errors.Is(err, fs.ErrExist):
			return exists()
		default:
			if err := os.Rename(part, dst); err != nil {
				return err
			}
		}
	}
	return owned.Update(dir, func(rec *owned.Record) error {
		rec.NoteSum(name, sha)
		return nil
	})
}

// unpack unpacks the verified file f (of SHA-256 sha) as the manifest says. The file unpacked from a
// gzip or zip archive is written once and recorded in UnpackedFile; on a later run it is checked against
// what the archive unpacks to, never replaced (unpackOne).
func unpack(f File, dir, sha string, o Options) error {
	path := filepath.Join(dir, f.Name)
	var err error
	switch {
	case f.Gunzip:
		err = unpackOne(path, sha, strings.TrimSuffix(path, ".gz"), gzipPayload(path), o.Progress, "gunzip")
	case f.Unzip:
		dst := strings.TrimSuffix(path, ".zip")
		err = unpackOne(path, sha, dst, zipPayload(path, filepath.Base(dst)), o.Progress, "unzip")
	}
	if err != nil || !f.Untar {
		return err
	}
	marker := filepath.Join(dir, "."+f.Name+".extracted")
	if _, err := os.Lstat(marker); err == nil {
		return nil
	}
	if err := Untar(path, dir, o.Progress); err != nil {
		return err
	}
	// O_EXCL: never through a link planted at the marker's name.
	mf, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return mf.Close()
}

// get sends a GET request for url, for the bytes from offset from on when from > 0; a failure to reach
// the host is an ErrOffline.
func get(ctx context.Context, c *http.Client, url string, from int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if from > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", from))
	}
	resp, err := c.Do(req)
	if err != nil && isOffline(err) {
		return nil, fmt.Errorf("%w: %v", ErrOffline, err)
	}
	return resp, err
}

func fetchMD5List(ctx context.Context, c *http.Client, url string) (map[string]string, error) {
	resp, err := get(ctx, c, url, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %s", url, resp.Status)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 1<<20))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 2 && len(fs[0]) == 32 {
			out[strings.TrimPrefix(fs[1], "*")] = strings.ToLower(fs[0])
		}
	}
	return out, sc.Err()
}

// fetch downloads f into part, resuming from part's current size with a Range request; a server
// that ignores the range restarts the file.
func fetch(ctx context.Context, c *http.Client, f File, part string, w io.Writer) error {
	var lastErr error
	offline := true
	for _, url := range f.URLs {
		err := fetchURL(ctx, c, url, part, f, w)
		if err == nil {
			return nil
		}
		lastErr = err
		if !errors.Is(err, ErrOffline) {
			offline = false
		}
	}
	if offline && lastErr != nil {
		return lastErr
	}
	return fmt.Errorf("%s: no URL worked, last error: %w", f.Name, lastErr)
}

func fetchURL(ctx context.Context, c *http.Client, url, part string, f File, w io.Writer) error {
	var have int64
	if st, err := os.Lstat(part); err == nil {
		if !st.Mode().IsRegular() {
			return data.BadFile(fmt.Errorf("%s is not a partial download of fits (not a regular file): move it away and run again", part))
		}
		have = st.Size()
	}
	resp, err := get(ctx, c, url, have)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	flags := os.O_CREATE | os.O_WRONLY
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		flags |= os.O_APPEND
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		return nil // already complete; the checksum decides
	case resp.StatusCode == http.StatusOK:
		have = 0
		flags |= os.O_TRUNC
	default:
		return fmt.Errorf("%s: HTTP %s", url, resp.Status)
	}
	out, err := filesafe.OpenNoFollow(part, flags, 0o644)
	if err != nil {
		return err
	}
	total := f.Size
	if resp.ContentLength > 0 {
		total = have + resp.ContentLength
	}
	bar := progress.NewBytes(w, f.Name, total)
	bar.Set(have)
	if _, err := io.CopyBuffer(io.MultiWriter(out, bar), resp.Body, make([]byte, 1<<16)); err != nil {
		out.Close()
		switch {
		case isWriteError(err):
			return err
		case w != nil:
			fmt.Fprintln(w)
		}
		if isOffline(err) {
			return fmt.Errorf("%w: %s interrupted after %d bytes (run again to resume): %v", ErrOffline, f.Name, bar.N(), err)
		}
		return fmt.Errorf("%s interrupted (run again to resume): %w", f.Name, err)
	}
	bar.Done()
	return out.Close()
}

type expected struct{ sha, md5 string }

// checkFile hashes path and compares it with want; it returns the SHA-256. With nothing to compare
// against it only returns the SHA-256.
func checkFile(path string, want expected, w io.Writer) (string, error) {
	sha, md, err := hashFile(path, w, nil)
	if err != nil {
		return "", err
	}
	return sha, compareSums(path, want, sha, md)
}

// compareSums compares the SHA-256 and MD5 of path with want (a *ChecksumError when they differ).
func compareSums(path string, want expected, sha, md string) error {
	if want.sha != "" && !strings.EqualFold(want.sha, sha) {
		return &ChecksumError{Path: path, Algo: "SHA-256", Want: want.sha, Got: sha}
	}
	if want.md5 != "" && !strings.EqualFold(want.md5, md) {
		return &ChecksumError{Path: path, Algo: "MD5", Want: want.md5, Got: md}
	}
	return nil
}

// hashFile returns the hex SHA-256 and MD5 of a file, read once: read, when not nil, reads the content
// first, and what it leaves unread is hashed after it.
func hashFile(path string, w io.Writer, read func(io.Reader)) (sha, md string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", err
	}
	var bar *progress.Bar
	if st.Size() > 64<<20 {
		bar = progress.NewBytes(w, "checksum "+filepath.Base(path), st.Size())
	}
	hs, hm := sha256.New(), md5.New()
	tee := io.TeeReader(f, io.MultiWriter(hs, hm, bar))
	if read != nil {
		read(tee)
	}
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	bar.Done()
	return hex.EncodeToString(hs.Sum(nil)), hex.EncodeToString(hm.Sum(nil)), nil
}

// SumsFile is the name of the file, in a dataset folder, that records the SHA-256 of every
// verified download ("hex  name" lines, as sha256sum writes them).
const SumsFile = "SHA256SUMS"

// maxSums bounds the size of a SHA256SUMS that fits reads (a few lines per dataset).
const maxSums = 1 << 20

// readSums reads dir's SHA256SUMS: the SHA-256 digests it lists by file name, and its content. A folder
// without one lists none; one that is not a regular file of at most maxSums bytes is bad input naming it.
// Lines that are not "hex  name" are skipped: a SHA256SUMS of the user's lists what it lists.
func readSums(dir string) (filesafe.Sums, []byte, error) {
	b, err := filesafe.ReadRegular(filepath.Join(dir, SumsFile), maxSums)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, data.BadFile(err)
	}
	sums, _ := filesafe.ParseSums(b)
	return sums, b, nil
}

// sumsRecord is a dataset folder's SHA256SUMS as Download reads and rewrites it.
type sumsRecord struct {
	dir  string
	sums filesafe.Sums
	read string // the content as read ("" when absent)
	ours bool   // absent, or written by fits and unchanged since (package owned)
}

func openSums(dir string) (*sumsRecord, error) {
	sums, b, err := readSums(dir)
	if err != nil {
		return nil, err
	}
	return &sumsRecord{dir: dir, sums: sums, read: string(b), ours: ownedFile(dir, SumsFile)}, nil
}

// checkWritable refuses, before anything is fetched, to go on in a folder whose SHA256SUMS fits did not
// write (a download adds its digest there).
func (r *sumsRecord) checkWritable() error {
	if r.ours {
		return nil
	}
	return data.BadFile(fmt.Errorf("%s already exists and was not written by fits: fits never replaces a file it did not write (move it away and run again)", filepath.Join(r.dir, SumsFile)))
}

// save writes SHA256SUMS when its content changes, and records it as written by fits; a SHA256SUMS that
// fits did not write is never replaced (checkWritable).
func (r *sumsRecord) save() error {
	c := string(r.sums.Bytes())
	if c == r.read {
		return nil
	}
	if err := r.checkWritable(); err != nil {
		return err
	}
	path := filepath.Join(r.dir, SumsFile)
	if err := filesafe.WriteFile(path, []byte(c)); err != nil {
		return err
	}
	r.read = c
	return owned.Note(r.dir, SumsFile)
}

// Status is the verification result of one file, or of the files extracted from a tar archive.
type Status struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	State  string `json:"state"` // "ok", "missing", "mismatch", "unverified" (no checksum known)
	SHA256 string `json:"sha256,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Files is, in the one Status that stands for the files extracted from a tar archive, how many there
	// are, and Failed how many of them are missing or changed; the first of those follow it as Statuses
	// of their own, whose Of names the archive (they are counted in Failed, not again).
	Files  int    `json:"files,omitempty"`
	Failed int    `json:"failed,omitempty"`
	Of     string `json:"of,omitempty"`
}

// Counts returns how many files a list of Statuses covers, and how many of them are missing or
// mismatched, and unverified: a Status of the files extracted from an archive counts each of them.
func Counts(st []Status) (files, bad, unverified int) {
	for _, s := range st {
		switch {
		case s.Of != "": // counted in its archive's Status
		case s.Files > 0:
			files += s.Files
			bad += s.Failed
			if s.State == "unverified" {
				unverified += s.Files - s.Failed
			}
		case s.State == "missing" || s.State == "mismatch":
			files, bad = files+1, bad+1
		default:
			files++
			if s.State == "unverified" {
				unverified++
			}
		}
	}
	return files, bad, unverified
}

// Verify checks the files of a manifest in dir against the pinned checksums, or, for files without
// one, against SHA256SUMS: a mismatch is reported, but a match with the folder's own SHA256SUMS is only
// "unverified" (anyone who can write the files can write it), never "ok". Where a file is absent and its
// other form (File.Alt) is present, the other form is checked. The file unpacked from a gzip or zip
// archive (an HDF5 file), when present, is checked against UnpackedFile: "ok" when it is what fits
// unpacked from the archive it now verified ok, "mismatch" when it changed since, "unverified" when fits
// did not unpack it or its archive is not verified. The files extracted from a tar archive (GSC, DVS) are
// checked as one Status (verifyUntarred) followed by those of the first files that are missing or changed.
// It never downloads.
func Verify(m Manifest, dir string, w io.Writer) ([]Status, error) {
	sums, _, err := readSums(dir)
	if err != nil {
		return nil, err
	}
	unpacked, err := readUnpacked(dir)
	if err != nil {
		return nil, err
	}
	var out []Status
	for _, f := range m.Files {
		if _, err := os.Stat(filepath.Join(dir, f.Name)); err != nil && f.Alt != nil {
			if _, err := os.Stat(filepath.Join(dir, f.Alt.Name)); err == nil {
				f = *f.Alt
			}
		}
		path := filepath.Join(dir, f.Name)
		st, entries, err := verifyFile(f, path, sums, w)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
		if f.Untar { // the files extracted from it, against the archive or the record
			files, err := verifyUntarred(f, dir, st, entries, unpacked, w)
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
			continue
		}
		if st.State == "missing" {
			continue
		}
		if u, ok, err := verifyUnpacked(f, dir, st, unpacked, w); err != nil {
			return nil, err
		} else if ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// verifyFile checks the file f of the manifest at path against its pinned checksum, or else the one that
// sums (the folder's SHA256SUMS) records; entries is, for a tar archive, the SHA-256 of every file it holds,
// by slash path (tarEntries).
func verifyFile(f File, path string, sums filesafe.Sums, w io.Writer) (st Status, entries map[string]string, err error) {
	st = Status{Name: f.Name, Path: path}
	if _, err := os.Stat(path); err != nil {
		st.State = "missing"
		return st, nil, nil
	}
	want := expected{sha: f.SHA256, md5: f.MD5}
	fromFolder := false
	if want.sha == "" && want.md5 == "" {
		want.sha = sums[f.Name]
		fromFolder = want.sha != ""
	}
	if f.Untar {
		var md string
		if st.SHA256, md, err = hashFile(path, w, func(r io.Reader) { entries = tarEntries(r) }); err == nil {
			err = compareSums(path, want, st.SHA256, md)
		}
	} else {
		st.SHA256, err = checkFile(path, want, w)
	}
	var ce *ChecksumError
	switch {
	case errors.As(err, &ce):
		st.State, st.Detail = "mismatch", err.Error()
	case err != nil:
		return st, nil, err
	case want.sha == "" && want.md5 == "":
		st.State, st.Detail = "unverified", "no published digest is pinned for it and none was recorded"
	case fromFolder:
		// The folder's own SHA256SUMS vouches only for what was written there, by anyone: no proof.
		st.State, st.Detail = "unverified", "no published digest is pinned for it; it matches only the folder's own "+SumsFile+", which is no proof"
	default:
		st.State = "ok"
	}
	return st, entries, nil
}

// verifyUnpacked checks the file unpacked from the gzip or zip archive f (whose own check gave archive),
// when it is present; ok is false when f unpacks to no single file or that file is absent.
func verifyUnpacked(f File, dir string, archive Status, m *unpackedManifest, w io.Writer) (Status, bool, error) {
	var name string
	switch {
	case f.Gunzip:
		name = strings.TrimSuffix(f.Name, ".gz")
	case f.Unzip:
		name = strings.TrimSuffix(f.Name, ".zip")
	default:
		return Status{}, false, nil
	}
	path := filepath.Join(dir, name)
	if _, err := os.Lstat(path); err != nil {
		return Status{}, false, nil
	}
	st := Status{Name: name, Path: path}
	sha, err := fileSHA256(path, w)
	if err != nil {
		return st, false, err
	}
	st.SHA256 = sha
	from, a, want := m.lookup(name)
	switch {
	case from == "":
		st.State, st.Detail = "unverified", "not unpacked by fits (no record in "+UnpackedFile+")"
	case want != sha:
		st.State, st.Detail = "mismatch", fmt.Sprintf("changed since fits unpacked it from %s: SHA-256 %s recorded in %s", from, want, UnpackedFile)
	case from != f.Name || archive.State != "ok":
		st.State, st.Detail = "unverified", fmt.Sprintf("as unpacked from %s, which is not verified here (%s is %s)", from, f.Name, archive.State)
	case a.SHA256 != archive.SHA256:
		st.State, st.Detail = "unverified", fmt.Sprintf("unpacked from another %s than the one now present", from)
	default:
		st.State, st.Detail = "ok", "as unpacked from "+from
	}
	return st, true, nil
}

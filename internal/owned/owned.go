// Package owned keeps, in each folder that a command writes into, the record of the files it wrote
// there, so that a later command replaces only those and never a file of the user's.
//
// The record is the file .fits-owned in the folder, in the format of `sha256sum`: the SHA-256 and the
// path (relative to the folder, with forward slashes) of every file written. A file in the folder may be
// replaced when it is absent, or when the record lists it with the SHA-256 it has now (a file that was
// written by a command and not changed since). Anything else — a user's file of the same name, a file
// changed after it was written, a symbolic link, a folder — is refused.
//
// Publish moves a whole set of files, written first into a staging folder, into place: it checks every
// destination before it moves any, so that a refused command changes nothing.
//
// Commands that change a folder's record (Publish, Note, Update) hold an exclusive lock on the
// folder (flock on the folder itself: no file is added) while they read, change and save it, so that two
// commands writing into the same folder at the same time lose neither's entries.
package owned

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fits-snn/fits/internal/filesafe"
)

// RecordFile is the name of the record in each folder.
const RecordFile = ".fits-owned"

// StagingPrefix starts the names of the staging folders that Stage creates.
const StagingPrefix = ".fits-staging-"

// ConflictError reports destinations that hold files a command did not write.
type ConflictError struct {
	Dir   string
	Paths []string // the conflicting destinations, relative to Dir
}

func (e *ConflictError) Error() string {
	more := ""
	if len(e.Paths) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Paths)-1)
	}
	return fmt.Sprintf("%s already exists and was not written by fits%s: fits never replaces a file it did not write (move it away or choose another folder)",
		filepath.Join(e.Dir, filepath.FromSlash(e.Paths[0])), more)
}

// Record is the parsed record of one folder.
type Record struct {
	dir  string
	sums filesafe.Sums // relative slash path -> hex SHA-256
}

// Open reads the record of dir; a folder without one (or a missing folder) has an empty record. A file of
// the record's name that is not such a record (not a regular file, larger than a record may be, a line
// that is not "SHA-256  path") is a *ConflictError naming it: it is not fits's to read or replace.
func Open(dir string) (*Record, error) {
	b, err := filesafe.ReadRegular(filepath.Join(dir, RecordFile), maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return &Record{dir: dir, sums: filesafe.Sums{}}, nil
	}
	var notRecord *filesafe.NotRegularError
	if errors.As(err, &notRecord) {
		return nil, &ConflictError{Dir: dir, Paths: []string{RecordFile}}
	}
	if err != nil {
		return nil, err
	}
	sums, err := filesafe.ParseSums(b)
	if err != nil {
		return nil, &ConflictError{Dir: dir, Paths: []string{RecordFile}}
	}
	return &Record{dir: dir, sums: sums}, nil
}

// maxRecord bounds the size of a record (a few hundred thousand files).
const maxRecord = 64 << 20

// Replaceable reports whether rel (relative to the record's folder) may be written: nothing is there, or
// the record lists the file with its current content. A symbolic link on the way, or a file where a
// folder is needed, is never replaceable.
func (r *Record) Replaceable(rel string) bool { return r.blocker(rel) == "" }

// blocker returns "" when rel may be written (Replaceable), else the slash path, relative to the record's
// folder, of what stands in the way: rel itself, or the link or file on the way to it.
func (r *Record) blocker(rel string) string {
	rel = filepath.ToSlash(filepath.Clean(rel))
	parts := strings.Split(rel, "/")
	p := r.dir
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		if err != nil {
			return strings.Join(parts[:i+1], "/")
		}
		if i < len(parts)-1 {
			if !st.IsDir() { // a file or a link where a folder must be
				return strings.Join(parts[:i+1], "/")
			}
			continue
		}
		if !r.holds(rel, p, st) {
			return rel
		}
	}
	return ""
}

// holds reports whether p, of which st is the Lstat, is a regular file with the SHA-256 the record lists
// for rel.
func (r *Record) holds(rel, p string, st fs.FileInfo) bool {
	want, ok := r.sums[rel]
	if !ok || !st.Mode().IsRegular() {
		return false
	}
	got, err := filesafe.SumFile(p)
	return err == nil && got == want
}

// Owns reports whether rel (relative to the record's folder) is a regular file that the record lists
// with the SHA-256 it has now: a file a command wrote and nobody changed since, which that command may
// remove.
func (r *Record) Owns(rel string) bool {
	rel = filepath.ToSlash(filepath.Clean(rel))
	p := filepath.Join(r.dir, filepath.FromSlash(rel))
	st, err := os.Lstat(p)
	return err == nil && r.holds(rel, p, st)
}

// Lists reports whether the record names rel, whatever the file there holds now (or whether it exists).
func (r *Record) Lists(rel string) bool {
	_, ok := r.sums[filepath.ToSlash(filepath.Clean(rel))]
	return ok
}

// Forget removes rel from the record (a file the command removed or moved away).
func (r *Record) Forget(rel string) {
	delete(r.sums, filepath.ToSlash(filepath.Clean(rel)))
}

// Note records that rel now holds the file written by a command (its current content).
func (r *Record) Note(rel string) error {
	rel = filepath.ToSlash(filepath.Clean(rel))
	sum, err := filesafe.SumFile(filepath.Join(r.dir, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	r.sums[rel] = sum
	return nil
}

// NoteSum records that rel now holds the file written by a command, whose SHA-256 (hex) the command
// computed as it wrote it.
func (r *Record) NoteSum(rel, sum string) {
	r.sums[filepath.ToSlash(filepath.Clean(rel))] = sum
}

// Save writes the record atomically.
func (r *Record) Save() error {
	return filesafe.WriteFile(filepath.Join(r.dir, RecordFile), r.sums.Bytes())
}

// Check returns a *ConflictError when any of rels (relative to dir) may not be written.
func Check(dir string, rels []string) error {
	r, err := Open(dir)
	if err != nil {
		return err
	}
	var bad []string
	for _, rel := range rels {
		// Name what is in the way (a link on the way to rel, say), not a file that may not exist.
		if b := r.blocker(rel); b != "" && !slices.Contains(bad, b) {
			bad = append(bad, b)
		}
	}
	if len(bad) > 0 {
		return &ConflictError{Dir: dir, Paths: bad}
	}
	return nil
}

// Stage creates a staging folder inside dir (which it creates if needed) for a command to write into
// before Publish moves its files into dir (or Discard removes it). The staging folder is locked (flock)
// while the command has it: Stage first removes the staging folders of dir that no live command holds
// (left by a command that was killed), so that an interrupted command leaves nothing behind for long.
func Stage(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Under the folder's lock: a staging folder is created and locked before another command can take it
	// for one left by a killed command.
	unlock, err := lockFolder(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	removeStaleStaging(dir)
	staging, err := os.MkdirTemp(dir, StagingPrefix+"*")
	if err != nil {
		return "", err
	}
	holdStaging(staging)
	return staging, nil
}

// Discard removes a staging folder made by Stage that is not to be published, and releases it.
func Discard(staging string) {
	os.RemoveAll(staging)
	releaseStaging(staging)
}

// stagingHeld maps the staging folders this process holds (cleaned paths) to their open (locked)
// folders.
var stagingHeld sync.Map

// lockFolder takes the lock of dir's record (lockDir), except in a staging folder this process holds: its
// lock is held already, and a staging folder is one command's alone (a writer noting its files there).
func lockFolder(dir string) (func(), error) {
	if _, held := stagingHeld.Load(filepath.Clean(dir)); held {
		return func() {}, nil
	}
	return lockDir(dir)
}

// holdStaging takes, without waiting, an exclusive lock on the staging folder and keeps it open in
// stagingHeld; nothing is held when another process holds it (or it cannot be opened).
func holdStaging(staging string) {
	if f, err := filesafe.TryLockFile(staging, os.O_RDONLY, 0); err == nil {
		stagingHeld.Store(filepath.Clean(staging), f)
	}
}

func releaseStaging(staging string) {
	if f, ok := stagingHeld.LoadAndDelete(filepath.Clean(staging)); ok {
		f.(*os.File).Close()
	}
}

// lockDir takes an exclusive advisory lock (flock) on the folder dir itself, waiting for another holder,
// and returns the function that releases it. The kernel releases it when the process ends.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if filesafe.Lock(f) != nil {
		f.Close()
		return func() {}, nil // a file system without locks: as before, unlocked
	}
	return func() { f.Close() }, nil
}

// removeStaleStaging removes the staging folders of dir (StagingPrefix and the digits os.MkdirTemp puts
// after it) whose lock no process holds. Anything else is left alone.
func removeStaleStaging(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		suffix, ok := strings.CutPrefix(e.Name(), StagingPrefix)
		if !ok || !e.IsDir() || suffix == "" || strings.Trim(suffix, "0123456789") != "" {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if _, held := stagingHeld.Load(p); held {
			continue
		}
		if f, err := os.Open(p); err == nil {
			if filesafe.Abandoned(f) { // no live holder: what a killed command left
				os.RemoveAll(p)
			}
			f.Close()
		}
	}
}

// Publish moves every regular file of staging (made by Stage inside dir) to the same relative path in
// dir, after checking that every destination may be written (else a *ConflictError and dir is left as
// it was), records them, and removes staging in every case. It returns the paths written, in the order
// of the walk (lexical).
func Publish(staging, dir string) ([]string, error) {
	defer Discard(staging)
	var rels []string
	err := filepath.WalkDir(staging, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(staging, p)
		if err != nil {
			return err
		}
		if filepath.Base(rel) == RecordFile {
			return nil // a record the writer kept in the staging folder
		}
		rels = append(rels, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	unlock, err := lockFolder(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := Check(dir, rels); err != nil {
		return nil, err
	}
	r, err := Open(dir)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, rel := range rels {
		to := filepath.Join(dir, rel)
		err := os.MkdirAll(filepath.Dir(to), 0o755)
		if err == nil {
			err = os.Rename(filepath.Join(staging, rel), to)
		}
		if err == nil {
			err = r.Note(rel)
		}
		if err != nil {
			_ = r.Save() // what was moved stays recorded as written by a command
			return written, err
		}
		written = append(written, to)
	}
	return written, r.Save()
}

// Note records in dir's record that the files rels (relative to dir) were just written by a command,
// for writers that write in place (a notebook saving its figures).
func Note(dir string, rels ...string) error {
	return Update(dir, func(r *Record) error {
		for _, rel := range rels {
			if err := r.Note(rel); err != nil {
				return err
			}
		}
		return nil
	})
}

// Update reads dir's record, lets change add to it (Note, NoteSum) and saves it, holding the folder's lock
// throughout, so that commands that write into the same folder at the same time keep each other's
// entries. The record is saved even when change fails (what it noted stays recorded).
func Update(dir string, change func(r *Record) error) error {
	unlock, err := lockFolder(dir)
	if err != nil {
		return err
	}
	defer unlock()
	r, err := Open(dir)
	if err != nil {
		return err
	}
	cerr := change(r)
	if err := r.Save(); err != nil && cerr == nil {
		return err
	}
	return cerr
}

package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/fits-snn/fits/internal/filesafe"
)

// LockFile is the file inside a run folder that exists while a process trains, resumes or evaluates the
// run there: it holds that process's id and an exclusive advisory lock (flock), which the kernel releases
// when the process ends, even by SIGKILL. The holder removes the file before it releases the lock, and a
// process that takes the lock checks that the file it locked is still the one in the folder, so that a
// lock is never held on a removed file. A second process that asks for the lock of a held folder gets a
// *RunLockedError at once (it does not wait).
const LockFile = ".fits-lock"

// RunLockedError reports a run folder that another process holds locked.
type RunLockedError struct {
	Dir string
	PID int // 0 when the holder's id could not be read
}

func (e *RunLockedError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("%s is in use by %s (a fits train, --resume or eval of the same run): wait for it to end, or choose another folder", e.Dir, holder)
}

// LockRun takes the lock of run folder dir, which must exist, and returns the function that releases it
// (and removes LockFile); calling it again does nothing. When another process holds it, the error is an *InputError wrapping a
// *RunLockedError (the CLI exits with status 2). With readOnly, a folder in which the lock file cannot be
// created (no write permission, a read-only file system) is used without a lock: nothing will be written
// there.
func LockRun(dir string, readOnly bool) (func(), error) {
	path := filepath.Join(dir, LockFile)
	notOurs := func(why string) error {
		return &InputError{Err: fmt.Errorf("%s is not a lock file of fits (%s): fits never replaces a file it did not write; move it away and run again", path, why)}
	}
	for range 100 {
		if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
			return nil, notOurs("not a regular file")
		}
		f, err := filesafe.OpenNoFollow(path, os.O_CREATE|os.O_RDWR, 0o644)
		if filesafe.IsSymlinkError(err) {
			return nil, notOurs("a symbolic link")
		}
		if err != nil {
			if readOnly && (errors.Is(err, os.ErrPermission) || filesafe.IsReadOnlyFS(err)) {
				return func() {}, nil
			}
			// The folder cannot receive a run (a read-only or virtual file system, no permission).
			return nil, &InputError{Err: fmt.Errorf("cannot write into the run folder %s: %w", dir, err)}
		}
		held, err := filesafe.TryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking the run folder %s: %w", dir, err)
		}
		b := make([]byte, 33) // a process id and a newline fit in 32 bytes
		n, _ := f.ReadAt(b, 0)
		if !held {
			f.Close()
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:min(n, 32)])))
			return nil, &InputError{Err: &RunLockedError{Dir: dir, PID: pid}}
		}
		if !sameFile(f, path) { // its holder removed it before we locked it: lock the new one
			f.Close()
			continue
		}
		// A lock file that a killed process left holds its pid; anything else is not fits's to truncate.
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || !isPIDLine(b[:n]) {
			f.Close()
			return nil, notOurs("it holds something other than a process id")
		}
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		var once sync.Once
		return func() {
			once.Do(func() {
				_ = os.Remove(path)
				f.Close() // releases the lock
			})
		}, nil
	}
	return nil, fmt.Errorf("locking the run folder %s: its lock file keeps changing", dir)
}

// isPIDLine reports whether b is what a lock file holds: nothing, or a process id and a newline.
func isPIDLine(b []byte) bool {
	return len(b) <= 32 && strings.Trim(strings.TrimSuffix(string(b), "\n"), "0123456789") == ""
}

// sameFile reports whether the open file f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

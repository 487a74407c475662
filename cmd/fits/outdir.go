package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/fits-snn/fits/internal/owned"
)

// checkOutDir checks, before anything is written, that dir can receive a command's output: an existing
// dir must be a folder, and the nearest existing ancestor of a missing one must be a folder that can be
// written into. Problems are bad input naming the flag (e.g. "--out=runs/x: runs is a file").
func checkOutDir(flagName, dir string) error {
	if dir == "" {
		return badInput("--%s: empty folder name", flagName)
	}
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		switch {
		case err == nil && !st.IsDir():
			if p == filepath.Clean(dir) {
				return badInput("--%s=%s: is a file, not a folder", flagName, dir)
			}
			return badInput("--%s=%s: %s is a file, not a folder", flagName, dir, p)
		case err == nil:
			if syscall.Access(p, 0x2|0x1) != nil { // W_OK | X_OK
				return badInput("--%s=%s: cannot write into %s (permission denied)", flagName, dir, p)
			}
			return nil
		case !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return badInput("--%s=%s: %v", flagName, dir, err)
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// isDir reports whether path is a folder (or a link to one).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// missingDirs returns dir and those of its ancestors that do not exist yet, deepest first: the folders
// a command that writes into dir will create.
func missingDirs(dir string) []string {
	var out []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			return out
		}
		out = append(out, p)
	}
}

// removeEmptyDirs removes the folders of dirs (deepest first) that are still empty: those a failed
// command created and left without content. A folder holding anything stays.
func removeEmptyDirs(dirs []string) {
	for _, d := range dirs {
		if syscall.Rmdir(d) != nil { // rmdir: never a file, never a folder with content
			return
		}
	}
}

// writeStaged checks dir (checkOutDir), runs write with a staging folder inside dir (the --flagName
// folder, created if missing), then moves what it wrote into dir (package owned): a file of dir that fits
// did not write is never replaced — the command is refused (bad input naming the file) and dir is left as
// it was. It returns the paths that write reports, in its order, with the staging folder's prefix replaced
// by dir; where write reports none, the paths written in dir.
func writeStaged(flagName, dir string, write func(staging string) ([]string, error)) ([]string, error) {
	if err := checkOutDir(flagName, dir); err != nil {
		return nil, err
	}
	created := missingDirs(dir)
	staging, err := owned.Stage(dir)
	if err != nil {
		removeEmptyDirs(created)
		return nil, badPath(err, "--%s=%s: cannot write into it: %v", flagName, dir, err)
	}
	reported, err := write(staging)
	if err != nil {
		owned.Discard(staging)
		removeEmptyDirs(created)
		return nil, err
	}
	written, err := owned.Publish(staging, dir)
	if isErr[*owned.ConflictError](err) {
		removeEmptyDirs(created)
		return nil, badInput("--%s=%s: %v", flagName, dir, err)
	}
	if err != nil || reported == nil {
		return written, err
	}
	for i, p := range reported {
		if rel, err := filepath.Rel(staging, p); err == nil && !strings.HasPrefix(rel, "..") {
			reported[i] = filepath.Join(dir, rel)
		}
	}
	return reported, nil
}

// checkNewFile checks, before any work, that the --flagName file path can be written as a new file: it
// does not exist (not even as a dangling link), it is not "-" (which names no file here), its folder
// exists, and a file can be created there (a temporary file of fits's is created and removed: no
// permission, a read-only or virtual file system, a name too long are all bad input naming the flag).
func checkNewFile(flagName, path string) error {
	if path == "-" {
		return badInput("--%s=-: give the name of a new file (fits writes the table there; stdout is not a file here)", flagName)
	}
	if _, err := os.Lstat(path); err == nil { // a file, a folder, or a link (even a dangling one)
		return badInput("--%s=%s already exists (choose another file)", flagName, path)
	}
	if !isDir(filepath.Dir(path)) {
		return badInput("--%s=%s: its folder does not exist", flagName, path)
	}
	tmp, err := filesafe.CreateTemp(path)
	if err != nil {
		return badPath(err, "--%s=%s: cannot write a file there: %v", flagName, path, err)
	}
	filesafe.Discard(tmp)
	return nil
}

// checkWritableDir is checkOutDir made sure of: a file is created (and removed at once) in dir, or in its
// nearest existing ancestor when dir is missing, so that a folder that only looks writable (a virtual file
// system such as /proc, a read-only mount checked as root) is bad input before any work, not a failure
// after it.
func checkWritableDir(flagName, dir string) error {
	if err := checkOutDir(flagName, dir); err != nil {
		return err
	}
	p := filepath.Clean(dir)
	for !isDir(p) && filepath.Dir(p) != p {
		p = filepath.Dir(p)
	}
	f, err := os.CreateTemp(p, ".fits-probe-*")
	if err != nil {
		return badPath(err, "--%s=%s: cannot write into %s: %v", flagName, dir, p, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fits-snn/fits/fits/train"
)

// The cases of this file were found by attacking the CLI as a new user would (odd paths, links, devices,
// files planted where fits keeps its own): each failed the contract (exit 2 with one line, no byte of the
// user's lost) before it was fixed.

// TestRunLockNeverFollowsOrTruncates: a run folder's lock file that is not fits's — a symbolic link to a
// user's file, a user's file of text, a folder, a FIFO — makes train --resume and eval exit 2 with one line
// naming it (they used to exit 1, "its lock file keeps changing"), and the user's file keeps its bytes. A
// lock file that a killed process left (its pid) is taken over and removed.
func TestRunLockNeverFollowsOrTruncates(t *testing.T) {
	for _, kind := range []string{"link", "text", "folder", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			saveCheckpoint(t, dir)
			user := filepath.Join(t.TempDir(), "precious.txt")
			plantUserFile(t, user)
			lock := filepath.Join(dir, train.LockFile)
			switch kind {
			case "link":
				os.Symlink(user, lock)
			case "text":
				plantUserFile(t, lock)
				user = lock
			case "folder":
				os.Mkdir(lock, 0o755)
			case "fifo":
				syscall.Mkfifo(lock, 0o644)
			}
			for _, args := range [][]string{
				{"train", "--resume", "--extend", "--epochs=5", "--out=" + dir},
				{"eval", "--checkpoint=" + dir},
			} {
				status, stdout, stderr := run(args...)
				if status != 2 || stdout != "" || !strings.Contains(stderr, lock+" is not a lock file of fits") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("%v: status %d, stderr %q", args, status, stderr)
				}
			}
			checkUserFile(t, user)
		})
	}
	t.Run("stale", func(t *testing.T) {
		dir := t.TempDir()
		lock := filepath.Join(dir, train.LockFile)
		os.WriteFile(lock, []byte("4194304\n"), 0o644)
		unlock, err := train.LockRun(dir, false)
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		if _, err := os.Lstat(lock); !os.IsNotExist(err) {
			t.Errorf("the stale lock file was not removed: %v", err)
		}
	})
}

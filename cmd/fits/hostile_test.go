package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/owned"
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

// TestListsBounded: a list flag holds at most maxListValues values, and fits theory at most
// maxTheoryTargets target frequencies: more is bad input at once (theory --fstar=@FILE of 200 000 values
// ran for minutes; response --omega=@FILE of two million took 26 s and 1.3 GB), one line naming the cap.
func TestListsBounded(t *testing.T) {
	dir := t.TempDir()
	list := func(name string, n int, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat(v+",", n-1)+v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"theory", "--fstar=@" + list("fstar200k.txt", 200_000, "10")}, "holds 200000 values, more than the 100000 a list may hold"},
		{[]string{"theory", "--fstar=" + strings.Repeat("10,", maxListValues) + "10"}, "100001 values, more than the 100000 a list may hold"},
		{[]string{"theory", "--fstar=@" + list("fstar20k.txt", 20_000, "10")}, "20000 target frequencies, more than the 10000"},
		{[]string{"response", "--omega=@" + list("omega2m.txt", 2_000_000, "0.5")}, "holds 2000000 values, more than the 100000"},
	} {
		start := time.Now()
		status, stdout, stderr := run(tc.args...)
		name := tc.args[0] + " " + shortQuote(tc.args[1])
		if status != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: status %d, stderr %q", name, status, stderr)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: refused only after %v", name, d)
		}
	}
}

// TestForeignRecordFile: a .fits-owned that is not fits's record — a FIFO, a folder, a link to a user's
// file, a file larger than a record may be, a file of other text — makes the writers exit 2 with one line
// naming it (they exited 1), and nothing of the user's changes.
func TestForeignRecordFile(t *testing.T) {
	for _, kind := range []string{"fifo", "folder", "link", "huge", "text"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			os.MkdirAll(dir, 0o755)
			rec := filepath.Join(dir, owned.RecordFile)
			user := filepath.Join(t.TempDir(), "notes.txt")
			plantUserFile(t, user)
			switch kind {
			case "fifo":
				syscall.Mkfifo(rec, 0o644)
			case "folder":
				os.Mkdir(rec, 0o755)
			case "link":
				os.Symlink(user, rec)
			case "huge":
				f, _ := os.Create(rec)
				f.Truncate(100 << 20) // sparse
				f.Close()
			case "text":
				plantUserFile(t, rec)
				user = rec
			}
			for _, args := range [][]string{
				{"data", "synth", "--format=shd", "--samples=2", "--out=" + dir},
				{"figures", "--only=01_target_magnitude", "--out=" + dir},
			} {
				status, stdout, stderr := run(args...)
				if status != 2 || stdout != "" || !strings.Contains(stderr, rec+" already exists and was not written by fits") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("%v: status %d, stderr %q", args[:2], status, stderr)
				}
			}
			checkUserFile(t, user)
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("the refused commands left %d entries", len(ents))
			}
		})
	}
}

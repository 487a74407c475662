//go:build unix

package filesafe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLocks: a lock held through one open file keeps every other open file of the same path out (flock
// locks open files, so one process stands for two here) until it is closed.
func TestLocks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".lock")
	f, err := TryLockFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLockFile(path, os.O_RDWR, 0); !errors.Is(err, ErrLocked) {
		t.Errorf("second lock: %v, want ErrLocked", err)
	}
	g, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if Abandoned(g) {
		t.Error("a held file counts as abandoned")
	}
	got := make(chan error, 1)
	go func() { got <- Lock(g) }()
	select {
	case err := <-got:
		t.Fatalf("Lock did not wait for the holder: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	f.Close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// A folder is locked as a file is.
	d, err := TryLockFile(dir, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(mustOpen(t, dir)); ok || err != nil {
		t.Errorf("second lock of the folder: %v, %v", ok, err)
	}
	d.Close()
	if !Abandoned(mustOpen(t, dir)) {
		t.Error("a released folder is not abandoned")
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestNoFollow: no open goes through a symbolic link, and a FIFO does not block a read.
func TestNoFollow(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenNoFollow(link, os.O_RDWR, 0); !IsSymlinkError(err) {
		t.Errorf("opened through a link: %v", err)
	}
	if _, err := TryLockFile(link, os.O_CREATE|os.O_RDWR, 0o644); !IsSymlinkError(err) {
		t.Errorf("locked through a link: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadRegular(fifo, 1<<20); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadRegular blocked on a FIFO")
	}
	if !IsReadOnlyFS(&os.PathError{Op: "open", Path: "x", Err: syscall.EROFS}) || IsReadOnlyFS(os.ErrPermission) {
		t.Error("IsReadOnlyFS")
	}
}

package owned

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fits-snn/fits/internal/filesafe"
)

// TestConcurrentWritersKeepEachOthersEntries: commands that publish different files into the same folder
// at the same time (here goroutines, each with its own lock on the folder, as processes have) leave every
// file recorded: none of fits's files becomes one it "did not write".
func TestConcurrentWritersKeepEachOthersEntries(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			staging, err := Stage(dir)
			if err == nil {
				err = os.WriteFile(filepath.Join(staging, fmt.Sprintf("f%02d", i)), []byte{byte(i)}, 0o644)
			}
			if err == nil {
				_, err = Publish(staging, dir)
			}
			if err == nil {
				err = Note(dir) // a second update of the record, as sweep and the notebooks make
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if errs[i] != nil {
			t.Errorf("writer %d: %v", i, errs[i])
		}
		if name := fmt.Sprintf("f%02d", i); !r.Replaceable(name) {
			t.Errorf("%s is not recorded", name)
		}
	}
}

// TestStaleStagingRemoved: a staging folder that no live command holds (what a killed command leaves) is
// removed by the next Stage in the same folder; one held by a live command, and folders of other names
// (a user's ".fits-staging-notes"), are left alone.
func TestStaleStagingRemoved(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, StagingPrefix+"123456")
	os.MkdirAll(filepath.Join(stale, "sub"), 0o755)
	os.WriteFile(filepath.Join(stale, "sub", "half.h5"), []byte("half a file"), 0o644)
	user := filepath.Join(dir, StagingPrefix+"notes")
	os.Mkdir(user, 0o755)
	// Another process's: locked through a descriptor of its own.
	otherProcess := filepath.Join(dir, StagingPrefix+"654321")
	os.Mkdir(otherProcess, 0o755)
	f, err := filesafe.TryLockFile(otherProcess, os.O_RDONLY, 0)
	if err != nil {
		t.Skip("no flock here")
	}
	defer f.Close()
	live, err := Stage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale staging folder is still there: %v", err)
	}
	if _, err := os.Stat(user); err != nil {
		t.Errorf("a folder of another name was removed: %v", err)
	}
	if _, err := os.Stat(otherProcess); err != nil {
		t.Errorf("a staging folder locked by another process was removed: %v", err)
	}
	other, err := Stage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live command's staging folder was removed: %v", err)
	}
	Discard(other)
	Discard(live)
	if _, err := os.Stat(live); !os.IsNotExist(err) {
		t.Errorf("Discard left %s", live)
	}
}

// TestNoteInOwnStagingFolder: a writer that records its files in the staging folder it holds (as the
// figures do) is not blocked by that folder's own lock.
func TestNoteInOwnStagingFolder(t *testing.T) {
	dir := t.TempDir()
	staging, err := Stage(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(staging, "a.svg"), []byte("<svg/>"), 0o644)
	done := make(chan error, 1)
	go func() { done <- Note(staging, "a.svg") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Note in the process's own staging folder blocked")
	}
	if _, err := Publish(staging, dir); err != nil {
		t.Fatal(err)
	}
	if r, _ := Open(dir); !r.Replaceable("a.svg") {
		t.Error("a.svg not recorded")
	}
}

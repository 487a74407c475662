package owned

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
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

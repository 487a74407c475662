package shd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fits-snn/fits/data"
)

// loopsFile is an SHD file (a fuzzer's mutation of a small synthetic one) on which the HDF5 C library
// loops without end.
var loopsFile = filepath.Join("testdata", "loops.h5")

// TestLoopingFileStopped: a file on which the HDF5 reader loops is reported as corrupt, naming it, once the
// child's time limit is past.
func TestLoopingFileStopped(t *testing.T) {
	defer func(old time.Duration) { checkBaseLimit = old }(checkBaseLimit)
	checkBaseLimit = 2 * time.Second
	path := filepath.Join(t.TempDir(), "shd_train.h5")
	b, err := os.ReadFile(loopsFile)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, b, 0o644)
	start := time.Now()
	f, err := Open(path, SHDClasses)
	if err == nil {
		f.Close()
		t.Fatal("opened")
	}
	if !data.IsBadFile(err) || !strings.Contains(err.Error(), path+": corrupt HDF5 file: the HDF5 reader did not finish reading it within 2s") {
		t.Errorf("%v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

// parentEnv makes this test binary the parent of TestChildDiesWithParent: it opens the file it names.
const parentEnv = "FITS_SHD_TEST_PARENT"

// TestChildDiesWithParent: when the process reading a file is killed (kill -9) while its child reads the
// file for it, the child ends too: it does not spin on for good, an orphan, on a file the library loops on.
func TestChildDiesWithParent(t *testing.T) {
	if path := os.Getenv(parentEnv); path != "" {
		Open(path, SHDClasses) // killed while it waits for its child
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("finds the child through /proc")
	}
	path, err := filepath.Abs(filepath.Join(t.TempDir(), "shd_train.h5"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(loopsFile)
	os.WriteFile(path, b, 0o644)
	parent := exec.Command(os.Args[0], "-test.run=^TestChildDiesWithParent$")
	parent.Env = append(os.Environ(), parentEnv+"="+path)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	marker := []byte(checkEnv + "=" + path + "\x00")
	child := func() (pid string, running bool) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || !bytes.Contains(env, marker) {
				continue
			}
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' {
				return e.Name(), true
			}
		}
		return "", false
	}
	var pid string
	for deadline := time.Now().Add(30 * time.Second); pid == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		pid, _ = child()
	}
	if pid == "" {
		t.Fatal("the reading child did not start")
	}
	parent.Process.Kill()
	parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, running := child(); !running {
			return
		}
	}
	t.Errorf("child %s still runs 10 s after its parent was killed", pid)
	if p, err := os.FindProcess(atoi(pid)); err == nil {
		p.Kill()
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = 10*n + int(c-'0')
	}
	return n
}

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/owned"
)

// smallRun are the flags of a tiny training run.
var smallRun = []string{"--dataset=synthetic", "--width=8", "--batch=16", "--train-limit=64", "--test-limit=64", "--quiet", "--epochs=1"}

func trainArgs(extra ...string) []string {
	return append(append([]string{"train"}, smallRun...), extra...)
}

// TestRunFolderLocked: while a process holds a run folder, a second train, resume or eval of it exits 2
// naming the holder's pid and changes nothing; once released, the lock file is gone and the run proceeds.
func TestRunFolderLocked(t *testing.T) {
	dir := t.TempDir()
	saveCheckpoint(t, dir)
	before := snapshot(t, dir)
	unlock, err := train.LockRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "is in use by process " + strconv.Itoa(os.Getpid())
	for _, args := range [][]string{
		{"train", "--resume", "--out=" + dir},
		{"train", "--resume", "--extend", "--epochs=20", "--out=" + dir},
		{"eval", "--checkpoint=" + dir},
	} {
		status, stdout, stderr := run(args...)
		if status != 2 || stdout != "" || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", args, status, stderr, want)
		}
	}
	unlock()
	unlock() // twice: nothing more happens
	after := snapshot(t, dir)
	if len(after) != len(before) {
		t.Errorf("the folder changed: %d entries, was %d", len(after), len(before))
	}
	if _, err := os.Stat(filepath.Join(dir, train.LockFile)); !os.IsNotExist(err) {
		t.Errorf("the lock file outlived its holder: %v", err)
	}
	// Released: a second holder takes it.
	unlock, err = train.LockRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

// TestTrainRefusesForeignFolders: fits train starts a run only in a new or empty folder (never in /, a
// folder of the user's files), and checks its output before training.
func TestTrainRefusesForeignFolders(t *testing.T) {
	user := t.TempDir()
	plantUserFile(t, filepath.Join(user, "notes.txt"))
	resultDir := t.TempDir()
	saveCheckpoint(t, resultDir)
	if err := os.Mkdir(filepath.Join(resultDir, train.ResultFile), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{trainArgs("--out=" + user), "holds 1 entries and no run"},
		{trainArgs("--out=/"), "and no run"},
		{[]string{"train", "--resume", "--extend", "--epochs=5", "--out=" + resultDir}, "result.json is not a regular file"},
	} {
		status, _, stderr := run(tc.args...)
		if status != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: status %d, stderr %q, want 2 and %q", tc.args, status, stderr, tc.want)
		}
	}
	checkUserFile(t, filepath.Join(user, "notes.txt"))
	if ents, _ := os.ReadDir(user); len(ents) != 1 {
		t.Errorf("the user's folder holds %d entries, want 1", len(ents))
	}
}

// TestResumeAfterFailedFirstSave: a folder without an intact checkpoint is refused by --resume (status
// 2); when it holds only the run's own unfinished first save (its record lists the files), a new run
// without --resume starts there and removes them; files the run did not write keep it refused.
func TestResumeAfterFailedFirstSave(t *testing.T) {
	for _, own := range []bool{true, false} {
		dir := t.TempDir()
		saveCheckpoint(t, dir)
		matches, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*"))
		var left []string
		for _, m := range matches {
			switch {
			case strings.HasSuffix(m, ".sha256"):
				os.Remove(m) // the save was cut before its checksums
				continue
			case strings.HasSuffix(m, ".bin"):
				os.Truncate(m, 3)
			}
			left = append(left, filepath.Base(m))
		}
		if own {
			if err := owned.Note(dir, left...); err != nil {
				t.Fatal(err)
			}
		}
		status, _, stderr := run(trainArgs("--resume", "--out="+dir)...)
		if status != 2 || !strings.Contains(stderr, "nothing to resume from") {
			t.Errorf("own %v: --resume: status %d, stderr %q; want 2", own, status, stderr)
		}
		status, _, stderr = run(trainArgs("--out=" + dir)...)
		if !own {
			if status != 2 || !strings.Contains(stderr, "add --resume") {
				t.Errorf("files not the run's: without --resume: status %d, stderr %q", status, stderr)
			}
			for _, f := range left {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
			continue
		}
		if status != 0 {
			t.Fatalf("own unfinished save, without --resume: status %d, stderr %q", status, stderr)
		}
		if !train.HasCheckpoint(dir) {
			t.Error("no intact checkpoint after the new run")
		}
		for _, f := range left {
			if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("the unfinished save's %s is still there: %v", f, err)
			}
		}
	}
}

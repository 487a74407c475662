package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// LogFile is the name of a run's log in its directory: the stdout and stderr of every `fits train`
// segment of the run, appended.
const LogFile = "log.txt"

// Status is the state of a run.
type Status string

const (
	// Pending: nothing trained yet; the run starts from scratch.
	Pending Status = "pending"
	// Partial: the directory holds a checkpoint but no final result; the run is training elsewhere or was
	// interrupted, and continues from its latest checkpoint (`fits train --resume`).
	Partial Status = "partial"
	// Running: a worker of this sweep is training the run.
	Running Status = "running"
	// Finished: result.json records every epoch of the run's configuration.
	Finished Status = "finished"
	// Failed: the training command of this sweep ended without a finished result.
	Failed Status = "failed"
)

// State is what a run's directory says about it.
type State struct {
	Status Status
	// Result is the run's result.json when Status is Finished.
	Result *train.Result
	// Err explains why a directory cannot be used for the run (then Status is Failed).
	Err error
}

// Inspect reads the state of run r from its directory alone (experiment.ReadRun). A run is Finished when
// its result.json records all the epochs its configuration asks for, with the run's seed and recipe
// (fits/train writes result.json only after the last epoch); Partial when the directory holds a complete
// checkpoint (train.HasCheckpoint); Pending otherwise. A result.json of another seed or recipe makes the
// run Failed: the directory holds another run, which the sweep leaves alone.
func Inspect(r Run) State {
	// A missing or unreadable result.json (rewritten when the run resumes) says nothing.
	st := experiment.ReadRun(r.Dir, r.Seed, r.Recipe)
	switch {
	case st.Stale != "":
		return State{Status: Failed, Err: fmt.Errorf("%s holds another run (%s): delete the folder to train it again", r.Dir, st.Stale)}
	case st.Finished:
		return State{Status: Finished, Result: st.Result}
	case train.HasCheckpoint(r.Dir):
		return State{Status: Partial}
	}
	return State{Status: Pending}
}

// Accuracy is the test accuracy that the run's protocol reports (train.Result.SelectedTestAcc): the
// best test accuracy under best-test, the test accuracy at the best validation epoch under the validation
// protocols, the last epoch's under final-epoch.
func Accuracy(res *train.Result) (float64, bool) {
	if res == nil {
		return 0, false
	}
	a, err := res.SelectedTestAcc()
	return a, err == nil
}

// epochRe matches what train.TerminalProgress writes: "epoch 3/10 [...", "epoch 3/10 evaluating" (epoch
// 3 in flight), "epoch 3/10 loss ..." (epoch 3 done), and the resume note "after epoch 3 of 10".
var epochRe = regexp.MustCompile(`epoch (\d+)(?:/| of )(\d+)( \[| evaluating)?`)

// logTail is how much of the end of a log LogEpochs reads.
const logTail = 8 << 10

// LogEpochs reads the end of a run's log and returns the number of finished epochs and the planned total
// as the training progress bar last printed them; ok is false when the log shows no epoch yet.
func LogEpochs(dir string) (done, total int, ok bool) {
	buf := readTail(filepath.Join(dir, LogFile), logTail)
	// Only the part after the last segment header counts: an earlier segment's epochs are history.
	if i := bytes.LastIndex(buf, []byte(segmentMark)); i >= 0 {
		buf = buf[i:]
	}
	m := epochRe.FindAllSubmatch(buf, -1)
	if len(m) == 0 {
		return 0, 0, false
	}
	last := m[len(m)-1]
	n, _ := strconv.Atoi(string(last[1]))
	total, _ = strconv.Atoi(string(last[2]))
	if len(last[3]) > 0 {
		n-- // in flight
	}
	return n, total, total > 0
}

// readTail returns the last n bytes of the file at path (all of a shorter file), nil when it cannot be
// read.
func readTail(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	return buf
}

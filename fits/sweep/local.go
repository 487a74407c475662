package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fits-snn/fits/fits/train"
	"github.com/fits-snn/fits/internal/filesafe"
)

// Options configure Execute.
type Options struct {
	// Workers is the number of runs trained at the same time, each in its own process (at least 1).
	Workers int
	// Exe is the fits binary that trains the runs; empty means the running program (os.Executable).
	Exe string
	// Progress, when not nil, receives the display: a status line across the grid redrawn in place, and
	// one line for each run that finishes or fails.
	Progress io.Writer
	// Refresh is the period of the status line; 0 means one second.
	Refresh time.Duration
}

// ErrLocked is returned by Execute when another sweep is running in the same root folder.
var ErrLocked = errors.New("another sweep is running in this folder")

// lockFile is the file in a sweep's root that a running sweep holds locked.
const lockFile = ".sweep.lock"

// lockRoot takes an exclusive advisory lock on root (released by the kernel when the process dies, even
// by SIGKILL) and returns the function that releases it; ErrLocked (naming root) when another sweep holds
// it.
func lockRoot(root string) (func(), error) {
	f, err := filesafe.TryLockFile(filepath.Join(root, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, filesafe.ErrLocked) {
		return nil, fmt.Errorf("%w: %s", ErrLocked, root)
	}
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// segmentMark starts the line that opens each training segment in a run's log.
const segmentMark = "== fits sweep "

// Execute trains the runs of g that have not finished on opts.Workers local processes, each running
// `Exe train ...` (Grid.Command, with --resume when the run's directory holds a checkpoint) with its
// stdout and stderr appended to RUNDIR/log.txt. Finished runs are skipped. The index ROOT/sweep.json is
// rewritten whenever a run changes state. A failed run is recorded and the others continue; the caller
// reads the failures from the returned index (Index.Failed).
//
// Cancelling ctx stops the runs in flight (they keep their last checkpoint) and returns ctx's error with
// the index. If the sweep process itself is killed, its training processes die with it (on Linux), and
// the next Execute resumes them: at most the epochs in flight are lost.
func Execute(ctx context.Context, g *Grid, opts Options) (*Index, error) {
	if opts.Workers < 1 {
		return nil, fmt.Errorf("workers must be at least 1, got %d", opts.Workers)
	}
	exe := opts.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the fits binary: %w", err)
		}
	}
	if err := checkMode(g); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(g.Root, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockRoot(g.Root)
	if err != nil {
		return nil, err
	}
	defer unlock()

	x := &executor{g: g, exe: exe, recs: make([]Record, len(g.Runs))}
	var todo []int
	resume, skipped := 0, 0
	for i, r := range g.Runs {
		st := Inspect(r)
		x.recs[i] = newRecord(g.Root, r, st)
		switch st.Status {
		case Finished:
			x.recs[i].Skipped = true
			skipped++
		case Partial:
			resume++
			todo = append(todo, i)
		case Pending:
			todo = append(todo, i)
		}
	}
	if err := x.writeIndex(); err != nil {
		return nil, err
	}
	x.disp = newDisplay(opts.Progress, len(g.Runs), progressUnits(x.recs))
	x.disp.event(fmt.Sprintf("sweep of %d runs (%s mode) in %s: %d finished before, %d to resume, %d to start, %d worker(s)",
		len(g.Runs), g.Mode, g.Root, skipped, resume, len(todo)-resume, opts.Workers))

	stopDisplay := x.startDisplay(opts.Refresh)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(opts.Workers, max(len(todo), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				x.train(ctx, i)
			}
		}()
	}
feed:
	for _, i := range todo {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	stopDisplay()

	x.mu.Lock()
	defer x.mu.Unlock()
	idx := newIndex(g, append([]Record(nil), x.recs...))
	if err := idx.Write(); err != nil {
		return idx, err
	}
	if x.writeErr != nil {
		return idx, x.writeErr
	}
	return idx, ctx.Err()
}

// executor is the state of one Execute call; mu guards recs, the index file and the display.
type executor struct {
	g        *Grid
	exe      string
	mu       sync.Mutex
	recs     []Record
	disp     *display
	writeErr error
}

// writeIndex writes the index of the current records; the caller holds mu or runs alone.
func (x *executor) writeIndex() error {
	return newIndex(x.g, x.recs).Write()
}

// update sets run i's state, rewrites the index and prints msg (if any) on the display.
func (x *executor) update(i int, st State, msg string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.recs[i].set(x.g.Runs[i], st)
	if err := x.writeIndex(); err != nil && x.writeErr == nil {
		x.writeErr = err
	}
	if msg != "" {
		x.disp.event(msg)
		x.disp.draw(x.recs)
	}
}

// train runs one training segment of run i and records how it ended.
func (x *executor) train(ctx context.Context, i int) {
	r := x.g.Runs[i]
	if ctx.Err() != nil {
		return
	}
	fail := func(err error) {
		x.update(i, State{Status: Failed, Err: err}, fmt.Sprintf("failed    %s: %v", r.Name(), err))
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		fail(err)
		return
	}
	logPath := filepath.Join(r.Dir, LogFile)
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fail(err)
		return
	}
	args := x.g.Command(r, train.HasCheckpoint(r.Dir))
	// The segment line starts a line of its own even after a progress bar that a kill cut short.
	if last := readTail(logPath, 1); len(last) > 0 && last[0] != '\n' {
		fmt.Fprintln(log)
	}
	fmt.Fprintf(log, "%s%s pid %d: %s\n", segmentMark, time.Now().Format(time.RFC3339), os.Getpid(),
		shellJoin(append([]string{x.exe}, args...)))
	cmd := exec.CommandContext(ctx, x.exe, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Stopping a run: an interrupt first (the process group is the run's own), a kill after 30 s.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	configureChild(cmd)
	x.update(i, State{Status: Running}, "")
	runErr := cmd.Run()
	log.Close()

	st := Inspect(r)
	switch {
	case st.Status == Finished:
		msg := fmt.Sprintf("finished  %s", r.Name())
		if a, ok := Accuracy(st.Result); ok {
			msg += fmt.Sprintf(": accuracy %.2f%% (epoch %d), %.1f s", 100*a, st.Result.BestEpoch, st.Result.WallSeconds)
		}
		x.update(i, st, msg)
	case ctx.Err() != nil:
		// Stopped by the caller: the run keeps its checkpoint and resumes next time.
		x.update(i, st, "")
	default:
		why := "exited without a finished result"
		if runErr != nil {
			why = runErr.Error()
		}
		if st.Err != nil {
			why = st.Err.Error()
		}
		if last := lastLogLine(logPath); last != "" {
			why += ": " + last
		}
		fail(fmt.Errorf("%s (log %s)", why, logPath))
	}
}

// lastLogLine returns the last non-empty line of the end of a log (lines end with \n or \r).
func lastLogLine(path string) string {
	lines := strings.FieldsFunc(string(readTail(path, logTail)), func(r rune) bool { return r == '\n' || r == '\r' })
	for k := len(lines) - 1; k >= 0; k-- {
		if s := strings.TrimSpace(strings.ReplaceAll(lines[k], "\033[K", "")); s != "" {
			return s
		}
	}
	return ""
}

// startDisplay redraws the status line every period until the returned function is called, which draws
// it a last time and ends the line.
func (x *executor) startDisplay(period time.Duration) func() {
	if x.disp.w == nil {
		return func() {}
	}
	if period <= 0 {
		period = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			x.mu.Lock()
			x.refreshEpochs()
			x.disp.draw(x.recs)
			x.mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		x.mu.Lock()
		defer x.mu.Unlock()
		x.disp.draw(x.recs)
		x.disp.finish()
	}
}

// refreshEpochs reads the epochs of the running runs from their logs; the caller holds mu.
func (x *executor) refreshEpochs() {
	for i := range x.recs {
		if x.recs[i].Status == Running {
			if done, total, ok := LogEpochs(x.g.Runs[i].Dir); ok {
				x.recs[i].EpochsDone, x.recs[i].Epochs = done, total
			}
		}
	}
}

// shellJoin quotes args for a POSIX shell and joins them with spaces.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for k, a := range args {
		quoted[k] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// shellQuote returns s quoted for a POSIX shell: unchanged when it holds only safe characters, else in
// single quotes (a single quote inside becomes '\”).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

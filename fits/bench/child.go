package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The protocol of an isolated cell (RunOptions.Isolate): the parent runs this executable as
// `fits bench --internal-cell=CELL [--backend=CONFIG]` with ChildEnv=1 in its environment, CELL the JSON
// form of a Cell. The child opens the backend, measures the cell (MeasureChild) and prints the Measurement
// as one JSON line on stdout, its progress as lines "fits bench: LABEL: MESSAGE" on stderr, which the parent
// passes on with its own label. A child that fails prints one line "fits bench: ERROR" last on stderr and
// exits with status 2 when the input is at fault, 1 otherwise.

// ChildEnv marks the process of one isolated cell. A process that has it set to 1 never starts another
// child, so that a binary that does not dispatch its arguments to the CLI (a test binary) cannot start a
// chain of them.
const ChildEnv = "FITS_BENCH_CHILD"

// logPrefix starts every progress line of `fits bench`.
const logPrefix = "fits bench: "

// DecodeCell parses the JSON form of a cell, refusing unknown fields.
func DecodeCell(cellJSON string) (Cell, error) {
	var c Cell
	dec := json.NewDecoder(strings.NewReader(cellJSON))
	dec.DisallowUnknownFields()
	err := dec.Decode(&c)
	return c, err
}

// MeasureChild is the child side of an isolated cell: it measures c in this process on the backend already
// open (xla.Backend), progress lines on log, and prints the measurement as one JSON line on w.
func MeasureChild(c Cell, w, log io.Writer) error {
	label := fmt.Sprintf("%s W=%d M=%d %s", c.Model, c.Width, c.M, c.Variant)
	m, err := measureCell(c, func(msg string) { fmt.Fprintf(log, "%s%s: %s\n", logPrefix, label, msg) })
	if err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// runChild is the parent side: it measures c in a fresh process of this executable on the backend
// configuration (xla.Choose; "" its default), passing the child's progress on to log under label. A
// child that exits with status 2 gives an *InputError with its last line.
func runChild(c Cell, backend string, log io.Writer, label string) (Measurement, error) {
	var m Measurement
	if os.Getenv(ChildEnv) == "1" {
		return m, fmt.Errorf("bench: a cell's child process tried to start another one (%s=1)", ChildEnv)
	}
	exe, err := os.Executable()
	if err != nil {
		return m, err
	}
	cj, err := json.Marshal(c)
	if err != nil {
		return m, err
	}
	args := []string{"bench", "--internal-cell=" + string(cj)}
	if backend != "" {
		args = append(args, "--backend="+backend)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	out, last, runErr := runCollect(cmd, func(line string) {
		if rest, ok := strings.CutPrefix(line, logPrefix); ok {
			if _, msg, ok := strings.Cut(rest, ": "); ok {
				fmt.Fprintf(log, "%s%s: %s\n", logPrefix, label, msg)
				return
			}
		}
		fmt.Fprintln(log, line)
	})
	if runErr != nil {
		var ee *exec.ExitError
		msg := strings.TrimPrefix(last, logPrefix)
		if errors.As(runErr, &ee) && ee.ExitCode() == 2 {
			return m, &InputError{errors.New(msg)}
		}
		return m, fmt.Errorf("cell process: %v: %s", runErr, msg)
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &m); err != nil {
		return m, fmt.Errorf("cell process printed no measurement: %v", err)
	}
	return m, nil
}

// runCollect runs cmd and returns what it printed on stdout, the last non-empty line of its stderr
// (trimmed) and the error of cmd.Run; each line of stderr is also given to line, when not nil.
func runCollect(cmd *exec.Cmd, line func(string)) (stdout []byte, last string, err error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				last = l
			}
			if line != nil {
				line(sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, pr) // past a line too long to scan
	}()
	err = cmd.Run()
	_ = pw.Close()
	<-done
	return out.Bytes(), last, err
}

package shd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// The HDF5 C library can crash (a segmentation fault in its VLEN read) on a corrupt file, which would
// take the process down with a trace. So Open first reads the whole file in a child process — this same
// executable, started with the environment variable checkEnv naming the file — and only when the child
// finished does it read the file itself. A child that ends any other way than with its own exit status
// (checkOK, or checkBadFile for a file the Go code refused: this process then meets the same error and
// reports it) crashed, and one that runs past its time limit is stopped: either way the file is reported
// as corrupt, one line, bad input. The init function below
// makes every binary that links this package (the fits CLI, test binaries, fuzzers) able to serve as
// the child.
//
// The child never outlives its time limit nor its parent: it stops itself at the limit (checkLimitEnv), and
// on Linux the kernel kills it when the parent dies (a `kill -9` of fits while the HDF5 library loops on
// a corrupt file left the child spinning for good).
const (
	checkEnv        = "FITS_SHD_CHECK_FILE"
	checkClassesEnv = "FITS_SHD_CHECK_CLASSES"
	checkLimitEnv   = "FITS_SHD_CHECK_LIMIT"
	checkOK         = 0
	checkBadFile    = 3
	checkTimedOut   = 4
)

// checkBaseLimit is the time a child may read a file, plus a second per MiB. Tests shorten it.
var checkBaseLimit = time.Minute

func init() {
	if path := os.Getenv(checkEnv); path != "" {
		if limit, err := time.ParseDuration(os.Getenv(checkLimitEnv)); err == nil && limit > 0 {
			time.AfterFunc(limit, func() { os.Exit(checkTimedOut) })
		}
		classes, _ := strconv.Atoi(os.Getenv(checkClassesEnv))
		if err := readAll(path, classes); err != nil {
			os.Exit(checkBadFile)
		}
		os.Exit(checkOK)
	}
}

// readAll opens path in this process and reads every sample and the metadata.
func readAll(path string, classes int) error {
	f, err := open(path, classes)
	if err != nil {
		return err
	}
	defer f.Close()
	const chunk = 256
	for start := 0; start < f.Len(); start += chunk {
		if _, err := f.Read(start, min(chunk, f.Len()-start)); err != nil {
			return err
		}
	}
	_, err = f.ReadExtra()
	return err
}

// checkIsolated reads path in a child process (see above) and returns an error only when the child
// crashed. Where no child can be started, the file is read in this process alone.
func checkIsolated(path string, classes int) error {
	if os.Getenv(checkEnv) != "" {
		return nil // this is the child
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	// A child that loops for ever on a corrupt file is stopped: a minute, plus a second per MiB.
	limit := checkBaseLimit
	if st, err := os.Stat(path); err == nil {
		limit += time.Duration(st.Size()>>20) * time.Second
	}
	// The parent's deadline a little after the child's own, which the child keeps even when this process
	// is gone.
	ctx, cancel := context.WithTimeout(context.Background(), limit+limit/10+time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), checkEnv+"="+path, checkClassesEnv+"="+strconv.Itoa(classes), checkLimitEnv+"="+limit.String(), "GOTRACEBACK=none")
	dieWithParent(cmd)
	err = cmd.Run() // stdin, stdout and stderr: the null device (the library's diagnostics are not shown)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == checkBadFile:
		return nil
	case ctx.Err() != nil || errors.As(err, &exit) && exit.ExitCode() == checkTimedOut:
		return fmt.Errorf("%s: corrupt HDF5 file: the HDF5 reader did not finish reading it within %v", path, limit)
	case errors.As(err, &exit):
		return fmt.Errorf("%s: corrupt HDF5 file: the HDF5 reader crashed on it (%v)", path, exit.ProcessState)
	}
	return nil // the child could not start: read in this process alone
}

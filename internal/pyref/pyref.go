// Package pyref finds the project's Python virtualenv (.venv at the module root, built by `make setup` from
// requirements.txt) for tests that compare the Go code with the Python reference implementations it
// reproduces (numpy, librosa).
//
// Where the interpreter or a module is missing, such a test skips with a message saying how to get it,
// except under CI=true or FITS_REQUIRE_XLA=1 (as `make test` sets), where it fails: there `make setup` has
// run and the reference must be there.
package pyref

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Root returns the module root: the nearest folder at or above the working directory holding go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = up
	}
}

// Required reports whether a missing reference is a failure rather than a skip (CI=true or
// FITS_REQUIRE_XLA=1).
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("FITS_REQUIRE_XLA") == "1"
}

// Find returns the virtualenv's interpreter if it exists and imports every module in modules.
func Find(modules ...string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	py := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return "", fmt.Errorf("no project virtualenv (%s): run 'make setup'", filepath.Join(".venv", "bin", "python"))
	}
	if len(modules) > 0 {
		cmd := exec.Command(py, "-c", "import "+strings.Join(modules, ", "))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(stderr.String())
			if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
				msg = msg[i+1:]
			}
			return "", fmt.Errorf(".venv cannot import %s (%s): run 'make setup'", strings.Join(modules, ", "), msg)
		}
	}
	return py, nil
}

// Python returns the virtualenv's interpreter with modules importable; otherwise it skips t, or fails it
// when Required.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	py, err := Find(modules...)
	if err != nil {
		if Required() {
			t.Fatalf("Python reference needed (CI=true or FITS_REQUIRE_XLA=1): %v", err)
		}
		t.Skipf("Python reference not available: %v", err)
	}
	return py
}

// Run runs the interpreter py on script with args and returns its standard output; a failure reports the
// script's standard error.
func Run(py, script string, args ...string) ([]byte, error) {
	cmd := exec.Command(py, append([]string{script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v: %s", filepath.Base(py), filepath.Base(script), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"strings"
	"testing"
)

// TestHomeUnsetQuiet runs this test binary again without HOME (issue 34): the XLA bindings, which read
// HOME while the program initializes, printed two library log lines before every command's own; now the
// command prints its one line, and HOME is the user's home folder from the user database.
func TestHomeUnsetQuiet(t *testing.T) {
	if os.Getenv("FITS_TEST_HOME_CHILD") == "1" {
		status, _, stderr := run("theory", "--fstar=abc")
		os.Stderr.WriteString(stderr)
		os.Stdout.WriteString(os.Getenv("HOME"))
		os.Exit(status)
	}
	if _, err := user.Current(); err != nil {
		t.Skip("no user database entry for this user")
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "HOME=") {
			env = append(env, e)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHomeUnsetQuiet$")
	cmd.Env = append(env, "FITS_TEST_HOME_CHILD=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("fits theory --fstar=abc without HOME: %v, want exit status 2; stderr:\n%s", err, stderr.String())
	}
	if got := strings.TrimRight(stderr.String(), "\n"); strings.Contains(got, "\n") || !strings.HasPrefix(got, "fits theory: --fstar") {
		t.Errorf("stderr without HOME is not the command's one line:\n%s", got)
	}
	u, _ := user.Current()
	if stdout.String() != u.HomeDir {
		t.Errorf("HOME in the command %q, want the user's home folder %q", stdout.String(), u.HomeDir)
	}
}

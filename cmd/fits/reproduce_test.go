package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReproduceFullModeListsAndTrainsNothing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sweeps")
	status, stdout, stderr := run("reproduce", "--mode=full", "--root="+root, "--tables=A.10,fig2", "--json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var out reproduceOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || strings.Count(strings.TrimSpace(stdout), "\n") != 0 {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	if out.Total != 4*5+20 || out.Finished != 0 || len(out.Runs) != out.Total {
		t.Errorf("%d of %d finished, %d runs listed; want 0 of 40", out.Finished, out.Total, len(out.Runs))
	}
	if len(out.Commands) != 4 || !strings.Contains(out.Commands[0], "--table=A.10 --mode=full --out="+root) {
		t.Errorf("commands %q", out.Commands)
	}
	if _, err := os.Stat(root); err == nil {
		t.Error("full mode without --train created the root folder")
	}
	status, stdout, _ = run("reproduce", "--mode=full", "--root="+root, "--tables=Table 4")
	if status != 0 || !strings.Contains(stdout, "Table 4     0 of 30 runs finished") || !strings.Contains(stdout, "--emit=slurm") {
		t.Errorf("text output: status %d\n%s", status, stdout)
	}
}

func TestReproduceBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode=slow"}, "quick, full"},
		{[]string{"--tables=Table 9"}, "Table A.10"},
		{[]string{"--tables=A.3"}, "fits bench"},
		{[]string{"--workers=0"}, "at least 1"},
		{[]string{"--train"}, "full mode"},
		{[]string{"--mode=full", "--root=" + file}, "not a folder"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		status, _, stderr := run(append([]string{"reproduce"}, tc.args...)...)
		if status != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: status %d, stderr %q (want status 2 and %q)", tc.args, status, stderr, tc.want)
		}
	}
}

package sweep

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

func testSlurmOptions(exe string) SlurmOptions {
	return SlurmOptions{CPUsPerTask: 8, Mem: "32G", Time: "2-00:00:00", Partition: "gpu", Gres: "gpu:1",
		JobName: "table-3", Exe: exe}
}

// threeRuns returns a grid of three runs of one experiment with an extra flag that needs quoting.
func threeRuns(t *testing.T, root string) *Grid {
	t.Helper()
	_, exps := firstTable(t)
	g, err := NewGrid(Spec{Experiments: []string{exps[0].ID}, Seeds: []int64{1, 2, 3}, Mode: experiment.Quick,
		Root: root, TrainArgs: []string{"--epochs=1", "--data-dir=/data/it's here"}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestScript(t *testing.T) {
	g := threeRuns(t, "/scratch/sweep")
	s := Script(g, testSlurmOptions("/opt/fits/bin/fits"))
	for _, want := range []string{
		"#!/bin/bash\n",
		"\n#SBATCH --array=0-2\n",
		"\n#SBATCH --cpus-per-task=8\n",
		"\n#SBATCH --mem=32G\n",
		"\n#SBATCH --time=2-00:00:00\n",
		"\n#SBATCH --partition=gpu\n",
		"\n#SBATCH --gres=gpu:1\n",
		"\n#SBATCH --job-name=table-3\n",
		"\n#SBATCH --output=/scratch/sweep/slurm/%A_%a.out\n",
		"\n#SBATCH --requeue\n",
		"\nfits=${FITS_BIN:-/opt/fits/bin/fits}\n",
		"\nruns=/scratch/sweep/runs.txt\n",
		"--resume",
		`>> "$dir/log.txt" 2>&1`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	// Every #SBATCH line comes before the first command: sbatch stops reading them there.
	lines := strings.Split(s, "\n")
	firstCmd := slices.IndexFunc(lines, func(l string) bool { return l != "" && !strings.HasPrefix(l, "#") })
	for k, l := range lines {
		if strings.HasPrefix(l, "#SBATCH") && k > firstCmd {
			t.Errorf("line %d %q comes after the first command", k+1, l)
		}
	}
	// Optional resources are left out when empty.
	o := testSlurmOptions("/opt/fits/bin/fits")
	o.Partition, o.Gres = "", ""
	if s := Script(g, o); strings.Contains(s, "--partition") || strings.Contains(s, "--gres") {
		t.Errorf("script with no partition or gres:\n%s", s)
	}
}

func TestSlurmOptionsValidate(t *testing.T) {
	ok := testSlurmOptions("/bin/fits")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*SlurmOptions)
	}{
		{"cpus", func(o *SlurmOptions) { o.CPUsPerTask = 0 }},
		{"mem unit", func(o *SlurmOptions) { o.Mem = "8GB" }},
		{"mem empty", func(o *SlurmOptions) { o.Mem = "" }},
		{"time", func(o *SlurmOptions) { o.Time = "1h" }},
		{"partition with a space", func(o *SlurmOptions) { o.Partition = "a b" }},
		{"gres with a newline", func(o *SlurmOptions) { o.Gres = "gpu:1\n#SBATCH --x" }},
		{"relative binary", func(o *SlurmOptions) { o.Exe = "bin/fits" }},
	} {
		o := ok
		tc.edit(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: %+v accepted", tc.name, o)
		}
	}
	for _, v := range []string{"90", "30:00", "12:00:00", "2-00", "2-12:00", "2-12:00:00"} {
		o := ok
		o.Time = v
		if err := o.Validate(); err != nil {
			t.Errorf("time %q: %v", v, err)
		}
	}
}

// TestScriptTasks runs the emitted array job's script with bash as Slurm would run its tasks, with a
// stand-in fits binary that prints its arguments: a fresh run starts, a run with a checkpoint resumes, a
// finished run is left alone, and arguments survive the quoting of runs.txt.
func TestScriptTasks(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	tmp := t.TempDir()
	fake := filepath.Join(tmp, "fake-fits")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nfor a in \"$@\"; do printf 'arg<%s>\\n' \"$a\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := threeRuns(t, filepath.Join(tmp, "root"))
	script, err := EmitSlurm(g, testSlurmOptions(fake))
	if err != nil {
		t.Fatal(err)
	}
	if got := RunsList(g); strings.Count(got, "\n") != 3 {
		t.Fatalf("runs.txt has not one line per run:\n%s", got)
	}
	if idx, err := ReadIndex(g.Root); err != nil || len(idx.Runs) != 3 || idx.Counts[Pending] != 3 {
		t.Errorf("index after emitting: %+v, %v", idx, err)
	}
	writeFakeCheckpoint(t, g.Runs[1].Dir, 1)
	// The interrupted task stopped in the middle of a progress bar.
	if err := os.WriteFile(filepath.Join(g.Runs[1].Dir, LogFile), []byte("\r\033[Kepoch 2/3 [=   ] 1/4"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustWriteResult(t, g.Runs[2].Dir, fakeResult(3, 1, 1))

	task := func(k string) string {
		cmd := exec.Command(bash, script)
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID="+k, "SLURM_ARRAY_JOB_ID=77")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("task %s: %v\n%s", k, err, out.String())
		}
		return out.String()
	}
	args := func(r Run) []string {
		b, _ := os.ReadFile(filepath.Join(r.Dir, LogFile))
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if a, ok := strings.CutPrefix(l, "arg<"); ok {
				out = append(out, strings.TrimSuffix(a, ">"))
			}
		}
		return out
	}
	for k := range g.Runs {
		task(string(rune('0' + k)))
	}
	if got, want := args(g.Runs[0]), g.Command(g.Runs[0], false); !slices.Equal(got, want) {
		t.Errorf("task 0 ran %q, want %q", got, want)
	}
	if got, want := args(g.Runs[1]), g.Command(g.Runs[1], true); !slices.Equal(got, want) {
		t.Errorf("task 1 (checkpoint) ran %q, want %q", got, want)
	}
	if got := args(g.Runs[2]); got != nil {
		t.Errorf("task 2 (finished) ran %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(g.Runs[0].Dir, LogFile)); !bytes.HasPrefix(b, []byte(segmentMark)) ||
		!strings.Contains(string(b), "job 77 task 0") {
		t.Errorf("task 0's log does not open with its segment line:\n%s", b)
	}
	if s := segments(t, g.Runs[1]); len(s) != 1 || !strings.Contains(s[0], "job 77 task 1") {
		t.Errorf("task 1's segment line does not start a line: %q", s)
	}
	if _, err := os.Stat(filepath.Join(g.Root, SlurmLogDir)); err != nil {
		t.Errorf("Slurm's output folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(g.Runs[2].Dir, train.ResultFile)); err != nil {
		t.Error(err)
	}
	// A task past the end of runs.txt fails.
	cmd := exec.Command(bash, script)
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=3")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no line 4") {
		t.Errorf("task 3 of 3: %v, %s", err, out)
	}
}

func TestEmitSlurmRejects(t *testing.T) {
	g := threeRuns(t, filepath.Join(t.TempDir(), "with space"))
	if _, err := EmitSlurm(g, testSlurmOptions("/bin/fits")); err == nil || !strings.Contains(err.Error(), "spaces") {
		t.Errorf("root with a space: %v", err)
	}
	g = threeRuns(t, t.TempDir())
	o := testSlurmOptions("/bin/fits")
	o.Mem = "lots"
	if _, err := EmitSlurm(g, o); err == nil {
		t.Error("invalid options accepted")
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"--epochs=1":   "--epochs=1",
		"/a/b-c_d.e":   "/a/b-c_d.e",
		"":             "''",
		"a b":          "'a b'",
		"it's":         `'it'\''s'`,
		"$HOME":        "'$HOME'",
		"x;rm -rf /":   "'x;rm -rf /'",
		"--set=a,b:c@": "--set=a,b:c@",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

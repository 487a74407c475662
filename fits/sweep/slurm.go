package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fits-snn/fits/internal/filesafe"
)

// Files that EmitSlurm writes into a sweep's root.
const (
	// SlurmScript is the array job: one task per run.
	SlurmScript = "sweep.sbatch"
	// RunsFile holds one line per array task: the arguments of its `fits` command, quoted for a POSIX
	// shell (line k+1 is task k).
	RunsFile = "runs.txt"
	// SlurmLogDir holds Slurm's own output of each task (the run's training output goes to its log.txt).
	SlurmLogDir = "slurm"
)

// SlurmOptions are the resources of each array task and the binary it runs.
type SlurmOptions struct {
	// CPUsPerTask is --cpus-per-task (at least 1).
	CPUsPerTask int
	// Mem is --mem, the memory per task: a number with an optional unit K, M, G or T (e.g. 8G).
	Mem string
	// Time is --time, the wall-time limit of a task: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or
	// D-HH:MM:SS.
	Time string
	// Partition is --partition; empty means the cluster's default.
	Partition string
	// Gres is --gres, e.g. gpu:1; empty means none.
	Gres string
	// JobName is --job-name; empty means fits-sweep.
	JobName string
	// Exe is the fits binary the tasks run (absolute; the cluster's nodes must see it at that path). The
	// environment variable FITS_BIN overrides it when the job runs.
	Exe string
}

var (
	memRe  = regexp.MustCompile(`^[0-9]+[KMGT]?$`)
	timeRe = regexp.MustCompile(`^([0-9]+|[0-9]+:[0-9]{2}|[0-9]+:[0-9]{2}:[0-9]{2}|[0-9]+-[0-9]+(:[0-9]{2}(:[0-9]{2})?)?)$`)
	wordRe = regexp.MustCompile(`^[A-Za-z0-9_.:,=+@/-]*$`)
)

// ErrSlurmRoot is wrapped by EmitSlurm's error for a root folder whose path Slurm cannot take.
var ErrSlurmRoot = errors.New("Slurm's #SBATCH --output cannot hold spaces, line breaks or %: choose a folder without them")

// Validate reports the first invalid option.
func (o SlurmOptions) Validate() error {
	switch {
	case o.CPUsPerTask < 1:
		return fmt.Errorf("cpus per task must be at least 1, got %d", o.CPUsPerTask)
	case !memRe.MatchString(o.Mem):
		return fmt.Errorf("memory %q is not a Slurm --mem value (e.g. 8G, 16000M)", o.Mem)
	case !timeRe.MatchString(o.Time):
		return fmt.Errorf("time %q is not a Slurm --time value (e.g. 90, 12:00:00, 2-00:00:00)", o.Time)
	case !wordRe.MatchString(o.Partition):
		return fmt.Errorf("partition %q has characters Slurm does not take", o.Partition)
	case !wordRe.MatchString(o.Gres):
		return fmt.Errorf("gres %q has characters Slurm does not take", o.Gres)
	case !wordRe.MatchString(o.JobName):
		return fmt.Errorf("job name %q has characters this script does not take", o.JobName)
	case !filepath.IsAbs(o.Exe):
		return fmt.Errorf("the fits binary %q is not an absolute path", o.Exe)
	}
	return nil
}

// RunsList returns the content of runs.txt: line k+1 holds the quoted arguments of task k's command,
// Grid.Command(run k, false) without --resume (the task adds it when the run has a checkpoint).
func RunsList(g *Grid) string {
	var b strings.Builder
	for _, r := range g.Runs {
		b.WriteString(shellJoin(g.Command(r, false)))
		b.WriteByte('\n')
	}
	return b.String()
}

// Script returns the content of sweep.sbatch for g: a Slurm array job with one task per run
// (--array=0-(N-1)) and the given resources per task. Task k reads line k+1 of runs.txt and runs the
// same command as a local sweep: nothing when the run's result.json exists (fits/train writes it after
// the last epoch only), `fits train ... --resume` when its directory holds a checkpoint (a requeued or
// restarted task continues where the last one stopped), `fits train ...` otherwise, with the output
// appended to the run's log.txt.
func Script(g *Grid, o SlurmOptions) string {
	name := o.JobName
	if name == "" {
		name = "fits-sweep"
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("#!/bin/bash")
	w("# Written by `fits sweep --emit=slurm`: a Slurm array job, one task per training run of the grid")
	w("# (%d runs, %s mode, root %s).", len(g.Runs), g.Mode, g.Root)
	w("# Task k runs the `fits` command on line k+1 of %s; a task whose run has finished does", RunsFile)
	w("# nothing, one whose run has a checkpoint resumes it, so the job can be resubmitted or requeued.")
	w("# Submit with: sbatch %s", shellQuote(filepath.Join(g.Root, SlurmScript)))
	w("#SBATCH --job-name=%s", name)
	w("#SBATCH --array=0-%d", len(g.Runs)-1)
	w("#SBATCH --cpus-per-task=%d", o.CPUsPerTask)
	w("#SBATCH --mem=%s", o.Mem)
	w("#SBATCH --time=%s", o.Time)
	if o.Partition != "" {
		w("#SBATCH --partition=%s", o.Partition)
	}
	if o.Gres != "" {
		w("#SBATCH --gres=%s", o.Gres)
	}
	// #SBATCH lines are not shell: a path with spaces cannot be quoted there.
	w("#SBATCH --output=%s", filepath.Join(g.Root, SlurmLogDir, "%A_%a.out"))
	w("#SBATCH --open-mode=append")
	w("#SBATCH --requeue")
	w("set -euo pipefail")
	w("fits=${FITS_BIN:-%s}", shellQuote(o.Exe))
	w("runs=%s", shellQuote(filepath.Join(g.Root, RunsFile)))
	w("task=${SLURM_ARRAY_TASK_ID:?not a Slurm array task}")
	w(`line=$(sed -n "$((task + 1))p" "$runs")`)
	w(`if [ -z "$line" ]; then echo "no line $((task + 1)) in $runs" >&2; exit 1; fi`)
	w(`eval "set -- $line"`)
	w(`dir=`)
	w(`for a in "$@"; do case $a in --out=*) dir=${a#--out=} ;; esac; done`)
	w(`if [ -z "$dir" ]; then echo "line $((task + 1)) of $runs has no --out" >&2; exit 1; fi`)
	w(`mkdir -p "$dir"`)
	w(`if [ -f "$dir/result.json" ]; then echo "$dir: finished already"; exit 0; fi`)
	w(`if compgen -G "$dir/checkpoint-n*.sha256" > /dev/null; then set -- "$@" --resume; fi`)
	w(`if [ -n "$(tail -c 1 "$dir/%s" 2> /dev/null)" ]; then echo >> "$dir/%s"; fi`, LogFile, LogFile)
	w(`printf '%%s%%s job %%s task %%s on %%s: %%s\n' %s "$(date -Iseconds)" "${SLURM_ARRAY_JOB_ID:-?}" "$task" "$(hostname)" "$fits $*" >> "$dir/%s"`,
		shellQuote(segmentMark), LogFile)
	w(`exec "$fits" "$@" >> "$dir/%s" 2>&1`, LogFile)
	return b.String()
}

// EmitSlurm writes ROOT/sweep.sbatch and ROOT/runs.txt for g, the index ROOT/sweep.json, creates the Slurm output folder ROOT/slurm
// (Slurm does not create it), and returns the path of the script. Running the job is `sbatch PATH`.
func EmitSlurm(g *Grid, o SlurmOptions) (string, error) {
	if err := o.Validate(); err != nil {
		return "", err
	}
	if len(g.Runs) == 0 {
		return "", errors.New("the grid has no runs")
	}
	if strings.ContainsAny(g.Root, " \t\n%") {
		return "", fmt.Errorf("root %q: %w", g.Root, ErrSlurmRoot)
	}
	if err := checkMode(g); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(g.Root, SlurmLogDir), 0o755); err != nil {
		return "", err
	}
	if _, err := refreshIndex(g); err != nil {
		return "", err
	}
	if err := filesafe.WriteFile(filepath.Join(g.Root, RunsFile), []byte(RunsList(g))); err != nil {
		return "", err
	}
	path := filepath.Join(g.Root, SlurmScript)
	if err := filesafe.WriteFile(path, []byte(Script(g, o))); err != nil {
		return "", err
	}
	return path, nil
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fits-snn/fits/fits/train"
)

func TestTrainEvalBadInput(t *testing.T) {
	busy := t.TempDir()
	// A directory holding a complete (empty) checkpoint.
	if err := os.WriteFile(filepath.Join(busy, "checkpoint-n0000000-x.json"), []byte(`{"BinFormat":"uncompressed","Variables":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(busy, "checkpoint-n0000000-x.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // in the one-line message
	}{
		{"unknown dataset", []string{"train", "--dataset=nope"}, "synthetic"},
		{"unknown model", []string{"train", "--model=izh"}, "fs-frozen"},
		{"unknown protocol", []string{"train", "--protocol=cv"}, "official-val"},
		{"unknown readout", []string{"train", "--readout=last"}, "li-max"},
		{"unknown executor", []string{"train", "--executor=fast"}, "chunked"},
		{"unknown engine", []string{"train", "--engine=fast"}, "--engine"},
		{"fsts needs m", []string{"train", "--model=fsts"}, "M >= 1"},
		{"bad lr", []string{"train", "--lr=fast"}, "--lr"},
		{"negative width", []string{"train", "--width=-3"}, "width"},
		{"fractional seed", []string{"train", "--seed=1.5"}, "--seed"},
		{"existing run", []string{"train", "--out=" + busy}, "--resume"},
		{"unknown ts-mix", []string{"train", "--ts-mix=nested"}, "--ts-mix"},
		{"unknown surrogate", []string{"train", "--surrogate=atan"}, "--surrogate"},
		{"bad surrogate alpha", []string{"train", "--surrogate-alpha=0"}, "--surrogate-alpha"},
		{"non-numeric surrogate alpha", []string{"train", "--surrogate-alpha=two"}, "--surrogate-alpha"},
		{"unknown target coordinate", []string{"train", "--target-coordinate=hz"}, "--target-coordinate"},
		{"unknown f-init", []string{"train", "--f-init=mel"}, "--f-init"},
		{"bad guard safety", []string{"train", "--freq-guard-safety=1.5"}, "--freq-guard-safety"},
		{"non-numeric guard safety", []string{"train", "--freq-guard-safety=high"}, "--freq-guard-safety"},
		{"unknown dropout mode", []string{"train", "--dropout-mode=frame"}, "--dropout-mode"},
		{"unknown lr schedule", []string{"train", "--lr-schedule=linear"}, "--lr-schedule"},
		{"bad adam epsilon", []string{"train", "--adam-epsilon=-1"}, "--adam-epsilon"},
		{"unknown bias init", []string{"train", "--bias-init=normal"}, "--bias-init"},
		{"unknown adaptlif", []string{"train", "--adaptlif=frozen"}, "--adaptlif"},
		{"unknown frontend", []string{"train", "--frontend=mfcc"}, "--frontend"},
		{"unknown val split", []string{"train", "--val-split=random"}, "--val-split"},
		{"negative tau", []string{"train", "--tau-m=-1"}, "--tau-m"},
		{"simulate unknown ts-mix", []string{"simulate", "--ts-mix=x", "--fstar=10", "--input=/dev/null"}, "--ts-mix"},
		{"response unknown ts-mix", []string{"response", "--ts-mix=x"}, "--ts-mix"},
		{"eval without checkpoint flag", []string{"eval"}, "--checkpoint"},
		{"eval of an empty folder", []string{"eval", "--checkpoint=" + t.TempDir()}, "no checkpoint"},
		{"eval with an unknown engine", []string{"eval", "--checkpoint=" + t.TempDir(), "--engine=warp"}, "--engine"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkBadInput(t, tc.args, tc.want) })
	}
}

// TestTrainKillResume builds the CLI, trains a tiny network without interruption, trains it again but
// kills the process (SIGKILL) after its first checkpoint, resumes it, and checks that both runs end with the
// same per-epoch metrics; then evaluates the checkpoint with `fits eval --json`.
func TestTrainKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI and trains three times")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "fits")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// An engine that cannot run the network is refused in one line: the backend's announcement is held
	// back until the engine is known to run (it used to print two lines before the error).
	for _, bad := range [][]string{{"--model=fsts", "--m=9"}, {"--engine=scan", "--backend=go"}} {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, append([]string{"train", "--dataset=synthetic", "--small", "--quiet",
			"--out=" + filepath.Join(tmp, "refused")}, bad...)...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || strings.Count(stderr.String(), "\n") != 1 ||
			!strings.Contains(stderr.String(), "engine") {
			t.Errorf("fits train %s: %v, stderr %q; want exit status 2 and one line naming the engine", bad, err, stderr.String())
		}
	}
	args := func(dir string, extra ...string) []string {
		return append([]string{"train", "--dataset=synthetic", "--small", "--model=lif", "--width=4",
			"--batch=32", "--epochs=120", "--lr=0.01", "--dropout=0.2", "--seed=3", "--protocol=val-split",
			"--quiet", "--json", "--out=" + dir}, extra...)
	}
	runJSON := func(a ...string) train.Result {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, a...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("fits %s: %v\n%s", strings.Join(a, " "), err, stderr.String())
		}
		if n := strings.Count(strings.TrimSpace(stdout.String()), "\n"); n != 0 {
			t.Fatalf("--json printed %d lines", n+1)
		}
		var r train.Result
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout.String())
		}
		return r
	}

	want := runJSON(args(filepath.Join(tmp, "full"))...)
	if len(want.Epochs) != 120 || want.BestValAcc == nil || want.TestAccAtBestVal == nil || want.Backend == "" {
		t.Fatalf("uninterrupted result: %d epochs, best val %v, backend %q", len(want.Epochs), want.BestValAcc, want.Backend)
	}

	dir := filepath.Join(tmp, "killed")
	cmd := exec.Command(bin, args(dir)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for !train.HasCheckpoint(dir) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("no checkpoint after 5 minutes")
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The process re-executed itself (same process id) with glibc's huge-page malloc (hugepages.go).
	if _, set := os.LookupEnv("GLIBC_TUNABLES"); runtime.GOOS == "linux" && !set && os.Getenv("FITS_MALLOC_HUGEPAGES") != "0" {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(env, []byte("GLIBC_TUNABLES="+mallocHugePages)) {
			t.Errorf("the training process runs without GLIBC_TUNABLES=%s", mallocHugePages)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, train.ResultFile)); err == nil {
		t.Fatal("the run finished before it was killed; the test needs more epochs")
	}

	got := runJSON(args(dir, "--resume")...)
	strip := func(e []train.Epoch) []train.Epoch {
		out := slices.Clone(e)
		for i := range out {
			out[i].Seconds = 0
		}
		return out
	}
	a, _ := json.Marshal(strip(got.Epochs))
	b, _ := json.Marshal(strip(want.Epochs))
	if !bytes.Equal(a, b) {
		t.Errorf("killed and resumed run differs from the uninterrupted one")
	}
	if *got.BestValAcc != *want.BestValAcc || *got.TestAccAtBestVal != *want.TestAccAtBestVal ||
		got.BestTestAcc != want.BestTestAcc || got.ParameterCount != want.ParameterCount {
		t.Errorf("summary differs: got %v/%v/%v/%d, want %v/%v/%v/%d", *got.BestValAcc, *got.TestAccAtBestVal,
			got.BestTestAcc, got.ParameterCount, *want.BestValAcc, *want.TestAccAtBestVal, want.BestTestAcc, want.ParameterCount)
	}

	var stdout, stderr bytes.Buffer
	ev := exec.Command(bin, "eval", "--checkpoint="+dir, "--json")
	ev.Stdout, ev.Stderr = &stdout, &stderr
	if err := ev.Run(); err != nil {
		t.Fatalf("fits eval: %v\n%s", err, stderr.String())
	}
	var er train.EvalResult
	if err := json.Unmarshal(stdout.Bytes(), &er); err != nil {
		t.Fatalf("eval stdout is not one JSON object: %v\n%s", err, stdout.String())
	}
	if er.Epoch != 120 || er.TestAcc != want.FinalTestAcc {
		t.Errorf("eval: epoch %d test %g; training ended with test %g", er.Epoch, er.TestAcc, want.FinalTestAcc)
	}
}

// TestCorruptCheckpointResume trains a tiny network, copies its run, overwrites the copy's newest
// checkpoint weights with random bytes of the same size and deletes its result.json: `fits eval` names the
// corrupt checkpoint and evaluates the previous one, and `fits train --resume` warns once, continues from
// the previous checkpoint and writes a result.json equal to the uninterrupted run's (times aside). With
// every checkpoint corrupt, both refuse with status 2.
func TestCorruptCheckpointResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains twice")
	}
	tmp := t.TempDir()
	full, copied := filepath.Join(tmp, "full"), filepath.Join(tmp, "copy")
	args := func(dir string, extra ...string) []string {
		return append([]string{"train", "--dataset=synthetic", "--small", "--model=lif", "--width=4", "--batch=32",
			"--epochs=3", "--lr=0.01", "--dropout=0.2", "--seed=3", "--protocol=val-split", "--quiet", "--json",
			"--out=" + dir}, extra...)
	}
	status, _, stderr := run(args(full)...)
	if status != 0 {
		t.Fatalf("uninterrupted run: status %d: %s", status, stderr)
	}
	want, err := train.ReadResult(full)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(copied, os.DirFS(full)); err != nil {
		t.Fatal(err)
	}
	bins, _ := filepath.Glob(filepath.Join(copied, "checkpoint-*.bin"))
	if len(bins) != 2 {
		t.Fatalf("checkpoints %v, want the two newest", bins)
	}
	slices.Sort(bins)
	newest := strings.TrimSuffix(filepath.Base(bins[1]), ".bin")
	previous := strings.TrimSuffix(filepath.Base(bins[0]), ".bin")
	garbleFile(t, bins[1])
	if err := os.Remove(filepath.Join(copied, train.ResultFile)); err != nil {
		t.Fatal(err)
	}

	status, stdout, stderr := run("eval", "--checkpoint="+copied, "--json")
	if status != 0 {
		t.Fatalf("eval: status %d: %s", status, stderr)
	}
	var ev train.EvalResult
	if err := json.Unmarshal([]byte(stdout), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.CheckpointName != previous || ev.Epoch != 2 || !strings.Contains(stderr, "skipping checkpoint "+newest) ||
		!strings.Contains(stderr, "using checkpoint "+previous+" (epoch 2)") {
		t.Errorf("eval used %s (epoch %d); stderr %q", ev.CheckpointName, ev.Epoch, stderr)
	}
	if ev.TestAcc != want.Epochs[1].TestAcc {
		t.Errorf("eval of the epoch-2 checkpoint: test %g, training measured %g", ev.TestAcc, want.Epochs[1].TestAcc)
	}

	status, _, stderr = run(args(copied, "--resume")...)
	if status != 0 {
		t.Fatalf("resume: status %d: %s", status, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "warning: checkpoint "+newest) ||
		!strings.Contains(lines[0], "resuming from "+previous+" (epoch 2)") {
		t.Errorf("resume: stderr %q, want one warning naming %s and %s", stderr, newest, previous)
	}
	got, err := train.ReadResult(copied)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := resultWithoutTimes(t, got), resultWithoutTimes(t, want); a != b {
		t.Errorf("result.json after resuming past a corrupt checkpoint differs from the uninterrupted run:\n got %s\nwant %s", a, b)
	}

	bins, _ = filepath.Glob(filepath.Join(copied, "checkpoint-*.bin"))
	for _, b := range bins {
		garbleFile(t, b)
	}
	if status, _, stderr := run("eval", "--checkpoint="+copied); status != 2 || !strings.Contains(stderr, "no intact checkpoint") {
		t.Errorf("eval with every checkpoint corrupt: status %d: %s", status, stderr)
	}
	if status, _, stderr := run(args(copied, "--resume")...); status != 2 || !strings.Contains(stderr, "no intact checkpoint") {
		t.Errorf("resume with every checkpoint corrupt: status %d: %s", status, stderr)
	}
}

// resultWithoutTimes returns r as JSON with its wall-clock fields zeroed.
func resultWithoutTimes(t *testing.T, r *train.Result) string {
	t.Helper()
	c := *r
	c.WallSeconds, c.CompileSeconds = 0, 0
	// How the run was made (one segment per start or resume) differs by design between a resumed run
	// and an uninterrupted one.
	c.Segments, c.Resumes = nil, 0
	c.Epochs = slices.Clone(r.Epochs)
	for i := range c.Epochs {
		c.Epochs[i].Seconds = 0
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// garbleFile overwrites a file with random bytes of the same size.
func garbleFile(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, st.Size())
	rng := rand.New(rand.NewPCG(7, uint64(st.Size())))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTrainDefaultsAreReleased: `fits train` with no semantic flags records the released code's training
// semantics in result.json, at the top level and in its config.
func TestTrainDefaultsAreReleased(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := run("train", "--small", "--epochs=1", "--width=8", "--quiet", "--json", "--out="+out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, src := range []string{stdout, readFile(t, filepath.Join(out, train.ResultFile))} {
		var r map[string]any
		if err := json.Unmarshal([]byte(src), &r); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"ts_mix": "official", "surrogate_alpha": 2.0, "target_coordinate": "log-hz",
			"freq_guard_safety": 0.98, "dropout_mode": "step", "readout": "sum", "lr_schedule": "epoch"}
		cfg, _ := r["config"].(map[string]any)
		for k, v := range want {
			if r[k] != v || cfg[k] != v {
				t.Errorf("%s: %v at the top level, %v in config; want %v", k, r[k], cfg[k], v)
			}
		}
		epochs, _ := r["epochs"].([]any)
		if len(epochs) != 1 {
			t.Fatalf("%d epochs", len(epochs))
		}
		if _, ok := epochs[0].(map[string]any)["freq_projected"]; !ok {
			t.Error("no freq_projected in the epoch record")
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

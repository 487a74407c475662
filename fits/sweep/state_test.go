package sweep

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fits-snn/fits/fits/experiment"
	"github.com/fits-snn/fits/fits/train"
)

// writeFakeCheckpoint writes a checkpoint pair that fits/train counts as complete: a JSON whose variables
// layout promises 4 bytes, and a binary file of 4 bytes. The pair records the epochs done, for the fake
// trainer of the executor tests.
func writeFakeCheckpoint(t testing.TB, dir string, epochs int) {
	t.Helper()
	if err := writeCheckpointFiles(dir, epochs); err != nil {
		t.Fatal(err)
	}
}

func writeCheckpointFiles(dir string, epochs int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, fmt.Sprintf("checkpoint-n%07d-step-%08d", epochs, epochs))
	if err := os.WriteFile(base+".bin", []byte{1, 2, 3, 4}, 0o644); err != nil {
		return err
	}
	js := fmt.Sprintf(`{"Variables":[{"Pos":0,"Length":4}],"FakeEpochs":%d}`, epochs)
	if err := os.WriteFile(base+".json", []byte(js), 0o644); err != nil {
		return err
	}
	// The checksums, as fits train records them: a checkpoint without them is untrusted.
	name := filepath.Base(base)
	sums := fmt.Sprintf("%x  %s.json\n%x  %s.bin\n", sha256.Sum256([]byte(js)), name, sha256.Sum256([]byte{1, 2, 3, 4}), name)
	return os.WriteFile(base+".sha256", []byte(sums), 0o644)
}

// fakeResult returns a result of seed with done of planned epochs; epoch k has test accuracy k/100, so
// the best epoch under best-test is the last.
func fakeResult(seed int64, done, planned int) *train.Result {
	r := &train.Result{Seed: seed, Protocol: train.BestTest, WallSeconds: 12.5,
		Config: train.Config{Epochs: planned, Seed: seed, Protocol: train.BestTest}}
	for k := 1; k <= done; k++ {
		r.Epochs = append(r.Epochs, train.Epoch{Epoch: k, TestAcc: float64(k) / 100})
	}
	r.BestEpoch, r.BestTestAcc = done, float64(done)/100
	return r
}

func TestInspect(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name    string
		prepare func(dir string)
		want    Status
	}{
		{"missing directory", func(string) {}, Pending},
		{"empty directory", func(dir string) { _ = os.MkdirAll(dir, 0o755) }, Pending},
		{"log only", func(dir string) {
			_ = os.MkdirAll(dir, 0o755)
			_ = os.WriteFile(filepath.Join(dir, LogFile), []byte("compiling\n"), 0o644)
		}, Pending},
		{"checkpoint", func(dir string) { writeFakeCheckpoint(t, dir, 2) }, Partial},
		{"incomplete checkpoint", func(dir string) {
			writeFakeCheckpoint(t, dir, 2)
			// The binary file is shorter than its JSON promises: a save that a kill interrupted.
			_ = os.WriteFile(filepath.Join(dir, "checkpoint-n0000002-step-00000002.bin"), []byte{1}, 0o644)
		}, Pending},
		{"finished", func(dir string) {
			writeFakeCheckpoint(t, dir, 3)
			mustWriteResult(t, dir, fakeResult(1, 3, 3))
		}, Finished},
		{"finished, checkpoints pruned", func(dir string) { mustWriteResult(t, dir, fakeResult(1, 3, 3)) }, Finished},
		{"result short of its epochs, with checkpoint", func(dir string) {
			writeFakeCheckpoint(t, dir, 2)
			mustWriteResult(t, dir, fakeResult(1, 2, 3))
		}, Partial},
		{"corrupt result, with checkpoint", func(dir string) {
			writeFakeCheckpoint(t, dir, 2)
			_ = os.WriteFile(filepath.Join(dir, train.ResultFile), []byte("{"), 0o644)
		}, Partial},
		{"result of another seed", func(dir string) { mustWriteResult(t, dir, fakeResult(4, 3, 3)) }, Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Run{Experiment: "x", Seed: 1, Dir: filepath.Join(root, tc.name)}
			tc.prepare(r.Dir)
			st := Inspect(r)
			if st.Status != tc.want {
				t.Fatalf("Inspect = %s (%v), want %s", st.Status, st.Err, tc.want)
			}
			if (st.Result != nil) != (tc.want == Finished) || (st.Err != nil) != (tc.want == Failed) {
				t.Errorf("state %+v", st)
			}
		})
	}
}

// TestInspectRecipe: a finished run of another recipe than the run's is no finished run of it, and the
// sweep leaves its folder alone; one of the recipe is.
func TestInspectRecipe(t *testing.T) {
	e, err := experiment.Lookup("ssc/fsts-m2/w512")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := e.Config(experiment.Quick, 1)
	r := Run{Experiment: e.ID, Seed: 1, Dir: t.TempDir(), Recipe: &cfg}
	res := fakeResult(1, 3, 3)
	res.Config = cfg
	res.Config.Epochs, res.Config.TSMix = 3, "paper"
	mustWriteResult(t, r.Dir, res)
	if st := Inspect(r); st.Status != Failed || st.Err == nil || !strings.Contains(st.Err.Error(), "ts_mix paper, the recipe's is official") {
		t.Errorf("another recipe: %s, %v", st.Status, st.Err)
	}
	res.Config.TSMix = cfg.TSMix
	mustWriteResult(t, r.Dir, res)
	if st := Inspect(r); st.Status != Finished {
		t.Errorf("the recipe with fewer epochs: %s, %v", st.Status, st.Err)
	}
}

func mustWriteResult(t testing.TB, dir string, r *train.Result) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := train.WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
}

func TestAccuracy(t *testing.T) {
	r := fakeResult(1, 5, 5)
	if a, ok := Accuracy(r); !ok || a != 0.05 {
		t.Errorf("Accuracy = %v, %v; want the best test accuracy, 0.05", a, ok)
	}
	v, at := 0.5, 0.02
	r.Protocol, r.BestValAcc, r.TestAccAtBestVal = train.OfficialVal, &v, &at
	if a, ok := Accuracy(r); !ok || a != 0.02 {
		t.Errorf("Accuracy = %v, %v; want the test accuracy at the best validation epoch, 0.02", a, ok)
	}
	r.TestAccAtBestVal = nil
	if _, ok := Accuracy(r); ok {
		t.Error("Accuracy of a validation run without a validation accuracy")
	}
	if _, ok := Accuracy(nil); ok {
		t.Error("Accuracy(nil)")
	}
}

func TestLogEpochs(t *testing.T) {
	for _, tc := range []struct {
		name, log   string
		done, total int
		ok          bool
	}{
		{"no epoch yet", "compiling lif ...\n", 0, 0, false},
		{"step of epoch 3", "\r\033[Kepoch 2/10 loss 1.0 train 50.0% test 40.0% rate 1.0% (0.1 s)\n" +
			"\r\033[Kepoch 3/10 [====      ] 4/16 loss 1.2", 2, 10, true},
		{"evaluating epoch 3", "\r\033[Kepoch 3/10 [====] 16/16 loss 1\r\033[Kepoch 3/10 evaluating...", 2, 10, true},
		{"epoch 3 done", "\r\033[Kepoch 3/10 loss 0.9 train 60.0% test 50.0% rate 1.0% (0.1 s)\n", 3, 10, true},
		{"resumed", "resuming /r after epoch 4 of 10\ncompiling", 4, 10, true},
		{"new segment without epochs", "\r\033[Kepoch 3/10 loss 0.9 (0.1 s)\n" + segmentMark + "2026 pid 1: fits train\n", 0, 0, false},
		{"new segment", "epoch 9/10 loss 0.9 (0.1 s)\n" + segmentMark + "...\nresuming /r after epoch 3 of 10\n" +
			"\r\033[Kepoch 4/10 [=   ] 1/16", 3, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, LogFile), []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			done, total, ok := LogEpochs(dir)
			if done != tc.done || total != tc.total || ok != tc.ok {
				t.Errorf("LogEpochs = %d, %d, %v; want %d, %d, %v", done, total, ok, tc.done, tc.total, tc.ok)
			}
		})
	}
	if _, _, ok := LogEpochs(t.TempDir()); ok {
		t.Error("LogEpochs of a folder without a log")
	}
}

// TestIndexKeepsRawRoot: sweep.json under a folder whose name is not UTF-8 (Latin-1) keeps the root's exact
// bytes in root_base64 (encoding/json alone writes U+FFFD for each such byte, and the folder is lost).
func TestIndexKeepsRawRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "r\xe9sultats")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Skipf("this file system refuses a Latin-1 name: %v", err)
	}
	idx := &Index{Root: root, Mode: experiment.Quick, Counts: map[Status]int{}}
	if err := idx.Write(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Root       string `json:"root"`
		RootBase64 string `json:"root_base64"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if raw, _ := base64.StdEncoding.DecodeString(got.RootBase64); string(raw) != root || got.Root == root {
		t.Errorf("root %q, root_base64 %q: want the exact bytes of %q beside the lossy string", got.Root, got.RootBase64, root)
	}
	if back, err := ReadIndex(root); err != nil || back.Mode != experiment.Quick {
		t.Errorf("ReadIndex: %v, %+v", err, back)
	}
}

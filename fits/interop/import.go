package interop

import (
	"fmt"
	"math"

	"github.com/fits-snn/fits/fits/train"
)

// ImportRun writes the released run r, mapped by MapReleased, as a run folder of this toolkit into dir
// (an existing folder that holds no run): a checkpoint holding the configuration, the history up to the
// checkpoint's epoch and the weights, and result.json, whose imported field names the file and its
// SHA-256 and whose epochs are the released history (see Epochs). The result is returned.
func ImportRun(r *Released, m *Mapped, dir string) (*train.Result, error) {
	epochs, err := Epochs(r.History)
	if err != nil {
		return nil, inputErrorf("%s: %v", MetricsFile, err)
	}
	if len(epochs) > 0 && r.Epoch > len(epochs) {
		return nil, inputErrorf("%s was saved after epoch %d, but %s records %d epochs", r.Checkpoint, r.Epoch, MetricsFile, len(epochs))
	}
	cfg := m.Config
	res := &train.Result{
		Dataset: cfg.Dataset, Model: cfg.Model, M: cfg.M, Width: cfg.Width, Seed: cfg.Seed,
		Protocol: cfg.Protocol, Classes: m.Classes, Config: cfg, Semantics: cfg.Semantics(),
		BestEpoch: r.Epoch, Epochs: epochs,
		Imported: &train.Import{Format: FormatReleased, From: runFrom(r.Checkpoint), SHA256: r.SHA256,
			Config: configSourceName(r), Epoch: r.Epoch, History: r.History},
	}
	if r.ValidAcc != nil && r.TestAcc != nil {
		v, t := *r.ValidAcc, *r.TestAcc
		res.BestValAcc, res.TestAccAtBestVal = &v, &t
	}
	res.BestTestAcc = math.Inf(-1)
	for _, e := range epochs {
		res.BestTestAcc = math.Max(res.BestTestAcc, e.TestAcc)
	}
	if r.TestAcc != nil {
		res.BestTestAcc = math.Max(res.BestTestAcc, *r.TestAcc)
		res.FinalTestAcc = *r.TestAcc
	}
	if len(epochs) > 0 {
		res.FinalTestAcc = epochs[len(epochs)-1].TestAcc
	}
	if math.IsInf(res.BestTestAcc, -1) {
		res.BestTestAcc = 0
	}
	var history []train.Epoch
	if len(epochs) > 0 {
		history = epochs[:r.Epoch]
	}
	if err := train.WriteImportedRun(dir, cfg, history, m.Variables, res); err != nil {
		return nil, err
	}
	return res, nil
}

func configSourceName(r *Released) string {
	if r.ConfigSource == "checkpoint" {
		return "checkpoint"
	}
	return runFrom(r.ConfigSource)
}

// Epochs maps the released per-epoch records (metrics.json: epoch, train_loss, train_acc, lr, test_acc,
// valid_acc, freq_projected) onto train.Epoch. Under validation protocols the released code measures the
// test accuracy only at epochs that improve the validation accuracy; an epoch without one carries the test
// accuracy of the epoch selected so far (what the released code would report if it stopped there). The
// records themselves stay in result.json's imported.history.
func Epochs(history []map[string]any) ([]train.Epoch, error) {
	out := make([]train.Epoch, 0, len(history))
	testAtBest := 0.0
	for i, rec := range history {
		// num returns the record's number under key and whether it has one; the first problem sticks in err.
		var err error
		num := func(key string, required bool) (float64, bool) {
			v, ok := rec[key]
			switch f, isNum := v.(float64); {
			case err != nil:
			case !ok || v == nil:
				if required {
					err = fmt.Errorf("epoch %d has no %s", i+1, key)
				}
			case !isNum || math.IsNaN(f) || math.IsInf(f, 0):
				err = fmt.Errorf("epoch %d: %s is %v, not a finite number", i+1, key, v)
			default:
				return f, true
			}
			return 0, false
		}
		e := train.Epoch{Epoch: i + 1}
		e.Loss, _ = num("train_loss", true)
		e.TrainAcc, _ = num("train_acc", true)
		e.LR, _ = num("lr", false)
		if v, ok := num("valid_acc", false); ok {
			e.ValAcc = &v
		}
		if t, measured := num("test_acc", e.ValAcc == nil); measured {
			testAtBest = t
		}
		e.TestAcc = testAtBest
		p, _ := num("freq_projected", false)
		e.FreqProjected = int64(p)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

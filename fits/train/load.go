package train

import (
	"github.com/fits-snn/fits/data"
	"github.com/gomlx/gomlx/ml/model"
)

// Helpers for code that reads a run back (package fits/analysis): the same scope, dataset and splits as
// TrainModel and Evaluate use.

// ModelScope is the scope under which TrainModel and Evaluate build the network's variables: a
// network rebuilt from a checkpoint must be built in scope.At(ModelScope).
const ModelScope = modelScope

// HistoryFromContext returns the per-epoch measurements that TrainModel stores in the store's
// hyperparameters (and so in every checkpoint): one Epoch per finished epoch, none for a fresh store.
func HistoryFromContext(scope *model.Scope) ([]Epoch, error) {
	history, _, err := loadState(scope)
	return history, err
}

// LoadDataset returns the dataset a run with configuration cfg trains on: opts.Dataset when set, else
// cfg.Dataset loaded by name (from opts.DataDir, reduced with cfg.Small), keeping the first
// cfg.TrainLimit training and cfg.TestLimit test examples when those are positive.
func LoadDataset(cfg Config, opts Options) (*data.Dataset, error) {
	ds := opts.Dataset
	if ds == nil {
		var err error
		if ds, err = data.Load(cfg.Dataset, cfg.DataOptions(opts.DataDir)); err != nil {
			return nil, err
		}
	} else if err := ds.Validate(); err != nil {
		return nil, err
	}
	if cfg.TrainLimit == 0 && cfg.TestLimit == 0 {
		return ds, nil
	}
	out := *ds
	out.Train = ds.Train.Head(cfg.TrainLimit)
	out.Test = ds.Test.Head(cfg.TestLimit)
	return &out, nil
}

// ProtocolSplits returns the sets the protocol of cfg trains on, selects on (nil under best-test) and tests
// on: val-split holds out the released SHD* split of ds.Train (data.OfficialValSplit, seed ValSplitSeed;
// this toolkit's first stratified split with Config.ValSplit = "stratified"), official-val uses ds.Val.
func ProtocolSplits(cfg Config, ds *data.Dataset) (train, val, test *data.Set, err error) {
	sp, err := protocolSplits(cfg, ds)
	if err != nil {
		return nil, nil, nil, err
	}
	return sp.train, sp.val, sp.test, nil
}

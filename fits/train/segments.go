package train

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fits-snn/fits/internal/hostinfo"
	"github.com/gomlx/gomlx/ml/model"
)

// paramSegments is the store parameter (saved with every checkpoint) that records the run's segments.
const paramSegments = "train_segments" // JSON of []Segment

// Segment is one stretch of a run trained by one process: the first start, or one resume (--resume). A
// run interrupted and resumed twice has three segments; Result.Resumes counts the resumes.
type Segment struct {
	// FirstEpoch and LastEpoch are the 1-based epochs this segment trained (both included).
	FirstEpoch int `json:"first_epoch"`
	LastEpoch  int `json:"last_epoch"`
	// Started is when the segment began (RFC 3339, UTC); "" where not recorded.
	Started string `json:"started,omitempty"`
	// WallSeconds is the segment's wall time, compilation, training and evaluations included.
	WallSeconds float64 `json:"wall_seconds"`
	// Commit is the revision of the toolkit the segment's binary was built from ("+dirty" for a modified
	// work tree); "" where not recorded: by a build without version-control information, or for the epochs a
	// binary older than this record trained (then the segment spans all of them).
	Commit string `json:"commit"`
	// CPU is the processor's model name (/proc/cpuinfo), Backend and Engine what computed the segment.
	CPU     string `json:"cpu,omitempty"`
	Backend string `json:"backend,omitempty"`
	Engine  string `json:"engine,omitempty"`
}

// loadSegments reads the segments saved with a checkpoint. A checkpoint of a binary older than this record
// holds epochs but no segments: they become one segment whose commit is not recorded.
func loadSegments(scope *model.Scope, epochs int, wall float64) ([]Segment, error) {
	var segs []Segment
	if s := model.GetParamOr(scope, paramSegments, ""); s != "" {
		if err := json.Unmarshal([]byte(s), &segs); err != nil {
			return nil, fmt.Errorf("corrupt training segments in checkpoint: %w", err)
		}
	}
	covered := 0
	if n := len(segs); n > 0 {
		covered = segs[n-1].LastEpoch
	}
	if covered > epochs {
		return nil, fmt.Errorf("corrupt training segments in checkpoint: they reach epoch %d of %d trained", covered, epochs)
	}
	if covered == 0 && epochs > 0 {
		segs = []Segment{{FirstEpoch: 1, LastEpoch: epochs, WallSeconds: wall}}
	}
	return segs, nil
}

// newSegment starts the record of the segment a process trains from epoch first (1-based) on.
func newSegment(first int, started time.Time, backend, engine string) Segment {
	return Segment{FirstEpoch: first, LastEpoch: first - 1, Started: started.UTC().Format(time.RFC3339),
		Commit: hostinfo.Commit(), CPU: hostinfo.CPUModel(), Backend: backend, Engine: engine}
}

// withSegment returns the run's segments with the current one (when it trained an epoch) appended.
func withSegment(before []Segment, current Segment) []Segment {
	if current.LastEpoch < current.FirstEpoch {
		return before
	}
	return append(before[:len(before):len(before)], current)
}

// storeSegments writes the segments into scope's parameters (saved with the next checkpoint).
func storeSegments(scope *model.Scope, segs []Segment) error {
	b, err := json.Marshal(segs)
	if err != nil {
		return err
	}
	scope.SetParam(paramSegments, string(b))
	return nil
}

// PartialResult returns the state of a run in dir from its newest intact checkpoint, as a Result over the
// epochs trained so far: what result.json will hold once the run finishes, for a run still training or
// interrupted (result.json is written after the last epoch only). Its Epochs may be fewer than
// Config.Epochs; BestEpoch and the accuracies are the protocol's selection over them. Backend, Engine and
// the firing rates of the selected epoch are not recorded in checkpoints and stay empty.
func PartialResult(dir string) (*Result, error) {
	scope := model.NewStore().RootScope()
	cfg, ck, _, err := loadConfig(scope, dir)
	if err != nil {
		return nil, err
	}
	history, wall, err := loadState(scope)
	if err != nil {
		return nil, err
	}
	if len(history) == 0 {
		return nil, fmt.Errorf("checkpoint %s in %s holds no finished epoch", ck.Name, dir)
	}
	segs, err := loadSegments(scope, len(history), wall)
	if err != nil {
		return nil, err
	}
	r := &Result{Dataset: cfg.Dataset, Model: cfg.Model, M: cfg.M, Width: cfg.Width, Seed: cfg.Seed,
		ParameterCount: model.GetParamOr(scope, paramParameterCount, 0), Protocol: cfg.Protocol,
		Config: cfg, Semantics: cfg.Semantics(), Epochs: history, WallSeconds: wall}
	r.summarize()
	r.setSegments(segs)
	return r, nil
}

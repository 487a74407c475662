package train

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/internal/filesafe"
	"github.com/fits-snn/fits/internal/owned"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
	"github.com/gomlx/gomlx/ml/train/optimizer"
	"github.com/gomlx/gomlx/ml/train/optimizer/cosineschedule"
)

// Checkpoint files. A checkpoint NAME (checkpoint-nNNNNNNN-DATE-TIME-step-SSSSSSSS, GoMLX's naming) is
// three files in the run's directory:
//
//	NAME.json    the hyperparameters (the Config), the training state and the variables' layout
//	NAME.bin     the variables, uncompressed (ml/model/checkpoint)
//	NAME.sha256  the SHA-256 of the two files above, in the format of `sha256sum` (`sha256sum -c` checks it)
//
// The checksums are written (atomically) after the other two files, and the checkpoints beyond the
// newest keepCheckpoints are deleted only after that: at every moment the directory holds intact
// checkpoint. A checkpoint is
//   - intact when its checksums match its files (and its layout is consistent);
//   - corrupt when they do not, or when its checksums name a file that is missing;
//   - incomplete when it has no checksums and its files are cut short: a save that a killed process
//     left; also a .bin or .sha256 without its .json;
//   - unverified when it has no checksums but its files are complete: a save killed just before its
//     checksums, written before checksums existed, or one whose checksums were deleted. It is never
//     loaded: integrity checking cannot be switched off by deleting checksums. (Whoever trusts its files
//     records them with `sha256sum NAME.json NAME.bin > NAME.sha256` in the run's folder.)
//
// Every file is read only when it is a regular file of at most maxCheckpointFile bytes (never through a
// symbolic link, a FIFO or a device), and the checksums cover everything loading reads.
//
// Loading takes the newest intact checkpoint and skips newer ones that are not, naming each; it loads
// that checkpoint's files explicitly (never "the newest file named checkpoint-*"). Saving goes through a
// staging folder and the run folder's record of the files the run wrote (owned.RecordFile, see
// saveCheckpoint). Resuming (TrainModel with Options.Resume) removes the run's own unfinished saves —
// files the record lists, unchanged since — and moves the run's corrupt checkpoints newer than the one it
// resumes from aside under the prefix corruptPrefix, where the checkpoint code never looks again.
// Anything else — a file of the user's named checkpoint-*, a copy of a checkpoint, a checkpoint without
// checksums that the run did not write — is left where it is and named in a warning: nothing a user may
// want is deleted or moved. A checkpoint whose configuration differs from the run's result.json or from
// the folder's other checkpoints (files of two runs) is refused.

// keepCheckpoints is the number of epoch checkpoints kept in a run's directory.
const keepCheckpoints = 2

// Name parts of the checkpoint files.
const (
	checkpointPrefix = "checkpoint-"
	sumSuffix        = ".sha256"
	corruptPrefix    = "corrupt-"
)

// maxCheckpointFile is the largest checkpoint file read (4 GiB); a larger one is corrupt.
const maxCheckpointFile = 4 << 30

// Keys of the training state stored as store parameters next to the Config, so that they are saved
// atomically with the variables in each checkpoint.
const (
	paramHistory        = "train_history"         // JSON of []Epoch
	paramWallSeconds    = "train_wall_seconds"    // float64, summed over segments
	paramParameterCount = "train_parameter_count" // int, trainable scalars of the model
)

// Checkpoint names the checkpoint that was loaded from a run's directory.
type Checkpoint struct {
	// Dir is the run's directory and Name the checkpoint's base name (its files are Name.json, Name.bin
	// and Name.sha256 in Dir).
	Dir  string `json:"dir"`
	Name string `json:"name"`
	// Epoch is the number of epochs trained when it was saved.
	Epoch int `json:"epoch"`
	// Verified reports whether its checksums were checked: always, since a checkpoint without them is
	// never loaded.
	Verified bool `json:"verified"`
	// layout is the checkpoint's JSON file (the variables' names and shapes).
	layout string
}

// SkippedCheckpoint is a checkpoint newer than the one loaded that could not be used.
type SkippedCheckpoint struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	// Corrupt: its checksums do not match, or its content is inconsistent (not an unfinished save).
	Corrupt bool `json:"corrupt,omitempty"`
}

// CheckpointError reports a run directory that holds no usable checkpoint: none at all, or none intact
// (Skipped lists them, newest first). The caller asked for something that is not there: the CLI exits
// with status 2.
type CheckpointError struct {
	Dir     string
	Skipped []SkippedCheckpoint
}

// AnyCorrupt reports whether any checkpoint skipped is corrupt; when none is, the directory holds only
// unfinished saves or unverified checkpoints, and a resume starts the run from its first epoch.
func (e *CheckpointError) AnyCorrupt() bool {
	return slices.ContainsFunc(e.Skipped, func(s SkippedCheckpoint) bool { return s.Corrupt })
}

func (e *CheckpointError) Error() string {
	if len(e.Skipped) == 0 {
		return fmt.Sprintf("%s holds no checkpoint", e.Dir)
	}
	parts := make([]string, len(e.Skipped))
	for i, s := range e.Skipped {
		parts[i] = s.Name + " (" + s.Reason + ")"
	}
	return fmt.Sprintf("%s holds no intact checkpoint: %s", e.Dir, strings.Join(parts, "; "))
}

// checkpointState classifies a checkpoint; see the comment at the top of this file.
type checkpointState int

const (
	stateIntact checkpointState = iota
	stateUnverified
	stateIncomplete
	stateCorrupt
)

// inspected is one checkpoint as found on disk; jsonData and binData hold its files when they were read
// for loading.
type inspected struct {
	name              string
	state             checkpointState
	reason            string
	jsonData, binData []byte
}

// checkpointNames returns the base names of the checkpoints (checkpointName) in dir that have any of their three files,
// oldest first (GoMLX's names sort by their sequence number). A missing directory holds none.
func checkpointNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if base, ok := checkpointBase(e.Name()); ok && checkpointName.MatchString(base) && !slices.Contains(names, base) {
			names = append(names, base)
		}
	}
	slices.Sort(names)
	return names, nil
}

// checkpointName matches the base names of checkpoints, GoMLX's checkpoint-nNNNNNNN-...; the sequence
// number is its first group. Other files named checkpoint-* are not a checkpoint's: they are never read,
// moved or removed.
var checkpointName = regexp.MustCompile(`^checkpoint-n([0-9]+)-`)

// checkpointSuffixes are the name endings of a checkpoint's three files.
var checkpointSuffixes = []string{sumSuffix, checkpoint.JsonNameSuffix, checkpoint.BinDataSuffix}

// checkpointBase returns the base name of a checkpoint file (NAME of NAME.json, NAME.bin, NAME.sha256).
func checkpointBase(file string) (string, bool) {
	for _, suffix := range checkpointSuffixes {
		if base, ok := strings.CutSuffix(file, suffix); ok {
			return base, true
		}
	}
	return "", false
}

// inspect reads checkpoint name of dir and classifies it. With forLoading, the files' contents are kept
// and the layout is checked in full (dtypes, dimensions and sizes of every variable), so that what GoMLX
// is handed is consistent.
func inspect(dir, name string, forLoading bool) inspected {
	found := func(state checkpointState, reason string) inspected {
		return inspected{name: name, state: state, reason: reason}
	}
	jsonName, binName := name+checkpoint.JsonNameSuffix, name+checkpoint.BinDataSuffix
	sums, sumErr := filesafe.ReadRegular(filepath.Join(dir, name+sumSuffix), 1<<20)
	jsonData, jsonErr := filesafe.ReadRegular(filepath.Join(dir, jsonName), maxCheckpointFile)
	binData, binErr := filesafe.ReadRegular(filepath.Join(dir, binName), maxCheckpointFile)
	for _, e := range []error{sumErr, jsonErr, binErr} {
		if e != nil && !errors.Is(e, os.ErrNotExist) {
			return found(stateCorrupt, e.Error())
		}
	}
	c := found(stateIntact, "")
	switch {
	case sumErr == nil:
		listed, err := filesafe.ParseSums(sums)
		if err != nil {
			return found(stateCorrupt, "its checksum file is malformed")
		}
		// A file that could not be read is nil: missing.
		if err := listed.Verify(map[string][]byte{jsonName: jsonData, binName: binData}); err != nil {
			return found(stateCorrupt, err.Error())
		}
	case jsonErr != nil:
		return found(stateIncomplete, "no "+jsonName+" (an interrupted save)")
	case binErr != nil || !layoutComplete(jsonData, int64(len(binData))):
		return found(stateIncomplete, "its files are cut short (an interrupted save)")
	default:
		c = found(stateUnverified, fmt.Sprintf("no checksums: untrusted (a save that did not finish, or checksums deleted; if you trust its files: cd %s && sha256sum %s %s > %s)",
			dir, jsonName, binName, name+sumSuffix))
	}
	if forLoading {
		if err := checkLayout(jsonData, int64(len(binData))); err != nil {
			return found(stateCorrupt, err.Error())
		}
		c.jsonData, c.binData = jsonData, binData
	}
	return c
}

// checksums returns the content of a .sha256 file for the given files (filesafe.Sums).
func checksums(names []string, contents [][]byte) []byte {
	sums := filesafe.Sums{}
	for i, n := range names {
		sums[n] = filesafe.Sum(contents[i])
	}
	return sums.Bytes()
}

// layoutComplete reports whether a checkpoint's JSON parses and its binary file, of binSize bytes, holds
// every byte the JSON promises.
func layoutComplete(jsonData []byte, binSize int64) bool {
	var layout struct {
		BinFormat string
		Variables []struct{ Pos, Length int64 }
	}
	if err := json.Unmarshal(jsonData, &layout); err != nil {
		return false
	}
	need := int64(0)
	for _, v := range layout.Variables {
		if v.Pos < 0 || v.Length < 0 || v.Pos > math.MaxInt64-v.Length {
			return false
		}
		need = max(need, v.Pos+v.Length)
	}
	if layout.BinFormat == "" || strings.Contains(strings.ToLower(layout.BinFormat), "uncompressed") {
		return binSize == need
	}
	return binSize > 0
}

// checkpointLayout is the part of a GoMLX checkpoint's JSON file that places its variables in the binary
// file.
type checkpointLayout struct {
	BinFormat string
	Variables []layoutVariable
}

// layoutVariable is one variable of a checkpoint's layout.
type layoutVariable struct {
	ParameterName string
	Dimensions    []int
	DType         dtypes.DType
	Pos, Length   int64
}

// parseLayout reads the variables' layout from a checkpoint's JSON file.
func parseLayout(jsonData []byte) (checkpointLayout, error) {
	var layout checkpointLayout
	if err := json.Unmarshal(jsonData, &layout); err != nil {
		return layout, fmt.Errorf("its JSON file does not parse: %v", err)
	}
	return layout, nil
}

// checkLayout checks a checkpoint's JSON against its uncompressed binary file of binSize bytes: every
// variable has a supported dtype and non-negative dimensions whose bytes equal its Length, the variables
// follow each other from position 0, and together they fill the file.
func checkLayout(jsonData []byte, binSize int64) error {
	layout, err := parseLayout(jsonData)
	if err != nil {
		return err
	}
	if f := strings.ToLower(layout.BinFormat); f != "" && !strings.Contains(f, "uncompressed") {
		return fmt.Errorf("binary format %q, want uncompressed", layout.BinFormat)
	}
	pos := int64(0)
	for _, v := range layout.Variables {
		size := int64(dtypeSize(v.DType))
		if size == 0 {
			return fmt.Errorf("variable %q has an unsupported dtype %s", v.ParameterName, v.DType)
		}
		for _, d := range v.Dimensions {
			if d < 0 || (d > 0 && size > binSize/int64(d)) {
				return fmt.Errorf("variable %q has dimensions %v that do not fit the %d-byte file", v.ParameterName, v.Dimensions, binSize)
			}
			size *= int64(d)
		}
		if v.Pos != pos || v.Length != size {
			return fmt.Errorf("variable %q at bytes [%d, %d), want [%d, %d)", v.ParameterName, v.Pos, v.Pos+v.Length, pos, pos+size)
		}
		pos += size
	}
	if pos != binSize {
		return fmt.Errorf("its variables take %d bytes, the binary file has %d", pos, binSize)
	}
	return nil
}

// dtypeSize returns the bytes of one element of dt, 0 for an invalid dtype or one smaller than a byte.
func dtypeSize(dt dtypes.DType) (n int) {
	defer func() {
		if recover() != nil {
			n = 0
		}
	}()
	return dt.Size()
}

// stableTargetBound returns the hidden layers' neuron of cfg and the largest stable target frequency f* in
// Hz of its semi-implicit update (at the Jury bound κmax itself, Appendix A.2), when cfg's neuron has a
// trainable target that its forward pass does not clamp (no ForwardClip) and the dataset's time bin is known
// before loading (data.TimeBin); otherwise a neuron of no kind.
func stableTargetBound(cfg Config) (neuron.Config, float64) {
	cfg = cfg.Resolved()
	dt, ok := data.TimeBin(cfg.Dataset, cfg.DataOptions(""))
	if !ok || !cfg.Kind().HasTargetFrequency() {
		return neuron.Config{}, 0
	}
	n, err := NeuronConfigFor(cfg, &data.Dataset{Name: cfg.Dataset, Dt: dt})
	if err != nil || n.ForwardClip {
		return neuron.Config{}, 0
	}
	atBound := n
	atBound.KappaFraction = 1
	f, err := atBound.MaxTargetHz()
	if err != nil {
		return neuron.Config{}, 0
	}
	return n, f
}

// hiddenBiases matches the variables that hold one value per neuron of a hidden dense layer.
var hiddenBiases = regexp.MustCompile(`^/model/hidden_[0-9]+/dense/biases$`)

// checkContent checks what a checkpoint holds beyond its layout: the configuration parses and is valid,
// the training history parses and numbers its epochs 1, 2, ... up to at most the configured number, and
// the hidden layers' biases have the configured width, every float variable is finite, Adam's second
// moments are not negative, and the step counters agree with the history (at least one step and at most
// MaxExamples per epoch). A checkpoint that fails is corrupt (skipped and named like one whose checksums
// do not match), even when its checksums are right.
func checkContent(jsonData, binData []byte) error {
	scope := model.NewStore().RootScope()
	if _, err := loadFromMemory(scope, jsonData, binData, false); err != nil {
		return err
	}
	cfg, err := configOf(scope)
	if err != nil {
		return fmt.Errorf("its configuration does not parse: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("its configuration is invalid: %v", err)
	}
	history, _, err := loadState(scope)
	if err != nil {
		return err
	}
	for i, e := range history {
		if e.Epoch != i+1 {
			return fmt.Errorf("its training history is inconsistent: entry %d is epoch %d", i+1, e.Epoch)
		}
	}
	if len(history) > cfg.Epochs {
		return fmt.Errorf("its training history holds %d epochs of the %d configured", len(history), cfg.Epochs)
	}
	layout, err := parseLayout(jsonData)
	if err != nil {
		return err
	}
	// A checkpoint without optimizer state (an imported network: fits import) was never trained by this
	// toolkit: its step counter may be zero whatever history it carries.
	withOptimizer := layout.holdsOptimizerState()
	target, bound := stableTargetBound(cfg)
	for _, v := range layout.Variables {
		name := strings.TrimPrefix(v.ParameterName, "var:")
		if hiddenBiases.MatchString(name) && (len(v.Dimensions) != 1 || v.Dimensions[0] != cfg.Width) {
			return fmt.Errorf("variable %s has dimensions %v, but the configuration says width %d", name, v.Dimensions, cfg.Width)
		}
		if v.Pos < 0 || v.Length < 0 || v.Pos+v.Length > int64(len(binData)) {
			continue
		}
		b := binData[v.Pos : v.Pos+v.Length]
		// Every float variable — weights and the optimizer's state alike — is finite: a NaN moment
		// turns the next epoch into NaN. The one exception is +∞ in Adam's second moment: a gradient
		// above √MaxFloat32 ≈ 1.8·10¹⁹ squares to +∞ in float32, in PyTorch's Adam as in GoMLX's, and
		// the element's update is 0 from then on (m/∞), with every weight still finite (the sMNIST
		// run of results/README.md holds such a state).
		secondMoment := strings.HasSuffix(name, "_2nd_moment")
		if i := firstNonFinite(v.DType, b, secondMoment); i >= 0 {
			return fmt.Errorf("variable %s holds a value that is not finite (element %d)", name, i)
		}
		if target.Kind != "" && strings.HasPrefix(name, "/"+modelScope+"/") && strings.HasSuffix(name, "/"+neuron.TargetVariable(target)) && v.DType == dtypes.Float32 {
			for i := 0; i+4 <= len(b); i += 4 {
				f := neuron.TargetHz(target, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))))
				if !(f >= 0 && f <= bound*(1+1e-6)) {
					return fmt.Errorf("variable %s holds f* = %.6g Hz (neuron %d), outside the stable region [0, %.6g Hz] of the semi-implicit update (the Jury bound, Appendix A.2)",
						name, f, i/4, bound)
				}
			}
		}
		if secondMoment && v.DType == dtypes.Float32 {
			for i := 0; i+4 <= len(b); i += 4 {
				if math.Float32frombits(binary.LittleEndian.Uint32(b[i:])) < 0 {
					return fmt.Errorf("variable %s holds a negative second moment (element %d)", name, i/4)
				}
			}
		}
		if n, ok := stepCounter(name, v.DType, v.Dimensions, b); ok {
			// Each epoch takes at least one step and at most MaxExamples.
			if h := float64(len(history)); !(n >= h && n <= h*MaxExamples) && (withOptimizer || n != 0) {
				return fmt.Errorf("its step counter %s is %g, inconsistent with its %d epochs of training history", name, n, len(history))
			}
		}
	}
	return nil
}

// holdsOptimizerState reports whether the checkpoint holds Adam's state (moments and step), which every
// checkpoint that TrainModel saves does and an imported network's (WriteImportedRun) does not.
func (l checkpointLayout) holdsOptimizerState() bool {
	return slices.ContainsFunc(l.Variables, func(v layoutVariable) bool {
		return strings.Contains(v.ParameterName, "/"+optimizer.AdamDefaultScope+"/")
	})
}

// CheckResumable returns nil when training can continue from checkpoint c. A checkpoint without
// optimizer state — a network that another program trained, imported by fits import — is an *InputError:
// it can be evaluated and analysed, but training it on would restart Adam's moments and the learning-rate
// schedule in the middle of a run they never belonged to.
func (c Checkpoint) CheckResumable() error {
	return checkResumable(c.Dir, []byte(c.layout))
}

// checkResumable is CheckResumable of the checkpoint of run dir whose JSON file is layoutJSON.
func checkResumable(dir string, layoutJSON []byte) error {
	layout, err := parseLayout(layoutJSON)
	if err != nil || layout.holdsOptimizerState() {
		return err
	}
	from := "another program"
	if r, err := ReadResult(dir); err == nil && r.Imported != nil {
		from = fmt.Sprintf("%s (%s)", r.Imported.From, r.Imported.Format)
	}
	return inputErrorf("%s was imported from %s and holds no optimizer state: it can be evaluated and analysed, not resumed", dir, from)
}

// stepCounter returns the value of a checkpoint variable that counts training steps (GoMLX's global
// step, Adam's step), given its name, dtype, dimensions and bytes.
func stepCounter(name string, dt dtypes.DType, dims []int, b []byte) (float64, bool) {
	if len(dims) != 0 || !(name == "/"+optimizer.GlobalStepVariableName || strings.HasSuffix(name, "/"+optimizer.AdamDefaultScope+"/step")) {
		return 0, false
	}
	switch {
	case dt == dtypes.Int64 && len(b) == 8:
		return float64(int64(binary.LittleEndian.Uint64(b))), true
	case dt == dtypes.Float32 && len(b) == 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), true
	}
	return 0, false
}

// firstNonFinite returns the index of the first value of b (little-endian float32 or float64 values; other
// dtypes are not read) that is NaN or infinite, +∞ excepted when allowPosInf, or -1.
func firstNonFinite(dt dtypes.DType, b []byte, allowPosInf bool) int {
	bad := func(f float64) bool { return math.IsNaN(f) || math.IsInf(f, -1) || (math.IsInf(f, 1) && !allowPosInf) }
	switch dt {
	case dtypes.Float32:
		for i := 0; i+4 <= len(b); i += 4 {
			if bad(float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))) {
				return i / 4
			}
		}
	case dtypes.Float64:
		for i := 0; i+8 <= len(b); i += 8 {
			if bad(math.Float64frombits(binary.LittleEndian.Uint64(b[i:]))) {
				return i / 8
			}
		}
	}
	return -1
}

// selection is the outcome of looking through a run's checkpoints, newest first.
type selection struct {
	chosen  *inspected  // the newest usable checkpoint (nil: none)
	skipped []inspected // checkpoints newer than chosen that are not usable, newest first
	older   []inspected // incomplete checkpoints older than chosen
}

// selectCheckpoint inspects the checkpoints of dir, newest first, and picks the newest usable one: the
// newest intact one (with forLoading, whose layout and content pass checkLayout and checkContent).
func selectCheckpoint(dir string, forLoading bool) (selection, error) {
	names, err := checkpointNames(dir)
	if err != nil {
		return selection{}, err
	}
	var sel selection
	for _, n := range slices.Backward(names) {
		// Full checks and contents only matter for the checkpoint that will be loaded; the rest are
		// classified by their checksums alone.
		c := inspect(dir, n, false)
		if sel.chosen != nil {
			if c.state == stateIncomplete {
				sel.older = append(sel.older, c)
			}
			continue
		}
		usable := c.state == stateIntact
		if usable && forLoading {
			c = inspect(dir, c.name, true)
			if c.state != stateCorrupt {
				if err := checkContent(c.jsonData, c.binData); err != nil {
					c.state, c.reason, c.jsonData, c.binData = stateCorrupt, err.Error(), nil, nil
				}
			}
			usable = c.state != stateCorrupt
		}
		if usable {
			sel.chosen = &c
			continue
		}
		sel.skipped = append(sel.skipped, c)
	}
	return sel, nil
}

func skippedOf(list []inspected) []SkippedCheckpoint {
	out := make([]SkippedCheckpoint, len(list))
	for i, c := range list {
		out[i] = SkippedCheckpoint{Name: c.name, Reason: c.reason, Corrupt: c.state == stateCorrupt}
	}
	return out
}

// LoadCheckpoint loads the newest intact checkpoint of dir into scope: its hyperparameters replace scope's,
// and its variables are handed out as the network is built (GoMLX's lazy loading). It returns the
// checkpoint loaded and the newer ones skipped (corrupt or unfinished), and changes nothing in dir. A
// directory without any usable checkpoint is a *CheckpointError.
func LoadCheckpoint(scope *model.Scope, dir string) (Checkpoint, []SkippedCheckpoint, error) {
	return loadCheckpoint(scope, dir, false)
}

// LoadCheckpointAll is LoadCheckpoint with every variable of the checkpoint set in scope at once (GoMLX's
// immediate loading), for code that reads the variables without building the network.
func LoadCheckpointAll(scope *model.Scope, dir string) (Checkpoint, []SkippedCheckpoint, error) {
	return loadCheckpoint(scope, dir, true)
}

func loadCheckpoint(scope *model.Scope, dir string, immediate bool) (Checkpoint, []SkippedCheckpoint, error) {
	sel, err := selectCheckpoint(dir, true)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	skipped := skippedOf(sel.skipped)
	if sel.chosen == nil {
		return Checkpoint{}, skipped, &CheckpointError{Dir: dir, Skipped: skipped}
	}
	c := sel.chosen
	_, epochs, err := loadChecked(scope, dir, c, immediate)
	if err != nil {
		return Checkpoint{}, skipped, err
	}
	return Checkpoint{Dir: dir, Name: c.name, Epoch: epochs, Verified: c.state == stateIntact, layout: string(c.jsonData)}, skipped, nil
}

// loadChecked loads checkpoint c of dir, its files read and checked (selectCheckpoint), into scope
// (loadFromMemory), makes a legacy checkpoint's variables current (adoptLegacyVariables), and returns its
// handler and the number of epochs it holds. c's binary data is dropped: the handler holds the variables.
func loadChecked(scope *model.Scope, dir string, c *inspected, immediate bool) (*checkpoint.Handler, int, error) {
	h, err := loadFromMemory(scope, c.jsonData, c.binData, immediate)
	if err != nil {
		return nil, 0, fmt.Errorf("loading checkpoint %s in %s: %w", c.name, dir, err)
	}
	c.binData = nil
	history, _, err := loadState(scope)
	if err == nil {
		err = adoptLegacyVariables(scope.Store(), h)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("checkpoint %s in %s: %w", c.name, dir, err)
	}
	return h, len(history), nil
}

// loadFromMemory attaches a loader of the checkpoint held in jsonData and binData to scope; a panic of the
// checkpoint code on malformed content becomes an error.
func loadFromMemory(scope *model.Scope, jsonData, binData []byte, immediate bool) (h *checkpoint.Handler, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("malformed checkpoint: %v", r)
		}
	}()
	c := checkpoint.Load(scope.Store()).FromEmbed(string(jsonData), binData)
	if immediate {
		c = c.Immediate()
	}
	return c.Done()
}

// legacyCounterScopes are the scopes where GoMLX counts the steps of Adam and of the cosine learning-rate
// schedule: up to v0.26 in the int64 variable "global_step" of the scope, from v0.28 on in the float32
// variable "step" (optimizer.IncrementCounter). A checkpoint written before holds the former.
var legacyCounterScopes = []string{
	"/" + optimizer.AdamDefaultScope,
	"/" + optimizer.Scope + "/" + cosineschedule.Scope,
}

// legacyRootKey is how a checkpoint written with GoMLX v0.26 names a variable of the root scope (the random
// number generator's state "#rngState", the global step): "var:/" + "/" + name, which GoMLX v0.28 reads
// as the path "//name", not "/name".
const legacyRootKey = "var://"

// adoptLegacyVariables makes the variables of a checkpoint written with GoMLX v0.26, which h (the handler
// attached to store) loaded, those that GoMLX v0.28 reads, so that a resumed run continues its dropout
// random numbers, global step, Adam bias correction and learning-rate schedule where it stopped:
//   - a variable of the root scope is moved from "//name" to "/name" (not trainable: GoMLX's own);
//   - the step counters of Adam and of the cosine schedule move to v0.28's (see legacyCounterScopes).
//
// It does nothing to a checkpoint written with v0.28.
func adoptLegacyVariables(store *model.Store, h *checkpoint.Handler) error {
	for _, key := range slices.Sorted(maps.Keys(h.LoadedVariables())) {
		name, ok := strings.CutPrefix(key, legacyRootKey)
		if !ok {
			continue
		}
		t := h.LoadedVariables()[key]
		// Deleting "//name" removes the handler's copy (it would otherwise be saved again as is).
		if err := store.DeleteVariable("//" + name); err != nil {
			return err
		}
		// The checkpoint's value replaces one the store already has (the seeded random number generator's
		// state), as GoMLX does for a variable a checkpoint names as v0.28 does.
		if v := store.GetVariable("/" + name); v != nil {
			if err := v.SetValue(t); err != nil {
				return err
			}
		} else if v, err := store.CreateVariable("/"+name, t); err != nil {
			return err
		} else {
			v.SetTrainable(false)
		}
	}
	// Loaded immediately (Immediate), the root variables are already in store, at "//name".
	var moved []*model.Variable
	for v := range store.IterVariables() {
		if strings.HasPrefix(v.Path(), "//") {
			moved = append(moved, v)
		}
	}
	for _, v := range moved {
		to := "/" + strings.TrimPrefix(v.Path(), "//")
		if old := store.GetVariable(to); old != nil {
			if err := store.DeleteVariable(old.Path()); err != nil {
				return err
			}
		}
		if err := store.MoveVariable(v.Path(), to); err != nil {
			return err
		}
		v.SetTrainable(false)
	}
	return renameLegacyCounters(store)
}

// renameLegacyCounters moves the step counters of a checkpoint written with GoMLX v0.26 (see
// legacyCounterScopes) to the variables that GoMLX v0.28 counts in. store's loader holds the checkpoint.
func renameLegacyCounters(store *model.Store) error {
	for _, scope := range legacyCounterScopes {
		old := store.GetVariable(model.JoinPath(scope, optimizer.GlobalStepVariableName))
		if old == nil {
			continue
		}
		if store.GetVariable(model.JoinPath(scope, "step")) == nil {
			t, err := old.Value()
			if err != nil {
				return err
			}
			n, ok := t.Value().(int64)
			if !ok {
				return fmt.Errorf("step counter %s holds %s, want an int64 scalar", old.Path(), t.Shape())
			}
			v, err := store.CreateVariable(model.JoinPath(scope, "step"), tensors.FromScalar(float32(n)))
			if err != nil {
				return err
			}
			v.SetTrainable(false)
		}
		if err := store.DeleteVariable(old.Path()); err != nil {
			return err
		}
	}
	return nil
}

// SavedConfig returns the configuration stored in the newest intact checkpoint of dir, with the
// checkpoint it was read from and the newer ones skipped (see LoadCheckpoint).
func SavedConfig(dir string) (Config, Checkpoint, []SkippedCheckpoint, error) {
	return loadConfig(model.NewStore().RootScope(), dir)
}

// loadConfig is SavedConfig with the checkpoint loaded into scope (LoadCheckpoint).
func loadConfig(scope *model.Scope, dir string) (cfg Config, ck Checkpoint, skipped []SkippedCheckpoint, err error) {
	if ck, skipped, err = LoadCheckpoint(scope, dir); err != nil {
		return cfg, ck, skipped, err
	}
	cfg, err = configOf(scope)
	if err != nil {
		err = fmt.Errorf("checkpoint %s in %s: %w", ck.Name, dir, err)
	}
	return cfg, ck, skipped, err
}

// configOf reads the configuration stored in scope's hyperparameters; a value of the wrong type is an
// error, not a panic.
func configOf(scope *model.Scope) (cfg Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed configuration: %v", r)
		}
	}()
	return ConfigFromContext(scope), nil
}

// HasCheckpoint reports whether dir holds at least one intact checkpoint.
func HasCheckpoint(dir string) bool {
	sel, err := selectCheckpoint(dir, false)
	return err == nil && sel.chosen != nil
}

// holdsCheckpointFiles reports whether dir holds any checkpoint file, usable or not, other than the run's
// own unfinished saves (files its record lists, unchanged, of a checkpoint that is not intact: what a
// killed first save leaves, which a new run in dir removes).
func holdsCheckpointFiles(dir string) bool {
	names, err := checkpointNames(dir)
	if err != nil || len(names) == 0 {
		return err != nil
	}
	rec, err := owned.Open(dir)
	if err != nil {
		return true
	}
	for _, n := range names {
		if inspect(dir, n, false).state == stateIntact || !ownsCheckpoint(rec, dir, n) {
			return true
		}
	}
	return false
}

// checkpointFiles returns the names of the three files of checkpoint name.
func checkpointFiles(name string) []string {
	return []string{name + sumSuffix, name + checkpoint.JsonNameSuffix, name + checkpoint.BinDataSuffix}
}

// ownsCheckpoint reports whether the run wrote every file of checkpoint name that is in dir and nobody
// changed it since (rec, the folder's record, lists each with its current SHA-256), and at least one is
// there: files the run may remove.
func ownsCheckpoint(rec *owned.Record, dir, name string) bool {
	found := false
	for _, f := range checkpointFiles(name) {
		if _, err := os.Lstat(filepath.Join(dir, f)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if !rec.Owns(f) {
			return false
		}
		found = true
	}
	return found
}

// listsCheckpoint reports whether rec names any file of checkpoint name: the run wrote it, whatever it
// holds now.
func listsCheckpoint(rec *owned.Record, name string) bool {
	return slices.ContainsFunc(checkpointFiles(name), rec.Lists)
}

// removeCheckpoint deletes the files of checkpoint name in dir and drops them from rec.
func removeCheckpoint(rec *owned.Record, dir, name string) {
	for _, f := range checkpointFiles(name) {
		if err := os.Remove(filepath.Join(dir, f)); err == nil || errors.Is(err, os.ErrNotExist) {
			rec.Forget(f)
		}
	}
}

// setAside renames the files of checkpoint name in dir with corruptPrefix (and a number when that name
// is taken), drops them from rec, and returns the new base name.
func setAside(rec *owned.Record, dir, name string) (string, error) {
	aside := corruptPrefix + name
	taken := func(suffix string) bool {
		_, err := os.Lstat(filepath.Join(dir, aside+suffix))
		return err == nil
	}
	for i := 2; slices.ContainsFunc(checkpointSuffixes, taken); i++ {
		aside = fmt.Sprintf("%s%d-%s", corruptPrefix, i, name)
	}
	for _, suffix := range checkpointSuffixes {
		from := filepath.Join(dir, name+suffix)
		if _, err := os.Lstat(from); err != nil {
			continue
		}
		if err := os.Rename(from, filepath.Join(dir, aside+suffix)); err != nil {
			return "", err
		}
		rec.Forget(name + suffix)
	}
	return aside, nil
}

// resumePlan is what prepareResume found, and did, in a run's directory.
type resumePlan struct {
	// from is the checkpoint to resume from, its files read and checked (nil: the run starts from its
	// first epoch).
	from *inspected
	// setAside are the run's corrupt checkpoints newer than from, moved aside under corruptPrefix.
	setAside []SkippedCheckpoint
	// unused are checkpoints newer than from (or, without from, all) that are not used and are left where
	// they are: not written by this run, or untrusted.
	unused []SkippedCheckpoint
	// foreign are the other files named checkpoint-* (a user's notes, a copy under another name): the
	// checkpoint code never reads, moves or removes them.
	foreign []string
}

// prepareResume readies dir for TrainModel. It removes the run's own unfinished saves (files that the
// folder's record, owned.RecordFile, lists as written by the run and unchanged since) and sets the run's
// corrupt checkpoints newer than the newest intact one aside; anything else named checkpoint-* is left
// alone and reported. A directory whose checkpoints are all unusable, with one of them corrupt, is a
// *CheckpointError; a checkpoint whose configuration differs from the run's result.json or from another
// checkpoint in dir (files of two runs) is an *InputError naming the setting; without opts.Resume, any
// checkpoint file is ErrRunExists. Nothing is changed in dir when it fails.
func prepareResume(opts Options) (resumePlan, error) {
	dir := opts.Dir
	if !opts.Resume && holdsCheckpointFiles(dir) {
		return resumePlan{}, fmt.Errorf("%w: %s (use --resume to continue it, or another directory)", ErrRunExists, dir)
	}
	sel, err := selectCheckpoint(dir, true)
	if err != nil {
		return resumePlan{}, err
	}
	if sel.chosen == nil && slices.ContainsFunc(sel.skipped, func(c inspected) bool { return c.state == stateCorrupt }) {
		return resumePlan{}, &CheckpointError{Dir: dir, Skipped: skippedOf(sel.skipped)}
	}
	if sel.chosen != nil {
		if err := cmp.Or(checkSameRun(dir, sel.chosen), checkResumable(dir, sel.chosen.jsonData)); err != nil {
			return resumePlan{}, err
		}
	}
	rec, err := owned.Open(dir)
	if err != nil {
		return resumePlan{}, err
	}
	plan := resumePlan{from: sel.chosen, foreign: foreignCheckpointFiles(dir)}
	var remove, aside []inspected
	for _, c := range append(slices.Clone(sel.skipped), sel.older...) {
		switch {
		case c.state == stateCorrupt && listsCheckpoint(rec, c.name):
			aside = append(aside, c)
		case c.state != stateCorrupt && ownsCheckpoint(rec, dir, c.name):
			remove = append(remove, c) // the run's own unfinished save
		default:
			plan.unused = append(plan.unused, SkippedCheckpoint{Name: c.name, Corrupt: c.state == stateCorrupt,
				Reason: c.reason + "; not written by this run: left alone"})
		}
	}
	if len(remove)+len(aside) == 0 {
		return plan, nil
	}
	err = owned.Update(dir, func(rec *owned.Record) error {
		for _, c := range remove {
			removeCheckpoint(rec, dir, c.name)
		}
		for _, c := range aside {
			to, err := setAside(rec, dir, c.name)
			if err != nil {
				return fmt.Errorf("setting the corrupt checkpoint %s aside: %w", c.name, err)
			}
			plan.setAside = append(plan.setAside, SkippedCheckpoint{Name: c.name, Corrupt: true, Reason: c.reason + "; kept as " + to})
		}
		return nil
	})
	return plan, err
}

// foreignCheckpointFiles returns the names of the entries of dir that start with checkpoint- but are not a
// file of a checkpoint (checkpointNames): a user's checkpoint-notes.json, a copy named checkpoint-best.bin.
func foreignCheckpointFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, checkpointPrefix) {
			continue
		}
		if base, ok := checkpointBase(n); !ok || e.IsDir() || !checkpointName.MatchString(base) {
			out = append(out, n)
		}
	}
	return out
}

// runIdentity are the settings that identify a run (keys of result.json's "config"): a checkpoint that
// differs from the run's result.json or from another checkpoint of its folder in one of them belongs to
// another run. The number of epochs is not one of them (--extend raises it).
var runIdentity = []string{"dataset", "small", "train_limit", "test_limit", "model", "m", "width", "batch", "lr",
	"dropout", "seed", "protocol"}

// configValue returns, as text, the field of c whose key in result.json is key.
func configValue(c Config, key string) string {
	for f, v := range reflect.ValueOf(c).Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == key {
			return fmt.Sprint(v.Interface())
		}
	}
	panic("train: Config has no field " + key)
}

// checkSameRun checks that the checkpoint chosen to resume from has the identity (runIdentity) of the
// run's result.json and of every other intact checkpoint in dir; else it is an *InputError naming the
// setting.
func checkSameRun(dir string, chosen *inspected) error {
	cfg, err := configOfCheckpoint(chosen.jsonData, chosen.binData)
	if err != nil {
		return fmt.Errorf("checkpoint %s in %s: %w", chosen.name, dir, err)
	}
	compare := func(other Config, source string) error {
		for _, key := range runIdentity {
			if a, b := configValue(cfg, key), configValue(other, key); a != b {
				return inputErrorf("%s holds files of two runs: checkpoint %s has %s %s, %s has %s %s (move the other run's files away)",
					dir, chosen.name, key, a, source, key, b)
			}
		}
		return nil
	}
	if r, err := ReadResult(dir); err == nil {
		if err := compare(r.Config, ResultFile); err != nil {
			return err
		}
	}
	names, err := checkpointNames(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == chosen.name {
			continue
		}
		c := inspect(dir, n, true)
		if c.state != stateIntact {
			continue
		}
		other, err := configOfCheckpoint(c.jsonData, c.binData)
		if err != nil {
			continue
		}
		if err := compare(other, "checkpoint "+n); err != nil {
			return err
		}
	}
	return nil
}

// configOfCheckpoint returns the configuration stored in a checkpoint's files.
func configOfCheckpoint(jsonData, binData []byte) (Config, error) {
	scope := model.NewStore().RootScope()
	if _, err := loadFromMemory(scope, jsonData, binData, false); err != nil {
		return Config{}, err
	}
	return configOf(scope)
}

// openCheckpoints prepares opts.Dir (prepareResume) and loads the checkpoint to resume from, if any, into
// scope (its hyperparameters replace scope's; its variables are handed out as the network is built). It
// returns the checkpoint's handler (nil when none was loaded) and its layout. Checkpoints skipped and
// files left alone are reported through opts.Warn, one line each.
func openCheckpoints(scope *model.Scope, opts Options) (*checkpoint.Handler, *inspected, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	plan, err := prepareResume(opts)
	if err != nil {
		return nil, nil, err
	}
	warn := opts.Warn // never nil: TrainModel sets it
	if len(plan.foreign) > 0 {
		warn(fmt.Sprintf("%s in %s: not files of a checkpoint of this run, left alone", strings.Join(plan.foreign, ", "), opts.Dir))
	}
	if plan.from == nil {
		for _, s := range plan.unused {
			warn(fmt.Sprintf("checkpoint %s in %s is not used (%s); the run starts from its first epoch", s.Name, opts.Dir, s.Reason))
		}
		return nil, nil, nil
	}
	from := plan.from
	h, epochs, err := loadChecked(scope, opts.Dir, from, false)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range plan.setAside {
		warn(fmt.Sprintf("checkpoint %s in %s is corrupt (%s); resuming from %s (epoch %d)", s.Name, opts.Dir, s.Reason, from.name, epochs))
	}
	for _, s := range plan.unused {
		warn(fmt.Sprintf("checkpoint %s in %s is not used (%s); resuming from %s (epoch %d)", s.Name, opts.Dir, s.Reason, from.name, epochs))
	}
	return h, from, nil
}

// buildHandler creates a GoMLX checkpoint handler of store that saves into dir, uncompressed, and never
// deletes a checkpoint (saveCheckpoint prunes, after the new one's checksums are written).
func buildHandler(store *model.Store, dir string) (h *checkpoint.Handler, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed checkpoint: %v", r)
		}
	}()
	return checkpoint.Build(store).Dir(dir).Keep(-1).WithCompression(checkpoint.BinUncompressed).Done()
}

// saveCheckpoint saves store's variables and hyperparameters as the next checkpoint of dir. GoMLX's
// checkpoint code writes the files into a staging folder (owned.Stage); the checksums are added there;
// the folder's record (owned.RecordFile) is updated to list the three files; then they are moved into dir
// under the next sequence number, the checksums last; then the run's checkpoints beyond the newest
// keepCheckpoints are deleted. A process killed at any point leaves the earlier checkpoints intact, and
// at most a staging folder (removed by the next save) and files that the record names as the run's
// (removed by the next resume). loaded, the handler of the checkpoint the run resumed from (nil: none),
// may hold variables the run never used: they are saved again, as GoMLX's own handler does.
func saveCheckpoint(store *model.Store, dir string, loaded *checkpoint.Handler) error {
	if err := keepLoaded(store, loaded); err != nil {
		return err
	}
	staging, err := owned.Stage(dir)
	if err != nil {
		return err
	}
	defer owned.Discard(staging)
	prev := store.Loader()
	h, err := buildHandler(store, staging)
	if err != nil {
		return err
	}
	err = h.Save()
	store.SetLoader(prev)
	if err != nil {
		return err
	}
	saved, err := h.ListCheckpoints()
	if err != nil {
		return err
	}
	if len(saved) != 1 {
		return fmt.Errorf("saving a checkpoint: %d written, want 1", len(saved))
	}
	name, err := nextCheckpointName(dir, saved[0])
	if err != nil {
		return err
	}
	files := []string{name + checkpoint.JsonNameSuffix, name + checkpoint.BinDataSuffix}
	contents := make([][]byte, len(files))
	for i, suffix := range []string{checkpoint.JsonNameSuffix, checkpoint.BinDataSuffix} {
		if contents[i], err = os.ReadFile(filepath.Join(staging, saved[0]+suffix)); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(staging, saved[0]+suffix), filepath.Join(staging, files[i])); err != nil {
			return err
		}
	}
	sums := checksums(files, contents)
	if err := filesafe.WriteFile(filepath.Join(staging, name+sumSuffix), sums); err != nil {
		return err
	}
	files, contents = append(files, name+sumSuffix), append(contents, sums)
	return owned.Update(dir, func(rec *owned.Record) error {
		for i, f := range files {
			if _, err := os.Lstat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("saving checkpoint %s: %s is already there", name, filepath.Join(dir, f))
			}
			rec.NoteSum(f, filesafe.Sum(contents[i]))
		}
		// The record names the files before they appear in dir: what a killed save leaves is the run's.
		if err := rec.Save(); err != nil {
			return err
		}
		for _, f := range files {
			if err := os.Rename(filepath.Join(staging, f), filepath.Join(dir, f)); err != nil {
				return err
			}
		}
		return pruneCheckpoints(rec, dir, name)
	})
}

// keepLoaded creates in store, as variables that are not trained, the variables of the checkpoint that
// loaded (nil: none) holds and the network never asked for, so that the next checkpoint keeps them.
func keepLoaded(store *model.Store, loaded *checkpoint.Handler) error {
	if loaded == nil {
		return nil
	}
	for _, key := range slices.Sorted(maps.Keys(loaded.LoadedVariables())) {
		path, ok := strings.CutPrefix(key, "var:")
		if !ok || store.GetVariable(path) != nil {
			continue
		}
		t := loaded.LoadedVariables()[key]
		if err := loaded.DeleteVariable(store, path); err != nil {
			return err
		}
		v, err := store.CreateVariable(path, t)
		if err != nil {
			return err
		}
		v.SetTrainable(false)
	}
	return nil
}

// nextCheckpointName returns the name under which the checkpoint that GoMLX saved as saved (its sequence
// number counted in an empty staging folder) goes into dir: the sequence number one above the largest
// there, so that names keep sorting oldest first.
func nextCheckpointName(dir, saved string) (string, error) {
	m := checkpointName.FindStringSubmatchIndex(saved)
	if m == nil {
		return "", fmt.Errorf("saving a checkpoint: unexpected name %q", saved)
	}
	names, err := checkpointNames(dir)
	if err != nil {
		return "", err
	}
	next := 0
	for _, n := range names {
		if sm := checkpointName.FindStringSubmatch(n); sm != nil {
			if k, err := strconv.Atoi(sm[1]); err == nil && k >= next {
				next = k + 1
			}
		}
	}
	return fmt.Sprintf("%sn%07d-%s", checkpointPrefix, next, saved[m[1]:]), nil
}

// pruneCheckpoints deletes the run's checkpoints in dir beyond the newest keepCheckpoints; justSaved is
// the one just saved. The checkpoints of a folder written before the record existed (none of them
// listed) are adopted first when intact: the checkpoint code signed them.
func pruneCheckpoints(rec *owned.Record, dir, justSaved string) error {
	names, err := checkpointNames(dir)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(names, func(n string) bool { return n != justSaved && listsCheckpoint(rec, n) }) {
		for _, n := range names {
			if n != justSaved && inspect(dir, n, false).state == stateIntact {
				for _, f := range checkpointFiles(n) {
					if err := rec.Note(f); err != nil {
						return err
					}
				}
			}
		}
	}
	var complete []string // the run's checkpoints with their checksums, oldest first
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n+sumSuffix)); err == nil && ownsCheckpoint(rec, dir, n) {
			complete = append(complete, n)
		}
	}
	for len(complete) > keepCheckpoints {
		removeCheckpoint(rec, dir, complete[0])
		complete = complete[1:]
	}
	return nil
}

// loadState reads the training state stored in scope's parameters.
func loadState(scope *model.Scope) (history []Epoch, wall float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt training state in checkpoint: %v", r)
		}
	}()
	if s := model.GetParamOr(scope, paramHistory, ""); s != "" {
		if err := json.Unmarshal([]byte(s), &history); err != nil {
			return nil, 0, fmt.Errorf("corrupt training history in checkpoint: %w", err)
		}
	}
	return history, model.GetParamOr(scope, paramWallSeconds, 0.0), nil
}

// storeState writes the training state into scope's parameters (saved with the next checkpoint).
func storeState(scope *model.Scope, history []Epoch, wall float64) error {
	b, err := json.Marshal(history)
	if err != nil {
		return err
	}
	scope.SetParam(paramHistory, string(b))
	scope.SetParam(paramWallSeconds, wall)
	return nil
}

// HoldsRun reports whether dir holds anything of a run: a checkpoint file (usable or not) or result.json.
func HoldsRun(dir string) bool {
	if holdsCheckpointFiles(dir) {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, ResultFile))
	return err == nil
}

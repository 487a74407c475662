package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fits-snn/fits/data/dvs"
	"github.com/fits-snn/fits/data/synth"
	"github.com/fits-snn/fits/fits/train"
)

// The quick plan, in one place: what each grid trains on in quick mode, which of the paper's widths get
// a quick stand-in and at what width, and the schedule. The stand-ins are data this machine has or makes
// (package data: the embedded synthetic task, spoken digits synthesised with espeak-ng, the real MNIST
// shipped with a Go module, synthetic DVS recordings); they are not the paper's datasets, and their
// numbers are not comparable with the paper's: they show orderings and effects, not accuracies.
//
// Every stand-in trains with the toolkit's default learning rate (quickLR) and no dropout: Table A.2's
// values were selected for 100 epochs on the real data, and few epochs on small sets do better without
// dropout. The SSC ladder uses the recipe `fits demo` uses (width 64, 20 epochs, batch 64) on the
// synthetic task with modulation depth 0.5 (synth.ShallowName), with three seeds. The plan has 82 runs;
// why these choices, what the runs are and what they reached: docs/reproduce.md, "The quick plan".
const (
	quickLR    = 5e-3
	quickWidth = 64
	// quickEngine is the engine of every quick stand-in: the backend's default (the fused host kernel on
	// XLA CPU), the fastest here. Engines agree to float32 rounding per step; over a run the rounding
	// grows, so orderings within the seed spread can differ between engines (with the first semantics the
	// SSC ladder's FS and FS frozen swapped between the chunked and the fused engine).
	quickEngine = ""
)

// quickGrid is the quick plan of one grid.
type quickGrid struct {
	dataset  string
	protocol train.Protocol
	// widths maps each of the paper's widths that has a quick stand-in to the width it trains at.
	widths     map[int]int
	epochs     int
	batch      int
	trainLimit int
	testLimit  int
	seeds      []int64
	note       string
}

const (
	noteSynthetic = "the embedded synthetic task with modulation depth 0.5 (dataset " + synth.ShallowName + ": 8 classes that differ only in the modulation frequencies and onsets of channel groups, T = 100 bins of 4 ms), not SSC"
	noteMel       = "spoken digits synthesised with espeak-ng through the GSC log-Mel front end (40 bands, T = 100, 20 classes; 480 training, 160 test utterances of held-out voices), not GSC; no official validation split, so 20 % of the training set is held out"
	noteCochlea   = "spoken digits synthesised with espeak-ng, cochlea-encoded and binned like SHD (T = 250, 140 features, 20 classes), not SHD"
)

// quickPlan is the quick plan by grid prefix.
var quickPlan = map[string]quickGrid{
	gridSSC.prefix: {dataset: synth.ShallowName, protocol: train.OfficialVal, widths: map[int]int{512: quickWidth},
		epochs: 20, batch: 64, seeds: []int64{1, 2, 3}, note: noteSynthetic},
	gridGSC.prefix: {dataset: "espeak-digits-mel", protocol: train.ValSplit, widths: map[int]int{512: quickWidth},
		epochs: 15, batch: 32, seeds: []int64{1}, note: noteMel},
	gridGSCOrg.prefix: {dataset: "espeak-digits-mel", protocol: train.ValSplit, widths: map[int]int{512: quickWidth},
		epochs: 15, batch: 32, seeds: []int64{1, 2, 3}, note: noteMel},
	gridSHDVal.prefix: {dataset: "espeak-digits", protocol: train.ValSplit, widths: map[int]int{256: quickWidth},
		epochs: 15, batch: 32, seeds: []int64{1},
		note: noteCochlea + "; 20 % of the training set held out for validation, as SHD*"},
	gridSHDBest.prefix: {dataset: "espeak-digits", protocol: train.BestTest, widths: map[int]int{128: quickWidth},
		epochs: 15, batch: 32, seeds: []int64{1},
		note: noteCochlea + "; best test accuracy over the epochs, as SHD"},
	gridSMNIST.prefix: {dataset: "smnist-row", protocol: train.BestTest, widths: map[int]int{256: quickWidth},
		epochs: 1, batch: 128, trainLimit: 6400, testLimit: 2000, seeds: []int64{1},
		note: "row-wise sMNIST (T = 28 rows of 28 pixels) on the first 6400 training and 2000 test images of the real MNIST, not the paper's pixel-by-pixel sMNIST (T = 784)"},
	gridDVS.prefix: {dataset: dvs.FixtureName, protocol: train.FinalEpoch, widths: map[int]int{dvsWidth: 32},
		epochs: 10, batch: 8, seeds: []int64{1},
		note: "synthetic DVS gestures generated on first use (dataset " + dvs.FixtureName + ": 11 motions of one or two blobs after the DVS Gesture classes, differing in place, path, direction and rate; 8 training users, 3 held-out test users; framed like DVS Gesture, T = 50 bins of 20 ms, 64×64), not DVS Gesture"},
}

// quick is the quick stand-in of one experiment.
type quick struct {
	cfg   train.Config
	note  string
	seeds []int64
}

// quickRecipe derives the quick stand-in of a full recipe, if the quick plan covers its width.
func quickRecipe(g grid, full train.Config) (quick, bool) {
	p, ok := quickPlan[g.prefix]
	if !ok {
		return quick{}, false
	}
	w, ok := p.widths[full.Width]
	if !ok {
		return quick{}, false
	}
	cfg := full
	cfg.Dataset, cfg.Protocol, cfg.Width = p.dataset, p.protocol, w
	cfg.Epochs, cfg.Batch, cfg.LR, cfg.Dropout = p.epochs, p.batch, quickLR, 0
	cfg.TrainLimit, cfg.TestLimit = p.trainLimit, p.testLimit
	cfg.Seed = 0
	cfg.Readout = string(train.DefaultReadout(p.dataset))
	if g != gridSMNIST {
		// The stand-in's own constants (its dataset's time bin); quick sMNIST keeps the pixel-step ones.
		cfg.TauM, cfg.TauA, cfg.Dt, cfg.FMinHz, cfg.FMaxHz = 0, 0, 0, 0, 0
	}
	cfg.Executor = quickEngine
	// One learning rate for every variable, as the released code: its trainable coordinate ln f* moves f*
	// by a fraction of itself per Adam step, so no quick recipe needs a larger learning rate for f*.
	note := fmt.Sprintf("%s; width %d for the paper's %d, epochs %d, batch %d, learning rate %g, no dropout", p.note, w, full.Width, p.epochs, p.batch, quickLR)
	return quick{cfg: cfg, note: note, seeds: append([]int64(nil), p.seeds...)}, true
}

// quickCoverage names the paper widths of an experiment's grid that quick mode covers.
func quickCoverage(id string) string {
	prefix, _, _ := strings.Cut(id, "/")
	p, ok := quickPlan[prefix]
	if !ok || len(p.widths) == 0 {
		return "no width of " + prefix
	}
	var parts []string
	for _, w := range slices.Sorted(maps.Keys(p.widths)) {
		parts = append(parts, fmt.Sprintf("W = %d", w))
	}
	return strings.Join(parts, ", ") + " of " + prefix
}

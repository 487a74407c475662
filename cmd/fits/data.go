package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fits-snn/fits/data"
	"github.com/fits-snn/fits/data/download"
	"github.com/fits-snn/fits/data/dvs"
	"github.com/fits-snn/fits/data/espeak"
	"github.com/fits-snn/fits/data/gsc"
	"github.com/fits-snn/fits/data/mnist"
	"github.com/fits-snn/fits/data/progress"
	"github.com/fits-snn/fits/data/shd"
	"github.com/fits-snn/fits/fits/bench"
)

const dataUsage = `usage: fits data <verb> [--flag=value ...]

verbs:
  list                                   the datasets, their files and home pages
  download --dataset=NAME [--dir=DIR]    fetch (resumable), check checksums, unpack
  verify   --dataset=NAME [--dir=DIR]    check downloaded files against their checksums
  convert  --dataset=NAME [--dir=DIR]    build the training caches (once; caches of an older recipe
           [--input-counts]              are converted again); shd/ssc inputs are binary unless
                                         --input-counts
  synth    --format=FMT --out=DIR        write small files in the official format of FMT; --full:
           [--samples=N] [--full]        full-size stand-ins with the official split sizes and the
           [--spikes=N]                  density of fits data synth --help
  espeak   [--out=DIR]                   synthesise spoken digits with espeak-ng into SHD-format HDF5
  features --dataset=gsc --wav=FILE [--frontend=F] [--json]
                                         the features of one 16 kHz WAV file, [frames, bands], as the
                                         network is fed them (front end: released, the default, or logmel)
  load     --dataset=NAME [--dir=DIR] [--input-counts] [--json]
                                         load a registered dataset (fits train --dataset names it) as
                                         training does, read every example once and print each split's
                                         examples, how it is held, its bytes and the peak memory
  split    --dataset=shd [--n=N] [--seed=S] [--json]
                                         the released code's SHD* validation split: indices of
                                         numpy.random.RandomState(S).permutation(N), the first
                                         max(1, int(0.2 N)) validate (N defaults to 8156 for shd, S to 0)

datasets: shd, ssc, gsc, dvs, mnist (convert also: espeak); formats: shd, ssc, gsc, mnist, dvs.
DIR defaults to $FITS_DATA/NAME (or the user cache folder + /fits/datasets/NAME).`

// dataVerbs maps a verb to its implementation.
var dataVerbs = map[string]func(args []string, stdout, stderr io.Writer) error{
	"list":     runDataList,
	"download": runDataDownload,
	"verify":   runDataVerify,
	"convert":  runDataConvert,
	"synth":    runDataSynth,
	"espeak":   runDataEspeak,
	"split":    runDataSplit,
	"features": runDataFeatures,
	"load":     runDataLoad,
}

func runData(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, dataUsage)
		return badInput("missing verb (valid: %s)", strings.Join(dataVerbNames(), ", "))
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stdout, dataUsage)
		return errHelp
	}
	verb, ok := dataVerbs[args[0]]
	if !ok {
		return badInput("unknown verb %q (valid: %s)", args[0], strings.Join(dataVerbNames(), ", "))
	}
	return verb(args[1:], stdout, stderr)
}

// dataVerbNames lists the verbs of fits data, sorted.
func dataVerbNames() []string { return slices.Sorted(maps.Keys(dataVerbs)) }

// canonicalDataset maps accepted dataset names to the manifest names.
func canonicalDataset(name string) (string, error) {
	switch n := strings.ToLower(strings.TrimSpace(name)); n {
	case "shd", "ssc", "gsc", "mnist", "dvs":
		return n, nil
	case "dvsgesture", "dvs-gesture":
		return "dvs", nil
	case "smnist":
		return "mnist", nil
	case "":
		return "", badInput("--dataset is required (valid: %s)", strings.Join(download.Datasets(), ", "))
	}
	return "", badInput("--dataset: unknown dataset %q (valid: %s)", name, strings.Join(download.Datasets(), ", "))
}

func datasetDir(dataset, dir string) string {
	if strings.TrimSpace(dir) != "" {
		return dir
	}
	return download.DefaultDir(dataset)
}

type dataListEntry struct {
	Dataset string   `json:"dataset"`
	Dir     string   `json:"dir"`
	Files   []string `json:"files"`
	Page    string   `json:"page"`
	Note    string   `json:"note"`
}

func runDataList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data list", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var out []dataListEntry
	for _, n := range download.Datasets() {
		m, _ := download.Lookup(n)
		out = append(out, dataListEntry{Dataset: n, Dir: download.DefaultDir(n), Files: fileNames(m), Page: m.Page, Note: m.Note})
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"datasets": out})
	}
	for _, e := range out {
		fmt.Fprintf(stdout, "%-6s %s\n       files: %s\n       dir:   %s\n       page:  %s\n", e.Dataset, e.Note, strings.Join(e.Files, ", "), e.Dir, e.Page)
	}
	return nil
}

func runDataDownload(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data download", stderr)
	name := fs.String("dataset", "", "dataset: shd, ssc, gsc, dvs, mnist")
	dir := fs.String("dir", "", "target folder (default $FITS_DATA/NAME)")
	ds, m, d, err := parseDatasetFlags(fs, args, name, dir)
	if err != nil {
		return err
	}
	if err := checkOutDir("dir", d); err != nil {
		return err
	}
	err = download.Download(context.Background(), m, d, download.Options{Progress: stderr, Client: dataHTTPClient})
	if errors.Is(err, download.ErrOffline) {
		return badInput("cannot reach the %s host (offline?): download %s by hand from %s into %s, then run 'fits data verify --dataset=%s --dir=%s'",
			ds, strings.Join(fileNames(m), ", "), m.Page, d, ds, d)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: downloaded and verified in %s\n", ds, d)
	return nil
}

// parseDatasetFlags parses args with fs and returns the dataset its --dataset flag (name) names, that
// dataset's manifest and its folder (the --dir flag, dir, default $FITS_DATA/NAME).
func parseDatasetFlags(fs *flag.FlagSet, args []string, name, dir *string) (string, download.Manifest, string, error) {
	if err := parseFlags(fs, args); err != nil {
		return "", download.Manifest{}, "", err
	}
	ds, err := canonicalDataset(*name)
	if err != nil {
		return "", download.Manifest{}, "", err
	}
	m, _ := download.Lookup(ds)
	return ds, m, datasetDir(ds, *dir), nil
}

// dataHTTPClient is the client of downloads; nil means the package default. Tests replace it.
var dataHTTPClient *http.Client

func fileNames(m download.Manifest) []string {
	var out []string
	for _, f := range m.Files {
		out = append(out, f.Name)
	}
	return out
}

func runDataVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data verify", stderr)
	name := fs.String("dataset", "", "dataset: shd, ssc, gsc, dvs, mnist")
	dir := fs.String("dir", "", "dataset folder (default $FITS_DATA/NAME)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	ds, m, d, err := parseDatasetFlags(fs, args, name, dir)
	if err != nil {
		return err
	}
	if ds == "mnist" && strings.TrimSpace(*dir) == "" {
		if md, err := mnist.DefaultDir(); err == nil {
			d = md
		}
	}
	if st, err := os.Stat(d); err == nil && !st.IsDir() {
		return badInput("--dir=%s: is not a folder", d)
	}
	st, err := download.Verify(m, d, stderr)
	if err != nil {
		return err
	}
	files, bad, unverified := download.Counts(st)
	if *asJSON {
		if err := writeJSON(stdout, map[string]any{"dataset": ds, "dir": d, "files": st}); err != nil {
			return err
		}
	} else {
		for _, s := range st {
			fmt.Fprintf(stdout, "%-10s %s %s\n", s.State, s.Path, s.Detail)
		}
	}
	if bad > 0 {
		return badInput("%d of %d files of %s missing or corrupt in %s", bad, files, ds, d)
	}
	if unverified > 0 {
		fmt.Fprintf(stderr, "fits data verify: warning: %d of %d files of %s are unverified: no digest pinned in this version vouches for them, and the folder's own %s and %s are no proof\n",
			unverified, files, ds, download.SumsFile, download.UnpackedFile)
	}
	return nil
}

func runDataConvert(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data convert", stderr)
	name := fs.String("dataset", "", "dataset: shd, ssc, gsc, dvs")
	dir := fs.String("dir", "", "dataset folder (default $FITS_DATA/NAME)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	counts := fs.Bool("input-counts", false, "shd, ssc, espeak: spike counts per bin instead of binary inputs (a bin with several spikes is 1)")
	frontEnd := fs.String("frontend", gsc.FrontEndReleased, "gsc, espeak: audio front end, "+strings.Join(gsc.FrontEndNames(), " or ")+" (the earlier log-Mel features)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fe, err := gsc.ParseFrontEnd(*frontEnd)
	if err != nil {
		return badInput("--frontend: %v", err)
	}
	ds := strings.ToLower(strings.TrimSpace(*name))
	if ds != "espeak" {
		if ds, err = canonicalDataset(*name); err != nil {
			return err
		}
	}
	d := datasetDir(ds, *dir)
	if st, err := os.Stat(d); err != nil && ds != "espeak" {
		return badInput("--dir: %v", err)
	} else if err == nil && !st.IsDir() {
		return badInput("--dir=%s: is a file, not a folder", d)
	}
	binning := shd.DefaultBinning()
	binning.Counts = *counts
	if *counts && ds != "shd" && ds != "ssc" && ds != "espeak" {
		return badInput("--input-counts applies to shd, ssc and espeak, not %s", ds)
	}
	if fe.Name != gsc.FrontEndReleased && ds != "gsc" && ds != "espeak" {
		return badInput("--frontend applies to gsc and espeak, not %s", ds)
	}
	var paths map[string]string
	switch ds {
	case "shd", "ssc":
		paths, err = shd.EnsureCaches(d, ds, binning, stderr)
	case "gsc":
		paths, err = gsc.EnsureCaches(d, fe, stderr)
	case "dvs":
		paths, err = dvs.EnsureCaches(d, dvs.DefaultFraming(), stderr)
	case "espeak":
		// Both paths: the SHD one (cochlea spikes, binned) and the GSC one (the audio front end).
		if paths, err = espeak.EnsureCaches(d, espeak.DefaultConfig(), binning, stderr); err == nil {
			var melPaths map[string]string
			melPaths, err = espeak.EnsureMelCaches(d, espeak.DefaultConfig(), fe, stderr)
			for s, p := range melPaths {
				paths[s+"-mel"] = p
			}
		}
	case "mnist":
		return badInput("mnist needs no conversion: its IDX files are read directly")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"dataset": ds, "caches": paths})
	}
	for _, s := range slices.Sorted(maps.Keys(paths)) {
		fmt.Fprintf(stdout, "%-6s %s\n", s, paths[s])
	}
	return nil
}

// synthHelp is the help of fits data synth: what it writes, and for --full the sizes and the density.
const synthHelp = `fits data synth --format=FMT --out=DIR [--samples=N | --full] [--spikes=N] [--seed=S]

Writes synthetic files in the official format and layout of FMT (shd, ssc, gsc, mnist, dvs) into DIR:
test fixtures, and stand-ins that time and size a run without the real data. They are not the datasets.

--full writes full-size stand-ins with the official split sizes:
  shd    8156 train, 2264 test samples (shd_train.h5, shd_test.h5)
  ssc    75466 train, 9981 valid, 20382 test samples
  gsc    105829 one-second clips of the 35 words: 9981 in validation_list.txt, 11005 in
         testing_list.txt, 84843 train (the Speech Commands v0.02 lists)
  dvs    1077 training gestures in 98 recordings of users 1-23, 264 test gestures in 24 recordings of
         users 24-29, each gesture 6 s long
  mnist  60000 train, 10000 test images
Spike density and time range of the shd and ssc stand-ins: each sample draws on average 6180 spikes
(--spikes sets another mean; a sample draws uniformly between half and 1.5 times it) over the 700
channels. The number comes from the official converter, github.com/electronicvisions/lauscher (named on
the datasets' page; Cramer et al. 2020, IEEE TNNLS, describe it): its committed reference spike train of
its bundled spoken digit (0.8 s of audio) holds 618 spikes on 70 channels, 8.8 per channel, so 6180 on the
datasets' 700. It is one digit, not an average over the datasets. Spikes of an ssc sample lie in
[0, 1 s) (Speech Commands clips last at most 1 s); those of an shd sample in [0, d) with d uniform in
[0.6, 1.0) s (aligned digit recordings; the converter's digit lasts 0.8 s). The files are large: about
6 bytes per spike (float32 times, uint16 units): 0.4 GB for shd, 4.1 GB for ssc.

Without --full: --samples per split (shd/ssc, default 100, 2000 spikes per sample in [0, 1 s)), clips per
word (gsc, default 3), images per split (mnist, default 100), users (dvs, default 3).`

// fullSizeSpikes is the mean spikes per sample of the full-size shd and ssc stand-ins (see synthHelp).
const fullSizeSpikes = 6180

// synthSplits returns the samples that fits data synth writes in each split of format (clips for gsc,
// gestures for dvs, images for mnist): the official sizes with full, else those of samples per split (0:
// the default).
func synthSplits(format string, full bool, samples int) (map[string]int, error) {
	switch f := strings.ToLower(format); f {
	case "shd", "ssc":
		if full {
			return shd.OfficialSizes(f)
		}
		splits, _ := shd.Splits(f)
		out := map[string]int{}
		for _, sp := range splits {
			out[sp] = cmp.Or(samples, 100)
		}
		return out, nil
	case "gsc":
		return gscSynthConfig(full, samples, 1).SplitSizes(), nil
	case "mnist":
		if full {
			return map[string]int{mnist.Train: 60000, mnist.Test: 10000}, nil
		}
		return map[string]int{mnist.Train: cmp.Or(samples, 100), mnist.Test: cmp.Or(samples, 100)}, nil
	case "dvs":
		return dvsSynthConfig(full, samples, 1).SplitSizes(), nil
	}
	return nil, badInput("--format: unknown format %q (valid: shd, ssc, gsc, mnist, dvs)", format)
}

// gscSynthConfig is the configuration of fits data synth --format=gsc.
func gscSynthConfig(full bool, samples int, seed uint64) gsc.SynthConfig {
	if full {
		return gsc.OfficialSynthConfig(seed)
	}
	return gsc.SynthConfig{PerWord: max(3, samples), Words: gsc.Classes, Duration: 1.0, Seed: seed}
}

// dvsSynthConfig is the configuration of fits data synth --format=dvs.
func dvsSynthConfig(full bool, samples int, seed uint64) dvs.SynthConfig {
	if full {
		return dvs.SynthConfig{Gesture: 6, EventsPerSec: 5000, Seed: seed, Recordings: dvs.OfficialRecordings()}
	}
	users := max(2, cmp.Or(samples, 3))
	return dvs.SynthConfig{Users: users, TrainUsers: users - 1, Gesture: 1.5, EventsPerSec: 5000, Seed: seed}
}

func runDataSynth(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data synth", stderr)
	format := fs.String("format", "", "file format: shd, ssc, gsc, mnist, dvs")
	out := fs.String("out", "", "output folder (created if missing)")
	samples := fs.Int("samples", 0, "samples per split (shd/ssc, default 100), clips per word (gsc, default 3), images per split (mnist, default 100), users (dvs, default 3)")
	seed := fs.Uint64("seed", 1, "random seed")
	full := fs.Bool("full", false, "full-size stand-ins with the official split sizes (shd 8156/2264, ssc 75466/9981/20382, gsc 84843/9981/11005, dvs 1077/264 gestures, mnist 60000/10000); see fits data synth --help")
	spikes := fs.Int("spikes", 0, "shd/ssc: mean spikes per sample (default 2000, with --full 6180: the official converter's density, see fits data synth --help)")
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprintln(stdout, synthHelp)
			return errHelp
		}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(*out) == "" {
		return badInput("--out is required")
	}
	if *samples < 0 || *samples > 100000 {
		return badInput("--samples: %d outside 0..100000", *samples)
	}
	if *full && *samples != 0 {
		return badInput("--samples and --full exclude each other (--full writes the official sizes)")
	}
	if *spikes < 0 || *spikes > 1_000_000 {
		return badInput("--spikes: %d outside 0..1000000", *spikes)
	}
	f := strings.ToLower(*format)
	if f == "" {
		return badInput("--format is required (valid: shd, ssc, gsc, mnist, dvs)")
	}
	sizes, err := synthSplits(*format, *full, *samples) // an unknown format is bad input
	if err != nil {
		return err
	}
	if *spikes != 0 && f != "shd" && f != "ssc" {
		return badInput("--spikes applies to shd and ssc, not %s", f)
	}
	var progress io.Writer
	if *full {
		progress = stderr
	}
	_, err = writeStaged("out", *out, func(dir string) ([]string, error) {
		switch f {
		case "shd", "ssc":
			return nil, synthSpikes(f, dir, sizes, *full, *spikes, *seed, progress)
		case "gsc":
			return nil, gsc.WriteSynthProgress(dir, gscSynthConfig(*full, *samples, *seed), newBar(progress, "clips", sizes))
		case "mnist":
			if *full {
				return nil, mnist.WriteSynthSizes(dir, sizes[mnist.Train], sizes[mnist.Test], *seed)
			}
			return nil, mnist.WriteSynth(dir, sizes[mnist.Train], *seed)
		default: // dvs
			return nil, dvs.WriteSynth(dir, dvsSynthConfig(*full, *samples, *seed))
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: synthetic files written to %s\n", f, *out)
	return nil
}

// newBar returns a progress bar on w over the samples of every split, nil when w is nil.
func newBar(w io.Writer, label string, sizes map[string]int) *progress.Bar {
	if w == nil {
		return nil
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	return progress.New(w, label, int64(total))
}

func runDataEspeak(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data espeak", stderr)
	def := espeak.DefaultConfig()
	out := fs.String("out", "", "output folder (default $FITS_DATA/espeak)")
	variants := listFlag(fs, "variants", strings.Join(def.Variants, ","), "espeak-ng voice variants of the training split")
	testVariants := listFlag(fs, "test-variants", strings.Join(def.TestVariants, ","), "voice variants of the test split (held-out speakers)")
	speeds := listFlag(fs, "speeds", "130,175", "speaking rates, words per minute")
	pitches := listFlag(fs, "pitches", "35,65", "pitches, 0..99")
	classes := listFlag(fs, "classes", "", "only these labels (0-9 English zero..nine, 10-19 German null..neun); empty means all 20")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	c := def
	c.Variants, c.TestVariants = splitList(*variants), splitList(*testVariants)
	var err error
	if c.Speeds, err = parseIntList("speeds", *speeds, 80, 450); err != nil {
		return err
	}
	if c.Pitches, err = parseIntList("pitches", *pitches, 0, 99); err != nil {
		return err
	}
	labels, err := parseIntList("classes", *classes, 0, espeak.Classes-1) // none: all 20
	if err != nil {
		return err
	}
	for _, l := range labels {
		c.Labels = append(c.Labels, int32(l))
	}
	if len(c.Variants) == 0 || len(c.TestVariants) == 0 || len(c.Speeds) == 0 || len(c.Pitches) == 0 {
		return badInput("--variants, --test-variants, --speeds and --pitches must not be empty")
	}
	if err := c.Check(); err != nil {
		return badInput("--variants/--test-variants: %v", err)
	}
	if err := c.CheckVoices(context.Background()); err != nil && !errors.Is(err, espeak.ErrNoSynthesizer) {
		return badInput("--variants/--test-variants: %v", err)
	}
	dir := datasetDir("espeak", *out)
	if err := checkOutDir("out", dir); err != nil {
		return err
	}
	err = espeak.Generate(context.Background(), c, dir, stderr)
	if errors.Is(err, espeak.ErrNoSynthesizer) {
		return badInput("%v", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "espeak: %s and %s (SHD format) and the audio under wav/ written to %s\n", espeak.FileName("train"), espeak.FileName("test"), dir)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseIntList parses comma-separated integers in [lo, hi].
func parseIntList(name, s string, lo, hi int) ([]int, error) {
	vals, err := parseFloatList(name, s)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(vals))
	for i, v := range vals {
		if v != float64(int(v)) || int(v) < lo || int(v) > hi {
			return nil, badInput("--%s: %v is not an integer in %d..%d", name, v, lo, hi)
		}
		out[i] = int(v)
	}
	return out, nil
}

// synthSpikes writes every official split of shd or ssc with sizes[split] samples each: full-size
// stand-ins (full: the density and time range of synthHelp) or fixtures. spikes > 0 sets the mean spikes
// per sample. Progress goes to w when it is not nil.
func synthSpikes(ds, out string, sizes map[string]int, full bool, spikes int, seed uint64, w io.Writer) error {
	splits, _ := shd.Splits(ds)
	classes, _ := shd.Classes(ds)
	keys := make([]string, classes)
	for i := range keys {
		keys[i] = fmt.Sprintf("synthetic class %d", i)
	}
	for i, split := range splits {
		n := sizes[split]
		c := shd.SynthConfig{Samples: n, Classes: classes, MeanSpikes: 2000, Channels: shd.Channels, Duration: 1.0, Seed: seed + uint64(i)}
		if full {
			c.MeanSpikes = fullSizeSpikes
			if ds == shd.SHD {
				c.MinDuration = 0.6
			}
		}
		if spikes > 0 {
			c.MeanSpikes = spikes
		}
		speakers := make([]int64, n)
		for k := range speakers {
			speakers[k] = int64(k % 12)
		}
		path := filepath.Join(out, shd.FileName(ds, split))
		o := shd.WriteOptions{Keys: keys, Speakers: speakers}
		if !full {
			sp, labels, err := shd.Synthesize(c)
			if err != nil {
				return err
			}
			if err := shd.WriteFile(path, sp, labels, o); err != nil {
				return err
			}
			continue
		}
		bar := newBar(w, shd.FileName(ds, split), map[string]int{split: n})
		if err := shd.WriteSynthFile(path, c, o, bar); err != nil {
			return err
		}
		if bar != nil {
			bar.Done()
		}
	}
	return nil
}

// splitTrainSizes are the training-set sizes that fits data split defaults --n to.
var splitTrainSizes = map[string]int{"shd": 8156}

func runDataSplit(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data split", stderr)
	name := fs.String("dataset", "shd", "dataset whose training set is split (shd: --n defaults to its 8156 examples)")
	n := fs.Int("n", 0, "training examples to split (default: the dataset's training size)")
	seed := fs.Int64("seed", 0, "numpy RandomState seed, 0..4294967295 (the released code uses 0)")
	asJSON := fs.Bool("json", false, `print {"validation": [...], "train": [...]}`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ds, err := canonicalDataset(*name)
	if err != nil {
		return err
	}
	size := cmp.Or(*n, splitTrainSizes[ds])
	if size == 0 {
		return badInput("--n is required for %s (its training size is not built in)", ds)
	}
	if size < 2 || size > 100_000_000 {
		return badInput("--n: %d outside 2..100000000", size)
	}
	if *seed < 0 || *seed > 0xffffffff {
		return badInput("--seed: %d outside 0..4294967295", *seed)
	}
	val, train, err := data.OfficialValSplit(size, *seed)
	if err != nil {
		return badInput("%v", err)
	}
	if *asJSON {
		return writeSplitJSON(stdout, val, train)
	}
	fmt.Fprintf(stdout, "%s: %d examples, seed %d: %d validate, %d train (numpy RandomState(%d).permutation(%d), first %d)\n",
		ds, size, *seed, len(val), len(train), *seed, size, len(val))
	fmt.Fprintf(stdout, "validation: %s\n", abbreviate(val, 10))
	fmt.Fprintf(stdout, "train:      %s\n", abbreviate(train, 10))
	return nil
}

// writeSplitJSON writes {"validation": [...], "train": [...]} (validation first, as the released code
// slices it; the bytes json.Marshal gives) as it goes, so that memory does not grow with the output
// beyond the two index lists.
func writeSplitJSON(w io.Writer, val, train []int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	num := make([]byte, 0, 24)
	list := func(key string, v []int) {
		bw.WriteString(key)
		bw.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				bw.WriteByte(',')
			}
			num = strconv.AppendInt(num[:0], int64(x), 10)
			bw.Write(num)
		}
		bw.WriteByte(']')
	}
	list(`{"validation":`, val)
	list(`,"train":`, train)
	bw.WriteString("}\n")
	return bw.Flush()
}

// abbreviate formats the first k values of v, and how many more there are.
func abbreviate(v []int, k int) string {
	var b strings.Builder
	for i, x := range v[:min(k, len(v))] {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, x)
	}
	if len(v) > k {
		fmt.Fprintf(&b, " ... (%d more)", len(v)-k)
	}
	return b.String()
}

// dataFeatures is the JSON of fits data features: [frames][bands] values.
type dataFeatures struct {
	Frames int         `json:"frames"`
	Bands  int         `json:"bands"`
	Values [][]float32 `json:"values"`
}

func runDataFeatures(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data features", stderr)
	name := fs.String("dataset", "gsc", "audio dataset whose front end computes the features: gsc (or espeak, which shares it)")
	wav := fs.String("wav", "", "mono 16-bit PCM WAV file at 16 kHz")
	frontEnd := fs.String("frontend", gsc.FrontEndReleased, "front end: "+strings.Join(gsc.FrontEndNames(), " or ")+" (logmel: before the per-band standardisation of the dataset)")
	asJSON := fs.Bool("json", false, `print {"frames": T, "bands": F, "values": [[F numbers] x T]}`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch ds := strings.ToLower(strings.TrimSpace(*name)); ds {
	case "gsc", "espeak", "espeak-digits-mel":
	case "":
		return badInput("--dataset is required (valid: gsc, espeak)")
	default:
		return badInput("--dataset: %q has no audio front end (valid: gsc, espeak)", *name)
	}
	if strings.TrimSpace(*wav) == "" {
		return badInput("--wav is required")
	}
	fe, err := gsc.ParseFrontEnd(*frontEnd)
	if err != nil {
		return badInput("--frontend: %v", err)
	}
	x, err := gsc.ClipFeatures(*wav, fe)
	if err != nil {
		return err
	}
	out := dataFeatures{Frames: fe.Frames(), Bands: fe.Bands(), Values: make([][]float32, fe.Frames())}
	for t := range out.Values {
		out.Values[t] = x[t*out.Bands : (t+1)*out.Bands]
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "%s: %d frames x %d bands (front end %s), one frame a line\n", *wav, out.Frames, out.Bands, fe.Name)
	for _, row := range out.Values {
		for b, v := range row {
			if b > 0 {
				fmt.Fprint(stdout, " ")
			}
			fmt.Fprintf(stdout, "%.5g", v)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// dataLoadSplit is one split of fits data load.
type dataLoadSplit struct {
	Split    string `json:"split"`
	Examples int    `json:"examples"`
	Shape    []int  `json:"shape"`
	Encoding string `json:"encoding"`
	// Bytes is the memory that holds the split's inputs (shared with the splits that are views of the
	// same set); DenseBytes what they take as float32, as sets held them before they held them compactly.
	Bytes      int64 `json:"bytes"`
	DenseBytes int64 `json:"dense_bytes"`
}

func runDataLoad(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("data load", stderr)
	name := fs.String("dataset", "", "registered dataset: "+strings.Join(data.Names(), ", "))
	dir := fs.String("dir", "", "dataset folder (default $FITS_DATA/NAME)")
	counts := fs.Bool("input-counts", false, "shd, ssc, espeak: spike counts per bin instead of binary inputs")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return badInput("--dataset is required (valid: %s)", strings.Join(data.Names(), ", "))
	}
	start := time.Now()
	d, err := data.Load(*name, data.Options{Dir: *dir, InputCounts: *counts})
	if isErr[*data.UnknownError](err) {
		return badInput("--dataset: %v", err)
	}
	if err != nil {
		return err
	}
	loaded := time.Since(start)
	var out []dataLoadSplit
	for _, sp := range []struct {
		name string
		set  *data.Set
	}{{"train", d.Train}, {"val", d.Val}, {"test", d.Test}} {
		if sp.set == nil {
			continue
		}
		// Read every example once, as an epoch's batches do: a memory-mapped cache is then resident.
		x := make([]float32, sp.set.T*sp.set.F)
		for i := range sp.set.N {
			sp.set.ExampleInto(i, x)
		}
		out = append(out, dataLoadSplit{Split: sp.name, Examples: sp.set.N, Shape: sp.set.Shape(), Encoding: sp.set.Encoding().String(),
			Bytes: sp.set.StorageBytes(), DenseBytes: sp.set.DenseBytes()})
	}
	peak, _ := bench.PeakRSS()
	if *asJSON {
		return writeJSON(stdout, map[string]any{"dataset": d.Name, "splits": out, "load_s": loaded.Seconds(),
			"read_s": (time.Since(start) - loaded).Seconds(), "peak_rss_bytes": peak})
	}
	for _, s := range out {
		fmt.Fprintf(stdout, "%-5s %6d examples %v  %-7s %9.1f MB held, %9.1f MB as float32\n", s.Split, s.Examples, s.Shape, s.Encoding,
			float64(s.Bytes)/1e6, float64(s.DenseBytes)/1e6)
	}
	fmt.Fprintf(stdout, "loaded in %.2f s, every example read in %.2f s, peak resident memory %.1f MB\n", loaded.Seconds(),
		(time.Since(start) - loaded).Seconds(), float64(peak)/1e6)
	return nil
}

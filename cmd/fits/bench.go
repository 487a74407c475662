package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fits-snn/fits/fits/bench"
	"github.com/fits-snn/fits/fits/fused"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/internal/hostinfo"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute"
)

func init() {
	register(&command{
		name:    "bench",
		summary: "time one training iteration (forward + backward) per variant: the paper's kernel table or the Open Neuromorphic shape",
		run:     runBench,
	})
}

// Suites of `fits bench`.
const (
	suiteKernel = "kernel"
	suiteON     = "open-neuromorphic"
)

// benchCell is one measured cell: the network and variant, and (in the output) the measurement.
type benchCell struct {
	Suite   string `json:"suite"`
	Model   string `json:"model"` // neuron kind: lif, fs or fsts
	Width   int    `json:"width"` // hidden width W (kernel) or neurons n (open-neuromorphic)
	M       int    `json:"m"`
	Variant string `json:"variant"`
	Chunk   int    `json:"chunk_request,omitempty"`
	Batch   int    `json:"batch"`
	Time    int    `json:"time"`
	Inputs  int    `json:"inputs"`
	Classes int    `json:"classes"`
	// Dropout is the per-step dropout probability of the hidden layers' spikes (masks drawn by the engine,
	// regenerated in the fused kernel), Readout the classifier's readout over time.
	Dropout float64 `json:"dropout"`
	Readout string  `json:"readout,omitempty"`
	Iters   int     `json:"iters"`
	Warmup  int     `json:"warmup"`
}

// benchRow is a cell with its measurement and the published numbers beside it.
type benchRow struct {
	benchCell
	bench.Measurement
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// SpeedupVsStepwise is the stepwise median divided by this row's median (null without a stepwise row).
	SpeedupVsStepwise *float64 `json:"speedup_vs_stepwise"`
	PaperPyTorchMs    *float64 `json:"paper_pytorch_ms,omitempty"`
	PaperTritonMs     *float64 `json:"paper_triton_ms,omitempty"`
	// With --peers: the same network's median ms in PyTorch (timestep loop, torch.compile'd step,
	// snnTorch for LIF), measured in the same run, and how many times faster this row is than each (their
	// ms / our ms; below 1 means slower).
	TorchLoopMs           *float64 `json:"torch_loop_ms,omitempty"`
	TorchCompileMs        *float64 `json:"torch_compile_ms,omitempty"`
	SnnTorchMs            *float64 `json:"snntorch_ms,omitempty"`
	SpeedupVsTorchLoop    *float64 `json:"speedup_vs_torch_loop,omitempty"`
	SpeedupVsTorchCompile *float64 `json:"speedup_vs_torch_compile,omitempty"`
	SpeedupVsSnnTorch     *float64 `json:"speedup_vs_snntorch,omitempty"`
	// With --peers: the released code's reference loop and torch.compile of the whole iteration (its
	// compile time too), where measured.
	ReleasedLoopMs             *float64 `json:"released_loop_ms,omitempty"`
	TorchCompileWholeMs        *float64 `json:"torch_compile_whole_ms,omitempty"`
	TorchCompileWholeCompileS  *float64 `json:"torch_compile_whole_compile_s,omitempty"`
	SpeedupVsReleasedLoop      *float64 `json:"speedup_vs_released_loop,omitempty"`
	SpeedupVsTorchCompileWhole *float64 `json:"speedup_vs_torch_compile_whole,omitempty"`
	Error                      string   `json:"error,omitempty"`
}

// benchOutput is the JSON form of `fits bench --json`.
type benchOutput struct {
	Suite     string     `json:"suite"`
	Backend   string     `json:"backend"`
	Date      string     `json:"date"`
	Machine   benchHost  `json:"machine"`
	Iteration string     `json:"iteration"`
	Isolated  bool       `json:"isolated"`
	PeakNote  string     `json:"peak_rss_note"`
	Rows      []benchRow `json:"rows"`
	// PaperDevice names the GPU of the paper's (kernel) or the published (open-neuromorphic) numbers.
	PaperDevice string                   `json:"paper_device"`
	Published   []paper.FrameworkRuntime `json:"published,omitempty"`
	// Peers are the PyTorch rows measured with --peers (peers/bench.py), interleaved with ours.
	Peers []peersRow `json:"peers,omitempty"`
	// FusedKernel times the host kernel of the fused variant alone (fits/fused, one hidden layer of each
	// fused cell's network, forward and backward) with every ISA this build and CPU run, and gives its vector
	// code's speed-up over its scalar code (--kernel-iters).
	FusedKernel []bench.KernelMeasurement `json:"fused_kernel,omitempty"`
}

// benchHost is the machine of a measurement (bench.Host).
type benchHost = bench.Host

const iterationNote = "forward + loss + backward to the gradients of every trainable parameter (dense weights and biases, " +
	"neuron parameters, readout); no optimizer update; inputs already on the device"

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", stderr)
	suite := fs.String("suite", suiteKernel, "kernel (the paper's kernel-runtime table), open-neuromorphic (Linear + LIF, batch 16, T = 500) or training (Table A.4: whole epochs of each recipe on full-size data, a fresh `fits train` per cell)")
	datasets := listFlag(fs, "datasets", strings.Join(bench.TrainingDatasets, ","), "training suite: datasets (shd, ssc, gsc as Table A.4; smnist the Table A.9 recipe)")
	dataDir := fs.String("data-dir", "", "training suite: folder holding one folder per dataset (shd, ssc, gsc); default $FITS_DATA/NAME, as fits train")
	standIn := fs.Bool("stand-in", false, "training suite: the data folders hold the full-size stand-ins of `fits data synth --full` (recorded in the result)")
	epochs := fs.Int("epochs", 1, "training suite: epochs timed per cell (the median epoch is reported)")
	widths := listFlag(fs, "width", "", "hidden widths W (kernel; default 64,128,256,512)")
	neurons := listFlag(fs, "neurons", "", "neurons n (open-neuromorphic; default 16384)")
	ms := listFlag(fs, "m", "", "TS orders M; 0 is FS (kernel default 0,1,2; open-neuromorphic default 0,2)")
	lif := fs.Bool("lif", true, "open-neuromorphic: also measure the plain LIF neuron")
	kinds := listFlag(fs, "model", "", "neuron kinds to time instead of the suite's (any of "+strings.Join(neuron.KindNames(), ", ")+"); kinds with a TS module take each --m >= 1")
	variants := listFlag(fs, "variant", "stepwise,unrolled,chunked,fused", "engines to time: stepwise, unrolled, chunked, scan, fused, loop (the same as --engine, its earlier name)")
	engines := listFlag(fs, "engine", "", "engines to time: stepwise, unrolled, chunked, scan, fused, loop (default stepwise,unrolled,chunked,fused; --variant is an alias)")
	chunk := fs.Int("chunk", 0, "steps per call of the chunked variant (0: the largest divisor of T up to 5)")
	batch := fs.Int("batch", 0, "batch size (0: the suite's, 128 or 16)")
	steps := fs.Int("time", 0, "time steps T (0: the suite's, 250 or 500)")
	inputs := fs.Int("inputs", 0, "input features (0: the suite's, 140 or n)")
	classes := fs.Int("classes", -1, "classes of the readout (-1: the suite's, 35 or none; 0: spike-sum loss)")
	dropout := fs.String("dropout", "-1", "per-step dropout probability of the hidden spikes, as the released code trains (-1: the suite's, 0.3 for kernel, 0 for open-neuromorphic)")
	iters := fs.Int("iters", 5, "timed iterations per cell (the median is reported)")
	warmup := fs.Int("warmup", 1, "untimed iterations after the first (compiling) one")
	isolate := fs.Bool("isolate", true, "run each cell in a fresh process, so compile time and peak memory are per cell")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	internal := fs.String("internal-cell", "", "(internal) run one cell given as JSON and print its measurement")
	peers := fs.Bool("peers", false, "also time the same networks in PyTorch (timestep loop, torch.compile of the step, the released code's loop, torch.compile of the whole iteration, snnTorch for LIF) after each cell's variants, from the pinned .venv-peers (make peers-setup)")
	peerThreads := fs.Int("peer-threads", runtime.NumCPU(), "--peers: torch.set_num_threads")
	peerWhole := fs.String("peer-whole", peersDefaultWhole, "--peers: kernel cells W:M where torch.compile of the whole iteration is timed too (it compiles for minutes); all, or none")
	kernelIters := fs.Int("kernel-iters", 3, "timed calls of the fused variant's host kernel alone per ISA (scalar, avx2, avx512), after the cells, for its vector/scalar speed-up; 0: none")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the cells to this new file (with --isolate=false: the cells run in this process)")
	backend := backendFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *internal != "" {
		return runBenchCell(*internal, *backend, stdout, stderr)
	}
	if *suite == suiteTraining {
		ms, err := intListOr("m", *ms, "0,1,2", 0, 2)
		if err != nil {
			return err
		}
		ws, err := intListOr("width", *widths, "64,128,256,512", 1, 1<<20)
		if err != nil {
			return err
		}
		var names []string
		for _, d := range strings.Split(*datasets, ",") {
			if d = strings.TrimSpace(d); d != "" {
				names = append(names, d)
			}
		}
		trainEngines, err := engineList(*engines)
		if err != nil {
			return err
		}
		return runTrainingSuite(names, ms, ws, trainEngines, *epochs, *dataDir, *standIn, *asJSON, *backend, stdout, stderr)
	}
	p, err := parseFloat("dropout", *dropout)
	if err != nil {
		return err
	}
	if !(p == -1 || (p >= 0 && p < 1)) {
		return badInput("--dropout: %g is not -1 or in [0, 1)", p)
	}
	if *engines != "" {
		*variants = *engines
	}
	cells, err := benchCells(*suite, *widths, *neurons, *ms, *lif, *variants, *chunk, *batch, *steps, *inputs, *classes, *iters, *warmup)
	for i := range cells {
		if p >= 0 {
			cells[i].Dropout = p
		}
	}
	if err == nil && *kinds != "" {
		cells, err = withKinds(cells, *kinds, *ms)
	}
	if err != nil {
		return err
	}
	if *kernelIters < 0 {
		return badInput("--kernel-iters: %d is negative", *kernelIters)
	}

	out := benchOutput{
		Suite: *suite, Date: time.Now().UTC().Format(time.RFC3339), Machine: hostInfo(),
		Iteration: iterationNote, Isolated: *isolate,
	}
	if *isolate {
		out.PeakNote = "VmHWM of a fresh process that ran only this cell"
		out.Backend = xla.Choose(*backend).Config
	} else {
		out.PeakNote = "VmHWM of the one process that ran all cells so far (cumulative)"
		if _, err := openBackend(*backend); err != nil {
			return err
		}
		out.Backend = xla.Current().Config
	}
	checks, err := cellChecks(cells)
	if err != nil {
		return err
	}
	if err := checkBenchEngines(checks, *backend, *isolate); err != nil {
		return err
	}
	if *suite == suiteKernel {
		out.PaperDevice = paper.KernelRuntimeGPU + " (paper, PyTorch timestep loop and fused Triton)"
	} else {
		out.PaperDevice = paper.FrameworkRuntimeGPU + " (Open Neuromorphic SNN library benchmark, published)"
		out.Published = paper.FrameworkRuntimes()
	}

	if *peers {
		if _, err := os.Stat(peersPython); err != nil {
			return badInput("--peers: %v", errPeersNotSetUp)
		}
		if *peerThreads < 1 {
			return badInput("--peer-threads: %d (need at least 1)", *peerThreads)
		}
	}
	wholeCells, wholeAll, err := parsePeerWhole(*peerWhole)
	if err != nil {
		return err
	}
	failed := 0
	for i, c := range cells {
		label := fmt.Sprintf("[%d/%d] %s W=%d M=%d %s", i+1, len(cells), c.Model, c.Width, c.M, c.Variant)
		progress := func(msg string) { fmt.Fprintf(stderr, "fits bench: %s: %s\n", label, msg) }
		var m bench.Measurement
		if *isolate {
			m, err = benchChild(c, *backend, stderr, label)
			var bad *inputError
			if errors.As(err, &bad) {
				return err
			}
		} else {
			m, err = measureCell(c, progress)
		}
		row := benchRow{benchCell: c, Measurement: m, PeakRSSMiB: float64(m.PeakRSSBytes) / (1 << 20)}
		if err != nil {
			row.Error = oneLine(err.Error())
			failed++
			progress("failed: " + row.Error)
		} else {
			progress(fmt.Sprintf("median %.1f ms, compile %.1f s, peak %.0f MiB", m.MedianMs, m.CompileS, row.PeakRSSMiB))
		}
		if c.Suite == suiteKernel {
			if k, ok := paper.KernelRuntimeFor(c.Width, c.M); ok && c.Batch == bench.KernelBatch && c.Time == bench.KernelTime {
				row.PaperPyTorchMs, row.PaperTritonMs = &k.PyTorchMs, &k.TritonMs
			}
		}
		out.Rows = append(out.Rows, row)
		if *peers && (i+1 == len(cells) || !sameNetwork(cells[i+1], c)) {
			// The peers of this network, right after our variants of it.
			fmt.Fprintf(stderr, "fits bench: PyTorch peers of %s W=%d M=%d\n", c.Model, c.Width, c.M)
			req := peersRequestFor([]benchCell{c}, *peerThreads)
			req.WholeCells, req.WholeAll = wholeCells, wholeAll
			po, err := runPeers(context.Background(), req, stderr)
			if err != nil && len(po.Rows) == 0 {
				return fmt.Errorf("--peers: %w", err)
			}
			out.Peers = append(out.Peers, po.Rows...)
		}
	}
	fillSpeedups(out.Rows)
	fillPeerSpeedups(out.Rows, out.Peers)
	if *kernelIters > 0 {
		for _, layer := range kernelLayers(cells) {
			fmt.Fprintf(stderr, "fits bench: host kernel alone, W=%d M=%d: every ISA, %d calls each\n", layer.Width, layer.M, *kernelIters)
			km, err := bench.MeasureKernel(layer, *kernelIters)
			if err != nil {
				return fmt.Errorf("host kernel: %w", err)
			}
			out.FusedKernel = append(out.FusedKernel, km)
		}
	}
	if *asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		printBench(stdout, out)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cells failed (see the rows' errors)", failed, len(cells))
	}
	return nil
}

// withKinds replaces the suite's neuron kinds by the kinds named in list (registry names): each kind with a
// TS module once per order M >= 1 of ms (default 1, 2), every other kind with M = 0.
func withKinds(cells []benchCell, list, ms string) ([]benchCell, error) {
	orders, err := intListOr("m", ms, "1,2", 0, 8)
	if err != nil {
		return nil, err
	}
	type km struct {
		kind string
		m    int
	}
	var models []km
	for _, name := range splitList(list) {
		k, err := neuron.ParseKind(name)
		if err != nil {
			return nil, badInput("--model: %v", err)
		}
		if !k.HasTS() {
			models = append(models, km{k.String(), 0})
			continue
		}
		for _, m := range orders {
			if m >= 1 {
				models = append(models, km{k.String(), m})
			}
		}
	}
	if len(models) == 0 {
		return nil, badInput("--model: no kind to time")
	}
	var out []benchCell
	seen := map[benchCell]bool{}
	for _, c := range cells {
		for _, md := range models {
			n := c
			n.Model, n.M = md.kind, md.m
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// kernelLayers returns the distinct hidden layers (as the host kernel runs them) of the fused cells.
func kernelLayers(cells []benchCell) []bench.KernelLayer {
	var out []bench.KernelLayer
	seen := map[bench.KernelLayer]bool{}
	for _, c := range cells {
		if c.Variant != string(bench.Fused) {
			continue
		}
		s, err := c.spec()
		if err != nil {
			continue // the cell's row carries the error
		}
		if l := bench.KernelLayerOf(s); !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// sameNetwork reports whether two cells time the same network (they may differ in the variant).
func sameNetwork(a, b benchCell) bool {
	a.Variant, b.Variant, a.Chunk, b.Chunk = "", "", 0, 0
	return a == b
}

// fillPeerSpeedups sets each row's PyTorch times and how many times faster the row is than each.
func fillPeerSpeedups(rows []benchRow, peers []peersRow) {
	po := peersOutput{Rows: peers}
	for i := range rows {
		r := &rows[i]
		if r.Error != "" {
			continue
		}
		for _, p := range []struct {
			variant     string
			ms, speedup **float64
		}{
			{peerLoop, &r.TorchLoopMs, &r.SpeedupVsTorchLoop},
			{peerCompiled, &r.TorchCompileMs, &r.SpeedupVsTorchCompile},
			{peerSnnTorch, &r.SnnTorchMs, &r.SpeedupVsSnnTorch},
			{peerReleased, &r.ReleasedLoopMs, &r.SpeedupVsReleasedLoop},
			{peerCompiledWhole, &r.TorchCompileWholeMs, &r.SpeedupVsTorchCompileWhole},
		} {
			if pr, ok := po.find(r.Suite, r.Model, r.Width, r.M, p.variant); ok {
				ms := pr.MedianMs
				*p.ms, *p.speedup = &ms, pr.speedupOver(r.MedianMs)
				if p.variant == peerCompiledWhole {
					cs := pr.CompileS
					r.TorchCompileWholeCompileS = &cs
				}
			}
		}
	}
}

// benchCells expands the flags into the list of cells, or returns an input error.
func benchCells(suite, widths, neurons, ms string, lif bool, variants string, chunk, batch, steps, inputs, classes, iters, warmup int) ([]benchCell, error) {
	if suite != suiteKernel && suite != suiteON {
		return nil, badInput("--suite: %q is not kernel or open-neuromorphic", suite)
	}
	if iters < 1 {
		return nil, badInput("--iters: %d (need at least 1)", iters)
	}
	if warmup < 0 {
		return nil, badInput("--warmup: %d is negative", warmup)
	}
	for _, f := range []struct {
		name string
		v    int
		max  int // the cap, so that absurd shapes fail here instead of exhausting memory
	}{{"batch", batch, 1 << 16}, {"time", steps, 1 << 20}, {"inputs", inputs, 1 << 20}, {"chunk", chunk, 1 << 20},
		{"iters", iters, 1 << 20}, {"warmup", warmup, 1 << 20}} {
		if f.v < 0 {
			return nil, badInput("--%s: %d is negative", f.name, f.v)
		}
		if f.v > f.max {
			return nil, badInput("--%s: %d is above the cap %d", f.name, f.v, f.max)
		}
	}
	if b, t, n := max(batch, 128), max(steps, 500), max(inputs, 140); float64(b)*float64(t)*float64(n)*4 > 8<<30 {
		return nil, badInput("--batch, --time, --inputs: the input alone would take %.0f GiB (at most 8 GiB)",
			float64(b)*float64(t)*float64(n)*4/(1<<30))
	}
	if classes < -1 || classes == 1 {
		return nil, badInput("--classes: %d (use 0 for the spike-sum loss or at least 2)", classes)
	}
	var vs []string
	for _, v := range splitList(variants) {
		p, err := bench.ParseVariant(v)
		if err != nil {
			return nil, badInput("--variant: %v", err)
		}
		vs = append(vs, string(p))
	}
	if len(vs) == 0 {
		return nil, badInput("--variant: no variant given")
	}
	type model struct {
		kind neuron.Kind
		m    int
	}
	var models []model
	var sizes []int
	var err error
	base := bench.KernelSpec(1, 0)
	switch suite {
	case suiteKernel:
		if neurons != "" {
			return nil, badInput("--neurons is for --suite=open-neuromorphic; use --width")
		}
		if sizes, err = intListOr("width", widths, "64,128,256,512", 1, 1<<16); err != nil {
			return nil, err
		}
		orders, err := intListOr("m", ms, "0,1,2", 0, 8)
		if err != nil {
			return nil, err
		}
		for _, m := range orders {
			models = append(models, model{fitsKind(m), m})
		}
	case suiteON:
		if widths != "" {
			return nil, badInput("--width is for --suite=kernel; use --neurons")
		}
		if sizes, err = intListOr("neurons", neurons, fmt.Sprint(bench.ONNeurons), 1, 1<<20); err != nil {
			return nil, err
		}
		orders, err := intListOr("m", ms, "0,2", 0, 8)
		if err != nil {
			return nil, err
		}
		if lif {
			models = append(models, model{neuron.LIF, 0})
		}
		for _, m := range orders {
			models = append(models, model{fitsKind(m), m})
		}
		base = bench.OpenNeuromorphicSpec(1, neuron.LIF, 0)
	}
	var cells []benchCell
	for _, w := range sizes {
		for _, md := range models {
			for _, v := range vs {
				c := benchCell{
					Suite: suite, Model: md.kind.String(), Width: w, M: md.m, Variant: v,
					Batch: base.Batch, Time: base.Time, Inputs: base.Inputs, Classes: base.Classes,
					Dropout: base.Dropout, Readout: string(base.Net().Readout), Iters: iters, Warmup: warmup,
				}
				if suite == suiteON {
					c.Inputs = w
				}
				if v == string(bench.Chunked) || v == string(bench.Scan) {
					c.Chunk = chunk
				}
				if batch > 0 {
					c.Batch = batch
				}
				if steps > 0 {
					c.Time = steps
				}
				if inputs > 0 {
					c.Inputs = inputs
				}
				if classes >= 0 {
					c.Classes = classes
				}
				cells = append(cells, c)
			}
		}
	}
	t := cells[0].Time
	if chunk > 0 && t%chunk != 0 {
		return nil, badInput("--chunk: %d does not divide T = %d", chunk, t)
	}
	return cells, nil
}

func fitsKind(m int) neuron.Kind { return neuron.FiTS(m) }

// intListOr parses a comma-separated integer list in [lo, hi], or def when s is empty.
func intListOr(name, s, def string, lo, hi int) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		s = def
	}
	v, err := parseIntList(name, s, lo, hi)
	if err != nil {
		return nil, err
	}
	if len(v) == 0 {
		return nil, badInput("--%s: empty list", name)
	}
	return v, nil
}

// spec returns the cell's network.
func (c benchCell) spec() (bench.Spec, error) {
	kind, err := neuron.ParseKind(c.Model)
	if err != nil {
		return bench.Spec{}, badInput("model: %v", err)
	}
	var s bench.Spec
	if c.Suite == suiteON {
		s = bench.OpenNeuromorphicSpec(c.Width, kind, c.M)
	} else {
		s = bench.KernelSpec(c.Width, c.M)
		s.Neuron = neuron.DefaultConfig(kind, c.M)
	}
	s.Batch, s.Time, s.Inputs, s.Classes, s.Dropout = c.Batch, c.Time, c.Inputs, c.Classes, c.Dropout
	if c.Readout != "" {
		s.Readout = model.Readout(c.Readout)
	}
	if err := s.Validate(); err != nil {
		return s, badInput("%v", err)
	}
	return s, nil
}

// engineCheck is an engine and the network it is asked to run, for checkBenchEngines.
type engineCheck struct {
	engine string
	net    model.Net
}

// checkBenchEngines refuses, before any cell is measured, an engine that the backend cannot run (the
// chunk-slicing engines and the loop engine on the "go" backend): every cell would fail alike, each in a
// process of its own. With isolate the cells run in other processes and this one has opened no backend:
// the pure-Go backend, cheap to start, is started here to ask; the XLA backends run every engine.
func checkBenchEngines(checks []engineCheck, config string, isolate bool) error {
	var b compute.Backend
	if !isolate {
		var err error
		if b, err = xla.Backend(); err != nil {
			return err
		}
	} else {
		choice := xla.Choose(config).Config
		if name, _, _ := strings.Cut(choice, ":"); name != "go" {
			return nil
		}
		var err error
		if b, err = xla.New(choice); err != nil {
			return badInput("--backend: %v", err)
		}
		defer b.Finalize()
	}
	for _, c := range checks {
		if err := step.CheckSupported(c.engine, b, c.net); err != nil {
			return badInput("--engine=%s: %v", c.engine, err)
		}
	}
	return nil
}

// cellChecks lists the engine and network of each cell, for checkBenchEngines.
func cellChecks(cells []benchCell) ([]engineCheck, error) {
	var out []engineCheck
	for _, c := range cells {
		s, err := c.spec()
		if err != nil {
			return nil, err
		}
		out = append(out, engineCheck{c.Variant, s.Net()})
	}
	return out, nil
}

// measureCell measures one cell in this process. An engine the backend cannot run is bad input.
func measureCell(c benchCell, progress func(string)) (bench.Measurement, error) {
	s, err := c.spec()
	if err != nil {
		return bench.Measurement{}, err
	}
	b, err := xla.Backend()
	if err != nil {
		return bench.Measurement{}, err
	}
	m, err := bench.Measure(b, s, bench.Variant(c.Variant), bench.MeasureOptions{
		Warmup: c.Warmup, Iters: c.Iters, Chunk: c.Chunk, Progress: progress,
	})
	if unsupported := (*step.UnsupportedError)(nil); errors.As(err, &unsupported) {
		return m, badInput("--engine=%s: %v", c.Variant, err)
	}
	return m, err
}

// runBenchCell is the child side of --isolate: it measures the cell given as JSON and prints the
// measurement as one JSON line; progress goes to stderr.
func runBenchCell(cellJSON, backend string, stdout, stderr io.Writer) error {
	var c benchCell
	dec := json.NewDecoder(strings.NewReader(cellJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return badInput("--internal-cell: %v", err)
	}
	xla.SetAnnounceWriter(nil)
	if _, err := openBackend(backend); err != nil {
		return err
	}
	label := fmt.Sprintf("%s W=%d M=%d %s", c.Model, c.Width, c.M, c.Variant)
	m, err := measureCell(c, func(msg string) { fmt.Fprintf(stderr, "fits bench: %s: %s\n", label, msg) })
	if err != nil {
		return err
	}
	return writeJSON(stdout, m)
}

// benchChildEnv marks the process of one isolated benchmark cell.
const benchChildEnv = "FITS_BENCH_CHILD"

// benchChild runs one cell in a fresh process of this executable and returns its measurement. A child
// that exits with status 2 (bad input, e.g. an unusable --backend) gives an inputError.
//
// The child runs with benchChildEnv=1; a process that has it set never starts another child, so a binary
// that does not dispatch its arguments to the CLI (a test binary) cannot start a chain of them.
func benchChild(c benchCell, backend string, stderr io.Writer, label string) (bench.Measurement, error) {
	var m bench.Measurement
	if os.Getenv(benchChildEnv) == "1" {
		return m, fmt.Errorf("bench: a cell's child process tried to start another one (%s=1)", benchChildEnv)
	}
	exe, err := os.Executable()
	if err != nil {
		return m, err
	}
	cj, err := json.Marshal(c)
	if err != nil {
		return m, err
	}
	args := []string{"bench", "--internal-cell=" + string(cj)}
	if backend != "" {
		args = append(args, "--backend="+backend)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), benchChildEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	var lastLine string
	done := make(chan struct{})
	go func() {
		// Pass the child's progress through with the cell's position; keep its last line for errors.
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			lastLine = line
			if rest, ok := strings.CutPrefix(line, "fits bench: "); ok {
				if _, msg, ok := strings.Cut(rest, ": "); ok {
					fmt.Fprintf(stderr, "fits bench: %s: %s\n", label, msg)
					continue
				}
			}
			fmt.Fprintln(stderr, line)
		}
	}()
	runErr := cmd.Run()
	_ = pw.Close()
	<-done
	if runErr != nil {
		var ee *exec.ExitError
		msg := strings.TrimPrefix(lastLine, "fits bench: ")
		if errors.As(runErr, &ee) && ee.ExitCode() == 2 {
			return m, badInput("%s", msg)
		}
		return m, fmt.Errorf("cell process: %v: %s", runErr, msg)
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &m); err != nil {
		return m, fmt.Errorf("cell process printed no measurement: %v", err)
	}
	return m, nil
}

// fillSpeedups sets each row's speedup over the stepwise row of the same network.
func fillSpeedups(rows []benchRow) {
	for i := range rows {
		for _, s := range rows {
			if s.benchCell.Variant == string(bench.Stepwise) && s.Error == "" && s.Model == rows[i].Model && s.Width == rows[i].Width &&
				s.M == rows[i].M && rows[i].Error == "" && rows[i].MedianMs > 0 {
				v := s.MedianMs / rows[i].MedianMs
				rows[i].SpeedupVsStepwise = &v
			}
		}
	}
}

func hostInfo() benchHost {
	return benchHost{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), FusedVector: fused.Vector(),
		FusedISA: fused.ActiveISA().String(), GlibcTunables: os.Getenv("GLIBC_TUNABLES"),
		CPU: hostinfo.CPUModel(), Memory: hostinfo.MemTotal()}
}

func printBench(w io.Writer, out benchOutput) {
	fmt.Fprintf(w, "suite %s, backend %s, %d CPUs (%s), %s\n", out.Suite, out.Backend, out.Machine.CPUs, out.Machine.CPU, out.Date)
	fmt.Fprintf(w, "one iteration: %s\n\n", out.Iteration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tW\tM\tvariant\tK\tcompile s\tmedian ms\tpeak MiB\tvs stepwise\tvs torch loop\tvs torch.compile\tvs released loop\tvs torch.compile whole\tvs snnTorch\tpaper PyTorch ms\tpaper Triton ms\t")
	for _, r := range out.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\terror: %s\t\t\t\t\t\t\t\t\n", r.Model, r.Width, r.M, r.benchCell.Variant, r.Error)
			continue
		}
		sp := "-"
		if r.SpeedupVsStepwise != nil {
			sp = fmt.Sprintf("%.1fx", *r.SpeedupVsStepwise)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%.1f\t%.1f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Model, r.Width, r.M, r.benchCell.Variant, r.Measurement.Chunk,
			r.CompileS, r.MedianMs, r.PeakRSSMiB, sp, fmtRatio(r.SpeedupVsTorchLoop), fmtRatio(r.SpeedupVsTorchCompile),
			fmtRatio(r.SpeedupVsReleasedLoop), fmtRatio(r.SpeedupVsTorchCompileWhole),
			fmtRatio(r.SpeedupVsSnnTorch), fmtOpt(r.PaperPyTorchMs, 1), fmtOpt(r.PaperTritonMs, 1))
	}
	_ = tw.Flush()
	if len(out.Published) > 0 {
		fmt.Fprintf(w, "\npublished, %s, s per iteration (forward + backward):\n", out.PaperDevice)
		for _, p := range out.Published {
			fmt.Fprintf(w, "  %-20s n=%-6d %.3f\n", p.Framework, p.Neurons, p.TotalS())
		}
	}
	if len(out.Peers) > 0 {
		fmt.Fprintf(w, "\nPyTorch peers (same networks, same run):\n")
		for _, p := range out.Peers {
			if p.Error != "" {
				fmt.Fprintf(w, "  %-5s W=%-5d M=%d %-19s error: %s\n", p.Model, p.Width, p.M, p.Variant, p.Error)
				continue
			}
			fmt.Fprintf(w, "  %-5s W=%-5d M=%d %-19s median %.1f ms, compile %.1f s, dropout %g\n", p.Model, p.Width, p.M, p.Variant, p.MedianMs, p.CompileS, p.Dropout)
		}
	}
	if len(out.FusedKernel) > 0 {
		fmt.Fprintf(w, "\nhost kernel of the fused variant alone (one hidden layer, median ms of one call, GOMAXPROCS threads):\n")
		for _, k := range out.FusedKernel {
			fmt.Fprintf(w, "  B=%d T=%d W=%d M=%d:", k.Batch, k.Time, k.Width, k.M)
			for _, t := range k.Timings {
				fmt.Fprintf(w, "  %s %.3g forward, %.3g backward;", t.ISA, t.ForwardMs, t.BackwardMs)
			}
			fmt.Fprintf(w, "  %s vs scalar %.1fx forward, %.1fx backward\n", k.DefaultISA, k.ForwardVsScalar, k.BackwardVsScalar)
		}
	}
	fmt.Fprintf(w, "\npeak memory: %s\n", out.PeakNote)
}

// fmtRatio formats a speed ratio ("2.1x"), "-" when absent.
func fmtRatio(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2fx", *v)
}

// startCPUProfile starts a Go CPU profile written to path, a file it creates (an existing file is refused),
// and returns the function that stops it and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, badInput("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, badInput("--cpuprofile: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

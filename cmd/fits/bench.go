package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/fits-snn/fits/fits/bench"
	"github.com/fits-snn/fits/fits/model"
	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/step"
	"github.com/fits-snn/fits/xla"
	"github.com/gomlx/compute"
)

// runBench runs `fits bench`: it checks the flags and runs the suite (bench.Run, bench.RunTraining), or,
// with --internal-cell, the one cell of an isolated cell's process (bench.MeasureChild).
func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", stderr)
	suite := fs.String("suite", bench.SuiteKernel, "kernel (the paper's kernel-runtime table), open-neuromorphic (Linear + LIF, batch 16, T = 500) or training (Table A.4: whole epochs of each recipe on full-size data, a fresh `fits train` per cell)")
	datasets := listFlag(fs, "datasets", strings.Join(bench.TrainingDatasets, ","), "training suite: datasets (shd, ssc, gsc as Table A.4; smnist the Table A.9 recipe)")
	dataDir := fs.String("data-dir", "", "training suite: folder holding one folder per dataset (shd, ssc, gsc); default $FITS_DATA/NAME, as fits train")
	standIn := fs.Bool("stand-in", false, "training suite: the data folders hold the full-size stand-ins of `fits data synth --full` (recorded in the result)")
	epochs := fs.Int("epochs", 1, "training suite: epochs timed per cell (the median epoch is reported)")
	widths := listFlag(fs, "width", "", "hidden widths W (kernel; default 64,128,256,512)")
	neurons := listFlag(fs, "neurons", "", "neurons n (open-neuromorphic; default 16384)")
	ms := listFlag(fs, "m", "", "TS orders M; 0 is FS (kernel default 0,1,2; open-neuromorphic default 0,2)")
	lif := fs.Bool("lif", true, "open-neuromorphic: also measure the plain LIF neuron")
	kinds := listFlag(fs, "model", "", "neuron kinds to time instead of the suite's (any of "+strings.Join(neuron.KindNames(), ", ")+"); kinds with a TS module take each --m >= 1")
	variants := listFlag(fs, "variant", "stepwise,unrolled,chunked,fused", "engines to time: "+strings.Join(step.Names(), ", ")+" (the same as --engine, its earlier name)")
	engines := listFlag(fs, "engine", "", "engines to time: "+strings.Join(step.Names(), ", ")+" (default stepwise,unrolled,chunked,fused; --variant is an alias)")
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
	peerWhole := fs.String("peer-whole", bench.DefaultPeerWhole, "--peers: kernel cells W:M where torch.compile of the whole iteration is timed too (it compiles for minutes); all, or none")
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
		c, err := bench.DecodeCell(*internal)
		if err != nil {
			return badInput("--internal-cell: %v", err)
		}
		xla.SetAnnounceWriter(nil)
		if _, err := openBackend(*backend); err != nil {
			return err
		}
		return bench.MeasureChild(c, stdout, stderr)
	}
	if *suite == bench.SuiteTraining {
		ms, err := intListOr("m", *ms, "0,1,2", 0, 2)
		if err != nil {
			return err
		}
		ws, err := intListOr("width", *widths, "64,128,256,512", 1, 1<<20)
		if err != nil {
			return err
		}
		trainEngines, err := engineList(*engines)
		if err != nil {
			return err
		}
		opts := bench.TrainingOptions{Engines: trainEngines, Epochs: *epochs, DataDir: *dataDir, StandIn: *standIn,
			Backend: *backend, Log: stderr}
		return runTrainingSuite(splitList(*datasets), ms, ws, opts, *asJSON, stdout)
	}
	p, err := parseFloat("dropout", *dropout)
	if err != nil {
		return err
	}
	if !(p == -1 || (p >= 0 && p < 1)) {
		return badInput("--dropout: %g is not -1 or in [0, 1)", p)
	}
	*variants = cmp.Or(*engines, *variants) // --engine, else its earlier name --variant
	grid, err := benchGrid(*suite, *widths, *neurons, *ms, *variants, *chunk, *batch, *steps, *inputs, *classes, *iters, *warmup)
	if err != nil {
		return err
	}
	grid.LIF, grid.Dropout = *lif, p
	cells := grid.Cells()
	if t := cells[0].Time; *chunk > 0 && t%*chunk != 0 {
		return badInput("--chunk: %d does not divide T = %d", *chunk, t)
	}
	if *kinds != "" {
		if cells, err = withKinds(cells, *kinds, *ms); err != nil {
			return err
		}
	}
	if *kernelIters < 0 {
		return badInput("--kernel-iters: %d is negative", *kernelIters)
	}
	if !*isolate {
		if _, err := openBackend(*backend); err != nil {
			return err
		}
	}
	var checks []engineCheck
	for _, c := range cells {
		s, err := c.Spec()
		if err != nil {
			return err
		}
		checks = append(checks, engineCheck{c.Variant, s.Net()})
	}
	if err := checkBenchEngines(checks, *backend, *isolate); err != nil {
		return err
	}
	if *peers {
		if _, err := os.Stat(bench.PeersPython); err != nil {
			return badInput("--peers: %v", bench.ErrPeersNotSetUp)
		}
		if *peerThreads < 1 {
			return badInput("--peer-threads: %d (need at least 1)", *peerThreads)
		}
	}
	wholeCells, wholeAll, err := bench.ParsePeerWhole(*peerWhole)
	if err != nil {
		return badInput("--peer-whole: %v", err)
	}
	rep, failed, err := bench.Run(*suite, cells, bench.RunOptions{Isolate: *isolate, Backend: *backend, Peers: *peers,
		PeerThreads: *peerThreads, WholeCells: wholeCells, WholeAll: wholeAll, KernelIters: *kernelIters, Log: stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		rep.WriteText(stdout)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cells failed (see the rows' errors)", failed, len(cells))
	}
	return nil
}

// runTrainingSuite runs `fits bench --suite=training` on the Table A.4 cells of datasets, orders ms and
// widths (bench.TrainingCells) and prints the report.
func runTrainingSuite(datasets []string, ms, widths []int, opts bench.TrainingOptions, asJSON bool, stdout io.Writer) error {
	cells, err := bench.TrainingCells(datasets, ms, widths)
	if err != nil {
		return badInput("--datasets, --m, --width: %v", err)
	}
	if opts.Epochs < 1 || opts.Epochs > 100 {
		return badInput("--epochs: %d is not in [1, 100]", opts.Epochs)
	}
	var checks []engineCheck
	for _, e := range opts.Engines {
		checks = append(checks, engineCheck{engine: e}) // the backend's capabilities, whatever the network
	}
	if err := checkBenchEngines(checks, opts.Backend, true); err != nil {
		return err
	}
	if opts.DataDir != "" {
		if !isDir(opts.DataDir) {
			return badInput("--data-dir: %s is not a folder", shortQuote(opts.DataDir))
		}
	}
	rep, failed, err := bench.RunTraining(cells, opts)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		rep.WriteText(stdout)
	}
	if failed > 0 {
		return fmt.Errorf("bench: %d of %d training cells failed", failed, len(rep.Rows))
	}
	return nil
}

// withKinds replaces the models of cells by the kinds named in list (bench.WithKinds), each kind with a TS
// module once per order M >= 1 of ms (default 1, 2).
func withKinds(cells []bench.Cell, list, ms string) ([]bench.Cell, error) {
	orders, err := intListOr("m", ms, "1,2", 0, 8)
	if err != nil {
		return nil, err
	}
	var kinds []neuron.Kind
	for _, name := range splitList(list) {
		k, err := neuron.ParseKind(name)
		if err != nil {
			return nil, badInput("--model: %v", err)
		}
		kinds = append(kinds, k)
	}
	if cells = bench.WithKinds(cells, kinds, orders); len(cells) == 0 {
		return nil, badInput("--model: no kind to time")
	}
	return cells, nil
}

// benchGrid checks the flags of the kernel and open-neuromorphic suites and returns their grid, or an
// input error.
func benchGrid(suite, widths, neurons, ms, variants string, chunk, batch, steps, inputs, classes, iters, warmup int) (bench.Grid, error) {
	g := bench.Grid{Suite: suite, Chunk: chunk, Batch: batch, Time: steps, Inputs: inputs, Classes: classes, Iters: iters, Warmup: warmup}
	if suite != bench.SuiteKernel && suite != bench.SuiteON {
		return g, badInput("--suite: %q is not kernel or open-neuromorphic", suite)
	}
	if iters < 1 {
		return g, badInput("--iters: %d (need at least 1)", iters)
	}
	if warmup < 0 {
		return g, badInput("--warmup: %d is negative", warmup)
	}
	for _, f := range []struct {
		name string
		v    int
		max  int // the cap, so that absurd shapes fail here instead of exhausting memory
	}{{"batch", batch, 1 << 16}, {"time", steps, 1 << 20}, {"inputs", inputs, 1 << 20}, {"chunk", chunk, 1 << 20},
		{"iters", iters, 1 << 20}, {"warmup", warmup, 1 << 20}} {
		if f.v < 0 {
			return g, badInput("--%s: %d is negative", f.name, f.v)
		}
		if f.v > f.max {
			return g, badInput("--%s: %d is above the cap %d", f.name, f.v, f.max)
		}
	}
	if b, t, n := max(batch, 128), max(steps, 500), max(inputs, 140); float64(b)*float64(t)*float64(n)*4 > 8<<30 {
		return g, badInput("--batch, --time, --inputs: the input alone would take %.0f GiB (at most 8 GiB)",
			float64(b)*float64(t)*float64(n)*4/(1<<30))
	}
	if classes < -1 || classes == 1 {
		return g, badInput("--classes: %d (use 0 for the spike-sum loss or at least 2)", classes)
	}
	for _, v := range splitList(variants) {
		p, err := bench.ParseVariant(v)
		if err != nil {
			return g, badInput("--variant: %v", err)
		}
		g.Variants = append(g.Variants, p)
	}
	if len(g.Variants) == 0 {
		return g, badInput("--variant: no variant given")
	}
	var err error
	if suite == bench.SuiteKernel {
		if neurons != "" {
			return g, badInput("--neurons is for --suite=open-neuromorphic; use --width")
		}
		if g.Sizes, err = intListOr("width", widths, "64,128,256,512", 1, 1<<16); err != nil {
			return g, err
		}
		g.Orders, err = intListOr("m", ms, "0,1,2", 0, 8)
		return g, err
	}
	if widths != "" {
		return g, badInput("--width is for --suite=kernel; use --neurons")
	}
	if g.Sizes, err = intListOr("neurons", neurons, fmt.Sprint(bench.ONNeurons), 1, 1<<20); err != nil {
		return g, err
	}
	g.Orders, err = intListOr("m", ms, "0,2", 0, 8)
	return g, err
}

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
	var err error
	if !isolate {
		if b, err = xla.Backend(); err != nil {
			return err
		}
	} else {
		choice := xla.Choose(config).Config
		if name, _, _ := strings.Cut(choice, ":"); name != "go" {
			return nil
		}
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

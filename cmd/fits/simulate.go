package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/fits-snn/fits/fits/neuron"
	"github.com/fits-snn/fits/fits/sim"
	"github.com/fits-snn/fits/fits/train"
)

// simulateOutput is the JSON form of `fits simulate --json`: spikes[k] = S[k+1] and v_pre[k] = ṼM[k+1],
// the pre-reset mixed voltage, for the input current I[k] on line k of the file.
type simulateOutput struct {
	Spikes []int       `json:"spikes"`
	VPre   []jsonFloat `json:"v_pre"`
}

func runSimulate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("simulate", stderr)
	cf := addConstantsFlags(fs)
	fstarFlag := fs.String("fstar", "", "continuous-time target frequency f* in Hz (required except for --model=lif; κ by Theorem 1, η = γ = √κ)")
	tsf := addTSFlags(fs)
	vthFlag := fs.String("vth", "1", "firing threshold Vth")
	inputFlag := fs.String("input", "", "file with one input current I[k] per line (required; blank lines are skipped)")
	modelFlag := fs.String("model", "", "neuron kind with a target frequency: "+strings.Join(targetKindNames(), ", ")+
		" (default fs, or fsts when --beta is given; all give the same neuron for the same f*, beta, lambda), "+
		"or lif (Eq. 1, η = γ = 0: no --fstar, --beta, --lambda; reference engine only)")
	engineFlag := fs.String("engine", "reference", `"reference" (float64 fits/sim) or "graph" (the GoMLX layer, float32, on the active backend, in compiled chunks of 16 steps: memory and compile time do not grow with the input length)`)
	backend := backendFlag(fs)
	asJSON := fs.Bool("json", false, `print one JSON object {"spikes":[...],"v_pre":[...]}`)
	c, err := cf.parseArgs(fs, args)
	if err != nil {
		return err
	}
	beta, lambda, mix, err := tsf.parse()
	if err != nil {
		return err
	}
	if len(beta) != len(lambda) {
		return badInput("--beta and --lambda need the same number of values, got %d and %d", len(beta), len(lambda))
	}
	vth, err := parseFloat("vth", *vthFlag)
	if err != nil {
		return err
	}
	kind := neuron.FiTS(len(beta))
	if *modelFlag != "" {
		if kind, err = neuron.ParseKind(*modelFlag); err != nil || !(kind.HasTargetFrequency() || kind == neuron.LIF) {
			return badInput("--model: %q is not lif or a neuron kind with a target frequency (valid: %s)", *modelFlag,
				strings.Join(append([]string{neuron.LIF.String()}, targetKindNames()...), ", "))
		}
	}
	if err := kind.CheckOrder(len(beta)); err != nil {
		return badInput("--model, --beta: %v", err)
	}
	var fstar float64
	switch {
	case kind == neuron.LIF && strings.TrimSpace(*fstarFlag) != "":
		return badInput("--fstar: --model=lif has no target frequency (η = γ = 0)")
	case kind != neuron.LIF && strings.TrimSpace(*fstarFlag) == "":
		return badInput("--fstar is required (target frequency in Hz)")
	case kind != neuron.LIF:
		if fstar, err = parseFloat("fstar", *fstarFlag); err != nil {
			return err
		}
		if _, err := targetKappa(c, c.Jury(), fstar); err != nil {
			return err
		}
	}
	engine := *engineFlag
	if engine != "reference" && engine != "graph" {
		return badInput("--engine: unknown engine %q (valid: reference, graph)", engine)
	}
	if engine == "graph" && kind == neuron.LIF {
		return badInput("--model=lif: the graph engine simulates kinds with a target frequency; use --engine=reference")
	}
	if engine == "graph" && len(beta) > train.MaxOrder {
		return badInput("--beta: %d values, but the graph engine simulates TS orders up to M = %d, as fits train trains (use --engine=reference)", len(beta), train.MaxOrder)
	}
	if *inputFlag == "" {
		return badInput("--input is required (a file with one input current per line)")
	}
	current, lines, err := readCurrents(*inputFlag)
	if err != nil {
		return err
	}
	if err := checkBackendName(*backend); err != nil {
		return err
	}
	var params sim.Params
	if kind == neuron.LIF {
		// Eq. 1: the FS update of Algorithm 1 with η = γ = 0 (the adaptation current stays zero).
		params = sim.Params{Mu: c.Mu(), Rho: c.Rho(), Dt: c.Dt, Vth: vth, Nesting: mix.Nesting()}
		if err := params.Validate(); err != nil {
			return badInput("%v", err)
		}
	} else {
		cfg := sim.Config{TauM: c.TauM, TauA: c.TauA, Dt: c.Dt, FStar: fstar, Beta: beta, Lambda: lambda, Vth: vth,
			Nesting: mix.Nesting()}
		if params, err = cfg.Params(); err != nil {
			return badInput("%v", err)
		}
	}

	var spikes []int
	var vPre []float64
	precision := "float64" // of the engine's arithmetic
	switch engine {
	case "reference":
		tr, err := sim.Run(params, current)
		if err != nil {
			return badInput("%v", err)
		}
		spikes, vPre = tr.Spikes, tr.VPre
	case "graph":
		for k, v := range current {
			if math.Abs(v) > math.MaxFloat32 {
				return badInput("--input: %s line %d: %g is outside the float32 range of the graph engine (|I| <= %.4g)",
					*inputFlag, lines[k], v, math.MaxFloat32)
			}
		}
		ncfg := neuron.DefaultConfig(kind, len(beta))
		ncfg.TauM, ncfg.TauA, ncfg.Dt, ncfg.Vth, ncfg.TSMix = c.TauM, c.TauA, c.Dt, vth, mix
		ncfg.KappaFraction = 1 // the reference accepts any f* below the Jury bound
		b, err := openBackend(*backend)
		if err != nil {
			return err
		}
		g, err := newGraphSimulation(b, ncfg, neuron.NeuronParams{FStarHz: fstar, Beta: beta, Lambda: lambda},
			min(len(current), graphChunk))
		if err != nil {
			return fmt.Errorf("graph engine: %w", err)
		}
		precision = "float32"
		if spikes, vPre, err = g.run(current); err != nil {
			return fmt.Errorf("graph engine: %w", err)
		}
	}
	for k, v := range vPre { // the first step whose state overflowed (ṼM[k+1] for the input I[k])
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return badInput("--input: %s line %d: the neuron's state is not finite at step %d: v_pre = %g in the %s (%s) engine (the input currents are too large for it)",
				*inputFlag, lines[k], k, v, engine, precision)
		}
	}
	out := simulateOutput{spikes, jsonFloats(vPre)}

	if *asJSON {
		return writeJSON(stdout, out)
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w, "k\tspike\tv_pre")
	for k := range out.Spikes {
		fmt.Fprintf(w, "%d\t%d\t%.9g\n", k, out.Spikes[k], float64(out.VPre[k]))
	}
	return w.Flush()
}

// targetKindNames returns the registered neuron kinds parameterized by a target frequency f*.
func targetKindNames() []string {
	var out []string
	for _, k := range neuron.Kinds() {
		if k.HasTargetFrequency() {
			out = append(out, k.String())
		}
	}
	return out
}

// readCurrents reads one finite number per line from path, with the line number of each (blank lines are
// skipped). Any problem is bad input.
func readCurrents(path string) (values []float64, lines []int, err error) {
	f, err := openInputFile(path, maxInputFile)
	if err != nil {
		return nil, nil, badInput("--input: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, badInput("--input: %s line %d: %s is not a finite number", path, line, shortQuote(s))
		}
		values = append(values, v)
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, badInput("--input: %s: %v", path, err)
	}
	if len(values) == 0 {
		return nil, nil, badInput("--input: %s holds no input currents", path)
	}
	return values, lines, nil
}

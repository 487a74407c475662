package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// The Python peers of `fits bench --peers`: peers/bench.py, run with the interpreter of the pinned
// virtualenv .venv-peers (make peers-setup), times the same networks in PyTorch — the paper's PyTorch
// timestep loop, the same step under torch.compile, the released code's own reference loop, torch.compile
// of the whole iteration (at a few cells: it compiles for minutes), and snnTorch's Leaky for the LIF rows —
// with the neuron and the training semantics of our engines (the released code's: per-step dropout of the
// hidden spikes, the sum readout), and prints one JSON object, which runPeers parses into peerOutput.

// Paths of the peers relative to the repository root: PeersPython is the virtualenv's interpreter.
const (
	PeersPython = ".venv-peers/bin/python"
	peersScript = "peers/bench.py"
	peersTool   = "peers/bench.py" // the "tool" field of its output
)

// Variants of the peers (the "variant" field of a PeerRow).
const (
	// peerLoop is the paper's PyTorch timestep loop (unbind over time, the dropout drawn per step in it).
	peerLoop = "torch-loop"
	// peerCompiled is the same loop with its step (dropout included) under torch.compile.
	peerCompiled = "torch-compile"
	// peerReleased is the released code's CPU reference loop form (each step's current indexed, the
	// dropout on each layer's stacked spikes); fs and fsts rows only.
	peerReleased = "released-loop"
	// peerCompiledWhole is torch.compile of the whole forward pass and loss (the time loop unrolled, the
	// backward compiled with it); kernel cells of peerRequest.WholeCells only.
	peerCompiledWhole = "torch-compile-whole"
	peerSnnTorch      = "snntorch"
)

// peerVariants lists the variants in bench.py's order.
var peerVariants = []string{peerLoop, peerCompiled, peerReleased, peerCompiledWhole, peerSnnTorch}

// DefaultPeerWhole is bench.py's default of --whole-cells (and of fits bench --peer-whole): the kernel
// cells where torch-compile-whole runs.
const DefaultPeerWhole = "64:0,512:0"

// ErrPeersNotSetUp is returned (wrapped) by runPeers when the virtualenv or the script is missing.
var ErrPeersNotSetUp = errors.New("the PyTorch peers are not set up (run make peers-setup)")

// PeerCell is one kernel-table cell: hidden width W and TS order M (fs for M = 0, fsts for M ≥ 1).
type PeerCell struct{ Width, M int }

// peerRequest says what peers/bench.py measures. Zero values take bench.py's defaults where noted.
type peerRequest struct {
	// Root is the repository root holding .venv-peers and peers/ ("" means the working directory).
	Root string
	// Cells are the kernel-table cells (batch 128, T = 250, 140 inputs, 35 classes unless overridden).
	Cells []PeerCell
	// ONNeurons are the Open Neuromorphic sizes n (input [16, 500, n], Linear(n, n) + one layer).
	ONNeurons []int
	// ONOrders are the FiTS orders M measured besides LIF at the Open Neuromorphic shape (nil: 0 and 2);
	// NoONLIF leaves the LIF rows out.
	ONOrders []int
	NoONLIF  bool
	// Variants are among peerVariants (nil: all of them).
	Variants []string
	// WholeCells are the kernel cells where peerCompiledWhole runs (nil: bench.py's DefaultPeerWhole;
	// empty: none); WholeAll runs it at every cell instead.
	WholeCells []PeerCell
	WholeAll   bool
	// Dropout is the per-step dropout probability of the hidden spikes (nil: bench.py's, 0.3 for the kernel
	// cells and 0 for Open Neuromorphic); Readout the kernel readout over time, sum or mean ("": sum).
	Dropout *float64
	Readout string
	// Iters timed iterations (0: 5), Warmup untimed ones after the first (negative: bench.py's 1),
	// Threads for torch.set_num_threads (0: runtime.NumCPU()).
	Iters, Warmup, Threads int
	// Batch, Time and Inputs override the kernel cells' shape when positive; Classes when ≥ 0 (0: the
	// spike-sum loss).
	Batch, Time, Inputs int
	Classes             int
	// Seed of weights, inputs and labels (0: 1).
	Seed int
	// Shared runs all rows in one Python process instead of one fresh process per row.
	Shared bool
}

// peerOutput is the JSON object printed by peers/bench.py.
type peerOutput struct {
	Tool     string  `json:"tool"`
	Date     string  `json:"date"`
	Python   string  `json:"python"`
	Torch    string  `json:"torch"`
	SnnTorch *string `json:"snntorch"`
	Threads  int     `json:"threads"`
	Iters    int     `json:"iters"`
	Warmup   int     `json:"warmup"`
	Isolated bool    `json:"isolated"`
	Machine  Host    `json:"machine"`
	// LoadAverageStart and LoadAverageEnd are the 1-, 5- and 15-minute load averages before and after.
	LoadAverageStart []float64 `json:"load_average_start"`
	LoadAverageEnd   []float64 `json:"load_average_end"`
	Iteration        string    `json:"iteration"`
	Rows             []PeerRow `json:"rows"`
}

// PeerRow is one measured row: input [batch, time, inputs], hidden width W (kernel) or n
// (open-neuromorphic), Classes = 0 for the spike-sum loss. Times in seconds or milliseconds as named.
type PeerRow struct {
	Suite   string `json:"suite"` // SuiteKernel or SuiteON
	Model   string `json:"model"` // lif, fs or fsts
	Width   int    `json:"width"`
	M       int    `json:"m"`
	Variant string `json:"variant"` // one of peerVariants
	Batch   int    `json:"batch"`
	Time    int    `json:"time"`
	Inputs  int    `json:"inputs"`
	Classes int    `json:"classes"`
	Layers  int    `json:"layers"`
	Iters   int    `json:"iters"`
	Warmup  int    `json:"warmup"`
	Seed    int    `json:"seed"`
	// Dropout is the per-step dropout probability of the hidden spikes, Readout the pooling over time
	// before the readout (sum or mean; "" for the spike-sum loss).
	Dropout float64 `json:"dropout"`
	Readout string  `json:"readout"`
	// FirstS is the first iteration (building, and compiling for the torch-compile variants); CompileS =
	// FirstS − median.
	FirstS   float64   `json:"first_s"`
	CompileS float64   `json:"compile_s"`
	MedianMs float64   `json:"median_ms"`
	IterMs   []float64 `json:"iter_ms"`
	// InitialLoss is the loss before any update (nil when not finite or the row failed); with the same
	// network its value is close to ours but not bit-equal (different random numbers).
	InitialLoss *float64  `json:"initial_loss"`
	SpikeRates  []float64 `json:"spike_rates"` // mean spikes per neuron and step, per hidden layer
	PeakRSSMiB  float64   `json:"peak_rss_mib"`
	Error       string    `json:"error"`
}

// peerRequestFor returns the request that measures the peers of cells (as expanded by Grid.Cells) on
// the same shapes: each distinct kernel (W, M) once, each distinct Open Neuromorphic n with the cells'
// orders, and the cells' iterations, warm-up, dropout, readout and kernel shape overrides (the cells share
// one dropout and readout; the last cell's is taken).
func peerRequestFor(cells []Cell, threads int) peerRequest {
	req := peerRequest{Threads: threads, Warmup: -1, Classes: -1}
	seenCell, seenN, seenM := map[PeerCell]bool{}, map[int]bool{}, map[int]bool{}
	onLIF := false
	for _, c := range cells {
		req.Iters, req.Warmup = c.Iters, c.Warmup
		p := c.Dropout
		req.Dropout = &p
		if c.Suite == SuiteKernel && c.Readout != "" {
			req.Readout = c.Readout
		}
		switch c.Suite {
		case SuiteKernel:
			if k := (PeerCell{c.Width, c.M}); !seenCell[k] {
				seenCell[k] = true
				req.Cells = append(req.Cells, k)
			}
			if c.Batch != KernelBatch {
				req.Batch = c.Batch
			}
			if c.Time != KernelTime {
				req.Time = c.Time
			}
			if c.Inputs != KernelInputs {
				req.Inputs = c.Inputs
			}
			if c.Classes != KernelClasses {
				req.Classes = c.Classes
			}
		case SuiteON:
			if !seenN[c.Width] {
				seenN[c.Width] = true
				req.ONNeurons = append(req.ONNeurons, c.Width)
			}
			if c.Model == "lif" {
				onLIF = true
			} else if !seenM[c.M] {
				seenM[c.M] = true
				req.ONOrders = append(req.ONOrders, c.M)
			}
		}
	}
	if len(req.ONNeurons) > 0 {
		req.NoONLIF = !onLIF
		slices.Sort(req.ONOrders)
		if req.ONOrders == nil {
			req.ONOrders = []int{} // LIF only: an empty --on-m
		}
	}
	return req
}

// args returns the command line of peers/bench.py (without the interpreter and the script).
func (r peerRequest) args() []string {
	threads := r.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	a := []string{"--cells=" + join(r.Cells, PeerCell.arg), "--on-n=" + join(r.ONNeurons, strconv.Itoa), "--threads=" + strconv.Itoa(threads)}
	dropout := ""
	if r.Dropout != nil {
		dropout = strconv.FormatFloat(*r.Dropout, 'g', -1, 64)
	}
	for _, f := range []struct {
		set  bool
		flag string
	}{
		{r.ONOrders != nil, "--on-m=" + join(r.ONOrders, strconv.Itoa)},
		{r.NoONLIF, "--on-lif=false"},
		{len(r.Variants) > 0, "--variants=" + strings.Join(r.Variants, ",")},
		{r.WholeAll, "--whole-cells=all"},
		{!r.WholeAll && r.WholeCells != nil, "--whole-cells=" + join(r.WholeCells, PeerCell.arg)},
		{r.Dropout != nil, "--dropout=" + dropout},
		{r.Readout != "", "--readout=" + r.Readout},
		{r.Iters > 0, "--iters=" + strconv.Itoa(r.Iters)},
		{r.Warmup >= 0, "--warmup=" + strconv.Itoa(r.Warmup)},
		{r.Batch > 0, "--batch=" + strconv.Itoa(r.Batch)},
		{r.Time > 0, "--time=" + strconv.Itoa(r.Time)},
		{r.Inputs > 0, "--inputs=" + strconv.Itoa(r.Inputs)},
		{r.Seed > 0, "--seed=" + strconv.Itoa(r.Seed)},
		{r.Classes >= 0, "--classes=" + strconv.Itoa(r.Classes)},
		{r.Shared, "--isolate=false"},
	} {
		if f.set {
			a = append(a, f.flag)
		}
	}
	return a
}

// join formats each of v with f, comma-separated.
func join[T any](v []T, f func(T) string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = f(x)
	}
	return strings.Join(s, ",")
}

// arg is the cell as bench.py's --cells and --whole-cells take it, W:M.
func (c PeerCell) arg() string { return fmt.Sprintf("%d:%d", c.Width, c.M) }

// ParsePeerWhole parses the kernel cells of torch-compile-whole (RunOptions.WholeCells, fits bench
// --peer-whole): W:M pairs, comma-separated; "all" for every cell; "" or "none" for none.
func ParsePeerWhole(s string) (cells []PeerCell, all bool, err error) {
	s = strings.TrimSpace(s)
	switch s {
	case "all":
		return nil, true, nil
	case "", "none":
		return []PeerCell{}, false, nil
	}
	cells = []PeerCell{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		w, m, ok := strings.Cut(part, ":")
		wi, errW := strconv.Atoi(strings.TrimSpace(w))
		mi, errM := strconv.Atoi(strings.TrimSpace(m))
		if !ok || errW != nil || errM != nil {
			return nil, false, fmt.Errorf("%q is not W:M (e.g. 64:0), all or none", part)
		}
		if wi < 1 || wi > 1<<16 || mi < 0 || mi > 8 {
			return nil, false, fmt.Errorf("%q needs 1 <= W <= 65536 and 0 <= M <= 8", part)
		}
		cells = append(cells, PeerCell{wi, mi})
	}
	return cells, false, nil
}

// runPeers runs peers/bench.py for req with the interpreter of .venv-peers under req.Root, passes its
// progress lines through to stderr, and returns its parsed output. Rows that failed inside bench.py
// (exit status 1) come back with their Error set and no error here; a missing virtualenv gives an error
// wrapping ErrPeersNotSetUp; any other failure of the script (bad arguments, a crash, unreadable output)
// is an error naming its last line on stderr.
func runPeers(ctx context.Context, req peerRequest, stderr io.Writer) (peerOutput, error) {
	root := cmp.Or(req.Root, ".")
	python, script := filepath.Join(root, PeersPython), filepath.Join(root, peersScript)
	for _, p := range []string{python, script} {
		if _, err := os.Stat(p); err != nil {
			return peerOutput{}, fmt.Errorf("peers: %s: %w", p, ErrPeersNotSetUp)
		}
	}
	if len(req.Cells) == 0 && len(req.ONNeurons) == 0 {
		return peerOutput{}, errors.New("peers: no kernel cell and no Open Neuromorphic size to measure")
	}
	cmd := exec.CommandContext(ctx, python, append([]string{script}, req.args()...)...)
	stdout, last, runErr := runCollect(cmd, func(line string) { fmt.Fprintln(stderr, line) })
	var exit *exec.ExitError
	switch {
	case runErr == nil:
	case errors.As(runErr, &exit) && exit.ExitCode() == 1:
		// Some rows failed; the JSON is complete and says which.
	default:
		return peerOutput{}, fmt.Errorf("peers: %s: %v: %s", peersScript, runErr, last)
	}
	out, err := parsePeers(stdout)
	if err != nil {
		return out, fmt.Errorf("peers: %s: %w", peersScript, err)
	}
	return out, nil
}

// parsePeers parses and checks the output of peers/bench.py: its tool name, at least one row, and every
// row's suite, model and variant.
func parsePeers(data []byte) (peerOutput, error) {
	var out peerOutput
	if err := json.Unmarshal(bytes.TrimSpace(data), &out); err != nil {
		return out, fmt.Errorf("output is not one JSON object: %v", err)
	}
	if out.Tool != peersTool {
		return out, fmt.Errorf("output names tool %q, want %q", out.Tool, peersTool)
	}
	if len(out.Rows) == 0 {
		return out, errors.New("output has no rows")
	}
	for i, r := range out.Rows {
		switch {
		case r.Suite != SuiteKernel && r.Suite != SuiteON:
			return out, fmt.Errorf("row %d: unknown suite %q", i, r.Suite)
		case r.Model != "lif" && r.Model != "fs" && r.Model != "fsts":
			return out, fmt.Errorf("row %d: unknown model %q", i, r.Model)
		case !slices.Contains(peerVariants, r.Variant):
			return out, fmt.Errorf("row %d: unknown variant %q", i, r.Variant)
		case r.Error == "" && !(r.MedianMs > 0):
			return out, fmt.Errorf("row %d (%s %s W=%d M=%d %s): no error and no median", i, r.Suite, r.Model, r.Width, r.M, r.Variant)
		}
	}
	return out, nil
}

// find returns the measured row (no error) of the network and variant, if any.
func (o peerOutput) find(suite, model string, width, m int, variant string) (PeerRow, bool) {
	for _, r := range o.Rows {
		if r.Suite == suite && r.Model == model && r.Width == width && r.M == m && r.Variant == variant && r.Error == "" {
			return r, true
		}
	}
	return PeerRow{}, false
}

// speedupOver returns the peer row's median divided by ourMs — how many times faster we are (above 1)
// or slower (below 1) — or nil when either time is missing.
func (r PeerRow) speedupOver(ourMs float64) *float64 {
	if r.Error != "" || !(r.MedianMs > 0) || !(ourMs > 0) {
		return nil
	}
	v := r.MedianMs / ourMs
	return &v
}

package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fits-snn/fits/fits/fused"
	"github.com/fits-snn/fits/fits/paper"
	"github.com/fits-snn/fits/internal/hostinfo"
	"github.com/fits-snn/fits/xla"
)

// Row is a cell with its measurement and the published numbers beside it.
type Row struct {
	Cell
	Measurement
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// SpeedupVsStepwise is the stepwise median divided by this row's median (null without a stepwise row).
	SpeedupVsStepwise *float64 `json:"speedup_vs_stepwise"`
	PaperPyTorchMs    *float64 `json:"paper_pytorch_ms,omitempty"`
	PaperTritonMs     *float64 `json:"paper_triton_ms,omitempty"`
	// With RunOptions.Peers: the same network's median ms in PyTorch (timestep loop, torch.compile'd step,
	// snnTorch for LIF), measured in the same run, and how many times faster this row is than each (their
	// ms / our ms; below 1 means slower).
	TorchLoopMs           *float64 `json:"torch_loop_ms,omitempty"`
	TorchCompileMs        *float64 `json:"torch_compile_ms,omitempty"`
	SnnTorchMs            *float64 `json:"snntorch_ms,omitempty"`
	SpeedupVsTorchLoop    *float64 `json:"speedup_vs_torch_loop,omitempty"`
	SpeedupVsTorchCompile *float64 `json:"speedup_vs_torch_compile,omitempty"`
	SpeedupVsSnnTorch     *float64 `json:"speedup_vs_snntorch,omitempty"`
	// With RunOptions.Peers: the released code's reference loop and torch.compile of the whole iteration
	// (its compile time too), where measured.
	ReleasedLoopMs             *float64 `json:"released_loop_ms,omitempty"`
	TorchCompileWholeMs        *float64 `json:"torch_compile_whole_ms,omitempty"`
	TorchCompileWholeCompileS  *float64 `json:"torch_compile_whole_compile_s,omitempty"`
	SpeedupVsReleasedLoop      *float64 `json:"speedup_vs_released_loop,omitempty"`
	SpeedupVsTorchCompileWhole *float64 `json:"speedup_vs_torch_compile_whole,omitempty"`
	Error                      string   `json:"error,omitempty"`
}

// Report is the result of Run, the JSON form of `fits bench --json` for the kernel and open-neuromorphic
// suites.
type Report struct {
	Suite     string `json:"suite"`
	Backend   string `json:"backend"`
	Date      string `json:"date"`
	Machine   Host   `json:"machine"`
	Iteration string `json:"iteration"`
	Isolated  bool   `json:"isolated"`
	PeakNote  string `json:"peak_rss_note"`
	Rows      []Row  `json:"rows"`
	// PaperDevice names the GPU of the paper's (kernel) or the published (open-neuromorphic) numbers.
	PaperDevice string                   `json:"paper_device"`
	Published   []paper.FrameworkRuntime `json:"published,omitempty"`
	// Peers are the PyTorch rows measured with RunOptions.Peers (peers/bench.py), interleaved with ours.
	Peers []PeerRow `json:"peers,omitempty"`
	// FusedKernel times the host kernel of the fused variant alone (fits/fused, one hidden layer of each
	// fused cell's network, forward and backward) with every ISA this build and CPU run, and gives its vector
	// code's speed-up over its scalar code (RunOptions.KernelIters).
	FusedKernel []KernelMeasurement `json:"fused_kernel,omitempty"`
}

// IterationNote says what one timed iteration covers.
const IterationNote = "forward + loss + backward to the gradients of every trainable parameter (dense weights and biases, " +
	"neuron parameters, readout); no optimizer update; inputs already on the device"

// RunOptions says how Run measures its cells.
type RunOptions struct {
	// Isolate measures each cell in a fresh process of this executable (child.go), so that compile time and
	// peak memory are per cell, on the backend configuration Backend (xla.Choose; "" its default). Without
	// it the cells run in this process on the backend already open (xla.Backend).
	Isolate bool
	Backend string
	// Peers times each network in PyTorch (peers/bench.py under the working directory, PeersPython) right
	// after its variants, on PeerThreads threads, torch.compile of the whole iteration at the kernel cells
	// WholeCells (nil: bench.py's default; empty: none) or, with WholeAll, at every cell.
	Peers       bool
	PeerThreads int
	WholeCells  []PeerCell
	WholeAll    bool
	// KernelIters > 0 times the fused variant's host kernel alone after the cells (MeasureKernel), this
	// many calls per ISA.
	KernelIters int
	// Log receives the progress lines (nil: none).
	Log io.Writer
}

// Run measures cells of suite (SuiteKernel or SuiteON, as Grid.Cells expands them) in order and returns
// the report: each cell's row, with its speed-up over the stepwise row of its network and, at the paper's
// shape, the paper's numbers. A cell that fails keeps its error in its row; failed counts those rows. Run
// returns an error instead when an isolated cell's process reports bad input (*InputError), the peers
// cannot run or the host kernel fails.
func Run(suite string, cells []Cell, opts RunOptions) (out Report, failed int, err error) {
	log := cmp.Or(opts.Log, io.Discard)
	out = Report{Suite: suite, Date: time.Now().UTC().Format(time.RFC3339), Machine: thisHost(),
		Iteration: IterationNote, Isolated: opts.Isolate}
	if opts.Isolate {
		out.PeakNote = "VmHWM of a fresh process that ran only this cell"
		out.Backend = xla.Choose(opts.Backend).Config
	} else {
		out.PeakNote = "VmHWM of the one process that ran all cells so far (cumulative)"
		out.Backend = xla.Current().Config
	}
	if suite == SuiteKernel {
		out.PaperDevice = paper.KernelRuntimeGPU + " (paper, PyTorch timestep loop and fused Triton)"
	} else {
		out.PaperDevice = paper.FrameworkRuntimeGPU + " (Open Neuromorphic SNN library benchmark, published)"
		out.Published = paper.FrameworkRuntimes()
	}
	for i, c := range cells {
		label := fmt.Sprintf("[%d/%d] %s W=%d M=%d %s", i+1, len(cells), c.Model, c.Width, c.M, c.Variant)
		progress := func(msg string) { fmt.Fprintf(log, "%s%s: %s\n", logPrefix, label, msg) }
		var m Measurement
		if opts.Isolate {
			m, err = runChild(c, opts.Backend, log, label)
			if bad := (*InputError)(nil); errors.As(err, &bad) {
				return out, failed, err
			}
		} else {
			m, err = measureCell(c, progress)
		}
		row := Row{Cell: c, Measurement: m, PeakRSSMiB: float64(m.PeakRSSBytes) / (1 << 20)}
		if err != nil {
			row.Error = oneLine(err.Error())
			failed++
			progress("failed: " + row.Error)
		} else {
			progress(fmt.Sprintf("median %.1f ms, compile %.1f s, peak %.0f MiB", m.MedianMs, m.CompileS, row.PeakRSSMiB))
		}
		if c.Suite == SuiteKernel {
			if k, ok := paper.KernelRuntimeFor(c.Width, c.M); ok && c.Batch == KernelBatch && c.Time == KernelTime {
				row.PaperPyTorchMs, row.PaperTritonMs = &k.PyTorchMs, &k.TritonMs
			}
		}
		out.Rows = append(out.Rows, row)
		if opts.Peers && (i+1 == len(cells) || !sameNetwork(cells[i+1], c)) {
			// The peers of this network, right after our variants of it.
			fmt.Fprintf(log, "%sPyTorch peers of %s W=%d M=%d\n", logPrefix, c.Model, c.Width, c.M)
			req := peerRequestFor([]Cell{c}, opts.PeerThreads)
			req.WholeCells, req.WholeAll = opts.WholeCells, opts.WholeAll
			po, err := runPeers(context.Background(), req, log)
			if err != nil && len(po.Rows) == 0 {
				return out, failed, fmt.Errorf("--peers: %w", err)
			}
			out.Peers = append(out.Peers, po.Rows...)
		}
	}
	fillSpeedups(out.Rows)
	fillPeerSpeedups(out.Rows, out.Peers)
	if opts.KernelIters > 0 {
		for _, layer := range kernelLayers(cells) {
			fmt.Fprintf(log, "%shost kernel alone, W=%d M=%d: every ISA, %d calls each\n", logPrefix, layer.Width, layer.M, opts.KernelIters)
			km, err := MeasureKernel(layer, opts.KernelIters)
			if err != nil {
				return out, failed, fmt.Errorf("host kernel: %w", err)
			}
			out.FusedKernel = append(out.FusedKernel, km)
		}
	}
	return out, failed, nil
}

// fillSpeedups sets each row's speedup over the stepwise row of the same network.
func fillSpeedups(rows []Row) {
	for i := range rows {
		for _, s := range rows {
			if s.Cell.Variant == string(Stepwise) && s.Error == "" && s.Model == rows[i].Model && s.Width == rows[i].Width &&
				s.M == rows[i].M && rows[i].Error == "" && rows[i].MedianMs > 0 {
				v := s.MedianMs / rows[i].MedianMs
				rows[i].SpeedupVsStepwise = &v
			}
		}
	}
}

// fillPeerSpeedups sets each row's PyTorch times and how many times faster the row is than each.
func fillPeerSpeedups(rows []Row, peers []PeerRow) {
	po := peerOutput{Rows: peers}
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

// thisHost returns the machine this process runs on.
func thisHost() Host {
	return Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), FusedVector: fused.Vector(),
		FusedISA: fused.ActiveISA().String(), GlibcTunables: os.Getenv("GLIBC_TUNABLES"),
		CPU: hostinfo.CPUModel(), Memory: hostinfo.MemTotal()}
}

// WriteText prints the report as `fits bench` does without --json: a header, one table row per cell, the
// published numbers, the PyTorch peers and the host kernel's timings, where present.
func (r Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "suite %s, backend %s, %d CPUs (%s), %s\n", r.Suite, r.Backend, r.Machine.CPUs, r.Machine.CPU, r.Date)
	fmt.Fprintf(w, "one iteration: %s\n\n", r.Iteration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tW\tM\tvariant\tK\tcompile s\tmedian ms\tpeak MiB\tvs stepwise\tvs torch loop\tvs torch.compile\tvs released loop\tvs torch.compile whole\tvs snnTorch\tpaper PyTorch ms\tpaper Triton ms\t")
	for _, row := range r.Rows {
		if row.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\terror: %s\t\t\t\t\t\t\t\t\n", row.Model, row.Width, row.M, row.Cell.Variant, row.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%.1f\t%.1f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Model, row.Width, row.M,
			row.Cell.Variant, row.Measurement.Chunk, row.CompileS, row.MedianMs, row.PeakRSSMiB,
			orDash(row.SpeedupVsStepwise, "%.1fx"), orDash(row.SpeedupVsTorchLoop, "%.2fx"),
			orDash(row.SpeedupVsTorchCompile, "%.2fx"), orDash(row.SpeedupVsReleasedLoop, "%.2fx"),
			orDash(row.SpeedupVsTorchCompileWhole, "%.2fx"), orDash(row.SpeedupVsSnnTorch, "%.2fx"),
			orDash(row.PaperPyTorchMs, "%.1f"), orDash(row.PaperTritonMs, "%.1f"))
	}
	_ = tw.Flush()
	if len(r.Published) > 0 {
		fmt.Fprintf(w, "\npublished, %s, s per iteration (forward + backward):\n", r.PaperDevice)
		for _, p := range r.Published {
			fmt.Fprintf(w, "  %-20s n=%-6d %.3f\n", p.Framework, p.Neurons, p.TotalS())
		}
	}
	if len(r.Peers) > 0 {
		fmt.Fprintf(w, "\nPyTorch peers (same networks, same run):\n")
		for _, p := range r.Peers {
			if p.Error != "" {
				fmt.Fprintf(w, "  %-5s W=%-5d M=%d %-19s error: %s\n", p.Model, p.Width, p.M, p.Variant, p.Error)
				continue
			}
			fmt.Fprintf(w, "  %-5s W=%-5d M=%d %-19s median %.1f ms, compile %.1f s, dropout %g\n", p.Model, p.Width, p.M, p.Variant, p.MedianMs, p.CompileS, p.Dropout)
		}
	}
	if len(r.FusedKernel) > 0 {
		fmt.Fprintf(w, "\nhost kernel of the fused variant alone (one hidden layer, median ms of one call, GOMAXPROCS threads):\n")
		for _, k := range r.FusedKernel {
			fmt.Fprintf(w, "  B=%d T=%d W=%d M=%d:", k.Batch, k.Time, k.Width, k.M)
			for _, t := range k.Timings {
				fmt.Fprintf(w, "  %s %.3g forward, %.3g backward;", t.ISA, t.ForwardMs, t.BackwardMs)
			}
			fmt.Fprintf(w, "  %s vs scalar %.1fx forward, %.1fx backward\n", k.DefaultISA, k.ForwardVsScalar, k.BackwardVsScalar)
		}
	}
	fmt.Fprintf(w, "\npeak memory: %s\n", r.PeakNote)
}

// orDash formats *v with format, "-" when v is nil.
func orDash(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// oneLine folds s onto one line, its runs of white space one space each.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

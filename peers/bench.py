"""Times one training iteration of the toolkit's benchmark networks in PyTorch: the peers of `fits bench`.

One iteration is the forward pass, the loss and the backward pass to the gradients of every parameter
(dense weights and biases, the neurons' f_raw = ln f*, β̂, λ̂, the readout); no optimizer update (so every
iteration's loss is the initial loss, up to the dropout masks); inputs already in memory. The neuron is
the one the Go engines time (fits_torch.released_config, the released code's semantics: the λ-mix nested
innermost first, S = 1 when Ṽ > Vth, the α = 2 triangle surrogate, f_raw unclipped; lif: the same spike and
surrogate). Variants:

  torch-loop           the paper's PyTorch timestep-loop baseline (peers/fits_torch.py FiTSLayer): dense maps
                       over the whole sequence, the neuron step in a Python loop over unbind(1), the dropout
                       of the spikes drawn in the loop, a fresh torch mask per step
  torch-compile        the same loop with the step (dropout included) under torch.compile (fullgraph, static
                       shapes)
  released-loop        the released code's own CPU reference loop form (fits_torch.ReleasedLoopLayer): the
                       current of each step indexed (I[:, k, :]), its coefficient lists and state update, V and
                       a stacked besides the spikes; the dropout (nn.Dropout's) on each layer's stacked spikes;
                       fs/fsts rows only
  torch-compile-whole  torch.compile (fullgraph, static shapes) of the whole forward pass and loss, the time
                       loop unrolled into one graph (per-step dropout inside it), its backward compiled by
                       AOTAutograd; compiles for minutes at T = 250, so only at the kernel cells of
                       --whole-cells (default 64:0,512:0)
  snntorch             snnTorch's Leaky as our LIF (SnnTorchLIF), in the torch-loop loop: only for LIF rows

Cells, as `fits bench` (fits/bench KernelSpec, OpenNeuromorphicSpec):
  kernel (--cells=W:M,...): batch 128, T = 250, 140 inputs, Bernoulli(0.2) input spikes, two hidden layers of
      width W (fs for M = 0, fsts for M >= 1; SSC constants), per-step dropout p = 0.3 of the hidden spikes
      (--dropout), 35 classes, the sum readout over time (--readout), mean cross-entropy against uniform
      random labels; rows fs/fsts in torch-loop, torch-compile and released-loop (and torch-compile-whole at
      --whole-cells), and at M = 0 a lif row in snntorch.
  open-neuromorphic (--on-n=n,...): batch 16, T = 500, input [16, 500, n] standard normal, Linear(n, n) and
      one layer of n neurons, no dropout unless --dropout, loss = sum of the spikes; rows lif (torch-loop,
      torch-compile, snntorch) and fs/fsts for --on-m (torch-loop, torch-compile, released-loop).
Weights U(−1/√fanIn, 1/√fanIn), zero biases (fits/model FanInUniform), from --seed; inputs and labels from
the seed too (torch's generator, so the values, and hence the initial loss, are not bit-equal to ours; nor
are the dropout masks, drawn by torch from its global generator, seeded with --seed).

Timing: the first iteration (building, and compiling for the torch-compile variants) is timed alone; then
--warmup untimed and --iters timed iterations; the median is reported, and compile_s = first_s − median. With
--isolate (the default) every row runs in a fresh process with a fresh, empty inductor cache, so compile
times are cold and peak_rss_mib (VmHWM) is per row. torch.set_num_threads(--threads) in every process.

Output: one JSON object on stdout (see the README of peers/ in docs/performance.md); progress on stderr.
Exit status: 0; 1 when a row failed (its "error" says why; the JSON is printed anyway); 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ("torch-loop", "torch-compile", "released-loop", "torch-compile-whole", "snntorch")
COMPILED = ("torch-compile", "torch-compile-whole")
WHOLE_CELLS = "64:0,512:0"  # the default kernel cells of torch-compile-whole
KERNEL_DROPOUT = 0.3  # fits/bench KernelDropout
KERNEL_BATCH, KERNEL_TIME, KERNEL_INPUTS, KERNEL_CLASSES = 128, 250, 140, 35
ON_BATCH, ON_TIME = 16, 500
ITERATION = ("forward + loss + backward to the gradients of every parameter (dense weights and biases, "
             "neuron parameters, readout); no optimizer update; inputs already in memory")


@dataclass
class Row:
    """One measured (or failed) row. Shapes: input [batch, time, inputs]; width is W (kernel) or n
    (open-neuromorphic); classes 0 means the spike-sum loss."""

    suite: str
    model: str  # lif, fs or fsts
    width: int
    m: int
    variant: str
    batch: int
    time: int
    inputs: int
    classes: int
    layers: int
    iters: int
    warmup: int
    seed: int
    dropout: float = 0.0  # per-step dropout probability of the hidden spikes
    readout: str = ""  # sum or mean over time before the readout ("" without one: the spike-sum loss)
    first_s: float = 0.0  # wall time of the first iteration, seconds
    compile_s: float = 0.0  # first_s minus the median, seconds
    median_ms: float = 0.0
    iter_ms: list = field(default_factory=list)
    initial_loss: Optional[float] = None
    # mean spikes per neuron and step, per hidden layer, of the spikes after dropout (kept ones scaled by
    # 1/(1 − p): the same expectation as before it)
    spike_rates: list = field(default_factory=list)
    peak_rss_mib: float = 0.0
    error: str = ""


def plan(cells, on_sizes, on_orders, on_lif, variants, batch, steps, inputs, classes, iters, warmup, seed,
         dropout=-1.0, readout="sum", whole_cells=None):
    """The rows to measure, in order: per kernel cell, then per Open Neuromorphic size. dropout < 0 takes
    the suite's (KERNEL_DROPOUT, 0 for open-neuromorphic); whole_cells is the set of kernel cells (W, M) of
    torch-compile-whole (None: every cell)."""
    rows = []
    for w, m in cells:
        model = "fsts" if m > 0 else "fs"
        n_classes = KERNEL_CLASSES if classes < 0 else classes
        for v in variants:
            if v == "snntorch":
                if m != 0:
                    continue
                model_v = "lif"
            else:
                model_v = model
            if v == "torch-compile-whole" and whole_cells is not None and (w, m) not in whole_cells:
                continue
            rows.append(Row("kernel", model_v, w, m, v, batch or KERNEL_BATCH, steps or KERNEL_TIME,
                            inputs or KERNEL_INPUTS, n_classes, 2, iters, warmup, seed,
                            dropout=KERNEL_DROPOUT if dropout < 0 else dropout,
                            readout=readout if n_classes > 0 else ""))
    for n in on_sizes:
        models = ([("lif", 0)] if on_lif else []) + [("fsts" if m > 0 else "fs", m) for m in on_orders]
        for model, m in models:
            for v in variants:
                if v == "snntorch" and model != "lif":
                    continue
                if v == "released-loop" and model == "lif":
                    continue
                if v == "torch-compile-whole":
                    continue  # T = 500 unrolled: the kernel cells only
                rows.append(Row("open-neuromorphic", model, n, m, v, ON_BATCH, ON_TIME, n, 0, 1, iters, warmup, seed,
                                dropout=max(dropout, 0.0)))
    return rows


def peak_rss_mib() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measure(row: Row, threads: int, progress) -> Row:
    """Measures one row in this process."""
    import torch

    import fits_torch as ft

    torch.set_num_threads(threads)
    torch._dynamo.reset()
    torch.manual_seed(row.seed)  # the dropout masks
    cfg = ft.released_config(row.model, row.m)
    g = torch.Generator().manual_seed(row.seed)
    shape = (row.batch, row.time, row.inputs)
    if row.suite == "kernel":
        x = (torch.rand(shape, generator=g) < 0.2).to(torch.float32)
    else:
        x = torch.randn(shape, generator=g)
    labels = torch.randint(0, row.classes, (row.batch,), generator=g) if row.classes > 0 else None
    neuron = {"snntorch": "snntorch", "released-loop": "released"}.get(row.variant, "fits")
    net = ft.FeedForward(row.inputs, [row.width] * row.layers, row.classes, cfg, neuron=neuron, seed=row.seed,
                         readout=row.readout or "sum", dropout=row.dropout)
    loss_of = net.loss
    if row.variant == "torch-compile":
        net.compile_steps()
    elif row.variant == "torch-compile-whole":
        # The forward pass and the loss as one graph (the time loop unrolled); loss.backward() then runs the
        # backward graph that AOTAutograd derived and inductor compiled with it.
        loss_of = torch.compile(net.loss, fullgraph=True, dynamic=False)

    def iteration():
        net.zero_grad(set_to_none=True)
        loss, spikes = loss_of(x, labels)
        loss.backward()
        return loss.item(), spikes

    progress("first iteration" + (" (compiling)" if row.variant in COMPILED else ""))
    start = time.perf_counter()
    loss, spikes = iteration()
    row.first_s = time.perf_counter() - start
    row.initial_loss = loss
    row.spike_rates = [s.detach().mean().item() for s in spikes]
    del spikes
    for i in range(row.warmup):
        progress(f"warm-up {i + 1}/{row.warmup}")
        iteration()
    for i in range(row.iters):
        progress(f"iteration {i + 1}/{row.iters}")
        start = time.perf_counter()
        iteration()
        row.iter_ms.append((time.perf_counter() - start) * 1e3)
    row.median_ms = statistics.median(row.iter_ms)
    row.compile_s = max(0.0, row.first_s - row.median_ms / 1e3)
    row.peak_rss_mib = peak_rss_mib()
    return row


def finite(v):
    """v with every NaN or infinite float replaced by None (JSON has neither)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite(x) for x in v]
    return v


def label(row: Row) -> str:
    size = f"W={row.width}" if row.suite == "kernel" else f"n={row.width}"
    return f"{row.suite} {row.model} {size} M={row.m} {row.variant}"


def run_child(row: Row, threads: int) -> Row:
    """Measures one row in a fresh process of this script with its own, empty inductor cache."""
    cache = tempfile.mkdtemp(prefix="peers-inductor-")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
    try:
        proc = subprocess.run(
            [sys.executable, os.path.abspath(__file__), f"--threads={threads}", "--internal-row=" + json.dumps(asdict(row))],
            stdout=subprocess.PIPE, stderr=None, text=True, env=env)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    out = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not out:
        row.error = f"row process exited with status {proc.returncode}" + (" (killed: out of memory?)" if proc.returncode < 0 else "")
        return row
    try:
        return Row(**json.loads(out[-1]))
    except (ValueError, TypeError) as e:
        row.error = f"row process printed no row: {e}"
        return row


def load_average() -> Optional[list]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine() -> dict:
    info = {"os": platform.system().lower(), "arch": platform.machine(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["memory"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


# ---- arguments (Go style: --name=value, lists comma-separated; bad input: one line, exit status 2) ------


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"bench.py: {message}", file=sys.stderr)
        sys.exit(2)


def int_list(name: str, s: str, lo: int, hi: int) -> list[int]:
    out = []
    for part in filter(None, (p.strip() for p in s.split(","))):
        try:
            v = int(part)
        except ValueError:
            raise SystemExit(bad(f"--{name}: {part!r} is not an integer"))
        if not lo <= v <= hi:
            raise SystemExit(bad(f"--{name}: {v} outside [{lo}, {hi}]"))
        out.append(v)
    return out


def bad(msg: str) -> int:
    print(f"bench.py: {msg}", file=sys.stderr)
    return 2


def parse_cells(s: str, name: str = "cells") -> list[tuple[int, int]]:
    cells = []
    for part in filter(None, (p.strip() for p in s.split(","))):
        w, sep, m = part.partition(":")
        try:
            if not sep:
                raise ValueError
            cell = int(w), int(m)
        except ValueError:
            raise SystemExit(bad(f"--{name}: {part!r} is not W:M (e.g. 128:2)"))
        if not (1 <= cell[0] <= 1 << 16 and 0 <= cell[1] <= 8):
            raise SystemExit(bad(f"--{name}: {part!r} needs 1 <= W <= 65536 and 0 <= M <= 8"))
        cells.append(cell)
    return cells


def parse_bool(name: str, s: str) -> bool:
    if s.lower() in ("1", "true", "yes"):
        return True
    if s.lower() in ("0", "false", "no"):
        return False
    raise SystemExit(bad(f"--{name}: {s!r} is not true or false"))


def main() -> int:
    p = Parser(description="Times the PyTorch peers of `fits bench`; one JSON object on stdout.")
    p.add_argument("--cells", default="64:0,64:1,64:2,128:0,128:1,128:2,256:0,256:1,256:2,512:0,512:1,512:2",
                   help="kernel-table cells W:M, comma-separated (empty: none)")
    p.add_argument("--on-n", default="", help="Open Neuromorphic sizes n, comma-separated (empty: none)")
    p.add_argument("--on-m", default="0,2", help="Open Neuromorphic FiTS orders M besides lif")
    p.add_argument("--on-lif", default="true", help="Open Neuromorphic: also the LIF neuron")
    p.add_argument("--variants", default=",".join(VARIANTS), help=", ".join(VARIANTS))
    p.add_argument("--whole-cells", default=WHOLE_CELLS,
                   help="kernel cells W:M where torch-compile-whole runs (it compiles for minutes); all: every cell")
    p.add_argument("--dropout", type=float, default=-1.0,
                   help="per-step dropout probability of the hidden spikes (-1: the suite's, "
                        f"{KERNEL_DROPOUT} for kernel, 0 for open-neuromorphic)")
    p.add_argument("--readout", default="sum", help="kernel readout over time: sum (the released code's) or mean")
    p.add_argument("--iters", type=int, default=5, help="timed iterations per row (the median is reported)")
    p.add_argument("--warmup", type=int, default=1, help="untimed iterations after the first one")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--batch", type=int, default=0, help="kernel batch (0: 128)")
    p.add_argument("--time", type=int, default=0, help="kernel time steps T (0: 250)")
    p.add_argument("--inputs", type=int, default=0, help="kernel input features (0: 140)")
    p.add_argument("--classes", type=int, default=-1, help="kernel classes (-1: 35; 0: spike-sum loss)")
    p.add_argument("--seed", type=int, default=1, help="seed of weights, inputs and labels")
    p.add_argument("--isolate", default="true", help="each row in a fresh process (cold compile, per-row peak memory)")
    p.add_argument("--internal-row", default="", help=argparse.SUPPRESS)
    a = p.parse_args()
    sys.path.insert(0, HERE)

    if a.threads < 1:
        return bad(f"--threads: {a.threads} (need at least 1)")
    if a.internal_row:
        row = Row(**json.loads(a.internal_row))
        tag = label(row)
        try:
            measure(row, a.threads, lambda msg: print(f"peers bench: {tag}: {msg}", file=sys.stderr, flush=True))
        except Exception as e:  # reported in the row
            row.error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        print(json.dumps(finite(asdict(row))))
        return 0

    if a.iters < 1:
        return bad(f"--iters: {a.iters} (need at least 1)")
    if a.warmup < 0:
        return bad(f"--warmup: {a.warmup} is negative")
    for name in ("batch", "time", "inputs"):
        if getattr(a, name) < 0:
            return bad(f"--{name}: {getattr(a, name)} is negative")
    if a.classes < -1 or a.classes == 1:
        return bad(f"--classes: {a.classes} (use 0 for the spike-sum loss or at least 2)")
    variants = [v.strip() for v in a.variants.split(",") if v.strip()]
    for v in variants:
        if v not in VARIANTS:
            return bad(f"--variants: unknown variant {v!r} (valid: {', '.join(VARIANTS)})")
    if not variants:
        return bad("--variants: none given")
    if not (a.dropout == -1 or 0 <= a.dropout < 1):
        return bad(f"--dropout: {a.dropout} is not -1 or in [0, 1)")
    if a.readout not in ("sum", "mean"):
        return bad(f"--readout: {a.readout!r} is not sum or mean")
    cells = parse_cells(a.cells)
    whole = None if a.whole_cells.strip() == "all" else set(parse_cells(a.whole_cells, "whole-cells"))
    on_sizes = int_list("on-n", a.on_n, 1, 1 << 20)
    on_orders = int_list("on-m", a.on_m, 0, 8)
    on_lif = parse_bool("on-lif", a.on_lif)
    isolate = parse_bool("isolate", a.isolate)
    rows = plan(cells, on_sizes, on_orders, on_lif, variants, a.batch, a.time, a.inputs, a.classes, a.iters, a.warmup,
                a.seed, a.dropout, a.readout, whole)
    if not rows:
        return bad("no rows: give --cells or --on-n (and variants that apply to them)")

    import torch

    try:
        import snntorch
        snn_version = snntorch.__version__
    except ImportError:
        snn_version = None
        if "snntorch" in variants:
            return bad("--variants: snntorch is not installed (make peers-setup)")

    out = {
        "tool": "peers/bench.py",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "snntorch": snn_version,
        "threads": a.threads,
        "iters": a.iters,
        "warmup": a.warmup,
        "isolated": isolate,
        "machine": machine(),
        # 1-, 5- and 15-minute load averages before and after: other work on the cores inflates every time.
        "load_average_start": load_average(),
        "load_average_end": None,
        "iteration": ITERATION,
        "rows": [],
    }
    failed = 0
    for i, row in enumerate(rows):
        tag = f"[{i + 1}/{len(rows)}] {label(row)}"
        say = lambda msg: print(f"peers bench: {tag}: {msg}", file=sys.stderr, flush=True)  # noqa: E731
        if isolate:
            row = run_child(row, a.threads)
        else:
            try:
                measure(row, a.threads, say)
            except Exception as e:
                row.error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if row.error:
            failed += 1
            say("failed: " + row.error)
        else:
            say(f"median {row.median_ms:.1f} ms, compile {row.compile_s:.1f} s, loss {row.initial_loss:.4f}, "
                f"peak {row.peak_rss_mib:.0f} MiB")
        out["rows"].append(asdict(row))
    out["load_average_end"] = load_average()
    json.dump(finite(out), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

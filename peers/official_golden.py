"""Golden files of the released code's semantics, from the PyTorch peer (peers/fits_torch.py), for the Go
engines to test against (package internal/golden embeds them).

Writes three JSON files into --out (default internal/golden/official), every number in float64:

  neurons.json  single neurons run 2000 steps in float64: M = 0..3, both λ nestings ("official": the
                released code's innermost-first mix and S = 1 when Ṽ > Vth; "paper": Eq. 10 and Ṽ ≥ Vth),
                SHD/SSC constants and a few at GSC's, random f*, β, λ and input current; per step the
                spike, the mixed pre-reset voltage Ṽ, the post-reset V and the adaptation current a.
  guard.json    the frequency guard (safety 0.98) on four log target frequencies pulled over the cap by a
                quadratic loss and then back below it, under Adam: per step f_raw before and after, the
                gradient before and after the guard's masking, Adam's moments, the projected entries.
  steps.json    one training step of a two-layer network (input [4, 25, 6], two FiTS layers of 5 neurons,
                3 classes, official nesting): every parameter, the input, the labels, the dropout masks
                (fits/dropmask's generator), the loss and every gradient, in float64.

File formats: field names and shapes in internal/golden/golden.go, what each file holds in docs/peers.md
("The golden files"). Every file carries the
generator's name, the torch and numpy versions and the seed; the output is deterministic (one thread, fixed
seeds, draws redone until a case is usable: stable, spiking a fair amount, no pre-reset voltage close to
the threshold).

Usage:
  python peers/official_golden.py [--out=internal/golden/official]
  python peers/official_golden.py --check=internal/golden/official [--rtol=1e-12]
      regenerates into a temporary folder and compares with the files in --check: the same structure and
      strings, every number within rtol relative (exit 1 on a difference).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import fits_torch as ft  # noqa: E402

GENERATOR = "peers/official_golden.py"
SEED = 20260525
SAFETY = 0.98
SHD = (0.04, 0.2, 0.004)  # τm, τa, Δt in seconds (SHD, SSC)
GSC = (0.1, 0.5, 0.01)
NEURON_STEPS = 2000
MARGIN_NEURON = 1e-6  # least |Ṽ − Vth| in a neuron case
MAX_RADIUS = 0.999  # largest spectral radius of a neuron case's subthreshold update
MARGIN_STEP = 1e-3  # least |Ṽ − Vth| in a training-step case (a float32 engine must give the same spikes)
FILES = ("neurons.json", "guard.json", "steps.json")
# Fields that name the environment, not the result: not compared by --check.
ENV_FIELDS = ("torch", "numpy")


def meta(dtype: str = "float64") -> dict[str, Any]:
    return {"generator": GENERATOR, "torch": torch.__version__, "numpy": np.__version__, "seed": SEED,
            "dtype": dtype}


def flat(t: torch.Tensor | np.ndarray) -> list:
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    return [float(x) for x in a.astype(np.float64).ravel()]


def tensor(t: torch.Tensor | np.ndarray) -> dict[str, Any]:
    """{"shape": [...], "data": [...]}: a tensor as its shape and its row-major float64 values."""
    shape = list(t.shape)
    return {"shape": shape, "data": flat(t)}


def margin(v_mixed: torch.Tensor, vth: float) -> float:
    return float((v_mixed - vth).abs().min())


# ---- neurons.json -----------------------------------------------------------------------------------------


def simulate(cfg: ft.NeuronConfig, f_hz: float, beta: list[float], lam: list[float],
             current: np.ndarray) -> dict[str, torch.Tensor]:
    """One neuron of cfg, float64: the trace dict of FiTSLayer.trace, each [T]."""
    layer = ft.FiTSLayer(1, cfg, torch.float64)
    layer.set_neurons([f_hz], [[b] for b in beta], [[x] for x in lam])
    with torch.no_grad():
        tr = layer.trace(torch.tensor(current, dtype=torch.float64).reshape(1, -1, 1))
    return {k: v.reshape(-1) for k, v in tr.items()}


def subthreshold_radius(cfg: ft.NeuronConfig, f_hz: float, beta: list[float], lam: list[float]) -> float:
    """The spectral radius of one neuron's linear update without spikes, x[k+1] = A·x[k] + b·I[k] with the
    state x = (V, a, stage states): below 1 the neuron is stable between spikes, so rounding differences
    between engines decay instead of growing until a spike flips (the TS module inside the FS loop can
    make some (β, λ) unstable)."""
    quiet = dataclasses.replace(cfg, vth=1e300)
    layer = ft.FiTSLayer(1, quiet, torch.float64)
    layer.set_neurons([f_hz], [[b] for b in beta], [[x] for x in lam])
    n = 2 + (cfg.order + 1 if cfg.order > 0 else 0)
    cols = []
    with torch.no_grad():
        coeffs = layer.coefficients()
        for j in range(n):
            x = torch.zeros(n, 1, 1, dtype=torch.float64)
            x[j] = 1
            zero = torch.zeros(1, 1, dtype=torch.float64)
            _, _, v, a, stages = layer.step(zero, x[0], x[1], tuple(x[2:]), *coeffs)
            cols.append(torch.cat([v.reshape(1), a.reshape(1)] + [t.reshape(1) for t in stages]))
    return float(np.abs(np.linalg.eigvals(torch.stack(cols, 1).numpy())).max())


def neuron_case(index: int, name: str, m: int, mix: str, consts: tuple[float, float, float],
                f_max: float) -> dict[str, Any]:
    tau_m, tau_a, dt = consts
    cfg = ft.official_config(m, tau_m, tau_a, dt, ts_mix=mix)
    other = ft.official_config(m, tau_m, tau_a, dt, ts_mix="paper" if mix == "official" else "official")
    for attempt in range(1000):
        rng = np.random.default_rng([SEED, 1, index, attempt])
        f_hz = float(rng.uniform(1, f_max))
        beta = [float(x) for x in rng.uniform(-0.9, 0.9, m)]
        lam = [float(x) for x in rng.uniform(0.02, 0.98, m)]
        current = np.round(0.3 * rng.standard_normal(NEURON_STEPS) + 0.15, 4)
        radius = subthreshold_radius(cfg, f_hz, beta, lam)
        if radius > MAX_RADIUS:
            continue  # unstable between spikes: a rounding difference would grow until a spike flips
        tr = simulate(cfg, f_hz, beta, lam, current)
        rate = float(tr["spikes"].mean())
        if not 0.02 <= rate <= 0.5 or margin(tr["v_mixed"], cfg.vth) < MARGIN_NEURON:
            continue  # too quiet, too busy, or a pre-reset voltage too close to the threshold
        nudged = simulate(cfg, f_hz * (1 + 1e-12), beta, lam, current)
        drift = float((nudged["v_mixed"] - tr["v_mixed"]).abs().max())
        if drift > 1e-8 or bool((nudged["spikes"] != tr["spikes"]).any()):
            continue  # sensitive to a rounding-sized change of f*
        differ = int((simulate(other, f_hz, beta, lam, current)["spikes"] != tr["spikes"]).sum())
        if m >= 2 and differ == 0:
            continue  # the case would not tell the nestings apart
        return {
            "name": name, "m": m, "ts_mix": mix, "tau_m": tau_m, "tau_a": tau_a, "dt": dt, "vth": cfg.vth,
            "f_hz": f_hz, "beta": beta, "lambda": lam, "attempt": attempt, "radius": radius,
            "nudge_drift": drift,
            "margin": margin(tr["v_mixed"], cfg.vth), "spike_count": int(tr["spikes"].sum()),
            "other_mix_spikes_differ": differ,
            "input": [float(x) for x in current], "spikes": [int(x) for x in flat(tr["spikes"])],
            "v_mixed": flat(tr["v_mixed"]), "v": flat(tr["v"]), "a": flat(tr["a"]),
        }
    raise RuntimeError(f"{name}: no usable draw in 1000 attempts")


# (name, M, nesting, constants, f* upper bound of the draw): one neuron per nesting for M ≤ 1 (where the
# nestings are the same neuron), two for M ≥ 2, one of them at GSC's constants (f* below its cap, 30.57 Hz).
# Twelve cases keep the file under 2 MB.
NEURON_SPECS = (
    [(f"shd-m{m}-{mix}-{j}", m, mix, SHD, 50.0)
     for m in range(4) for mix in ("official", "paper") for j in range(1 if m <= 1 else 2)
     if (m, mix, j) != (2, "official", 1)]
    + [("gsc-m2-official-0", 2, "official", GSC, 30.0)]
)


def neurons_file() -> dict[str, Any]:
    cases = [neuron_case(i, *spec) for i, spec in enumerate(NEURON_SPECS)]
    return {**meta(), "steps": NEURON_STEPS, "min_margin": min(c["margin"] for c in cases),
            "constants": {"shd": dict(zip(("tau_m", "tau_a", "dt"), SHD)),
                          "gsc": dict(zip(("tau_m", "tau_a", "dt"), GSC))},
            "cases": cases}


# ---- guard.json -------------------------------------------------------------------------------------------

GUARD_STEPS = 40
GUARD_LR = 0.02
GUARD_INIT_HZ = (60.0, 75.0, 76.4, 80.0)
GUARD_TARGETS_HZ = ((100.0, 90.0, 70.0, 120.0), (20.0, 90.0, 40.0, 60.0))  # steps < 20, steps ≥ 20


def guard_file() -> dict[str, Any]:
    cfg = ft.official_config(0, *SHD)
    f_safe = ft.safe_target_hz(cfg, SAFETY)
    cap = math.log(f_safe)
    f_raw = torch.nn.Parameter(torch.log(torch.tensor(GUARD_INIT_HZ, dtype=torch.float64)))
    opt = torch.optim.Adam([f_raw], lr=GUARD_LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=0)
    guard = ft.FrequencyGuard(opt, [(f_raw, cap)])
    steps = []
    for k in range(GUARD_STEPS):
        target = GUARD_TARGETS_HZ[0 if k < GUARD_STEPS // 2 else 1]
        goal = torch.log(torch.tensor(target, dtype=torch.float64))
        opt.zero_grad()
        before = f_raw.detach().clone()
        loss = 0.5 * ((f_raw - goal) ** 2).sum()
        loss.backward()
        grad = f_raw.grad.detach().clone()
        guard.before_step()
        grad_masked = f_raw.grad.detach().clone()
        opt.step()
        guard.after_step()
        state = opt.state[f_raw]
        steps.append({
            "step": k, "target_hz": list(target), "loss": float(loss.detach()), "f_raw_before": flat(before),
            "grad": flat(grad), "grad_masked": flat(grad_masked),
            "masked": [bool(x) for x in guard.last_masked[0].tolist()],
            "f_raw_after": flat(f_raw), "exp_avg": flat(state["exp_avg"]), "exp_avg_sq": flat(state["exp_avg_sq"]),
            "projected": [bool(x) for x in guard.last_projected[0].tolist()], "count": guard.projected,
        })
    caps = []
    for name, consts in (("shd", SHD), ("gsc", GSC), ("smnist", (20.0, 150.0, 1.0))):
        c = ft.official_config(0, *consts)
        caps.append({"name": name, "tau_m": consts[0], "tau_a": consts[1], "dt": consts[2],
                     "jury_bound": ft.jury_bound(c), "f_safe_hz": ft.safe_target_hz(c, SAFETY)})
    return {
        **meta(), "safety": SAFETY, "tau_m": SHD[0], "tau_a": SHD[1], "dt": SHD[2],
        "jury_bound": ft.jury_bound(cfg), "f_safe_hz": f_safe, "f_raw_cap": cap,
        "loss": "sum_n 0.5*(f_raw[n] - ln(target_hz[n]))^2",
        "adam": {"lr": GUARD_LR, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0},
        "init_hz": list(GUARD_INIT_HZ), "init_f_raw": [math.log(f) for f in GUARD_INIT_HZ],
        "projected_total": guard.projected, "steps": steps, "caps": caps,
    }


# ---- steps.json -------------------------------------------------------------------------------------------

B, T, F_IN, N, C = 4, 25, 6, 5, 3
STEP_DROPOUT = 0.3
# (M, readout, target coordinate, dropout p): each value of each field at least twice.
STEP_SPECS = (
    (0, "sum", "log-hz", STEP_DROPOUT), (0, "mean", "omega", 0.0),
    (1, "sum", "omega", STEP_DROPOUT), (1, "mean", "log-hz", 0.0),
    (2, "sum", "log-hz", 0.0), (2, "mean", "omega", STEP_DROPOUT),
    (3, "sum", "omega", 0.0), (3, "mean", "log-hz", STEP_DROPOUT),
)


def draw_step(rng: np.random.Generator, m: int, readout: str) -> dict[str, np.ndarray]:
    """Random inputs, labels and parameters (names of the file; weights [in, out]); the readout's weights
    smaller for the sum over time, so that the logits have the same scale."""
    d: dict[str, np.ndarray] = {
        "input": (rng.random((B, T, F_IN)) < 0.2).astype(np.float64),
        "labels": rng.integers(0, C, B),
    }
    fan = F_IN
    for layer in range(2):
        d[f"layer{layer}/weight"] = rng.normal(0.3, 0.6, (fan, N)) * (6 / fan) ** 0.5
        d[f"layer{layer}/bias"] = rng.normal(0.05, 0.05, N)
        d[f"layer{layer}/f_hz"] = np.exp(rng.uniform(0, math.log(50), N))
        d[f"layer{layer}/beta_hat"] = rng.normal(0, 0.5, (m, N))
        d[f"layer{layer}/lambda_hat"] = rng.normal(-1, 1, (m, N))
        fan = N
    d["readout/weight"] = rng.normal(0, 0.5 if readout == "mean" else 0.1, (N, C))
    d["readout/bias"] = rng.normal(0, 0.1, C)
    return d


def step_case(index: int, m: int, readout: str, target: str, p: float) -> dict[str, Any]:
    cfg = ft.official_config(m, *SHD, target=target)
    coord = "f_raw" if target == "log-hz" else "omega_star"
    masks = [ft.dropout_mask(SEED, index, layer, p, B, T, N) for layer in range(2)]
    for attempt in range(1000):
        d = draw_step(np.random.default_rng([SEED, 3, index, attempt]), m, readout)
        net = ft.FeedForward(F_IN, [N, N], C, cfg, dtype=torch.float64, readout=readout)
        params: dict[str, torch.Tensor] = {}
        with torch.no_grad():
            for layer in range(2):
                dense, neurons = net.dense[layer], net.neurons[layer]
                dense.weight.copy_(torch.from_numpy(d[f"layer{layer}/weight"].T))
                dense.bias.copy_(torch.from_numpy(d[f"layer{layer}/bias"]))
                f = torch.from_numpy(d[f"layer{layer}/f_hz"])
                neurons.target_param().copy_(torch.log(f) if target == "log-hz" else 2 * math.pi * f)
                params[f"layer{layer}/weight"] = dense.weight
                params[f"layer{layer}/bias"] = dense.bias
                params[f"layer{layer}/{coord}"] = neurons.target_param()
                if m > 0:
                    neurons.beta_hat.copy_(torch.from_numpy(d[f"layer{layer}/beta_hat"]))
                    neurons.lambda_hat.copy_(torch.from_numpy(d[f"layer{layer}/lambda_hat"]))
                    params[f"layer{layer}/beta_hat"] = neurons.beta_hat
                    params[f"layer{layer}/lambda_hat"] = neurons.lambda_hat
            net.readout.weight.copy_(torch.from_numpy(d["readout/weight"].T))
            net.readout.bias.copy_(torch.from_numpy(d["readout/bias"]))
            params["readout/weight"] = net.readout.weight
            params["readout/bias"] = net.readout.bias
        x = torch.from_numpy(d["input"])
        labels = torch.from_numpy(d["labels"])
        mask_t = [torch.from_numpy(mk.astype(np.float64)) for mk in masks]

        # The same forward, layer by layer, for the spikes and the pre-reset voltages.
        with torch.no_grad():
            h, spikes, least = x, [], math.inf
            for layer in range(2):
                tr = net.neurons[layer].trace(net.dense[layer](h))
                spikes.append(tr["spikes"])
                least = min(least, margin(tr["v_mixed"], cfg.vth))
                h = tr["spikes"] * mask_t[layer]
        rates = [float(s.mean()) for s in spikes]
        if not all(0.05 <= r <= 0.3 for r in rates) or least < MARGIN_STEP:
            continue
        net.zero_grad()
        loss, out = net.loss(x, labels, mask_t)
        if not 0.05 <= float(loss.detach()) <= 5:
            continue  # a saturated softmax leaves gradients that a float32 engine cannot resolve
        loss.backward()
        grads = {k: v.grad for k, v in params.items()}
        if any(float(g.abs().max()) == 0 for g in grads.values()):
            continue  # a parameter with no gradient at all tests nothing
        with torch.no_grad():
            logits = net.logits(out[-1])

        def as_file(name: str, t: torch.Tensor) -> dict[str, Any]:
            return tensor(t.T if name.endswith("/weight") else t)  # torch keeps [out, in]

        return {
            "name": f"m{m}-{readout}-{target}-p{p:g}", "m": m, "ts_mix": "official", "readout": readout,
            "target": target, "tau_m": SHD[0], "tau_a": SHD[1], "dt": SHD[2], "vth": cfg.vth,
            "surrogate_alpha": cfg.surrogate_scale, "dropout": p, "mask_seed": SEED, "mask_step": index,
            "batch": B, "time": T, "inputs": F_IN, "hidden": N, "classes": C, "attempt": attempt,
            "min_margin": least, "spike_rates": rates,
            "input": tensor(x), "labels": [int(v) for v in labels],
            "params": {k: as_file(k, v) for k, v in params.items()},
            "masks": {f"layer{layer}": tensor(mk) for layer, mk in enumerate(masks)},
            "spikes": {f"layer{layer}": tensor(s) for layer, s in enumerate(spikes)},
            "logits": tensor(logits), "loss": float(loss.detach()),
            "grads": {k: as_file(k, g) for k, g in grads.items()},
        }
    raise RuntimeError(f"step case {index}: no usable draw in 1000 attempts")


def steps_file() -> dict[str, Any]:
    cases = [step_case(i, *spec) for i, spec in enumerate(STEP_SPECS)]
    return {**meta(), "min_margin": min(c["min_margin"] for c in cases), "margin_required": MARGIN_STEP,
            "network": "x [B, T, inputs] -> (Linear -> FiTS layer -> spikes * mask) x 2 -> sum or mean over T "
                       "-> Linear -> cross-entropy (mean over the batch)",
            "cases": cases}


# ---- writing and checking ---------------------------------------------------------------------------------


def dumps(obj: dict[str, Any]) -> str:
    """Compact JSON, one line per element of a top-level list (small diffs, small files)."""
    lines = ["{"]
    items = list(obj.items())
    for i, (k, v) in enumerate(items):
        end = "," if i < len(items) - 1 else ""
        if isinstance(v, list) and v and isinstance(v[0], dict):
            lines.append(f"{json.dumps(k)}: [")
            lines += [json.dumps(e, separators=(",", ":"), allow_nan=False) + ("," if j < len(v) - 1 else "")
                      for j, e in enumerate(v)]
            lines.append("]" + end)
        else:
            lines.append(f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'), allow_nan=False)}{end}")
    return "\n".join(lines) + "\n}\n"


def generate(out: str) -> None:
    torch.set_num_threads(1)
    os.makedirs(out, exist_ok=True)
    for name, make in zip(FILES, (neurons_file, guard_file, steps_file)):
        text = dumps(make())
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
        print(f"official-golden: wrote {os.path.join(out, name)} ({len(text) / 1e3:.0f} kB)", flush=True)


def compare(want: Any, got: Any, rtol: float, path: str, problems: list[str]) -> float:
    """Appends the differences of got from want to problems; returns the largest relative difference."""
    if len(problems) > 20:
        return 0.0
    if isinstance(want, dict) and isinstance(got, dict):
        if sorted(want) != sorted(got):
            problems.append(f"{path}: keys {sorted(set(want) ^ set(got))} in one file only")
            return 0.0
        return max([0.0] + [compare(want[k], got[k], rtol, f"{path}/{k}", problems)
                             for k in want if k not in ENV_FIELDS])
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            problems.append(f"{path}: {len(want)} elements, regenerated {len(got)}")
            return 0.0
        return max([0.0] + [compare(a, b, rtol, f"{path}[{i}]", problems) for i, (a, b) in enumerate(zip(want, got))])
    num = (int, float)
    if isinstance(want, num) and isinstance(got, num) and not isinstance(want, bool) and not isinstance(got, bool):
        diff = abs(want - got)
        rel = diff / max(abs(want), abs(got)) if diff else 0.0
        if diff > rtol * max(abs(want), abs(got)) + 1e-300:
            problems.append(f"{path}: {want!r} committed, {got!r} regenerated (relative {rel:.2e})")
        return rel
    if want != got:
        problems.append(f"{path}: {want!r} committed, {got!r} regenerated")
    return 0.0


def check(committed: str, rtol: float) -> int:
    with tempfile.TemporaryDirectory(prefix="official-golden-") as tmp:
        generate(tmp)
        failed = False
        for name in FILES:
            try:
                with open(os.path.join(committed, name)) as f:
                    want = json.load(f)
            except OSError as e:
                print(f"official-golden: FAIL {name}: {e}", file=sys.stderr)
                failed = True
                continue
            with open(os.path.join(tmp, name)) as f:
                got = json.load(f)
            problems: list[str] = []
            worst = compare(want, got, rtol, name, problems)
            env = ", ".join(f"{k} {want.get(k)} committed, {got.get(k)} here" for k in ENV_FIELDS
                            if want.get(k) != got.get(k))
            if problems:
                failed = True
                for p in problems[:20]:
                    print(f"official-golden: FAIL {p}", file=sys.stderr)
            print(f"official-golden: {name}: {'MISMATCH' if problems else 'ok'}, largest relative difference "
                  f"{worst:.2e} (tolerance {rtol:g}){'; ' + env if env else ''}", flush=True)
    return 1 if failed else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="internal/golden/official", help="folder to write the files into")
    p.add_argument("--check", default="", help="compare freshly generated files with the ones in this folder")
    p.add_argument("--rtol", type=float, default=1e-12, help="relative tolerance of --check")
    a = p.parse_args()
    if a.check:
        return check(a.check, a.rtol)
    generate(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

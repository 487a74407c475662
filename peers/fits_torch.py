"""The toolkit's FiTS network written in PyTorch: the peer that `fits bench --peers` measures against.

One step of Algorithm 1 (Appendix A.5 of the paper), for a layer of n neurons and a batch of B, every
tensor [B, n] (per-neuron coefficients [n], broadcast over the batch):

    FS module (Eq. 6):  V0 = (1 − μΔt)·V − ηΔt·a + I;   a ← (1 − ρΔt)·a + γΔt·V0
    TS module (Eqs. 8–10), Ṽ0 = V0, m = 1..M:
                        Vm ← βm·(Vm − V(m−1)new) + V(m−1)old;   Ṽm = (1 − λm)·Ṽ(m−1) + λm·Vm
    spike and reset:    S = Θ(ṼM − Vth) (Θ(0) = 1);   V = ṼM − S·Vth

with the toolkit's choices (fits/neuron): μ = 1/τm and ρ = 1/τa in 1/s; κ = ηγ from the trainable target
frequency Ω* = 2πf* in rad/s by the inverse map of Theorem 1 (Eq. 5), η = γ = √κ (η/γ = 1), Ω* clamped to
[0, 2π·f*max] where f*max is the target at 0.99 of the Jury bound on κ (Appendix A.2); f* initialised
log-spaced over [1, 50] Hz; β = tanh(β̂), λ = σ(λ̂) with β̂ = 0, λ̂ = −3 (Appendix B); the triangular
surrogate dS/dV = 0.3·max(0, 1 − |ṼM − Vth|/1) (fits/neuron DefaultSurrogate); the gradient flows through
the reset term S·Vth unless detach_reset. Kinds: "lif" (Eq. 1: no adaptation current, nothing learned
in the neuron), "fs" (M = 0) and "fsts" (M ≥ 1). SSC constants (Table A.1): τm = 0.04 s, τa = 0.2 s,
Δt = 4 ms.

Shapes: a layer maps an input current [B, T, n] to spikes [B, T, n]; current[:, k] is I[k] and
spikes[:, k] is S[k+1]; the state starts at zero. The time loop is the paper's PyTorch timestep-loop
baseline as an efficient user writes it: the dense map runs once over the whole sequence, the loop reads
each step's current with unbind (indexing current[:, k] instead makes autograd build a zero [B, T, n]
gradient per step) and stacks the spikes once. FiTSLayer.compile_step swaps the step for the same step
under torch.compile; SnnTorchLIF is snnTorch's Leaky configured as our LIF (see its docstring for what
differs).

The released code's semantics (the authors' PyTorch code; see official_config): the same FS module and
all-pass stages, the λ-mix nested innermost first (b = VM; for m = M … 1: b = (1 − λm)·V(m−1) + λm·b;
ṼM = b; ts_mix="official"), the spike S = 1 when ṼM > Vth (strict), the triangle surrogate
α·max(0, 1 − α|ṼM − Vth|) with α = 2, the trainable coordinate f_raw = ln(f*/Hz) (target="log-hz") with
no clip in the forward pass, and a frequency guard in the optimizer instead (FrequencyGuard: f* is kept at
or below the target at `safety` × the Jury bound on κΔt²); released_config is that neuron for each kind, the
one the Go engines train and time. The network of a training step (FeedForward with readout="sum" or
"mean") drops the spikes of every hidden layer either with given masks from the counter-based generator of
fits/dropmask (dropout_mask), so the Go engines can draw the same masks, or (dropout=p) with torch's own
masks: per step inside the time loop (FiTSLayer, SnnTorchLIF), or on each layer's stacked spikes
(ReleasedLoopLayer: the released code's CPU reference loop form, each step's current indexed).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

KINDS = ("lif", "fs", "fsts")
TS_MIXES = ("official", "paper")  # λ-mix nesting (and spike comparison): the released code's, Eq. 10's
TS_FORMS = ("direct", "tdf2")  # all-pass stage realisation: Eq. 9's direct form, transposed direct form II
TARGETS = ("omega", "log-hz")  # trainable target coordinate: Ω* in rad/s, ln(f*/Hz)
READOUTS = ("mean", "sum")  # pooling over time before the readout
NEURONS = ("fits", "snntorch", "released")  # FeedForward's layers: FiTSLayer, SnnTorchLIF, ReleasedLoopLayer

# torch.compile warns once that triton (the GPU kernel compiler) is absent; on the CPU it is not used.
logging.getLogger("torch.utils.flop_counter").setLevel(logging.ERROR)


@dataclass(frozen=True)
class NeuronConfig:
    """Constants and options of one layer of neurons (fits/neuron Config). The defaults are the toolkit's
    first form (Eq. 10's nesting with Θ(0) = 1, the 0.3-peak surrogate, Ω* clipped in the forward pass),
    which the benchmark and the oracle check use; official_config gives the released code's neuron."""

    kind: str = "fs"
    order: int = 0  # TS cascade order M: ≥ 1 for fsts, 0 otherwise
    tau_m: float = 0.04  # τm, seconds
    tau_a: float = 0.2  # τa, seconds
    dt: float = 0.004  # Δt, seconds
    f_min_hz: float = 1.0  # log-spaced initial target frequencies over [f_min_hz, f_max_hz], Hz
    f_max_hz: float = 50.0
    vth: float = 1.0
    beta_hat_init: float = 0.0
    lambda_hat_init: float = -3.0
    surrogate_width: float = 1.0  # half-width of the triangle, voltage units
    surrogate_scale: float = 0.3  # its peak at ṼM = Vth
    detach_reset: bool = False
    kappa_fraction: float = 0.99  # the clamp of Ω*: the target at this fraction of the Jury bound
    ts_mix: str = "paper"  # "paper": Eq. 10 and S = Θ(ṼM − Vth) with Θ(0) = 1; "official": see official_config
    ts_form: str = "direct"  # "direct" (Eq. 9) or "tdf2" (per stage Ym = −βm·Y(m−1) + Wm, Wm ← Y(m−1) + βm·Ym)
    target: str = "omega"  # trainable coordinate: "omega" (omega_star, rad/s) or "log-hz" (f_raw = ln(f*/Hz))
    forward_clip: bool = True  # clamp Ω* to [0, 2π·max_target_hz] in the forward pass

    @property
    def strict_spike(self) -> bool:
        """S = 1 when ṼM > Vth (the released code) instead of ṼM ≥ Vth (Algorithm 1)."""
        return self.ts_mix == "official"

    @property
    def mu(self) -> float:
        """μ = 1/τm in 1/s."""
        return 1 / self.tau_m

    @property
    def rho(self) -> float:
        """ρ = 1/τa in 1/s."""
        return 1 / self.tau_a

    @property
    def mu_bar(self) -> float:
        """1 − μΔt, written as Algorithm 1 and fits/sim compute it."""
        return 1 - self.mu * self.dt

    @property
    def rho_bar(self) -> float:
        """1 − ρΔt."""
        return 1 - self.rho * self.dt

    def validate(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {', '.join(KINDS)}")
        for name, value, valid in (("ts_mix", self.ts_mix, TS_MIXES), ("ts_form", self.ts_form, TS_FORMS),
                                   ("target", self.target, TARGETS)):
            if value not in valid:
                raise ValueError(f"{name} {value!r} is not one of {', '.join(valid)}")
        if self.kind == "fsts" and self.order < 1:
            raise ValueError(f"kind fsts needs a TS order M >= 1, got {self.order}")
        if self.kind != "fsts" and self.order != 0:
            raise ValueError(f"kind {self.kind} has no TS module: order must be 0, got {self.order}")
        if not (0 < self.dt < self.tau_m and self.dt < self.tau_a):
            raise ValueError(f"need 0 < dt < tau_m, tau_a, got dt={self.dt} tau_m={self.tau_m} tau_a={self.tau_a}")
        if self.kind != "lif" and not (0 < self.f_min_hz <= self.f_max_hz <= max_target_hz(self)):
            raise ValueError(f"target range [{self.f_min_hz}, {self.f_max_hz}] Hz is empty or above "
                             f"the stable limit {max_target_hz(self):.4g} Hz")


def default_config(kind: str, order: int = 0) -> NeuronConfig:
    """The paper's SHD/SSC settings (Appendix B) for a kind, as fits/neuron DefaultConfig."""
    cfg = NeuronConfig(kind=kind, order=order if kind == "fsts" else 0)
    cfg.validate()
    return cfg


def official_config(order: int, tau_m: float = 0.04, tau_a: float = 0.2, dt: float = 0.004,
                    target: str = "log-hz", ts_mix: str = "official", ts_form: str = "tdf2",
                    alpha: float = 2.0) -> NeuronConfig:
    """The released code's neuron (fs for M = 0, fsts for M ≥ 1): the λ-mix nested innermost first and
    S = 1 when ṼM > Vth (ts_mix="official"; "paper" keeps everything else and switches to Eq. 10 and
    ṼM ≥ Vth), the triangle surrogate α·max(0, 1 − α|ṼM − Vth|) (width 1/α, peak α), the trainable
    coordinate ln(f*/Hz) (or Ω*), no clip of f* in the forward pass, the all-pass stages in transposed
    direct form II. Constants default to SHD/SSC's (GSC: τm 0.1, τa 0.5, Δt 0.01). The initial f* span
    [1, 50] Hz, cut to the stable range."""
    f_max = min(50.0, max_target_hz(NeuronConfig(tau_m=tau_m, tau_a=tau_a, dt=dt)))
    cfg = NeuronConfig(kind=kind_for_order(order), order=order, tau_m=tau_m, tau_a=tau_a, dt=dt,
                       f_min_hz=min(1.0, f_max), f_max_hz=f_max,
                       surrogate_width=1 / alpha, surrogate_scale=alpha, ts_mix=ts_mix, ts_form=ts_form,
                       target=target, forward_clip=False)
    cfg.validate()
    return cfg


def released_config(kind: str, order: int = 0) -> NeuronConfig:
    """The neuron the Go engines train and time by default (fits/neuron DefaultConfig, the released code's
    semantics) for a kind at SHD/SSC constants: official_config for fs (order 0) and fsts, and for lif the
    plain LIF with the same spike (S = 1 when V > Vth) and the α = 2 triangle surrogate."""
    if kind == "lif":
        cfg = NeuronConfig(kind="lif", surrogate_width=0.5, surrogate_scale=2.0, ts_mix="official",
                           forward_clip=False)
        cfg.validate()
        return cfg
    if kind != kind_for_order(order):
        raise ValueError(f"kind {kind!r} does not go with TS order {order} (fs for 0, fsts for M >= 1)")
    return official_config(order)


def kind_for_order(order: int) -> str:
    """The benchmark's neuron for a TS order: fs for M = 0, fsts for M ≥ 1."""
    return "fsts" if order > 0 else "fs"


# ---- Theorem 1 and the Jury bound (fits/theory) ----------------------------------------------------------


def kappa_star(omega_star: torch.Tensor, mu: float, rho: float) -> torch.Tensor:
    """κ* in 1/s² whose continuous-time target frequency is Ω* rad/s (Theorem 1, Eq. 5), elementwise:
    κ* = ρ(ρ+μ)[√(1 + q) − 1] with q = ((1 + (Ω*/ρ)²)/(1 + μ/ρ))², evaluated as ρ(ρ+μ)·q/(√(1+q) + 1)."""
    u = omega_star / rho
    v = (1 + u * u) / (1 + mu / rho)
    q = v * v
    return rho * (rho + mu) * q / (torch.sqrt(1 + q) + 1)


def omega_star_of_kappa(mu: float, rho: float, kappa: float) -> float:
    """The target frequency Ω* in rad/s of κ (Theorem 1, Eq. 4), 0 when there is none."""
    p = kappa * (2 * rho * rho + 2 * rho * mu + kappa)
    if not p > 0:
        return 0.0
    a = rho * (rho + mu)
    r4 = rho ** 4
    k0 = r4 / (a + math.sqrt(a * a + r4))
    k1 = -a - math.sqrt(a * a + r4)
    x = (kappa - k0) * (kappa - k1) / (math.sqrt(p) + rho * rho)
    return math.sqrt(x) if x > 0 else 0.0


def max_target_hz(cfg: NeuronConfig) -> float:
    """The largest realised target frequency in Hz: the target at cfg.kappa_fraction of the Jury bound
    κmax = μρ + 4/Δt² − 2(μ+ρ)/Δt of the semi-implicit update (Appendix A.2); 76.8 Hz for SSC."""
    kmax = cfg.mu * cfg.rho + 4 / cfg.dt ** 2 - 2 * (cfg.mu + cfg.rho) / cfg.dt
    return omega_star_of_kappa(cfg.mu, cfg.rho, cfg.kappa_fraction * kmax) / (2 * math.pi)


def jury_bound(cfg: NeuronConfig) -> float:
    """The Jury bound on κΔt² of the semi-implicit FS update: (1 + μ̄)(1 + ρ̄)."""
    return (1 + cfg.mu_bar) * (1 + cfg.rho_bar)


def safe_target_hz(cfg: NeuronConfig, safety: float = 0.98) -> float:
    """f_safe in Hz: the continuous-time target (Eq. 4) of κ with κΔt² = safety·(1 + μ̄)(1 + ρ̄), at most the
    Nyquist frequency 1/(2Δt); the cap of FrequencyGuard (76.42 Hz at SHD/SSC's constants, 30.57 Hz at
    GSC's)."""
    kappa = safety * jury_bound(cfg) / (cfg.dt * cfg.dt)
    return min(omega_star_of_kappa(cfg.mu, cfg.rho, kappa) / (2 * math.pi), 1 / (2 * cfg.dt))


def log_spaced_hz(f_min: float, f_max: float, n: int) -> list[float]:
    """n frequencies evenly spaced on a log scale over [f_min, f_max] with exact endpoints
    (fits/theory LogSpacedHz)."""
    if n == 1:
        return [f_min]
    lo, hi = math.log(f_min), math.log(f_max)
    out = [math.exp(lo + (hi - lo) * i / (n - 1)) for i in range(n)]
    out[0], out[-1] = f_min, f_max
    return out


# ---- the spike and one step -------------------------------------------------------------------------------


class TriangularSpike(torch.autograd.Function):
    """S = Θ(u) in the forward pass (Θ(0) = 1, or 0 when strict), dS/du = scale·max(0, 1 − |u|/width) in the
    backward."""

    @staticmethod
    def forward(ctx, u: torch.Tensor, width: float, scale: float, strict: bool = False) -> torch.Tensor:
        ctx.save_for_backward(u)
        ctx.width, ctx.scale = width, scale
        return (u > 0).to(u.dtype) if strict else (u >= 0).to(u.dtype)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (u,) = ctx.saved_tensors
        return grad * (ctx.scale * torch.clamp(1 - u.abs() / ctx.width, min=0)), None, None, None


def triangular_spike(width: float, scale: float, strict: bool = False) -> Callable[[torch.Tensor], torch.Tensor]:
    """The spike function of u = v − Vth with the triangular surrogate of the given width and scale; strict:
    no spike at u = 0."""

    def spike(u: torch.Tensor) -> torch.Tensor:
        return TriangularSpike.apply(u, width, scale, strict)

    return spike


# A step maps (I[k], V[k], a[k], stages[k], ηΔt, γΔt, (β1..βM), (λ1..λM), (1−λ1..1−λM)) to
# (S[k+1], ṼM[k+1], V[k+1], a[k+1], stages[k+1]). For lif, a, ηΔt and γΔt are None; for M = 0 the stage
# tuple is empty. The stage tuple has M + 1 entries: (V0[k], …, VM[k]) in the direct form, and in the
# transposed direct form II (V0[k], W1[k], …, WM[k]) with the stage states Wm.
Step = Callable[..., tuple]


def make_step(cfg: NeuronConfig) -> Step:
    """One step of Algorithm 1 for cfg's kind as a plain function of tensors (what torch.compile takes)."""
    cfg.validate()
    mu_bar, rho_bar, vth, order = cfg.mu_bar, cfg.rho_bar, cfg.vth, cfg.order
    adapt, detach = cfg.kind != "lif", cfg.detach_reset
    official, tdf2 = cfg.ts_mix == "official", cfg.ts_form == "tdf2"
    spike_of = triangular_spike(cfg.surrogate_width, cfg.surrogate_scale, cfg.strict_spike)

    def step(current, v, a, stages, eta_dt, gamma_dt, betas, lambdas, one_minus_lambdas):
        # FS module (Eq. 6).
        if adapt:
            v0 = mu_bar * v - eta_dt * a + current
            a = rho_bar * a + gamma_dt * v0
        else:
            v0 = mu_bar * v + current
        # TS module: the all-pass stages (Eq. 9, or the same transfer function in TDF-II) ...
        outs = [v0]
        new = [v0]
        for m in range(1, order + 1):
            if tdf2:
                ym = stages[m] - betas[m - 1] * outs[m - 1]
                new.append(outs[m - 1] + betas[m - 1] * ym)
            else:
                ym = betas[m - 1] * (stages[m] - outs[m - 1]) + stages[m - 1]
                new.append(ym)
            outs.append(ym)
        # ... and the λ-mix: Eq. 10 (outermost first) or the released nesting (innermost first).
        if official:
            mixed = outs[order]
            for m in range(order, 0, -1):
                mixed = one_minus_lambdas[m - 1] * outs[m - 1] + lambdas[m - 1] * mixed
        else:
            mixed = v0
            for m in range(1, order + 1):
                mixed = one_minus_lambdas[m - 1] * mixed + lambdas[m - 1] * outs[m]
        # Spike and subtractive soft reset (a and the stage states are carried).
        s = spike_of(mixed - vth)
        reset = s * vth
        if detach:
            reset = reset.detach()
        return s, mixed, mixed - reset, a, tuple(new) if order > 0 else ()

    return step


def with_step_dropout(step: Step, p: float) -> Step:
    """step with its output spike dropped with probability p (kept ones scaled by 1/(1 − p)), a fresh
    Bernoulli mask per step drawn by torch (F.dropout) inside the loop: what the next layer and the readout
    see. The neuron's own state (the reset) uses the undropped spike. p = 0 returns step itself."""
    if p == 0:
        return step

    def dropped(*args):
        s, mixed, v, a, stages = step(*args)
        return F.dropout(s, p, True), mixed, v, a, stages

    return dropped


# ---- layers ---------------------------------------------------------------------------------------------


class FiTSLayer(nn.Module):
    """A layer of n FiTS neurons (kind lif, fs or fsts). Parameters (shape [n], or [M, n] for the TS
    coordinates): the target coordinate (fs, fsts) omega_star = Ω* in rad/s (target="omega") or
    f_raw = ln(f*/Hz) (target="log-hz"), beta_hat and lambda_hat (fsts)."""

    def __init__(self, n: int, cfg: NeuronConfig, dtype: torch.dtype = torch.float32, dropout: float = 0.0):
        super().__init__()
        cfg.validate()
        if not 0 <= dropout < 1:
            raise ValueError(f"dropout probability must lie in [0, 1), got {dropout}")
        self.n, self.cfg, self.dropout = n, cfg, dropout
        if cfg.kind != "lif":
            f = torch.tensor(log_spaced_hz(cfg.f_min_hz, cfg.f_max_hz, n), dtype=torch.float64)
            if cfg.target == "log-hz":
                self.f_raw = nn.Parameter(torch.log(f).to(dtype))
            else:
                self.omega_star = nn.Parameter((2 * math.pi * f).to(dtype))
            self.omega_max = 2 * math.pi * max_target_hz(cfg)
        if cfg.kind == "fsts":
            m = cfg.order
            self.beta_hat = nn.Parameter(torch.full((m, n), cfg.beta_hat_init, dtype=dtype))
            self.lambda_hat = nn.Parameter(torch.full((m, n), cfg.lambda_hat_init, dtype=dtype))
        self.eager_step = with_step_dropout(make_step(cfg), dropout)
        self.step = self.eager_step

    def compile_step(self, **options) -> None:
        """Runs the same step (with its dropout, if any) under torch.compile (fullgraph, static shapes unless
        options say otherwise). With autograd on, dynamo compiles it twice: for the first step (a zero state
        that needs no gradient) and for the others."""
        options.setdefault("fullgraph", True)
        options.setdefault("dynamic", False)
        self.step = torch.compile(self.eager_step, **options)

    def target_param(self) -> nn.Parameter:
        """The trainable target coordinate: f_raw (target="log-hz") or omega_star (target="omega")."""
        return self.f_raw if self.cfg.target == "log-hz" else self.omega_star

    def omega(self) -> torch.Tensor:
        """Ω* = 2π·f* in rad/s of every neuron, [n], unclipped: 2π·exp(f_raw) or omega_star."""
        if self.cfg.target == "log-hz":
            return 2 * math.pi * torch.exp(self.f_raw)
        return self.omega_star

    @torch.no_grad()
    def set_neurons(self, f_hz: Sequence[float], beta: Optional[Sequence[Sequence[float]]] = None,
                    lam: Optional[Sequence[Sequence[float]]] = None) -> None:
        """Sets the target frequencies f* (Hz, [n]) and, for fsts, β and λ ([M][n]) through their
        coordinates: f_raw = ln f* or Ω* = 2πf*, β̂ = atanh β, λ̂ = logit λ."""
        p = self.target_param()
        f = torch.tensor(list(f_hz), dtype=torch.float64)
        p.copy_(torch.log(f) if self.cfg.target == "log-hz" else 2 * math.pi * f)
        if self.cfg.kind == "fsts":
            b = torch.tensor(beta, dtype=torch.float64).reshape(self.cfg.order, self.n)
            l = torch.tensor(lam, dtype=torch.float64).reshape(self.cfg.order, self.n)
            self.beta_hat.copy_(torch.atanh(b))
            self.lambda_hat.copy_(torch.log(l) - torch.log1p(-l))

    def coefficients(self):
        """(ηΔt, γΔt, (βm), (λm), (1 − λm)), each [n]: computed once per forward, outside the loop."""
        cfg = self.cfg
        eta_dt = gamma_dt = None
        betas = lambdas = one_minus = ()
        if cfg.kind != "lif":
            omega = self.omega()
            if cfg.forward_clip:
                omega = torch.clamp(omega, 0, self.omega_max)
            # ηΔt = γΔt = √(κΔt²) (η/γ = 1), as fits/neuron computes it.
            eta_dt = torch.sqrt(kappa_star(omega, cfg.mu, cfg.rho) * (cfg.dt * cfg.dt))
            gamma_dt = eta_dt
        if cfg.kind == "fsts":
            betas = torch.tanh(self.beta_hat).unbind(0)
            lam = torch.sigmoid(self.lambda_hat)
            lambdas, one_minus = lam.unbind(0), (1 - lam).unbind(0)
        return eta_dt, gamma_dt, betas, lambdas, one_minus

    def forward(self, current: torch.Tensor, return_voltage: bool = False):
        """Spikes [B, T, n] for the input current [B, T, n] (dropped out per step when the layer has a
        dropout); with return_voltage also ṼM [B, T, n]."""
        b, _, n = current.shape
        zero = current.new_zeros(b, n)
        v = zero
        a = zero if self.cfg.kind != "lif" else None
        stages = (zero,) * (self.cfg.order + 1) if self.cfg.order > 0 else ()
        coeffs = self.coefficients()
        spikes, volts = [], []
        for cur in current.unbind(1):
            s, v_pre, v, a, stages = self.step(cur, v, a, stages, *coeffs)
            spikes.append(s)
            if return_voltage:
                volts.append(v_pre)
        out = torch.stack(spikes, 1)
        return (out, torch.stack(volts, 1)) if return_voltage else out

    def trace(self, current: torch.Tensor) -> dict[str, torch.Tensor]:
        """The whole state over time for the input current [B, T, n], each [B, T, n]: spikes S[k+1],
        v_mixed ṼM[k+1] (before the reset), v V[k+1] (after it), a a[k+1] (fs, fsts)."""
        b, _, n = current.shape
        zero = current.new_zeros(b, n)
        v, a = zero, (zero if self.cfg.kind != "lif" else None)
        stages = (zero,) * (self.cfg.order + 1) if self.cfg.order > 0 else ()
        coeffs = self.coefficients()
        out: dict[str, list] = {"spikes": [], "v_mixed": [], "v": [], "a": []}
        for cur in current.unbind(1):
            s, v_pre, v, a, stages = self.step(cur, v, a, stages, *coeffs)
            out["spikes"].append(s)
            out["v_mixed"].append(v_pre)
            out["v"].append(v)
            if a is not None:
                out["a"].append(a)
        return {k: torch.stack(x, 1) for k, x in out.items() if x}


class ReleasedLoopLayer(FiTSLayer):
    """A layer of fs/fsts neurons run in the released code's CPU reference loop form (its pure-PyTorch
    time loop, which serves the CPU and M > 5; the GPU runs fused kernels instead), the same parameters as
    FiTSLayer. Per forward: η = √(κr), γ = √(κ/r) (r = 1) from f* and then ηΔt and γΔt, the lists of βm and
    λm (one [n] tensor per stage); then, per time step k, the current of the step read by indexing,
    current[:, k, :], and

        Y0 = (1 − Δt/τm)·V − ηΔt·a + I[k];   a ← γΔt·Y0 + (1 − Δt/τa)·a
        per stage (TDF-II): Ym = −βm·Y(m−1) + Wm;   Wm ← Y(m−1) + βm·Ym
        Ṽ = Y0 for M = 0, else b = YM; for m = M … 1: b = (1 − λm)·Y(m−1) + λm·b; Ṽ = b
        S = Θ(Ṽ − Vth) (strict), triangle surrogate;   V ← Ṽ − S·Vth

    with the spikes, the post-reset V and a of every step collected and stacked at the end (the loop records
    all three; only the spikes go on). The same neuron as FiTSLayer with official_config (equal up to
    rounding: Δt/τm and ηΔt are formed in another order); what differs is the execution form: indexing
    instead of unbind (autograd then adds a zero [B, T, n] gradient per step), the coefficient lists, the
    extra V and a stacks. Dropout is not applied here: the released network drops the stacked spikes of the
    whole layer (FeedForward with neuron="released")."""

    def __init__(self, n: int, cfg: NeuronConfig, dtype: torch.dtype = torch.float32):
        if cfg.kind == "lif":
            raise ValueError("ReleasedLoopLayer is the fs or fsts kind")
        super().__init__(n, cfg, dtype)

    def compile_step(self, **options) -> None:
        raise NotImplementedError("the released loop form has no separate step to compile")

    def kappa(self) -> torch.Tensor:
        """κ of every neuron in 1/s², [n]: κ*(Ω*) of the trainable target (Theorem 1)."""
        omega = self.omega()
        if self.cfg.forward_clip:
            omega = torch.clamp(omega, 0, self.omega_max)
        return kappa_star(omega, self.cfg.mu, self.cfg.rho)

    def forward(self, current: torch.Tensor, return_voltage: bool = False):
        cfg = self.cfg
        batch, steps, n = current.shape
        order = cfg.order
        decay_v, decay_a = 1.0 - cfg.dt / cfg.tau_m, 1.0 - cfg.dt / cfg.tau_a
        kappa = self.kappa()
        eta, gamma = torch.sqrt(kappa), torch.sqrt(kappa)  # η/γ = 1
        eta_dt, gamma_dt = eta * cfg.dt, gamma * cfg.dt
        betas = [torch.tanh(self.beta_hat)[m] for m in range(order)] if order else []
        lams = [torch.sigmoid(self.lambda_hat[m]) for m in range(order)] if order else []
        spike_of = triangular_spike(cfg.surrogate_width, cfg.surrogate_scale, cfg.strict_spike)

        v = current.new_zeros(batch, n)
        a = current.new_zeros(batch, n)
        w = [current.new_zeros(batch, n) for _ in range(order)]
        s_seq, v_seq, a_seq, mixed_seq = [], [], [], []
        for k in range(steps):
            i_k = current[:, k, :]
            y0 = decay_v * v + (-eta_dt) * a + i_k
            a_next = gamma_dt * y0 + decay_a * a
            ys, w_next = [y0], []
            for m in range(order):
                ym = -betas[m] * ys[m] + w[m]
                w_next.append(ys[m] + betas[m] * ym)
                ys.append(ym)
            if order == 0:
                mixed = y0
            else:
                mixed = ys[order]
                for m in range(order - 1, -1, -1):
                    mixed = (1.0 - lams[m]) * ys[m] + lams[m] * mixed
            s = spike_of(mixed - cfg.vth)
            v_next = mixed - s * cfg.vth
            s_seq.append(s)
            v_seq.append(v_next)
            a_seq.append(a_next)
            if return_voltage:
                mixed_seq.append(mixed)
            v, a, w = v_next, a_next, w_next
        spikes = torch.stack(s_seq, 1)
        _v_all, _a_all = torch.stack(v_seq, 1), torch.stack(a_seq, 1)  # recorded by the released loop, unused
        return (spikes, torch.stack(mixed_seq, 1)) if return_voltage else spikes


class SnnTorchLIF(nn.Module):
    """snnTorch's Leaky configured as our LIF: β = 1 − Δt/τm (0.9 for SSC), threshold Vth, reset by
    subtraction applied in the same step (reset_delay=False), and our triangular surrogate as spike_grad
    (so Θ(0) = 1, or 0 when cfg.strict_spike, and the same pseudo-derivative; snnTorch's default is the
    arctan surrogate with Θ(0) = 0).
    The gradient flows through the reset as in our default (snnTorch subtracts spk − reset, where only
    `reset` is detached). What still differs: snnTorch checks, before each step, whether the post-reset
    voltage is still at or above threshold and if so subtracts Vth once more before deciding the spike
    (its guard against a double reset), while Algorithm 1 lets the decayed voltage decide. The two agree
    exactly while the pre-reset voltage stays below 2·Vth, which peers/check_oracle.py checks. With
    snnTorch's default reset_delay=True the reset would instead be applied, undecayed, one step later:
    U[t+1] = βU[t] + I − S[t]·Vth instead of β(U[t] − S[t]·Vth) + I. dropout > 0 drops the output spikes
    in the loop with a fresh mask per step, as FiTSLayer does."""

    def __init__(self, n: int, cfg: NeuronConfig, dtype: torch.dtype = torch.float32, dropout: float = 0.0):
        super().__init__()
        import snntorch

        if cfg.kind != "lif":
            raise ValueError("SnnTorchLIF is the lif kind")
        if not 0 <= dropout < 1:
            raise ValueError(f"dropout probability must lie in [0, 1), got {dropout}")
        self.n, self.cfg, self.dropout = n, cfg, dropout
        self.leaky = snntorch.Leaky(
            beta=torch.tensor(cfg.mu_bar, dtype=dtype),
            threshold=torch.tensor(cfg.vth, dtype=dtype),
            spike_grad=triangular_spike(cfg.surrogate_width, cfg.surrogate_scale, cfg.strict_spike),
            reset_mechanism="subtract",
            reset_delay=False,
        )

    def forward(self, current: torch.Tensor, return_voltage: bool = False):
        """Spikes [B, T, n]; with return_voltage also the pre-reset voltage [B, T, n]."""
        mem = current.new_zeros(current.shape[0], current.shape[2])
        spikes, volts = [], []
        for cur in current.unbind(1):
            spk, mem = self.leaky(cur, mem)
            spikes.append(F.dropout(spk, self.dropout, True) if self.dropout > 0 else spk)
            if return_voltage:
                volts.append(mem + spk * self.cfg.vth)  # mem is post-reset
        out = torch.stack(spikes, 1)
        return (out, torch.stack(volts, 1)) if return_voltage else out


# ---- networks ---------------------------------------------------------------------------------------------


def fan_in_uniform_(linear: nn.Linear, generator: torch.Generator) -> None:
    """Weights from U(−1/√fanIn, 1/√fanIn), zero biases (fits/model FanInUniform)."""
    bound = 1 / math.sqrt(linear.in_features)
    with torch.no_grad():
        linear.weight.uniform_(-bound, bound, generator=generator)
        linear.bias.zero_()


class FeedForward(nn.Module):
    """Dense maps with bias, each followed by a layer of neurons: inputs [B, T, inputs] → hidden
    [B, T, widths[i]]. With classes > 0 a linear readout of the last layer pooled over time (readout="mean":
    W·mean_t(s) + b, the toolkit's and sMNIST's; "sum": W·Σ_t s + b, the released code's for SHD, SSC and
    GSC) and the mean cross-entropy; with classes = 0 the loss is Σ spikes of the last layer (the Open
    Neuromorphic benchmark). neuron="snntorch" uses SnnTorchLIF (cfg.kind must be lif), neuron="released"
    ReleasedLoopLayer (the released code's loop form). Dropout, either: forward and loss take one mask
    [B, T, width] per hidden layer (dropout_mask), multiplied into its spikes (deterministic, for the golden
    files); or dropout = p > 0 drops the spikes of every hidden layer in training mode with fresh torch
    masks, an independent one per (example, step, neuron) either way: inside the time loop, per step (fits,
    snntorch), or on the layer's stacked spikes after its loop as nn.Dropout does in the released network
    (released)."""

    def __init__(self, inputs: int, widths: Sequence[int], classes: int, cfg: NeuronConfig,
                 neuron: str = "fits", seed: int = 1, dtype: torch.dtype = torch.float32,
                 readout: str = "mean", dropout: float = 0.0):
        super().__init__()
        if readout not in READOUTS:
            raise ValueError(f"readout {readout!r} is not one of {', '.join(READOUTS)}")
        if neuron not in NEURONS:
            raise ValueError(f"neuron {neuron!r} is not one of {', '.join(NEURONS)}")
        if not 0 <= dropout < 1:
            raise ValueError(f"dropout probability must lie in [0, 1), got {dropout}")
        self.pool = readout
        # Dropout of the stacked spikes after each layer (the released form); else inside the layers' loops.
        self.layer_dropout = dropout if neuron == "released" else 0.0
        self.dropout = dropout
        gen = torch.Generator().manual_seed(seed)
        self.dense = nn.ModuleList()
        self.neurons = nn.ModuleList()
        n_in = inputs
        for w in widths:
            lin = nn.Linear(n_in, w, dtype=dtype)
            fan_in_uniform_(lin, gen)
            self.dense.append(lin)
            if neuron == "snntorch":
                layer = SnnTorchLIF(w, cfg, dtype, dropout)
            elif neuron == "released":
                layer = ReleasedLoopLayer(w, cfg, dtype)
            else:
                layer = FiTSLayer(w, cfg, dtype, dropout)
            self.neurons.append(layer)
            n_in = w
        self.readout: Optional[nn.Linear] = None
        if classes > 0:
            self.readout = nn.Linear(n_in, classes, dtype=dtype)
            fan_in_uniform_(self.readout, gen)

    def compile_steps(self, **options) -> None:
        for layer in self.neurons:
            layer.compile_step(**options)

    def forward(self, x: torch.Tensor, masks: Optional[Sequence[torch.Tensor]] = None) -> list[torch.Tensor]:
        """The spikes of every hidden layer, each [B, T, width], after dropout: times its mask when masks are
        given, else dropped by the layers or here when the network has a dropout (what the next layer and the
        readout see)."""
        if masks is not None and self.dropout > 0:
            raise ValueError("give either masks or a dropout probability, not both")
        spikes, h = [], x
        for i, (dense, neurons) in enumerate(zip(self.dense, self.neurons)):
            h = neurons(dense(h))
            if self.layer_dropout > 0:
                h = F.dropout(h, self.layer_dropout, True)
            if masks is not None:
                h = h * masks[i]
            spikes.append(h)
        return spikes

    def logits(self, spikes: torch.Tensor) -> torch.Tensor:
        """The readout of the last hidden layer's (dropped-out) spikes [B, T, width]: [B, classes]."""
        return self.readout(spikes.sum(1) if self.pool == "sum" else spikes.mean(1))

    def loss(self, x: torch.Tensor, labels: Optional[torch.Tensor],
             masks: Optional[Sequence[torch.Tensor]] = None) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The scalar loss and the hidden spikes."""
        spikes = self(x, masks)
        if self.readout is None:
            return spikes[-1].sum(), spikes
        return F.cross_entropy(self.logits(spikes[-1]), labels), spikes


# ---- dropout masks (fits/dropmask) -------------------------------------------------------------------------

_U32 = np.uint32


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer on uint32 arrays (wrapping arithmetic)."""
    h = np.asarray(h, dtype=_U32)
    with np.errstate(over="ignore"):
        h = h ^ (h >> _U32(16))
        h = h * _U32(0x85EBCA6B)
        h = h ^ (h >> _U32(13))
        h = h * _U32(0xC2B2AE35)
        h = h ^ (h >> _U32(16))
    return h


def dropout_key(seed: int, step: int, layer: int) -> int:
    """The mask key of hidden layer `layer` (0-based) at optimizer step `step` of the run with `seed`
    (fits/dropmask Key); integers are taken modulo 2³²."""
    k = _fmix32(_U32(seed & 0xFFFFFFFF) ^ _U32(0x243F6A88))
    k = _fmix32(k ^ _U32(step & 0xFFFFFFFF))
    with np.errstate(over="ignore"):
        salt = (_U32(layer & 0xFFFFFFFF) + _U32(1)) * _U32(0x9E3779B9)
    return int(_fmix32(k ^ salt))


def dropout_bits(key: int, index: np.ndarray) -> np.ndarray:
    """The 32 random bits of the mask elements `index` (uint32 array) under `key` (fits/dropmask Bits)."""
    key32 = _U32(key)
    with np.errstate(over="ignore"):
        return _fmix32(_fmix32(np.asarray(index, dtype=_U32) + key32) ^ key32)


def dropout_threshold(p: float) -> int:
    """min(⌊p·2³²⌋, 2³² − 1): an element is kept when its bits are at least this."""
    t = math.floor(p * 2.0 ** 32)
    return max(0, min(t, 0xFFFFFFFF))


def dropout_scale(p: float) -> float:
    """The value of a kept element, float32(1/(1 − p)), as a Python float."""
    return float(np.float32(1 / (1 - p)))


def dropout_mask(seed: int, step: int, layer: int, p: float, batch: int, steps: int, neurons: int) -> np.ndarray:
    """The float32 mask [batch, steps, neurons] of fits/dropmask Mask: element i = (b·T + t)·N + n is
    float32(1/(1 − p)) when dropout_bits(key, i) ≥ dropout_threshold(p), else 0."""
    if not 0 <= p < 1:
        raise ValueError(f"dropout probability must lie in [0, 1), got {p}")
    count = batch * steps * neurons
    if count > 1 << 32:
        raise ValueError(f"mask [{batch}, {steps}, {neurons}] has more than 2^32 elements")
    bits = dropout_bits(dropout_key(seed, step, layer), np.arange(count, dtype=np.uint64).astype(_U32))
    keep = bits >= _U32(dropout_threshold(p))
    return np.where(keep, np.float32(dropout_scale(p)), np.float32(0)).reshape(batch, steps, neurons)


# ---- the frequency guard ----------------------------------------------------------------------------------


class FrequencyGuard:
    """Keeps trainable log target frequencies f_raw = ln(f*/Hz) at or below ln f_safe (safe_target_hz) by
    projection around an Adam step, the forward pass untouched. guard.step() replaces optimizer.step():

      before: the gradient of an entry already on the cap (f_raw ≥ cap) is zeroed where it is negative
              (a descent step would raise f_raw further);
      after:  entries above the cap are set to it, their negative first moments (exp_avg) zeroed, and
              counted in .projected (reset_count returns and clears it).

    last_masked / last_projected hold the boolean masks of the latest step, per parameter."""

    def __init__(self, optimizer: torch.optim.Optimizer, params_caps: Sequence[tuple[torch.Tensor, float]]):
        self.optimizer = optimizer
        self.params_caps = list(params_caps)
        self.projected = 0
        self.last_masked: list[torch.Tensor] = []
        self.last_projected: list[torch.Tensor] = []

    @torch.no_grad()
    def before_step(self) -> None:
        self.last_masked = []
        for p, cap in self.params_caps:
            masked = torch.zeros_like(p, dtype=torch.bool)
            if p.grad is not None:
                masked = (p >= cap) & (p.grad < 0)
                p.grad[masked] = 0
            self.last_masked.append(masked)

    @torch.no_grad()
    def after_step(self) -> None:
        self.last_projected = []
        for p, cap in self.params_caps:
            over = p > cap
            self.last_projected.append(over)
            n = int(over.sum())
            if n == 0:
                continue
            self.projected += n
            p[over] = cap
            m1 = self.optimizer.state.get(p, {}).get("exp_avg")
            if m1 is not None:
                m1[over & (m1 < 0)] = 0

    def step(self) -> None:
        self.before_step()
        self.optimizer.step()
        self.after_step()

    def reset_count(self) -> int:
        n, self.projected = self.projected, 0
        return n

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
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn

KINDS = ("lif", "fs", "fsts")

# torch.compile warns once that triton (the GPU kernel compiler) is absent; on the CPU it is not used.
logging.getLogger("torch.utils.flop_counter").setLevel(logging.ERROR)


@dataclass(frozen=True)
class NeuronConfig:
    """Constants and options of one layer of neurons (fits/neuron Config, DefaultConfig)."""

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
    """S = Θ(u) with Θ(0) = 1 in the forward pass, dS/du = scale·max(0, 1 − |u|/width) in the backward."""

    @staticmethod
    def forward(ctx, u: torch.Tensor, width: float, scale: float) -> torch.Tensor:
        ctx.save_for_backward(u)
        ctx.width, ctx.scale = width, scale
        return (u >= 0).to(u.dtype)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (u,) = ctx.saved_tensors
        return grad * (ctx.scale * torch.clamp(1 - u.abs() / ctx.width, min=0)), None, None


def triangular_spike(width: float, scale: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """The spike function of u = v − Vth with the triangular surrogate of the given width and scale."""

    def spike(u: torch.Tensor) -> torch.Tensor:
        return TriangularSpike.apply(u, width, scale)

    return spike


# A step maps (I[k], V[k], a[k], (V0[k], …, VM[k]), ηΔt, γΔt, (β1..βM), (λ1..λM), (1−λ1..1−λM)) to
# (S[k+1], ṼM[k+1], V[k+1], a[k+1], (V0[k+1], …, VM[k+1])). For lif, a, ηΔt and γΔt are None; for M = 0
# the stage tuple is empty.
Step = Callable[..., tuple]


def make_step(cfg: NeuronConfig) -> Step:
    """One step of Algorithm 1 for cfg's kind as a plain function of tensors (what torch.compile takes)."""
    cfg.validate()
    mu_bar, rho_bar, vth, order = cfg.mu_bar, cfg.rho_bar, cfg.vth, cfg.order
    adapt, detach = cfg.kind != "lif", cfg.detach_reset
    spike_of = triangular_spike(cfg.surrogate_width, cfg.surrogate_scale)

    def step(current, v, a, stages, eta_dt, gamma_dt, betas, lambdas, one_minus_lambdas):
        # FS module (Eq. 6).
        if adapt:
            v0 = mu_bar * v - eta_dt * a + current
            a = rho_bar * a + gamma_dt * v0
        else:
            v0 = mu_bar * v + current
        # TS module (Eqs. 8-10).
        mixed = v0
        new = [v0]
        for m in range(1, order + 1):
            vm = betas[m - 1] * (stages[m] - new[m - 1]) + stages[m - 1]
            mixed = one_minus_lambdas[m - 1] * mixed + lambdas[m - 1] * vm
            new.append(vm)
        # Spike (Θ(0) = 1) and subtractive soft reset.
        s = spike_of(mixed - vth)
        reset = s * vth
        if detach:
            reset = reset.detach()
        return s, mixed, mixed - reset, a, tuple(new) if order > 0 else ()

    return step


# ---- layers ---------------------------------------------------------------------------------------------


class FiTSLayer(nn.Module):
    """A layer of n FiTS neurons (kind lif, fs or fsts). Parameters (shape [n], or [M, n] for the TS
    coordinates): omega_star = Ω* in rad/s (fs, fsts), beta_hat and lambda_hat (fsts)."""

    def __init__(self, n: int, cfg: NeuronConfig, dtype: torch.dtype = torch.float32):
        super().__init__()
        cfg.validate()
        self.n, self.cfg = n, cfg
        if cfg.kind != "lif":
            f = torch.tensor(log_spaced_hz(cfg.f_min_hz, cfg.f_max_hz, n), dtype=torch.float64)
            self.omega_star = nn.Parameter((2 * math.pi * f).to(dtype))
            self.omega_max = 2 * math.pi * max_target_hz(cfg)
        if cfg.kind == "fsts":
            m = cfg.order
            self.beta_hat = nn.Parameter(torch.full((m, n), cfg.beta_hat_init, dtype=dtype))
            self.lambda_hat = nn.Parameter(torch.full((m, n), cfg.lambda_hat_init, dtype=dtype))
        self.eager_step = make_step(cfg)
        self.step = self.eager_step

    def compile_step(self, **options) -> None:
        """Runs the same step under torch.compile (fullgraph, static shapes unless options say otherwise).
        With autograd on, dynamo compiles it twice: for the first step (a zero state that needs no
        gradient) and for the others."""
        options.setdefault("fullgraph", True)
        options.setdefault("dynamic", False)
        self.step = torch.compile(self.eager_step, **options)

    def coefficients(self):
        """(ηΔt, γΔt, (βm), (λm), (1 − λm)), each [n]: computed once per forward, outside the loop."""
        cfg = self.cfg
        eta_dt = gamma_dt = None
        betas = lambdas = one_minus = ()
        if cfg.kind != "lif":
            omega = torch.clamp(self.omega_star, 0, self.omega_max)
            # ηΔt = γΔt = √(κΔt²) (η/γ = 1), as fits/neuron computes it.
            eta_dt = torch.sqrt(kappa_star(omega, cfg.mu, cfg.rho) * (cfg.dt * cfg.dt))
            gamma_dt = eta_dt
        if cfg.kind == "fsts":
            betas = torch.tanh(self.beta_hat).unbind(0)
            lam = torch.sigmoid(self.lambda_hat)
            lambdas, one_minus = lam.unbind(0), (1 - lam).unbind(0)
        return eta_dt, gamma_dt, betas, lambdas, one_minus

    def forward(self, current: torch.Tensor, return_voltage: bool = False):
        """Spikes [B, T, n] for the input current [B, T, n]; with return_voltage also ṼM [B, T, n]."""
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


class SnnTorchLIF(nn.Module):
    """snnTorch's Leaky configured as our LIF: β = 1 − Δt/τm (0.9 for SSC), threshold Vth, reset by
    subtraction applied in the same step (reset_delay=False), and our triangular surrogate as spike_grad
    (so Θ(0) = 1 and the same pseudo-derivative; snnTorch's default is the arctan surrogate with Θ(0) = 0).
    The gradient flows through the reset as in our default (snnTorch subtracts spk − reset, where only
    `reset` is detached). What still differs: snnTorch checks, before each step, whether the post-reset
    voltage is still at or above threshold and if so subtracts Vth once more before deciding the spike
    (its guard against a double reset), while Algorithm 1 lets the decayed voltage decide. The two agree
    exactly while the pre-reset voltage stays below 2·Vth, which peers/check_oracle.py checks. With
    snnTorch's default reset_delay=True the reset would instead be applied, undecayed, one step later:
    U[t+1] = βU[t] + I − S[t]·Vth instead of β(U[t] − S[t]·Vth) + I."""

    def __init__(self, n: int, cfg: NeuronConfig, dtype: torch.dtype = torch.float32):
        super().__init__()
        import snntorch

        if cfg.kind != "lif":
            raise ValueError("SnnTorchLIF is the lif kind")
        self.n, self.cfg = n, cfg
        self.leaky = snntorch.Leaky(
            beta=torch.tensor(cfg.mu_bar, dtype=dtype),
            threshold=torch.tensor(cfg.vth, dtype=dtype),
            spike_grad=triangular_spike(cfg.surrogate_width, cfg.surrogate_scale),
            reset_mechanism="subtract",
            reset_delay=False,
        )

    def forward(self, current: torch.Tensor, return_voltage: bool = False):
        """Spikes [B, T, n]; with return_voltage also the pre-reset voltage [B, T, n]."""
        mem = current.new_zeros(current.shape[0], current.shape[2])
        spikes, volts = [], []
        for cur in current.unbind(1):
            spk, mem = self.leaky(cur, mem)
            spikes.append(spk)
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
    [B, T, widths[i]]. With classes > 0 a linear readout of the time-averaged last layer (the mean readout,
    W·mean_t(s) + b) and the mean cross-entropy; with classes = 0 the loss is Σ spikes of the last layer
    (the Open Neuromorphic benchmark). neuron="snntorch" uses SnnTorchLIF (cfg.kind must be lif)."""

    def __init__(self, inputs: int, widths: Sequence[int], classes: int, cfg: NeuronConfig,
                 neuron: str = "fits", seed: int = 1, dtype: torch.dtype = torch.float32):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.dense = nn.ModuleList()
        self.neurons = nn.ModuleList()
        n_in = inputs
        for w in widths:
            lin = nn.Linear(n_in, w, dtype=dtype)
            fan_in_uniform_(lin, gen)
            self.dense.append(lin)
            self.neurons.append(SnnTorchLIF(w, cfg, dtype) if neuron == "snntorch" else FiTSLayer(w, cfg, dtype))
            n_in = w
        self.readout: Optional[nn.Linear] = None
        if classes > 0:
            self.readout = nn.Linear(n_in, classes, dtype=dtype)
            fan_in_uniform_(self.readout, gen)

    def compile_steps(self, **options) -> None:
        for layer in self.neurons:
            layer.compile_step(**options)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The spikes of every hidden layer, each [B, T, width]."""
        spikes, h = [], x
        for dense, neurons in zip(self.dense, self.neurons):
            h = neurons(dense(h))
            spikes.append(h)
        return spikes

    def loss(self, x: torch.Tensor, labels: Optional[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The scalar loss and the hidden spikes."""
        spikes = self(x)
        if self.readout is None:
            return spikes[-1].sum(), spikes
        logits = self.readout(spikes[-1].mean(1))
        return F.cross_entropy(logits, labels), spikes

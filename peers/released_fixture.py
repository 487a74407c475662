"""Run folders in the layout of the authors' released code, made by the PyTorch peer (fits_torch, released
semantics), for `fits import` and `fits export --format=released`.

make:   trains a small network (two hidden layers of --width neurons, M = each of --orders, and each of the
        --baselines: the released LIFNeuron as plain LIF (lif) or adaptive LIF (adaptive_lif), and FiTS
        with f* frozen at its initialization (fs_frozen, learn_freq false)) on the embedded synthetic task with the released recipe (Adam, the cosine annealed once per epoch, dropout on the
        stacked spikes, FrequencyGuard, best-test selection with strict >) and writes, per M, a folder
        o<M>/ (per baseline, a folder named after it) as the released fit does: best.pth (torch.save of {"epoch", "state", "config", "valid_acc",
        "test_acc"} with the released state-dict names), config.json, metrics.json, summary.json and
        train.log, plus expected.json: the test logits of best.pth's weights, its accuracy and the smallest
        |Ṽ − Vth| over the test set (how far every spike decision is from a tie; float32 rounding cannot
        flip one that is farther than about 1e-5). A training run whose margin is smaller retries with the
        next seed.
check:  loads a folder that `fits export --format=released` wrote (best.pth, or model.safetensors and
        config.json) into the released-layout network with load_state_dict(strict=True), evaluates it on
        the synthetic test set and compares its accuracy (exactly) and mean cross-entropy (within --tol)
        with `fits eval --json` of the run that was exported.
convert: writes best.pth from an exported model.safetensors and config.json (the folder then loads in
        the released code's examples/inspect_checkpoint.py).

The synthetic task comes from `go run ./peers/synthdata --out=DIR` (NumPy files of the toolkit's own
examples). Regenerate the committed fixtures with peers/make_released_fixtures.sh.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fits_torch as ft  # noqa: E402

CONFIG_KEYS_IGNORED_HERE = ("results_dir", "data_dir")


# The baselines (--baselines): name -> (neuron_type, learn_freq) of the released configuration.
BASELINES = {"lif": ("lif", True), "adaptive_lif": ("adaptive_lif", True), "fs_frozen": ("fits", False)}


def variant_of(name: str) -> tuple[str, int, bool]:
    """(neuron_type, order, learn_freq) of a fixture: o<M> or a baseline. The LIF baselines keep the
    released default order 1 in their configuration (LIFNeuron ignores it)."""
    if name in BASELINES:
        typ, learn = BASELINES[name]
        return typ, (1 if typ != "fits" else 0), learn
    if name.startswith("o") and name[1:].isdigit():
        return "fits", int(name[1:]), True
    raise SystemExit(f"unknown fixture {name!r}: o<M> or one of {', '.join(BASELINES)}")


def released_config(name: str, width: int, epochs: int, lr: float, dropout: float, seed: int, classes: int,
                    features: int, n_params: int) -> dict:
    """The configuration dict the released fit saves (COMMON_DEFAULTS with the run's values, plus the
    script's extra keys), for the synthetic task at SHD's neuron constants."""
    typ, order, learn = variant_of(name)
    return dict(
        seed=seed, epochs=epochs, lr=lr, wd=0.0, batch_size=128, eval_batch_size=256, workers=0,
        results_dir="runs/synthetic", data_dir="data/synthetic",
        neuron_type=typ, hidden_dims=[width, width], dropout=dropout,
        order=order, chunk_size=32, implicit=True,
        tau_m=0.04, tau_a=0.2, dt=0.004, ratio_eta_gamma=1.0,
        f_min=1.0, f_max=50.0, freq_init="log", learn_freq=learn, freq_param="ct",
        freq_guard=True, guard_safety=0.98, backend="torch",
        threshold=1.0, surrogate="triangle", surrogate_alpha=2.0, lam_init=-3.0,
        use_wandb=False, wandb_project="FiTS", wandb_run_name=None,
        eval_mode="test_only", time_window=100, in_features=features,
        dataset="synthetic", n_params=n_params, n_class=classes,
    )


class ReleasedLIFLayer(ft.ReleasedLoopLayer):
    """The released LIFNeuron: the M = 0 loop with one fixed κ for every neuron, held in the buffer
    kappa_fixed — 0 for the plain LIF (η = γ = 0), κ_CT(Ω* = 0) for the adaptive LIF — and nothing of the
    neuron learned (no f_raw)."""

    def __init__(self, n: int, cfg: ft.NeuronConfig, adaptive: bool):
        super().__init__(n, cfg)
        del self.f_raw
        k0 = ft.kappa_star(torch.zeros(n), cfg.mu, cfg.rho) if adaptive else torch.zeros(n)
        self.register_buffer("kappa_fixed", k0)

    def kappa(self) -> torch.Tensor:
        return self.kappa_fixed


def build_net(name: str, width: int, features: int, classes: int, dropout: float, seed: int) -> ft.FeedForward:
    """The released network of a fixture (fs for M = 0, fsts otherwise, the LIF baselines, fs with f*
    frozen) in the released loop form with sum readout."""
    typ, order, learn = variant_of(name)
    cfg = ft.official_config(order if typ == "fits" else 0)
    net = ft.FeedForward(features, [width, width], classes, cfg, neuron="released", seed=seed, readout="sum",
                         dropout=dropout)
    if typ != "fits":
        net.neurons = torch.nn.ModuleList(ReleasedLIFLayer(width, cfg, typ == "adaptive_lif") for _ in net.neurons)
    if not learn:
        for layer in net.neurons:
            layer.f_raw.requires_grad_(False)
    return net


def released_state_dict(net: ft.FeedForward) -> dict:
    """The peer's parameters under the released code's state-dict names (fits/models.py FiTSNet)."""
    sd = {}
    for i, (dense, layer) in enumerate(zip(net.dense, net.neurons)):
        p = f"neuron_layers.{i}."
        sd[p + "linear.weight"] = dense.weight.detach().clone()
        sd[p + "linear.bias"] = dense.bias.detach().clone()
        if isinstance(layer, ReleasedLIFLayer):
            sd[p + "kappa_fixed"] = layer.kappa_fixed.detach().clone()
        else:
            sd[p + "f_raw"] = layer.f_raw.detach().clone()
        m = layer.cfg.order
        if m > 0:
            sd[p + "ap_beta_raw"] = layer.beta_hat.detach().clone()
            lam = layer.lambda_hat.detach().clone()
            if m == 1:
                sd[p + "lam1_raw"] = lam[0].clone()
            elif m == 2:
                sd[p + "lam1_raw"], sd[p + "lam2_raw"] = lam[0].clone(), lam[1].clone()
            else:
                sd[p + "ap_lam_raw"] = lam
    sd["output.weight"] = net.readout.weight.detach().clone()
    sd["output.bias"] = net.readout.bias.detach().clone()
    return sd


def load_released_state_dict(net: ft.FeedForward, sd: dict) -> None:
    """The inverse of released_state_dict, strict: every name must be there and nothing else."""
    want = released_state_dict(net)
    missing, extra = sorted(set(want) - set(sd)), sorted(set(sd) - set(want))
    if missing or extra:
        raise ValueError(f"state dict mismatch: missing {missing}, unexpected {extra}")
    for k, v in sd.items():
        if tuple(v.shape) != tuple(want[k].shape):
            raise ValueError(f"{k}: shape {tuple(v.shape)}, want {tuple(want[k].shape)}")
    with torch.no_grad():
        for i, (dense, layer) in enumerate(zip(net.dense, net.neurons)):
            p = f"neuron_layers.{i}."
            dense.weight.copy_(sd[p + "linear.weight"])
            dense.bias.copy_(sd[p + "linear.bias"])
            if isinstance(layer, ReleasedLIFLayer):
                layer.kappa_fixed.copy_(sd[p + "kappa_fixed"])
            else:
                layer.f_raw.copy_(sd[p + "f_raw"])
            m = layer.cfg.order
            if m > 0:
                layer.beta_hat.copy_(sd[p + "ap_beta_raw"])
                if m <= 2:
                    lams = [sd[p + "lam1_raw"]] + ([sd[p + "lam2_raw"]] if m == 2 else [])
                    layer.lambda_hat.copy_(torch.stack(lams))
                else:
                    layer.lambda_hat.copy_(sd[p + "ap_lam_raw"])
        net.readout.weight.copy_(sd["output.weight"])
        net.readout.bias.copy_(sd["output.bias"])


@torch.no_grad()
def evaluate(net: ft.FeedForward, x: torch.Tensor, y: torch.Tensor, batch: int = 256):
    """Logits [N, classes], accuracy, mean cross-entropy and the smallest |Ṽ − Vth| of every hidden layer
    over the examples (dropout off)."""
    net.eval()
    logits, margin = [], math.inf
    for s in range(0, x.shape[0], batch):
        h = x[s:s + batch]
        for dense, layer in zip(net.dense, net.neurons):
            spikes, v = layer(dense(h), return_voltage=True)
            margin = min(margin, float((v - layer.cfg.vth).abs().min()))
            h = spikes
        logits.append(net.logits(h))
    logits = torch.cat(logits)
    acc = float((logits.argmax(1) == y).float().mean())
    loss = float(F.cross_entropy(logits, y))
    return logits, acc, loss, margin


def load_split(data: str, name: str):
    x = torch.from_numpy(np.load(os.path.join(data, f"{name}_x.npy")))
    y = torch.from_numpy(np.load(os.path.join(data, f"{name}_y.npy")))
    return x, y


def train_one(name: str, args, seed: int, x_tr, y_tr, x_te, y_te, out: str) -> float:
    """Trains one run and writes its folder; returns the test margin of the saved weights."""
    torch.manual_seed(seed)
    classes, features = int(y_tr.max()) + 1, x_tr.shape[2]
    typ, order, learn = variant_of(name)
    net = build_net(name, args.width, features, classes, args.dropout, seed)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs, eta_min=0.0)
    cfg0 = net.neurons[0].cfg
    cap = math.log(ft.safe_target_hz(cfg0))
    # The released fit guards f* of fits networks only; a frozen f* is a buffer it does not cap.
    guard = ft.FrequencyGuard(opt, [(layer.f_raw, cap) for layer in net.neurons if learn]) if typ == "fits" else None
    n_params = sum(p.numel() for p in net.parameters() if p.requires_grad)
    config = released_config(name, args.width, args.epochs, args.lr, args.dropout, seed, classes, features, n_params)
    os.makedirs(out, exist_ok=True)
    history, best, best_epoch, log = [], -math.inf, 0, []
    gen = torch.Generator().manual_seed(seed)
    for ep in range(1, args.epochs + 1):
        net.train()
        perm = torch.randperm(x_tr.shape[0], generator=gen)
        tot, correct, batches = 0.0, 0, 0
        for s in range(0, len(perm), 128):
            idx = perm[s:s + 128]
            loss, spikes = net.loss(x_tr[idx], y_tr[idx])
            opt.zero_grad()
            loss.backward()
            guard.step() if guard is not None else opt.step()
            tot += float(loss.detach())
            batches += 1
            correct += int((net.logits(spikes[-1]).argmax(1) == y_tr[idx]).sum())
        rec = {"epoch": ep, "train_loss": tot / batches, "train_acc": correct / x_tr.shape[0],
               "lr": opt.param_groups[0]["lr"]}
        _, te_acc, _, _ = evaluate(net, x_te, y_te)
        rec["test_acc"] = te_acc
        if te_acc > best:
            best, best_epoch = te_acc, ep
            torch.save({"epoch": ep, "state": released_state_dict(net), "config": config,
                        "valid_acc": None, "test_acc": te_acc}, os.path.join(out, "best.pth"))
        sched.step()
        if guard is not None:
            rec["freq_projected"] = guard.reset_count()
        history.append(rec)
        log.append(f"Ep {ep:3d} | train {rec['train_acc'] * 100:5.2f}% loss {rec['train_loss']:.4f} | test {te_acc * 100:5.2f}%"
                   + (" *" if best_epoch == ep else ""))
    write_json(os.path.join(out, "config.json"), config)
    write_json(os.path.join(out, "metrics.json"), {"history": history})
    write_json(os.path.join(out, "summary.json"), {"selection": "test", "best_epoch": best_epoch,
                                                   "best_test_acc": best, "test_acc": best})
    with open(os.path.join(out, "train.log"), "w") as f:
        f.write("\n".join(log) + "\n")
    # The saved weights, reloaded as the released code would, give the expected logits.
    ckpt = torch.load(os.path.join(out, "best.pth"), weights_only=False)
    load_released_state_dict(net, ckpt["state"])
    logits, acc, loss, margin = evaluate(net, x_te, y_te)
    if abs(acc - ckpt["test_acc"]) > 0:
        raise SystemExit(f"{name}: reloaded accuracy {acc} differs from the saved {ckpt['test_acc']}")
    write_json(os.path.join(out, "expected.json"), {
        "order": order if typ == "fits" else 0, "epoch": ckpt["epoch"], "test_accuracy": acc, "test_loss": loss, "min_margin": margin,
        "logits": [[float(np.float32(v)) for v in row] for row in logits.tolist()],
    })
    print(f"{name} seed {seed}: best epoch {best_epoch}, test acc {acc:.4f}, min |V-Vth| {margin:.2e}")
    return margin


def write_json(path: str, obj) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def write_bad(src: str, out: str) -> None:
    """Checkpoints that `fits import` must refuse, derived from the run folder src: a state dict with a
    tensor missing, one extra, one of the wrong shape, a configuration key the released code does not
    write, a pickle of a list, and a pickle that names a class no released checkpoint holds."""
    os.makedirs(out, exist_ok=True)
    ckpt = torch.load(os.path.join(src, "best.pth"), weights_only=False)

    def save(name: str, **change) -> None:
        c = dict(ckpt)
        c.update(change)
        torch.save(c, os.path.join(out, name))

    missing = dict(ckpt["state"])
    del missing["output.bias"]
    save("missing_tensor.pth", state=missing)
    extra = dict(ckpt["state"])
    extra["neuron_layers.0.ap_beta_raw"] = torch.zeros(1, 16)
    save("extra_tensor.pth", state=extra)
    wrong = dict(ckpt["state"])
    wrong["neuron_layers.1.f_raw"] = torch.zeros(17)
    save("wrong_shape.pth", state=wrong)
    save("unknown_key.pth", config={**ckpt["config"], "ts_mix": "paper"})
    torch.save([1, 2, 3], os.path.join(out, "list.pth"))
    torch.save({"epoch": 1, "state": torch.nn.Linear(2, 2)}, os.path.join(out, "module.pth"))


def cmd_make(args) -> None:
    torch.set_num_threads(args.threads)
    x_tr, y_tr = load_split(args.data, "train")
    x_te, y_te = load_split(args.data, "test")
    names = [f"o{int(s)}" for s in args.orders.split(",") if s] + [s for s in args.baselines.split(",") if s]
    for name in names:
        variant_of(name)
    for name in names:
        for attempt in range(10):
            seed = args.seed + attempt
            margin = train_one(name, args, seed, x_tr, y_tr, x_te, y_te, os.path.join(args.out, name))
            if margin >= args.min_margin:
                break
        else:
            raise SystemExit(f"{name}: no seed gave a spike margin of at least {args.min_margin}")
    if args.bad:
        write_bad(os.path.join(args.out, f"o{args.orders.split(',')[0]}"), os.path.join(args.out, "bad"))


def read_safetensors(path: str) -> dict:
    """A safetensors file (float32 tensors) as a dict of tensors, read with numpy."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        body = f.read()
    out = {}
    for k, meta in header.items():
        if k == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            raise ValueError(f"{k}: dtype {meta['dtype']}, want F32")
        a, b = meta["data_offsets"]
        out[k] = torch.from_numpy(np.frombuffer(body[a:b], dtype="<f4").copy().reshape(meta["shape"]))
    return out


def load_exported(folder: str):
    """(state dict, config) of an exported folder: best.pth if it is there, else model.safetensors and
    config.json."""
    pth = os.path.join(folder, "best.pth")
    if os.path.exists(pth):
        ckpt = torch.load(pth, weights_only=False)
        return ckpt["state"], ckpt["config"]
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    return read_safetensors(os.path.join(folder, "model.safetensors")), config


def cmd_convert(args) -> None:
    sd, config = load_exported(args.run)
    extra = {}
    meta = os.path.join(args.run, "checkpoint.json")
    if os.path.exists(meta):
        with open(meta) as f:
            extra = json.load(f)
    torch.save({"epoch": extra.get("epoch", 0), "state": sd, "config": config,
                "valid_acc": extra.get("valid_acc"), "test_acc": extra.get("test_acc")},
               os.path.join(args.run, "best.pth"))
    print(f"wrote {os.path.join(args.run, 'best.pth')}")


def cmd_check(args) -> None:
    sd, config = load_exported(args.run)
    if config.get("neuron_type", "fits") != "fits":
        raise SystemExit(f"{args.run}: neuron_type {config.get('neuron_type')}: only fits networks are checked")
    x_te, y_te = load_split(args.data, "test")
    widths = config["hidden_dims"]
    classes, features = sd["output.weight"].shape[0], sd["neuron_layers.0.linear.weight"].shape[1]
    if widths[0] != widths[-1]:
        raise SystemExit("hidden layers of different widths are not checked")
    net = build_net(f"o{config['order']}", widths[0], features, classes, 0.0, 0)
    load_released_state_dict(net, sd)
    _, acc, loss, margin = evaluate(net, x_te, y_te)
    with open(args.expect) as f:
        want = json.load(f)
    ok = acc == want["test_acc"] and abs(loss - want["test_loss"]) <= args.tol * max(1.0, abs(want["test_loss"]))
    print(f"{args.run}: peer acc {acc:.6f} loss {loss:.6f} | fits eval acc {want['test_acc']:.6f} "
          f"loss {want['test_loss']:.6f} | min |V-Vth| {margin:.1e}: {'ok' if ok else 'MISMATCH'}")
    if not ok:
        raise SystemExit(1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--data", required=True, help="folder of go run ./peers/synthdata")
    m.add_argument("--out", required=True)
    m.add_argument("--orders", default="0,1,2")
    m.add_argument("--baselines", default="", help=f"comma-separated, of {', '.join(BASELINES)}")
    m.add_argument("--width", type=int, default=16)
    m.add_argument("--epochs", type=int, default=4)
    m.add_argument("--lr", type=float, default=1e-2)
    m.add_argument("--dropout", type=float, default=0.1)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--min-margin", type=float, default=1e-4)
    m.add_argument("--threads", type=int, default=2)
    m.add_argument("--bad", action="store_true", help="also write bad/: checkpoints fits import must refuse")
    c = sub.add_parser("check")
    c.add_argument("--run", required=True, help="folder written by fits export --format=released")
    c.add_argument("--data", required=True)
    c.add_argument("--expect", required=True, help="fits eval --json of the exported run")
    c.add_argument("--tol", type=float, default=1e-4)
    v = sub.add_parser("convert")
    v.add_argument("--run", required=True)
    args = p.parse_args()
    {"make": cmd_make, "check": cmd_check, "convert": cmd_convert}[args.cmd](args)


if __name__ == "__main__":
    main()

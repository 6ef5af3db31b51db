"""Speed of the batched engine in the papers' own regimes, against a naive per-client loop,
against opacus (per-sample clipping), against the same round written with ``torch.func`` (vmap
over the clients) and against the machine's roofline.

    python benchmarks/engine_bench.py [--repeats R] [--regime 1|2|3|4|5|all] [--threads T] [--no-studies] [--no-vmap]

What is timed on the engine side: :func:`fldp.engine.round_step` itself (client selection,
local training, clipping, uplink noise from the standard hooks ``engine.gaussian_uplink`` /
``engine.gaussian_downlink``, aggregation, server step).  Evaluation is not part of a
round (``engine.run`` evaluates between rounds), so it is not timed.

The naive baseline is the per-client loop a tutorial writes: one ``torch.nn`` module and one
``torch.optim.SGD`` optimizer per client (built once, outside the timing), global weights
copied in, a Python loop over the client's mini-batches (``zero_grad``, forward, loss,
``backward``, ``clip_grad_norm_`` for per-step clipping, ``step``), the trained weights
flattened, clipped and noised, then averaged.  It uses the same data tensors, the same batch
indices (``engine.batch_schedule`` with the engine's per-client generators, drawn inside the timed
region, as the engine does) and the same noise draws (one generator per uploading client,
``engine.generator(seed, "uplink", t, client)``, as the engine's uplink hook), and it is
checked to produce the same global model (max abs difference < 1e-4) before anything is
timed.  Regime 4 (per-sample clipping) has two baselines: a micro-batch loop (one backward
per sample, ``clip_grad_norm_``, average, step) and opacus (``GradSampleModule`` and
``DPOptimizer`` with noise multiplier 0 per client; the privacy noise is the uplink's).

The torch.func anchor (:func:`vmap_round`, "vmap") is the library way to batch the round: the
clients' parameters stacked along a leading dimension, one client's SGD step (``functional_call``
of the regime's ``nn.Module``, ``grad`` of the schedule-weighted mini-batch loss, clipping,
proximal term, update) ``vmap``-ed over the clients, then the naive loop's upload, noise and
aggregation.  Same schedule and noise; checked against the engine (< 1e-4) before timing.  A
regime it cannot write is reported as "vmap n/a (why)" on its line.

Timings are the minimum over ``--repeats`` samples (the contenders interleaved), each
sample averaging enough rounds to last ~0.1 s; the machine is shared, so the load average
and the Linux CPU pressure are printed with the results.

Everything is measured in one process on the package this script imports; to compare with an
older commit, run this same script against that commit's package (a ``git worktree`` put on
``PYTHONPATH``), as benchmarks/README.md describes.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from fldp import data as fdata, engine, models
from fldp.papers.li2021 import theory as li_theory
from fldp.papers.wei2020 import algorithm as nbafl
from fldp.papers.zhou import theory as zhou_theory

TOL = 1e-4


# -- utilities -----------------------------------------------------------------------------------
def cpu_pressure() -> Optional[float]:
    """Share of the last 10 s in which some runnable task waited for a CPU (Linux PSI), in %."""
    try:
        with open("/proc/pressure/cpu") as fh:
            return float(fh.readline().split()[1].split("=")[1])
    except (OSError, IndexError, ValueError):
        return None


def load() -> str:
    try:
        out = "load avg " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        out = "load avg n/a"
    p = cpu_pressure()
    return out + (f", cpu pressure {p:.0f}%" if p is not None else "")


def roofline_gflops(repeats: int, n: int = 2048) -> float:
    """Plain float32 matmul n x n @ n x n: best GFLOP/s over ``repeats`` (after a warm-up)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    out = torch.empty(n, n)
    torch.mm(a, b, out=out)
    best = math.inf
    for _ in range(max(3, repeats)):
        t0 = time.perf_counter()
        torch.mm(a, b, out=out)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


def best_times(fns: dict[str, Callable[[int], None]], repeats: int, target_s: float = 0.1) -> dict[str, float]:
    """Seconds per call of each ``fn(t)``: min over ``repeats`` samples, the functions
    interleaved within each sample; a sample runs each function ``inner`` times
    (``inner`` chosen from a warm-up call so that a sample lasts about ``target_s``)."""
    inner = {}
    for name, fn in fns.items():
        fn(1)  # warm-up (allocator, MKL/oneDNN kernels)
        t0 = time.perf_counter()
        fn(2)
        inner[name] = max(1, math.ceil(target_s / max(time.perf_counter() - t0, 1e-6)))
    best = {name: math.inf for name in fns}
    for r in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for i in range(inner[name]):
                fn(1 + (r * inner[name] + i) % 50)
            best[name] = min(best[name], (time.perf_counter() - t0) / inner[name])
    return best


# -- regimes -------------------------------------------------------------------------------------
@dataclass
class Regime:
    key: str
    name: str
    model: models.Model
    data: fdata.FederatedData
    cfg: engine.FLConfig
    sigma_u: float
    sigma_d: float
    make_net: Callable[[], nn.Module]
    net_layout: Callable[[torch.Tensor], list]        # flat [D] -> tensors shaped like net.parameters()
    net_flat: Callable[[nn.Module], torch.Tensor]     # net -> flat [D] (a new tensor)
    loss_fn: Callable                                 # (net output, y) -> mean loss
    sample_loss: Optional[Callable] = None            # (net output, y) -> per-sample losses [B] (vmap anchor)
    l2: float = 0.0                                   # L2 regulariser lambda/2 ||w||^2 (BinaryLogReg)
    samples_per_round: int = 0
    flops_per_sample: int = 0
    flop_formula: str = ""
    target: str = ""
    tight_clip: float = 0.0                           # a bound that binds, for the equivalence check
    nets: dict = field(default_factory=dict)

    def hooks(self):
        up = engine.gaussian_uplink(self.sigma_u)
        return up, (engine.gaussian_downlink(self.sigma_d) if self.sigma_d else None)


def _ce_none(out, y):
    return F.cross_entropy(out, y, reduction="none")


def regime_li(seed: int = 0) -> Regime:
    """Li, Chang, Chi 2020: Adult logistic regression, N=100, K=50, b=1, Q=10, G=2 per-step
    gradient clipping, Gaussian uplink noise (eq. 9), unbiased aggregation."""
    d = fdata.federated_dataset("adult", 100, "iid", seed=seed)
    f = d.x_train.shape[1]
    model = models.BinaryLogReg(in_features=f)
    K, b, Q, G, lr = 50, 1, 10, 2.0, 0.1
    cfg = engine.FLConfig(num_rounds=1, local_steps=Q, batch_size=b, lr=lr, clip=G, clip_mode="batch_grad",
                          clients_per_round=K, aggregation="unbiased", seed=seed)
    n_k = int(d.counts.min())
    q = li_theory.sampling_ratio(b=b, n_k=n_k, Q=Q)
    sigma = li_theory.sigma_eq9(eps=1.0, delta=1e-3, q=q, sensitivity_df=4 * Q * G * lr)

    def layout(w):
        return [w[:f].view(1, f), w[f:]]

    return Regime(
        "1", "li-adult-logreg", model, d, cfg, sigma, 0.0,
        make_net=lambda: nn.Linear(f, 1),
        net_layout=layout,
        net_flat=lambda net: torch.cat([net.weight.detach().reshape(-1), net.bias.detach()]),
        loss_fn=lambda out, y: F.binary_cross_entropy_with_logits(out.squeeze(-1), y.to(out.dtype)),
        sample_loss=lambda out, y: F.binary_cross_entropy_with_logits(out.squeeze(-1), y.to(out.dtype),
                                                                      reduction="none"),
        l2=model.l2,
        samples_per_round=K * Q * b,
        flops_per_sample=4 * (f + 1),
        flop_formula=f"4*(F+1) per sample, F={f} (fwd 2(F+1) + grad 2(F+1)); K*Q*b samples",
        target=">= 20x naive", tight_clip=1.0)


def regime_zhou(seed: int = 0) -> Regime:
    """Zhou et al.: MNIST multinomial logistic regression (7,840 params, no bias), N=10, one
    gradient step per round on a batch of 600 of each client's 6,000 samples (1 % of the
    60,000 training samples), l2 gradient clip 10, Gaussian noise (Thm 2), unbiased aggregation."""
    d = fdata.federated_dataset("mnist", 10, "iid", seed=seed)
    model = models.MultinomialLogReg()
    n_k = int(d.counts.min())
    b = len(d.y_train) // 100  # 600
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, batch_size=b, lr=0.1, clip=10.0, clip_mode="batch_grad",
                          aggregation="unbiased", seed=seed)
    sigma = zhou_theory.gaussian_sigma(eps=1.0, delta=1e-5, b=10, T=100, N=10, d_i=n_k, xi2=10.0, c2=1.0)

    def layout(w):
        return [w.view(784, 10).t()]

    return Regime(
        "2", "zhou-mnist-logreg", model, d, cfg, sigma, 0.0,
        make_net=lambda: nn.Linear(784, 10, bias=False),
        net_layout=layout,
        net_flat=lambda net: net.weight.detach().t().reshape(-1),
        loss_fn=F.cross_entropy, sample_loss=_ce_none,
        samples_per_round=d.num_clients * b,
        flops_per_sample=4 * 7840,
        flop_formula="4*7840 per sample (fwd 2*784*10 + weight grad 2*784*10); N*b samples",
        target=">= 5x naive", tight_clip=2.0)


def regime_wei(seed: int = 0, client_chunk: Optional[int] = None) -> Regime:
    """Wei et al. 2020 (NbAFL): MLP 784-256-10 on full MNIST, N=50, one local epoch of
    batches of 50 (24 steps), prox mu=0.01, parameter clipping C=20, uplink and downlink noise."""
    d = fdata.federated_dataset("mnist", 50, "iid", seed=seed)
    model = models.MLP()
    cfg = engine.FLConfig(num_rounds=1, local_epochs=1, batch_size=50, lr=0.05, mu=0.01, clip=20.0,
                          clip_mode="params", client_chunk=client_chunk, seed=seed)
    cal = nbafl.calibrate(eps=60.0, delta=0.01, C=20.0, L=1, N=50, T=25, m=d.m)
    a, h, o = 784, 256, 10

    def layout(w):
        p = model.unflatten(w[None])
        return [p["w1"][0].t(), p["b1"][0], p["w2"][0].t(), p["b2"][0]]

    def flat(net):
        return torch.cat([net[0].weight.detach().t().reshape(-1), net[0].bias.detach(),
                          net[2].weight.detach().t().reshape(-1), net[2].bias.detach()])

    return Regime(
        "3", "wei-mnist-mlp", model, d, cfg, cal.sigma_U, cal.sigma_D,
        make_net=lambda: nn.Sequential(nn.Linear(a, h), nn.ReLU(), nn.Linear(h, o)),
        net_layout=layout, net_flat=flat, loss_fn=F.cross_entropy, sample_loss=_ce_none,
        samples_per_round=int(d.counts.sum()),
        flops_per_sample=2 * (a * h + h * o) + 2 * (a * h + h * o) + 2 * h * o,
        flop_formula="fwd 2(784*256+256*10) + weight grad 2(784*256+256*10) + hidden backprop "
                     "2*256*10 = 818,176 per sample; one epoch of all 60,000 samples",
        target=">= naive and >= 40% of roofline", tight_clip=5.0)


def regime_persample(seed: int = 0) -> Regime:
    """Zhou's setting with DP-SGD's per-sample clipping: MNIST, N=10 clients of 6,000 rows,
    one step per round on a 1 % batch (``sampling="fraction"``, q = 0.01: 60 rows), the
    7,840-parameter multinomial logistic regression, every sample's gradient clipped to l2
    norm 10 before averaging (``clip_mode="sample_grad"``), Gaussian uplink noise, unbiased
    aggregation.  MNIST rows have l2 norm ~ 9-40 (normalised pixels), so per-sample gradient
    norms ||x_b|| ||r_b|| are ~ 10-40 near w = 0 and the bound 10 clips most samples."""
    d = fdata.federated_dataset("mnist", 10, "iid", seed=seed)
    model = models.MultinomialLogReg()
    n_k = int(d.counts.min())
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, sampling="fraction", sample_rate=0.01, lr=0.1,
                          clip=10.0, clip_mode="sample_grad", aggregation="unbiased", seed=seed)
    sigma = zhou_theory.gaussian_sigma(eps=1.0, delta=1e-5, b=10, T=100, N=10, d_i=n_k, xi2=10.0, c2=1.0)
    rg = regime_zhou(seed)
    return Regime(
        "4", "per-sample", model, d, cfg, sigma, 0.0,
        make_net=rg.make_net, net_layout=rg.net_layout, net_flat=rg.net_flat, loss_fn=F.cross_entropy,
        sample_loss=_ce_none, samples_per_round=d.num_clients * round(0.01 * n_k),
        flops_per_sample=4 * 7840 + 2 * 7840,
        flop_formula="4*7840 per sample (fwd + weight grad) + 2*7840 (per-sample norm / clip); N*60 samples",
        target=">= 20x naive micro-batch loop and >= opacus", tight_clip=2.0)


def regime_cnn(seed: int = 0) -> Regime:
    """The adaptive CLT noise scheme's round (Secs. 6.3, 7.1) at the chapters' size: MNIST, 20,000
    training images over 100 clients (200 each), K = 15 per round, 5 local epochs of batches of 128
    (lr 0.1), the narrowed CNN of the chapters (5x5 convolutions of 8 and 16 channels, each with ReLU
    and 2x2 max-pooling, 64 hidden units, 10 outputs: 20,522 parameters), updates uploaded and
    averaged with weights.  The scheme's noise is left out (sigma 0) so that the naive loop matches
    the engine to 1e-4; it is one normal draw per parameter and upload, noise next to the training."""
    from fldp.papers.adaptive_noise import algorithm as an

    d = fdata.federated_dataset("mnist", 100, "iid", seed=seed, subsample=20_000)
    c1, c2, hid = 8, 16, 64
    model = models.CNN((c1, c2), hid)
    cfg = an.config(scheme="regular", rounds=1, K=15, seed=seed)

    def layout(w):
        p = model.unflatten(w[None])
        return [p["conv1"][0], p["cb1"][0], p["conv2"][0], p["cb2"][0], p["fc1"][0].t(), p["fb1"][0],
                p["fc2"][0].t(), p["fb2"][0]]

    def flat(net):
        conv1, conv2, fc1, fc2 = net[1], net[4], net[8], net[10]
        return torch.cat([conv1.weight.detach().reshape(-1), conv1.bias.detach(), conv2.weight.detach().reshape(-1),
                          conv2.bias.detach(), fc1.weight.detach().t().reshape(-1), fc1.bias.detach(),
                          fc2.weight.detach().t().reshape(-1), fc2.bias.detach()])

    a1, a2 = 24 * 24, 8 * 8  # output pixels of the two convolutions
    conv1, conv2, fcs = 2 * 25 * c1 * a1, 2 * 25 * c1 * c2 * a2, 2 * (16 * 16 * hid + hid * 10)
    return Regime(
        "5", "adaptive-mnist-cnn", model, d, cfg, 0.0, 0.0,
        make_net=lambda: nn.Sequential(nn.Unflatten(1, (1, 28, 28)), nn.Conv2d(1, c1, 5), nn.ReLU(), nn.MaxPool2d(2),
                                       nn.Conv2d(c1, c2, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                       nn.Linear(16 * c2, hid), nn.ReLU(), nn.Linear(hid, 10)),
        net_layout=layout, net_flat=flat, loss_fn=F.cross_entropy, sample_loss=_ce_none,
        samples_per_round=15 * cfg.local_epochs * int(d.counts.min()),
        flops_per_sample=3 * (conv1 + conv2 + fcs) - conv1,
        flop_formula="forward 2*25*(8*576 + 8*16*64) + 2(256*64 + 64*10) = 674,048; backward twice that "
                     "less conv1's input gradient: 1,791,744 per sample; K*epochs*200 samples",
        target=">= naive; roofline share reported", tight_clip=0.0)


# -- one round, engine ----------------------------------------------------------------------------
def engine_round(rg: Regime, w: torch.Tensor, t: int, cfg: Optional[engine.FLConfig] = None) -> torch.Tensor:
    """Round t of the engine: ``engine.round_step`` from a state at round t-1 holding w."""
    up, down = rg.hooks()
    state, _ = engine.round_step(rg.model, rg.data, cfg or rg.cfg, engine.State(t - 1, w),
                                 uplink=up, downlink=down)
    return state.params


# -- one round, naive per-client loop --------------------------------------------------------------
def _net(rg: Regime, cid: int, backend: str, lr: float):
    key = (backend, cid)
    if key not in rg.nets:
        net = rg.make_net()
        if backend == "opacus":
            from opacus import GradSampleModule
            from opacus.optimizers import DPOptimizer

            net = GradSampleModule(net, loss_reduction="mean")
            opt = DPOptimizer(torch.optim.SGD(net.parameters(), lr=lr), noise_multiplier=0.0,
                              max_grad_norm=rg.cfg.clip, expected_batch_size=1, loss_reduction="mean")
        else:
            opt = torch.optim.SGD(net.parameters(), lr=lr)
        rg.nets[key] = (net, opt)
    return rg.nets[key]


def naive_round(rg: Regime, w: torch.Tensor, t: int, backend: str = "loop") -> torch.Tensor:
    """A tutorial's FL round: a Python loop over clients, one nn.Module + SGD optimizer each.

    ``backend``: "loop" (per-step clipping of the mini-batch gradient, if any, by
    ``clip_grad_norm_``; for clip_mode "sample_grad" one backward per sample, each clipped by
    ``clip_grad_norm_``, then averaged) or "opacus" (per-sample gradients by
    ``GradSampleModule``, clipped and averaged by ``DPOptimizer`` without noise)."""
    cfg, data = rg.cfg, rg.data
    selected = engine.select_clients(cfg, data.num_clients, t)
    counts = data.counts[selected]
    schedule = list(engine.batch_schedule(counts, cfg, engine.batch_generators(cfg, selected, t)))
    steps = len(schedule)
    idx = [i for i, _ in schedule]                        # per step [K, B_s] (the last batch may be smaller)
    valid = [m != 0 for _, m in schedule]
    full = all(bool(v.all()) for v in valid)
    lrs = [cfg.learning_rate(s) for s in range(steps)]
    per_sample = cfg.clip_mode == "sample_grad"
    with torch.no_grad():
        global_tensors = [g.contiguous() for g in rg.net_layout(w)]
    uploads = []
    for k, cid in enumerate(selected.tolist()):
        net, opt = _net(rg, cid, backend, lrs[0])
        params = [p for p in net.parameters()]
        with torch.no_grad():
            for p, g in zip(params, global_tensors):
                p.copy_(g)
        xk, yk = data.client(cid)
        for s in range(steps):
            rows = idx[s][k] if full else idx[s][k][valid[s][k]]
            if len(rows) == 0:
                continue
            opt.param_groups[0]["lr"] = lrs[s]
            opt.zero_grad()
            if backend == "opacus":
                opt.expected_batch_size = len(rows)
                rg.loss_fn(net(xk[rows]), yk[rows]).backward()
            elif per_sample:  # micro-batches of one sample
                acc = [torch.zeros_like(p) for p in params]
                for r in rows.tolist():
                    opt.zero_grad()
                    rg.loss_fn(net(xk[r:r + 1]), yk[r:r + 1]).backward()
                    nn.utils.clip_grad_norm_(params, cfg.clip)
                    for a, p in zip(acc, params):
                        a.add_(p.grad)
                for a, p in zip(acc, params):
                    p.grad = a.div_(len(rows))
            else:
                rg.loss_fn(net(xk[rows]), yk[rows]).backward()
            if rg.l2 or cfg.mu:
                with torch.no_grad():
                    for p, g in zip(params, global_tensors):
                        if rg.l2:
                            p.grad.add_(p, alpha=rg.l2)
                        if cfg.mu:
                            p.grad.add_(p - g, alpha=cfg.mu)
            if cfg.clip_mode == "batch_grad":
                nn.utils.clip_grad_norm_(params, cfg.clip)
            opt.step()
        wk = rg.net_flat(net._module if backend == "opacus" else net)
        if cfg.clip_mode == "params":
            wk = wk / max(1.0, float(wk.norm()) / cfg.clip)
        uploads.append(wk)
    return upload_and_aggregate(rg, torch.stack(uploads), selected, t)


def upload_and_aggregate(rg: Regime, uploads: torch.Tensor, selected: torch.Tensor, t: int) -> torch.Tensor:
    """The end of a hand-written round (naive loop and vmap anchor): client ``c``'s (clipped)
    upload ``uploads[k]`` gets ``sigma_u * randn(D, generator=engine.generator(seed, "uplink", t, c))``,
    exactly the engine's uplink draw, then the uploads are aggregated as the config says, then the
    downlink noise (NbAFL) is added."""
    cfg, data = rg.cfg, rg.data
    uploads = torch.stack([u + rg.sigma_u * torch.randn(u.shape, generator=engine.generator(cfg.seed, "uplink", t, cid))
                           for u, cid in zip(uploads, selected.tolist())])
    p = data.weights[selected]
    if cfg.aggregation == "weighted":
        new = (p[:, None] * uploads).sum(0) / p.sum()
    elif cfg.aggregation == "unbiased":
        new = (data.num_clients / len(selected)) * (p[:, None] * uploads).sum(0)
    else:
        new = uploads.mean(0)
    if rg.sigma_d:
        new = new + rg.sigma_d * torch.randn(new.shape, generator=engine.generator(cfg.seed, "downlink", t))
    return new


# -- one round, torch.func (vmap over clients) -----------------------------------------------------
def vmap_unsupported(rg: Regime) -> Optional[str]:
    """Why :func:`vmap_round` cannot write ``rg``'s round (None: it can).  The anchor covers what the
    naive loop covers: uploads of parameters (or updates averaged with weights, server lr 1), fixed
    l2 clipping bounds, no dropout."""
    cfg = rg.cfg
    if cfg.clip_mode is not None and cfg.clip_norm != "l2":
        return f"clip_norm {cfg.clip_norm!r}"
    if cfg.clip_mode not in (None, "batch_grad", "sample_grad", "params"):
        return f"clip_mode {cfg.clip_mode!r}"
    if not isinstance(cfg.clip, (int, float, type(None))):
        return f"clip {cfg.clip!r}"
    if cfg.upload == "gradient" or (cfg.upload == "update" and cfg.aggregation != "weighted"):
        return f"upload {cfg.upload!r} with aggregation {cfg.aggregation!r}"
    if cfg.dropout or callable(cfg.server_lr) or cfg.server_lr != 1.0:
        return "dropout or a server learning rate"
    return None


def _vmap_setup(rg: Regime, dim: int) -> dict:
    """Built once per regime (outside the timing, as the naive loop's modules): the module whose
    parameters are swapped in by ``functional_call``, its parameter names, where each parameter
    element sits in the engine's flat vector, and the vmapped client step."""
    from torch.func import functional_call, grad, vmap

    key = ("vmap", dim)
    if key in rg.nets:
        return rg.nets[key]
    net = rg.make_net()
    names = [n for n, _ in net.named_parameters()]
    # net_layout is a permutation of the flat vector's coordinates: send the coordinates' own
    # indices through it to learn where each parameter element goes (float64: exact up to 2^53)
    pos = torch.cat([q.reshape(-1) for q in rg.net_layout(torch.arange(dim, dtype=torch.float64))]).long()
    assert torch.equal(pos.sort().values, torch.arange(dim)), "net_layout is not a permutation"
    cfg = rg.cfg
    if rg.sample_loss is not None:
        sample_loss = rg.sample_loss
    else:  # the mean loss of each sample alone
        sample_loss = vmap(lambda o, y: rg.loss_fn(o[None], y[None]))
    l2, mu = rg.l2, cfg.mu
    clip_mode = cfg.clip_mode
    clip = float(cfg.clip) if cfg.clip is not None else None

    def weighted_loss(p, x, y, wts):  # one client: sum_b wts_b loss_b (+ l2/2 ||p||^2)
        out = (wts * sample_loss(functional_call(net, p, (x,)), y)).sum()
        if l2 and clip_mode != "sample_grad":
            out = out + 0.5 * l2 * sum((v * v).sum() for v in p.values())
        return out

    def one_sample_loss(p, x, y):  # one sample of one client
        return sample_loss(functional_call(net, p, (x[None],)), y[None]).sum()

    def norm(g: dict) -> torch.Tensor:
        return torch.sqrt(sum((v * v).sum() for v in g.values()))

    def client_step(p, p0, x, y, wts, lr):
        """One SGD step of one client (vmapped over the clients); ``lr`` 0 for a client whose
        epoch is over (all its weights 0), as the engine leaves it."""
        if clip_mode == "sample_grad":
            per = vmap(grad(one_sample_loss), in_dims=(None, 0, 0))(p, x, y)       # {name: [B, ...]}
            nb = torch.sqrt(sum((v * v).flatten(1).sum(1) for v in per.values()))  # [B]
            c = wts * torch.clamp(clip / nb.clamp_min(1e-30), max=1.0)
            g = {n: torch.tensordot(c, v, dims=1) for n, v in per.items()}
            if l2:
                g = {n: v + l2 * p[n] for n, v in g.items()}
        else:
            g = grad(weighted_loss)(p, x, y, wts)
            if clip_mode == "batch_grad":
                f = torch.clamp(norm(g) / clip, min=1.0)
                g = {n: v / f for n, v in g.items()}
        if mu:  # the proximal pull mu (p - p0), after clipping (as the engine)
            g = {n: v + mu * (p[n] - p0[n]) for n, v in g.items()}
        return {n: p[n] - lr * g[n] for n in p}

    rg.nets[key] = out = {"names": names, "pos": pos, "step": vmap(client_step)}
    return out


def vmap_round(rg: Regime, w: torch.Tensor, t: int) -> torch.Tensor:
    """The round as a careful PyTorch user writes it batched with ``torch.func``: the K clients'
    parameters stacked along a leading dimension (a dict of ``[K, ...]`` tensors), one client's SGD
    step (``functional_call`` of the regime's ``nn.Module``, ``grad`` of its weighted mini-batch
    loss, clipping, proximal term, update) ``vmap``-ed over the clients, the stacked parameters
    flattened into uploads, clipped (``params``), noised and aggregated as :func:`naive_round`.

    Same schedule as the engine and the naive loop (``engine.select_clients``, ``batch_schedule``
    with ``batch_generators``, drawn in the timed region); a step's loss weights its samples by the
    schedule's weights (1/batch size on valid rows, 0 on padding), so unequal batches and clients
    whose epoch is over (learning rate 0 for them) give the engine's numbers.  Per-sample clipping:
    ``vmap(grad)`` over the samples inside the client step (per-sample gradients, each clipped,
    then the weighted sum)."""
    why = vmap_unsupported(rg)
    if why is not None:
        raise NotImplementedError(f"regime {rg.key}: the vmap anchor does not write {why}")
    cfg, data = rg.cfg, rg.data
    setup = _vmap_setup(rg, w.numel())
    names, pos, step = setup["names"], setup["pos"], setup["step"]
    selected = engine.select_clients(cfg, data.num_clients, t)
    counts = data.counts[selected]
    k = len(selected)
    schedule = engine.batch_schedule(counts, cfg, engine.batch_generators(cfg, selected, t))
    first, last = data.offsets[selected][:, None], (counts - 1)[:, None]
    with torch.no_grad():
        anchor = {n: v.expand(k, *v.shape) for n, v in zip(names, rg.net_layout(w))}
        params = {n: v.contiguous() for n, v in anchor.items()}
        for s, (idx, wts) in enumerate(schedule):
            active = (wts != 0).any(dim=1)
            if not bool(active.any()):
                continue
            rows = first + torch.minimum(idx, last)              # padding reads the client's last row (weight 0)
            lr = cfg.learning_rate(s) * active.to(w.dtype)       # [K]
            params = step(params, anchor, data.x_train[rows], data.y_train[rows], wts.to(w.dtype), lr)
        flat = torch.empty(k, w.numel(), dtype=w.dtype)
        flat[:, pos] = torch.cat([params[n].reshape(k, -1) for n in names], dim=1)
        if cfg.clip_mode == "params":
            flat = flat / torch.clamp(torch.linalg.vector_norm(flat, dim=1, keepdim=True) / cfg.clip, min=1.0)
    return upload_and_aggregate(rg, flat, selected, t)


# -- checks and measurements ----------------------------------------------------------------------
def start_params(rg: Regime) -> torch.Tensor:
    w = rg.model.init(engine.generator(rg.cfg.seed, "init"))
    if not w.abs().sum():  # logistic regressions start at 0: move off it so clipping is exercised
        w = 0.01 * torch.randn(w.shape, generator=torch.Generator().manual_seed(1))
    return w


def baselines(rg: Regime) -> list:
    return ["loop", "opacus"] if rg.cfg.clip_mode == "sample_grad" else ["loop"]


def clipped_share(rg: Regime, w: torch.Tensor) -> float:
    """Share of round 1's samples whose gradient norm exceeds the per-sample bound."""
    cfg, data = rg.cfg, rg.data
    sel = engine.select_clients(cfg, data.num_clients, 1)
    idx, _ = next(engine.batch_schedule(data.counts[sel], cfg, engine.batch_generators(cfg, sel, 1)))
    x, y = data.gather(sel, idx)
    r = models._softmax_residual(rg.model.forward(w.expand(len(sel), -1), x), y)
    norms = torch.linalg.vector_norm(x, dim=-1) * torch.linalg.vector_norm(r, dim=-1)
    return float((norms > cfg.clip).float().mean())


def check(rg: Regime) -> float:
    """Naive loop(s) and engine.round_step agree on one round, with the regime's clipping
    bound (which may not bind at the start) and with a bound that does; returns the largest
    max abs difference."""
    w = start_params(rg)
    worst = 0.0
    for clip in (rg.cfg.clip, rg.tight_clip) if rg.tight_clip else (rg.cfg.clip,):
        sub = Regime(**{**rg.__dict__, "cfg": engine.with_config(rg.cfg, clip=clip), "nets": {}})
        a = engine_round(sub, w, 1)
        assert float((a - w).abs().max()) > 1e-3, f"regime {rg.key}: the round did not move the model"
        for backend in baselines(rg):
            d = float((a - naive_round(sub, w, 1, backend)).abs().max())
            assert d < TOL, f"regime {rg.key}, clip {clip}: engine and {backend} differ by {d:.3g}"
            worst = max(worst, d)
    if not rg.tight_clip:  # a regime without clipping (5): nothing more to compare
        return worst
    # the tight bound really changes the result, so the clipping paths were compared
    loose = engine_round(rg, w, 1)
    assert float((loose - a).abs().max()) > 1e-4, f"regime {rg.key}: clip {rg.tight_clip} did not bind"
    return worst


def check_vmap(rg: Regime) -> float:
    """The vmap anchor and engine.round_step agree on one round (< TOL), with the regime's clipping
    bound and with the binding one; returns the largest max abs difference.  Raises
    NotImplementedError when the anchor cannot write the regime's round."""
    w = start_params(rg)
    worst = 0.0
    for clip in (rg.cfg.clip, rg.tight_clip) if rg.tight_clip else (rg.cfg.clip,):
        sub = Regime(**{**rg.__dict__, "cfg": engine.with_config(rg.cfg, clip=clip), "nets": {}})
        d = float((engine_round(sub, w, 1) - vmap_round(sub, w, 1)).abs().max())
        assert d < TOL, f"regime {rg.key}, clip {clip}: engine and the vmap anchor differ by {d:.3g}"
        worst = max(worst, d)
    return worst


def measure(rg: Regime, repeats: int, roof: float, vmap: bool = True) -> dict:
    """Seconds per round of the engine, the naive loop (and opacus, per-sample clipping) and, with
    ``vmap``, the torch.func anchor (``r["vmap"]``; ``r["vmap_na"]``: why not, if it cannot)."""
    diff = check(rg)
    w = start_params(rg)
    fns = {"engine": lambda t: engine_round(rg, w, t)}
    for backend in baselines(rg):
        fns[backend] = lambda t, backend=backend: naive_round(rg, w, t, backend)
    vmap_na, vdiff = None, None
    if vmap:
        try:
            vdiff = check_vmap(rg)
            fns["vmap"] = lambda t: vmap_round(rg, w, t)
        except (NotImplementedError, RuntimeError) as e:  # not expressible with torch.func: say so
            vmap_na = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
    best = best_times(fns, repeats)
    flops = rg.samples_per_round * rg.flops_per_sample
    out = {"engine": best["engine"], "naive": best["loop"], "speedup": best["loop"] / best["engine"],
           "roof_pct": 100 * flops / best["engine"] / 1e9 / roof, "gflop": flops / 1e9, "diff": diff}
    if "opacus" in best:
        out["opacus"] = best["opacus"]
        out["clipped"] = clipped_share(rg, w)
    if "vmap" in best:
        out["vmap"], out["vmap_diff"] = best["vmap"], vdiff
    elif vmap_na is not None:
        out["vmap_na"] = vmap_na
    return out


def _vmap_cols(r: dict) -> tuple[str, str]:
    """The vmap column and its ratio (empty when the anchor was not run)."""
    if "vmap" in r:
        return f", vmap {r['vmap']:.4g} s", f", vs vmap {r['vmap'] / r['engine']:.1f}x"
    if "vmap_na" in r:
        return f", vmap n/a ({r['vmap_na']})", ""
    return "", ""


def line(rg: Regime, r: dict) -> str:
    """``<regime>: engine <s> s, naive <s> s[, opacus <s> s][, vmap <s> s], speed-up <x>x[, vs opacus
    <y>x][, vs vmap <z>x][, <p>% of roofline]`` (vs X: X's time over the engine's)."""
    vcol, vratio = _vmap_cols(r)
    if "opacus" in r:
        return (f"{rg.name}: engine {r['engine']:.4g} s, naive {r['naive']:.4g} s, opacus {r['opacus']:.4g} s"
                f"{vcol}, speed-up {r['speedup']:.1f}x, vs opacus {r['opacus'] / r['engine']:.1f}x{vratio}")
    return (f"{rg.name}: engine {r['engine']:.4g} s, naive {r['naive']:.4g} s{vcol}, "
            f"speed-up {r['speedup']:.1f}x{vratio}, {r['roof_pct']:.1f}% of roofline")


def chunk_study(rg: Regime, repeats: int, roof: float, chunks=(1, 2, 4, 8, 50)) -> dict:
    w = start_params(rg)
    ref = engine_round(rg, w, 1)
    cfgs = {c: engine.with_config(rg.cfg, client_chunk=c) for c in chunks}
    for c, cfg in cfgs.items():  # the result does not depend on the chunk size
        assert float((engine_round(rg, w, 1, cfg) - ref).abs().max()) < TOL
    fns = {c: (lambda t, cfg=cfg: engine_round(rg, w, t, cfg)) for c, cfg in cfgs.items()}
    best = best_times(fns, repeats)
    flops = rg.samples_per_round * rg.flops_per_sample
    return {c: (s, 100 * flops / s / 1e9 / roof) for c, s in best.items()}


def sweep_study(rg: Regime, repeats: int, runs: int = 4) -> dict:
    """``runs`` runs of a sweep (different noise levels) as ``runs`` rounds of K clients
    (``round_step`` each), or as one local_train call over runs*K client rows (each run keeps
    its own global model; noise from the same per-client generators)."""
    cfg, model, data = rg.cfg, rg.model, rg.data
    w = start_params(rg)
    ws = w.expand(runs, -1).clone()                          # one global model per run
    sigmas = [rg.sigma_u * (1 + i) for i in range(runs)]     # e.g. 4 eps values

    def separate(t):
        out = []
        for i in range(runs):
            sub = Regime(**{**rg.__dict__, "sigma_u": sigmas[i]})
            out.append(engine_round(sub, ws[i], t))
        return torch.stack(out)

    def batched(t):
        selected = engine.select_clients(cfg, data.num_clients, t)
        k = len(selected)
        clients = selected.repeat(runs)
        start = ws.repeat_interleave(k, dim=0)               # [runs*K, D]
        up = engine.local_train(model, start, data, clients, cfg, t)
        if cfg.clip_mode == "params":
            up = engine.clip_rows(up, cfg.clip, cfg.clip_norm)
        sig = torch.tensor(sigmas).repeat_interleave(k)
        noise = torch.stack([torch.randn(up.shape[1], generator=engine.generator(cfg.seed, "uplink", t, int(c)))
                             for c in clients])
        up = up + sig[:, None] * noise
        p = data.weights[selected]
        scale = data.num_clients / k if cfg.aggregation == "unbiased" else 1 / p.sum()
        return scale * torch.einsum("k,rkd->rd", p, up.view(runs, k, -1))

    best = best_times({"separate": separate, "batched": batched}, repeats)
    return {"runs": runs, "rows": runs * len(engine.select_clients(cfg, data.num_clients, 1)), **best}


# -- main --------------------------------------------------------------------------------------------
def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="timing samples per measurement (min is kept)")
    ap.add_argument("--regime", choices=["1", "2", "3", "4", "5", "all"], default="all")
    ap.add_argument("--no-studies", action="store_true",
                    help="skip the client_chunk and sweep studies")
    ap.add_argument("--no-vmap", action="store_true",
                    help="skip the torch.func anchor (vmap over clients of grad of functional_call)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default: torch's choice; 1 is steadier on a busy machine)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    t_start = time.perf_counter()
    torch.manual_seed(0)
    roof = roofline_gflops(args.repeats)
    print(f"# fldp engine benchmark  {time.strftime('%Y-%m-%d %H:%M')}  {platform.node()}  "
          f"{platform.processor() or platform.machine()}")
    print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"roofline {roof:.1f} GFLOP/s (float32 2048x2048 @ 2048x2048, best of {max(3, args.repeats)}), "
          f"{load()}, repeats {args.repeats}")
    p = cpu_pressure()
    if (p if p is not None else 100 * os.getloadavg()[0] / (os.cpu_count() or 1)) > 10:
        print(f"# WARNING: the machine is busy ({load()}): timings are inflated, with more than one "
              f"thread badly so (OpenMP threads wait for descheduled peers); --threads 1 is steadier")
    wanted = ["1", "2", "3", "4", "5"] if args.regime == "all" else [args.regime]
    builders = {"1": regime_li, "2": regime_zhou, "3": regime_wei, "4": regime_persample, "5": regime_cnn}
    results, regimes = {}, {}
    for key in wanted:
        rg = builders[key]()
        regimes[key], results[key] = rg, measure(rg, args.repeats, roof, vmap=not args.no_vmap)
        print(line(rg, results[key]), flush=True)
    print(f"# seconds per round (min over {args.repeats} samples, contenders interleaved); "
          f"round = engine.round_step (selection + local training + clipping + noise + aggregation), "
          f"no evaluation; {load()}")
    for key in wanted:
        rg, r = regimes[key], results[key]
        extra = ""
        if "opacus" in r:
            extra = (f"; per-sample clip {rg.cfg.clip} clips {100 * r['clipped']:.0f}% of round 1's samples; "
                     f"{r['roof_pct']:.1f}% of roofline")
        print(f"#   {rg.name}: target {rg.target}; {r['gflop'] * 1e3:.3g} MFLOP/round "
              f"[{rg.flop_formula}]; |engine - naive| = {r['diff']:.1e} (< {TOL}, "
              + (f"also with a binding clip {rg.tight_clip})" if rg.tight_clip else "no clipping in this regime)")
              + (f"; |engine - vmap| = {r['vmap_diff']:.1e}" if "vmap" in r else "")
              + extra)
    if not args.no_studies:
        if "3" in wanted:
            cs = chunk_study(regimes["3"], max(2, min(args.repeats, 3)), roof)
            default = engine.client_chunk(regimes["3"].model)
            best = min(cs, key=lambda c: cs[c][0])
            print(f"# client_chunk (regime 3, default {default}): "
                  + ", ".join(f"{c}: {s:.3f} s ({p:.0f}%)" for c, (s, p) in cs.items())
                  + f"; best {best}; {load()}", flush=True)
        for key in [k for k in ("1", "2") if k in wanted]:
            sw = sweep_study(regimes[key], args.repeats)
            print(f"# sweep batching (regime {key}): {sw['runs']} runs as {sw['runs']} separate rounds "
                  f"{sw['separate'] * 1e3:.2f} ms, as one local_train of {sw['rows']} rows "
                  f"{sw['batched'] * 1e3:.2f} ms, gain {sw['separate'] / sw['batched']:.2f}x; {load()}")
    print(f"# {load()} at the end; total {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()

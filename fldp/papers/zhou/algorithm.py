"""FedSGD-DPC, FedSGD with DP on clients (Zhou et al., Algorithm 1), on the shared engine: each
round b of N clients are queried, each replies one local gradient at the broadcast model with
per-sample clipping to xi_1 in l1 (Laplace, Assumption 1) or xi_2 in l2 (Gaussian, Assumption 2)
and the noise of Theorem 1 or Theorem 2 (eq. (5)), and the server steps with
(N/b) sum_i (d_i/d) (g_i + w_i) at a decaying learning rate (eq. (3)-(4)).  :func:`config` is
the engine configuration (its docstring says how each step of Algorithm 1 is read),
:func:`calibrate` the noise under the paper's rule or the accountant's and what a run really
spends (:class:`Calibration`), :func:`uplink` the reply noise, :func:`run` a whole run and
:func:`femnist_cnn` the paper's FEMNIST model.
"""
from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from fldp import accounting, engine, validate
from fldp.data import FederatedData
from fldp.models import CNN, Model
from fldp.papers.zhou import theory as th

__all__ = [
    "MECHANISMS", "RULES", "SAMPLERS", "DEFAULT_XI", "DEFAULT_Q", "Calibration", "femnist_cnn",
    "replies", "calibrate", "DecayingRate", "config", "uplink", "run", "run_many"
]

MECHANISMS = ("laplace", "gaussian")
RULES = ("paper", "accountant")
SAMPLERS = ("round_robin", "uniform")
DEFAULT_XI = {"laplace": 300.0, "gaussian": 10.0}   # Sec. VII-A3, MNIST
DEFAULT_Q = {"laplace": 1.0, "gaussian": 0.01}      # footnote 4; Sec. VII-A3


@dataclass(frozen=True)
class Calibration:
    """The noise of one FedSGD-DPC run and what it really spends.

    ``scale`` is the per-coordinate noise on one reply (the mean gradient): the Laplace
    scale or the Gaussian std; ``sensitivity`` one reply's l1 (Laplace, replace-one:
    2 xi_1 / d_i) or l2 (Gaussian, add/remove of a Poisson-sampled row: xi_2 / (q d_i))
    sensitivity; both for the smallest client (the largest noise).  ``replies_assumed`` is
    what the noise was set for; ``replies_max`` what the most-queried client makes.
    ``eps_run`` is that client's whole-run eps at ``delta`` from the accountant (PLD);
    for the Laplace mechanism ``eps_pure`` is its pure eps (basic composition, exact for
    pure DP), the currency of Theorem 1.
    """

    mechanism: str
    rule: str
    eps: float
    delta: float
    N: int
    b: int
    T: int
    q: float
    xi: float
    d_i: int
    replies_assumed: float
    replies_max: int
    scale: float
    sensitivity: float
    c2: Optional[float]
    eps_run: float
    eps_pure: Optional[float] = None

    @property
    def noise_multiplier(self) -> float:
        return self.scale / self.sensitivity

    def as_dict(self) -> dict:
        return {**asdict(self), "noise_multiplier": self.noise_multiplier}


def femnist_cnn(**overrides) -> CNN:
    """The paper's FEMNIST CNN (Sec. VII-A): 110,526 parameters = conv 1->16 (416) + conv
    16->32 (12,832), 5x5 'same', each with ReLU and 2x2 max-pooling, then fully connected
    7*7*32 -> 62 (1,569 x 62 = 97,278).  Keyword arguments override its settings."""
    kw = dict(channels=(16, 32), hidden=None, num_classes=62, kernel_size=5, padding="same")
    return CNN(**{**kw, **overrides})


def replies(*, N: int, b: int, T: int, sampler: str = "round_robin") -> np.ndarray:
    """How many times each of the N clients replies in T rounds of b (round robin: exact;
    uniform: the expectation bT/N, which a random schedule exceeds for some clients)."""
    N = validate.integer("N", N, 1)
    b = validate.integer("b", b, 1, N)
    T = validate.integer("T", T, 1)
    validate.choice("sampler", sampler, SAMPLERS)
    if sampler == "uniform":
        return np.full(N, b * T / N)
    return np.bincount((np.arange(b * T)) % N, minlength=N)


def _client_event(mechanism: str, z: float, q: float, count: int):
    one = accounting.laplace(noise_multiplier=z) if mechanism == "laplace" else \
        accounting.gaussian(noise_multiplier=z)
    if q < 1:
        one = accounting.poisson_sampled(one, sampling_prob=q)
    return accounting.self_composed(one, count=count)


@functools.lru_cache(maxsize=512)
def calibrate(*, mechanism: str, eps: float, b: int, T: int, N: int, d_i: int,
              delta: float = 1e-5, q: Optional[float] = None, xi: Optional[float] = None,
              rule: str = "paper", c2: Optional[float] = None,
              sampler: str = "round_robin") -> Calibration:
    """The noise of FedSGD-DPC for budget ``eps`` (and ``delta``; for the Laplace mechanism
    ``delta`` is only where ``eps_run`` is read), b of N clients, T rounds, clients of
    ``d_i`` rows (the smallest), sampling rate ``q``, clipping bound ``xi``.  Cached: repeats
    of a setting (seeds) calibrate once.

    Two rules.  ``rule="paper"``: Theorem 1 (scale 2 b T xi_1 / (N d_i eps)) and eq. (5) with
    ``c2``, which defaults to the classic sqrt(2 ln(1.25/delta)) (the paper leaves c_2
    unstated).  ``rule="accountant"``: the noise that gives (eps, delta) for the whole run by
    :mod:`fldp.accounting`, for the number of replies the most-queried client really makes
    (round robin: ceil(bT/N); the paper assumes exactly bT/N), the Gaussian one as a
    Poisson-subsampled Gaussian (DP-SGD's calibration).  Either way the
    :class:`Calibration` carries ``eps_run``, what the run really spends."""
    validate.choice("mechanism", mechanism, MECHANISMS)
    validate.choice("rule", rule, RULES)
    eps = validate.positive("eps", eps)
    delta = validate.open_unit("delta", delta)
    N, b, T, d_i = th.check_queries(N=N, b=b, T=T, d_i=d_i)
    q = DEFAULT_Q[mechanism] if q is None else q
    if not 0 < validate.probability("q", q):
        raise ValueError(f"q={q!r} is out of range: q must be in (0, 1]")
    if mechanism == "laplace" and q != 1:
        raise ValueError(f"q={q!r} is out of range for the Laplace mechanism: q must be 1 "
                         "(Zhou et al., footnote 4: every row in every reply)")
    xi = validate.positive("xi", DEFAULT_XI[mechanism] if xi is None else xi)
    counts = replies(N=N, b=b, T=T, sampler="round_robin")
    r_max = int(counts.max()) if sampler == "round_robin" else T  # uniform: worst case T
    assumed = b * T / N
    if mechanism == "laplace":
        sens = 2 * xi / d_i
        if rule == "paper":
            scale = th.laplace_scale(eps=eps, b=b, T=T, N=N, d_i=d_i, xi1=xi)
        else:  # pure DP composes exactly by summing: r_max replies of eps / r_max each
            assumed = r_max
            scale = r_max * sens / eps
            while r_max / (scale / sens) > eps:  # rounding must not overshoot the budget
                scale = math.nextafter(scale, math.inf)
        c2_used = None
    else:
        sens = xi / (q * d_i)
        if rule == "paper":
            c2_used = math.sqrt(2 * math.log(1.25 / delta)) if c2 is None else validate.positive("c2", c2)
            scale = th.gaussian_sigma(eps=eps, delta=delta, b=b, T=T, N=N, d_i=d_i, xi2=xi, c2=c2_used)
        else:
            assumed, c2_used = r_max, None
            z = accounting.calibrate_gaussian_run(target_eps=eps, target_delta=delta,
                                                  rounds=r_max, sampling_prob=q)
            scale = z * sens
    z = scale / sens
    eps_run = accounting.epsilon(_client_event(mechanism, z, q, r_max), delta=delta)
    eps_pure = r_max / z if mechanism == "laplace" else None
    return Calibration(mechanism, rule, eps, delta, N, b, T, float(q), float(xi), d_i, float(assumed),
                       r_max, float(scale), float(sens), c2_used, float(eps_run), eps_pure)


class DecayingRate:
    """eta_t = lr / (1 + decay (t - 1)) for round t = 1, 2, ... (Sec. VII-A3: the learning rate
    is 0.05 initially and "decays gradually with the number of iterations", at a rate the paper
    does not state)."""

    def __init__(self, lr: float, decay: float):
        self.lr = validate.positive("lr", lr)
        self.decay = validate.nonnegative("lr_decay", decay)

    def __call__(self, t: int) -> float:
        return self.lr / (1.0 + self.decay * (max(int(t), 1) - 1))

    def __repr__(self) -> str:
        return f"DecayingRate(lr={self.lr}, decay={self.decay})"


def config(*, mechanism: str, b: int, T: int, q: Optional[float] = None, xi: Optional[float] = None,
           lr: float = 0.05, lr_decay: float = 0.01, sampler: str = "round_robin",
           private: bool = True, seed: int = 0, eval_every: int = 1, eval_train: bool = True,
           device: str = "cpu", clip_only: bool = False) -> engine.FLConfig:
    """The engine configuration of FedSGD-DPC (Zhou et al., Algorithm 1).  ``private=False``
    gives plain FedSGD with the same sampling and no clipping or noise; with ``clip_only=True``
    it clips as the mechanism does but adds no noise (what clipping alone costs).  The engine with:

    * b of N clients per round, chosen round robin (Algorithm 1's "round robin manner") or
      uniformly at random (Sec. IV-A: "randomly selected"), ``sampler``;
    * one local gradient at the broadcast model on a q-fraction of the client's rows: every
      row for the Laplace mechanism (q = 1, footnote 4), a Poisson sample of rate q for the
      Gaussian one (Theorem 2; the paper's "randomly select q fraction" read as the Poisson
      sampling its source, Abadi et al. 2016, analyses; the gradient is divided by the
      expected batch size q d_i);
    * **per-sample** clipping of every row's gradient to xi_1 in l1 (Laplace, Assumption 1) or
      xi_2 in l2 (Gaussian, Assumption 2) before averaging;
    * Laplace noise of Theorem 1 or Gaussian noise of Theorem 2, eq. (5), on each reply
      (per client, from the client's own generator; :func:`uplink`);
    * the server applies (N/b) sum_i (d_i/d) (g_i + w_i) with the decaying learning rate
      eta_t (eq. (3)-(4); Algorithm 1 aggregates the parameters theta_t - eta_t (g_i + w_i),
      which is the same step when sum (N/b) d_i/d = 1, as with the equal clients of Sec. VII),
      eta_t = lr / (1 + lr_decay (t - 1)), t = 1..T (:class:`DecayingRate`).
    """
    validate.choice("mechanism", mechanism, MECHANISMS)
    validate.choice("sampler", sampler, SAMPLERS)
    q = DEFAULT_Q[mechanism] if q is None else q
    xi = DEFAULT_XI[mechanism] if xi is None else xi
    rate = DecayingRate(lr, lr_decay)
    return engine.FLConfig(
        num_rounds=T, local_steps=1, sampling="full" if q == 1 else "poisson",
        sample_rate=None if q == 1 else q, lr=lr, upload="gradient", server_lr=rate,
        clip=xi if private or clip_only else None, clip_mode="sample_grad" if private or clip_only else None,
        clip_norm="l1" if mechanism == "laplace" else "l2", clients_per_round=b, sampler=sampler,
        aggregation="unbiased", noise=private, seed=seed, eval_every=eval_every,
        eval_train=eval_train, device=device)


def uplink(cal: Calibration, data: FederatedData) -> engine.NoiseUplink:
    """The reply noise of ``cal`` for every client of ``data`` (scale set for the smallest
    client, d_i = ``cal.d_i``, scaled by d_i of each client, as Theorems 1-2 do)."""
    ratio = cal.d_i / data.counts.double()  # noise and sensitivity scale with 1/d_i (float64)
    scale = lambda ctx: cal.scale * ratio[ctx.clients]
    sens = lambda ctx: cal.sensitivity * ratio[ctx.clients]
    if cal.mechanism == "laplace":
        return engine.laplace_uplink(scale, sensitivity=sens)
    return engine.gaussian_uplink(scale, sensitivity=sens, sampling_prob=cal.q if cal.q < 1 else None)


def run(model: Model, data: FederatedData, *, mechanism: str = "laplace", eps: float = 1.0,
        b: int = 1, T: int = 50, delta: float = 1e-5, q: Optional[float] = None,
        xi: Optional[float] = None, rule: str = "paper", c2: Optional[float] = None,
        lr: float = 0.05, lr_decay: float = 0.01, sampler: str = "round_robin",
        private: bool = True, seed: int = 0, eval_every: int = 1, eval_train: bool = True,
        observer: Optional[engine.Observer] = None, progress: bool = False, device: str = "cpu",
        clip_only: bool = False):
    """Run FedSGD-DPC for T rounds; returns ``(history, calibration)`` (None when
    ``private=False``; ``clip_only``: with ``private=False``, clipped as the mechanism clips, no noise).  The history's privacy records give the realised spend:
    ``fldp.accounting.spent(history, delta=delta)``."""
    cfg, cal, up = _setting(data, mechanism=mechanism, eps=eps, b=b, T=T, delta=delta, q=q, xi=xi, rule=rule,
                            c2=c2, lr=lr, lr_decay=lr_decay, sampler=sampler, private=private, seed=seed,
                            eval_every=eval_every, eval_train=eval_train, device=device, clip_only=clip_only)
    hist = engine.run(model, data, cfg, uplink=up, observer=observer, progress=progress,
                      desc=f"FedSGD-DPC {mechanism} b={b} T={T} eps={eps if private else 'inf'}")
    return hist, cal


def run_many(model: Model, data: FederatedData, settings) -> list:
    """:func:`run` for each of ``settings`` (dicts of its keyword arguments, without ``observer``
    and ``progress``) on the same data, side by side (:func:`fldp.engine.run_many`: runs whose
    rounds read the same rows, e.g. full-batch runs of any seed and budget, train as one); returns
    ``[(history, calibration)]``, each what :func:`run` returns for that setting alone."""
    setups = [_setting(data, **s) for s in settings]
    hists = engine.run_many(model, data, [cfg for cfg, _, _ in setups], uplinks=[up for _, _, up in setups])
    return [(h, cal) for h, (_, cal, _) in zip(hists, setups)]


def _setting(data: FederatedData, *, mechanism: str = "laplace", eps: float = 1.0, b: int = 1, T: int = 50,
             delta: float = 1e-5, q: Optional[float] = None, xi: Optional[float] = None, rule: str = "paper",
             c2: Optional[float] = None, lr: float = 0.05, lr_decay: float = 0.01, sampler: str = "round_robin",
             private: bool = True, seed: int = 0, eval_every: int = 1, eval_train: bool = True, device: str = "cpu",
             clip_only: bool = False):
    """One run's engine configuration, calibration (None when not private) and uplink hook."""
    if private and clip_only:
        raise ValueError("clip_only=True is the clipping without the noise: it needs private=False")
    cfg = config(mechanism=mechanism, b=b, T=T, q=q, xi=xi, lr=lr, lr_decay=lr_decay,
                 sampler=sampler, private=private, seed=seed, eval_every=eval_every,
                 eval_train=eval_train, device=device, clip_only=clip_only)
    cal = None
    if private:
        cal = calibrate(mechanism=mechanism, eps=eps, b=b, T=T, N=data.num_clients,
                        d_i=int(data.counts.min()), delta=delta, q=q, xi=xi, rule=rule, c2=c2,
                        sampler=sampler)
    return cfg, cal, (uplink(cal, data) if cal else None)

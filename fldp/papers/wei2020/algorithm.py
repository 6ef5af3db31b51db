"""NbAFL, noising before model aggregation FL (Wei et al. 2020, Algorithm 1), on the engine.

The algorithm is the shared engine with:

* local training of the proximal objective F_i(w) + mu/2 ||w - w^(t-1)||^2 (line 6),
* clipping of the uploaded parameters, w / max(1, ||w|| / C) (line 8),
* uplink noise N(0, sigma_U^2), sigma_U = c L (2C/m) / eps (Sec. III-A, eq. (5)-(6)) (line 10),
* aggregation with p_i = |D_i| / |D| (eq. (1), line 13),
* downlink noise N(0, sigma_D^2) with sigma_D from Theorem 1, eq. (10), or, under K-random
  scheduling, from Lemma 4, eq. (21) (line 15).

The non-private baseline (``private=False``) trains the same way with no clipping and no noise.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

from ... import engine, validate
from . import theory as th
from ...data import FederatedData
from ...models import Model


@dataclass(frozen=True)
class Calibration:
    """The noise levels of one NbAFL run and what they were computed from."""

    eps: float
    delta: float
    C: float
    L: int
    N: int
    K: Optional[int]
    T: int
    m: int
    c: float
    sigma_U: float
    sigma_D: float
    rule: str

    def as_dict(self) -> dict:
        return asdict(self)


def calibrate(*, eps: float, delta: float, C: float, L: int, N: int, T: int, m: int,
              K: Optional[int] = None) -> Calibration:
    """sigma_U (Sec. III-A) and sigma_D (Theorem 1, or Lemma 4 when ``K < N``).

    Under K-random scheduling, where Lemma 4's b is undefined (its condition (69),
    eps < -T ln(1 - K/N), fails), T lies below eps/gamma and eq. (21) gives sigma_D = 0;
    ``rule`` records which case applied.
    """
    validate.integer("L", L, 1, T)
    c = th.gaussian_c(delta)
    sigma_u = float(th.sigma_uplink(C, m, eps, L=L, c=c))
    if K is None or K == N:
        sigma_d, rule = float(th.sigma_downlink(C, m, N, T, L, eps, c)), "Theorem 1, eq. (10)"
    else:
        validate.integer("K", K, 1, N)
        cond = th.krandom_conditions(eps, T, N, K, L)
        sigma_d = float(th.sigma_downlink_krandom(C, m, N, K, T, L, eps, c, on_undefined_b="zero"))
        rule = "Lemma 4, eq. (21)" + ("" if cond["eq69"] else ": b undefined (eq. (69) fails), sigma_D = 0")
    return Calibration(eps, delta, C, L, N, K, T, m, c, sigma_u, sigma_d, rule)


def run(model: Model, data: FederatedData, *, T: int, eps: float = 60.0, delta: float = 0.01,
        C: float = 20.0, L: int = 1, K: Optional[int] = None, mu: float = 0.01, lr: float = 0.05,
        local_epochs: int = 1, batch_size: Optional[int] = 50, private: bool = True, seed: int = 0,
        eval_every: int = 1, eval_train: bool = True, progress: bool = False):
    """Run NbAFL for T rounds; returns ``(history, calibration)`` (calibration is None when
    ``private=False``)."""
    cfg = engine.FLConfig(num_rounds=T, local_epochs=local_epochs, batch_size=batch_size, lr=lr,
                          mu=mu, clip=C if private else None, clip_mode="params" if private else None,
                          clients_per_round=K, noise=private, seed=seed, eval_every=eval_every,
                          eval_train=eval_train)
    cal = None
    if private:
        cal = calibrate(eps=eps, delta=delta, C=C, L=L, N=data.num_clients, T=T, m=data.m, K=K)
    hist = engine.run(model, data, cfg,
                      uplink=engine.gaussian_uplink(cal.sigma_U) if cal else None,
                      downlink=engine.gaussian_downlink(cal.sigma_D) if cal else None,
                      progress=progress, desc=f"NbAFL eps={eps if private else 'inf'}")
    return hist, cal

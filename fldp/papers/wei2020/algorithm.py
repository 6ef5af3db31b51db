"""NbAFL, noising before model aggregation FL (Wei et al. 2020, Algorithm 1), on the engine.

The algorithm is the shared engine with:

* local training of the proximal objective F_i(w) + mu/2 ||w - w^(t-1)||^2 (line 6),
* clipping of the uploaded parameters, w / max(1, ||w|| / C) (line 8),
* uplink noise N(0, sigma_U^2), sigma_U = c L (2C/m) / eps (Sec. III-A, eq. (5)-(6)) (line 10),
* aggregation with ``p_i = |D_i| / |D|`` (eq. (1), line 13),
* downlink noise N(0, sigma_D^2) with sigma_D from Theorem 1, eq. (10), or, under K-random
  scheduling, from Lemma 4, eq. (21) (line 15).

The non-private baseline (``private=False``) trains the same way with no clipping and no noise.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

from fldp import accounting, engine, validate
from fldp.papers.wei2020 import theory as th
from fldp.data import FederatedData
from fldp.models import Model

__all__ = ["Calibration", "calibrate", "SENSITIVITIES", "calibrate_accountant", "run"]


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
    eps_run: float = float("nan")
    eps_run_sampled: Optional[float] = None
    sensitivity_D: Optional[float] = None
    upload_sensitivity: Optional[float] = None

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def sensitivity_U(self) -> float:
        """The sensitivity of one upload the noise is calibrated to: Ds_U = 2C/m (eq. (5)-(6)),
        or ``upload_sensitivity`` where set (2C, what clipping alone guarantees)."""
        if self.upload_sensitivity is not None:
            return self.upload_sensitivity
        return th.uplink_sensitivity(C=self.C, m=self.m)


def calibrate(*, eps: float, delta: float, C: float, L: int, N: int, T: int, m: int,
              K: Optional[int] = None) -> Calibration:
    """sigma_U (Sec. III-A) and sigma_D (Theorem 1, or Lemma 4 when ``K < N``), and beside
    the paper's per-exposure ``eps`` what the run really spends: ``eps_run``, each client's
    (eps, delta) over T uploads from the accountant (a client selected in every round; the
    realised figure of a run is ``accounting.spent(history, delta=delta)``), and under
    K-random scheduling ``eps_run_sampled``, the same with each client included with
    probability K/N per round and the selection kept secret (amplification by sampling;
    by RDP, as PLD of a subsampled Gaussian with multiplier ~0.05 takes about a minute).

    Under K-random scheduling, where Lemma 4's b is undefined (its condition (69),
    eps < -T ln(1 - K/N), fails), T lies below eps/gamma and eq. (21) gives sigma_D = 0;
    ``rule`` records which case applied.
    """
    validate.integer("L", L, 1, T)
    c = th.gaussian_c(delta=delta)
    sigma_u = float(th.sigma_uplink(C=C, m=m, eps=eps, L=L, c=c))
    if K is None or K == N:
        sigma_d, rule = float(th.sigma_downlink(C=C, m=m, N=N, T=T, L=L, eps=eps, c=c)), "Theorem 1, eq. (10)"
    else:
        validate.integer("K", K, 1, N)
        cond = th.krandom_conditions(eps=eps, T=T, N=N, K=K, L=L)
        sigma_d = float(th.sigma_downlink_krandom(C=C, m=m, N=N, K=K, T=T, L=L, eps=eps, c=c,
                                                  on_undefined_b="zero"))
        rule = "Lemma 4, eq. (21)" + ("" if cond["eq69"] else ": b undefined (eq. (69) fails), sigma_D = 0")
    # What the run really spends (fldp.accounting, PLD): every upload is a Gaussian release of
    # sensitivity Ds_U = 2C/m, and a client uploads in every round it is selected.  The
    # broadcasts are post-processing of the uploads (their server noise is independent of
    # the data), so they add nothing for an adversary who sees the uploads.
    one = accounting.gaussian(noise_multiplier=sigma_u / th.uplink_sensitivity(C=C, m=m))
    eps_run = accounting.epsilon(accounting.self_composed(one, count=T), delta=delta)
    eps_sampled = None if K is None or K == N else accounting.planned_epsilon(
        event=one, rounds=T, client_sampling_prob=K / N, delta=delta, accountant="rdp")
    return Calibration(eps, delta, C, L, N, K, T, m, c, sigma_u, sigma_d, rule, eps_run, eps_sampled)


#: The sensitivities :func:`calibrate_accountant` calibrates to: the paper's, and clipping's.
SENSITIVITIES = ("2C/m", "2C")


def calibrate_accountant(*, eps: float, delta: float, C: float, N: int, T: int, m: int,
                         where: str = "uplink", sensitivity: str = "2C/m") -> Calibration:
    """NbAFL calibrated honestly: the noise that makes the *whole run* (eps, delta)-DP for each
    client by the accountant (PLD, add/remove), found by inversion
    (:func:`fldp.accounting.calibrate_gaussian_run`), in place of the classic per-exposure
    constant of Sec. III.

    ``where="uplink"``: each client's T noisy uploads (sensitivity Ds_U = 2C/m, Wei et al.
    2020, eq. (5)-(6)) carry the whole budget and sigma_D = 0: the broadcasts are
    post-processing of the uploads, so no server noise is needed against any adversary.
    ``where="server"``: a trusted server (central DP) adds all the noise to the T broadcasts
    (sensitivity Ds_D = 2C p_i/m with p_i = 1/N, Lemma 1, eq. (8)) and the uploads are
    noiseless; that protects against the other clients and the public, not against the server.
    ``L`` is recorded as T (every upload, or every broadcast, counts).

    ``sensitivity="2C/m"`` takes the paper's sensitivities (eq. (5), Lemma 1), which hold only
    for its local solver (``notebooks/wei2020/02_global_dp`` measures them);
    ``sensitivity="2C"`` takes what clipping to C guarantees whatever the local solver: two
    clipped models differ by at most 2C (triangle inequality), so one upload has sensitivity
    2C and, with p_i = 1/N, the aggregate 2C/N; m times the noise of ``"2C/m"``.
    """
    validate.choice("where", where, ("uplink", "server"))
    validate.choice("sensitivity", sensitivity, SENSITIVITIES)
    z = accounting.calibrate_gaussian_run(target_eps=eps, target_delta=delta, rounds=T)
    c = th.gaussian_c(delta=delta)
    clip = sensitivity == "2C"
    tag = ", sensitivity 2C (clipping)" if clip else ""
    if where == "uplink":
        sens = 2.0 * C if clip else th.uplink_sensitivity(C=C, m=m)
        return Calibration(eps, delta, C, T, N, None, T, m, c, z * sens, 0.0,
                           "accountant: T uploads, sigma_D = 0" + tag, eps_run=eps,
                           upload_sensitivity=sens if clip else None)
    sens = 2.0 * C / N if clip else th.downlink_sensitivity(C=C, m=m, p_i=1.0 / N)
    return Calibration(eps, delta, C, T, N, None, T, m, c, 0.0, z * sens,
                       "accountant: T broadcasts (trusted server)" + tag, eps_run=eps, sensitivity_D=sens)


def run(model: Model, data: FederatedData, *, T: int, eps: float = 60.0, delta: float = 0.01,
        C: float = 20.0, L: int = 1, K: Optional[int] = None, mu: float = 0.01, lr: float = 0.05,
        local_epochs: int = 1, batch_size: Optional[int] = 50, private: bool = True, seed: int = 0,
        eval_every: int = 1, eval_train: bool = True, progress: bool = False,
        observer: Optional[engine.Observer] = None, device: str = "cpu",
        calibration: Optional[Calibration] = None):
    """Run NbAFL for T rounds; returns ``(history, calibration)`` (calibration is None when
    ``private=False``).  ``observer`` sees every round (:func:`fldp.engine.round_step`).
    ``calibration`` (e.g. from :func:`calibrate_accountant`) replaces the paper's calibration
    from ``eps``, ``delta``, ``L`` and ``K``; its C is the clipping bound."""
    if private and calibration is not None:
        C = calibration.C
    cfg = engine.FLConfig(num_rounds=T, local_epochs=local_epochs, batch_size=batch_size, lr=lr,
                          mu=mu, clip=C if private else None, clip_mode="params" if private else None,
                          clients_per_round=K, noise=private, seed=seed, eval_every=eval_every,
                          eval_train=eval_train, device=device)
    cal = None
    if private:
        cal = calibration or calibrate(eps=eps, delta=delta, C=C, L=L, N=data.num_clients, T=T, m=data.m, K=K)
    up = cal and cal.sigma_U > 0
    hist = engine.run(model, data, cfg,
                      uplink=engine.gaussian_uplink(cal.sigma_U, sensitivity=cal.sensitivity_U) if up else None,
                      downlink=engine.gaussian_downlink(cal.sigma_D, cal.sensitivity_D) if cal else None,
                      observer=observer, progress=progress, desc=f"NbAFL eps={eps if private else 'inf'}")
    return hist, cal

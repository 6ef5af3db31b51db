"""The benchmark chapter's comparison at equal privacy (``notebooks/benchmark/``; not to be
confused with ``benchmarks/``, which measures speed): what each scheme really spends, in one currency,
when each paper reports privacy its own way.  :func:`releases` describes what one client's canary
is exposed to under each DP scheme, at the paper's own setting and at a unified whole-run target,
and :func:`audit_release` audits one by simulation, which checks the paper's *accountant* under
the sensitivity the scheme assumes; :func:`audit_nbafl` and :func:`audit_adaptive` audit end to
end on the real engine, which can also refute that sensitivity.  :func:`accuracy_run` trains each
scheme at an equal whole-run eps (``02_accuracy``), NbAFL with its update clipped to ``C_u`` and
calibrated to 2 C_u (:func:`nbafl_config`, :func:`nbafl_calibration`), since the paper's 2C/m is
not a bound its local SGD respects.  Every number comes from the papers' own calibration
functions.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import List, Optional

import numpy as np
import torch

from fldp import accounting, audit, engine, mechanisms, models, seeding
from fldp.verdicts import Claim
from fldp.papers.adaptive_noise import algorithm as an
from fldp.papers.li2021 import algorithm as li
from fldp.papers.li2021 import theory as li_th
from fldp.papers.wei2020 import algorithm as nbafl
from fldp.papers.zhou import algorithm as zhou

__all__ = [
    "Release", "NBAFL_UPDATE_CLIP", "NBAFL_TRAINING", "TOY_TRAINING", "nbafl_config",
    "nbafl_calibration", "upload_shift", "releases", "audit_release", "audit_nbafl",
    "audit_adaptive", "controls", "TASKS", "SCHEMES", "SOUND", "CEILINGS", "accuracy_run",
    "chance_accuracy", "same_ranking", "zhou_gaussian_release", "audited_releases", "audit_verdict",
    "end_to_end_verdict", "audit_figure", "accuracy_figure"
]


@dataclass(frozen=True)
class Release:
    """What one client's canary is exposed to under a scheme at one setting."""

    scheme: str
    setting: str
    noise: str              # "gaussian" or "laplace"
    scale: float            # noise std (Gaussian) or scale (Laplace) on the canary's coordinate
    sensitivity: float      # the shift the scheme assumes one record can make
    rounds: int             # releases that carry the canary's client
    sampling_prob: float    # probability the canary is in one release (1: always)
    claim: str              # the paper's statement, in its own currency
    claim_eps: float        # ... its eps, for the scope audited here
    delta: float
    accountant_eps: float   # what the accountant says the same releases spend (upper bound)

    def as_dict(self) -> dict:
        return asdict(self)


#: NbAFL's update clipping bound in the benchmark (our choice): below the median update norm of
#: NbAFL's first rounds on the three tasks without noise (0.23-0.50), so that it binds.
NBAFL_UPDATE_CLIP = 0.1
#: NbAFL's local training (Wei et al. 2020, Sec. VI, as the wei2020 chapters run it).
NBAFL_TRAINING = dict(local_epochs=1, batch_size=50, lr=0.05, mu=0.01)
#: The toy local training of every end-to-end audit (8 rows, batches of 3: several steps per epoch).
TOY_TRAINING = dict(local_epochs=2, batch_size=3, lr=0.5)


def nbafl_config(*, T: int, K: Optional[int], C_update: float = NBAFL_UPDATE_CLIP, private: bool = True,
                 seed: int = 0, eval_every: int = 1, **training) -> engine.FLConfig:
    """NbAFL (Wei et al. 2020, Algorithm 1: the proximal local objective, p_i-weighted aggregation of
    the uploaded parameters) with the upload's *update* w_i - w^(t-1) clipped to ``C_update`` in place
    of the parameters to C (line 8): two neighbouring datasets' uploads then differ by at most
    2 C_update whatever the local solver does (the triangle inequality; :func:`upload_shift`
    measures it).  The benchmark runs NbAFL so because the paper's Ds_U = 2C/m is not a bound its
    local SGD respects (``wei2020/02_global_dp`` measures it exceeded, up to 1.27x at the default
    regime and 10x at others).  ``private=False``: the same training and clipping,
    no noise (the scheme's ceiling).  ``training`` overrides :data:`NBAFL_TRAINING`."""
    kw = {**NBAFL_TRAINING, **training}
    return engine.FLConfig(num_rounds=T, clip=C_update, clip_mode="update", upload="params", clients_per_round=K,
                           noise=private, seed=seed, eval_every=eval_every, eval_train=False, **kw)


def nbafl_calibration(*, eps: float, delta: float, N: int, T: int, m: int, C_update: float = NBAFL_UPDATE_CLIP):
    """The noise that makes each client's T uploads (eps, delta)-DP by the accountant at the
    sensitivity update clipping guarantees, 2 C_update (:func:`fldp.papers.wei2020.algorithm.calibrate_accountant`
    with ``sensitivity="2C"``; its C is the update bound here)."""
    return nbafl.calibrate_accountant(eps=eps, delta=delta, C=C_update, N=N, T=T, m=m, sensitivity="2C")


def upload_shift(model, client_a, client_b, config: engine.FLConfig, *, start: Optional[torch.Tensor] = None) -> float:
    """How far one round of ``config`` (local training and its clipping, no noise) moves the upload
    when a client's data ``client_a`` = (x, y) becomes ``client_b``: ||upload(a) - upload(b)||, a
    measured shift under one coupling of the two runs' batch draws (the same seed; with a row replaced,
    the same batches but the one holding that row).  It is what a sensitivity must bound: a shift above
    the sensitivity the noise is calibrated to shows the calibration does not hold for that coupling."""
    from fldp.data import FederatedData

    data = FederatedData.from_clients([client_a[0], client_b[0]], [client_a[1], client_b[1]], client_a[0][:1],
                                      client_a[1][:1])
    cfg = engine.with_config(config, num_rounds=1, clients_per_round=None, eval_every=10**9, noise=False)
    seen = {}
    engine.round_step(model, data, cfg, engine.init_state(model, data, cfg, init_params=start),
                      observer=lambda ctx: seen.update(up=ctx.clean, who=ctx.clients))
    up = seen["up"][torch.argsort(seen["who"])].double()
    return float((up[0] - up[1]).norm())


def releases(*, unified_eps: float = 4.0, unified_delta: float = 1e-5, N: int = 20, K: int = 10, rounds: int = 20,
             m: int = 500) -> List[Release]:
    """Each DP scheme at its paper's setting (as the chapters run it) and at the unified target in
    the setting of ``02_accuracy`` (N clients of m rows, K per round, ``rounds`` rounds).

    Each paper reports privacy its own way (NbAFL: eps per exposure with the classic constant;
    Zhou et al.: per-client Laplace or Gaussian budgets; Li et al.: eps of one amplified upload;
    the adaptive scheme: none), so each :class:`Release` says, in one currency, what one client's
    canary is exposed to: the noise on the canary's coordinate, the sensitivity the scheme
    assumes, how many releases, the probability the canary takes part in each, the paper's claim
    and the accountant's eps.  At the unified target the noise is calibrated by inverting the
    accountant."""
    out = []
    # Wei et al. 2020, Sec. VI: eps = 60, delta = 0.01, C = 20, L = 1, N = 50, T = 25, m = 1200
    cal = nbafl.calibrate(eps=60.0, delta=0.01, C=20.0, L=1, N=50, T=25, m=1200)
    out.append(Release("NbAFL", "paper: eps 60 per exposure, L = 1, T = 25", "gaussian", cal.sigma_U, cal.sensitivity_U,
                       25, 1.0, "(60, 0.01)-DP per client (L = 1: the run is one exposure)", 60.0, 0.01, cal.eps_run))
    cal = nbafl_calibration(eps=unified_eps, delta=unified_delta, N=N, T=rounds, m=m)  # as 02_accuracy runs it
    out.append(Release("NbAFL", f"unified: whole run eps {unified_eps:g}, update clipped (2 C_u)", "gaussian", cal.sigma_U,
                       cal.sensitivity_U, rounds, 1.0, "accountant's target", unified_eps, unified_delta, unified_eps))
    # Zhou et al., Sec. VII: N = 10 clients of 6,000 rows, b = 5 queried per round, T = 50 rounds
    for mech, rule, eps, delta in (("laplace", "paper", 5.0, 1e-5), ("gaussian", "paper", 5.0, 1e-5),
                                   ("gaussian", "accountant", unified_eps, unified_delta)):
        size = dict(b=5, T=50, N=10, d_i=6000) if rule == "paper" else dict(b=K, T=rounds, N=N, d_i=m)
        cal = zhou.calibrate(mechanism=mech, eps=eps, delta=delta, rule=rule, **size)
        setting = f"paper: eps {eps:g}, b = 5, T = 50" if rule == "paper" else f"unified: whole run eps {eps:g}"
        claim = (f"({eps:g}, 0)-DP per client (Theorem 1)" if mech == "laplace" else
                 f"({eps:g}, {delta:g})-DP per client (Theorem 2, c_2 classic)") if rule == "paper" else "accountant's target"
        out.append(Release(f"FedSGD-DPC ({mech})", setting, mech, cal.scale, cal.sensitivity, cal.replies_max, cal.q,
                           claim, eps, delta, cal.eps_run if rule == "paper" else eps))
    # Li, Chang & Chi, Sec. 4: Adult over N = 100 clients (n_k = 325), K = 50, Q = 10, b = 1, 200 rounds
    p_in = li_th.inclusion_prob(b=1, n_k=325, Q=10)
    uploads = 200 * 50 // 100
    cal = li.calibrate(eps=0.5, n=np.full(100, 325), N=100, K=50, Q=10, b=1, rounds=200, delta=1e-4)
    z = float(cal.z.min())
    out.append(Release("Secure FedAvg", "paper: one upload, eps 0.5, Q = 10, b = 1", "gaussian", z, 1.0, 1, p_in,
                       "(0.5, 1e-4)-DP per upload (eq. (9))", 0.5, 1e-4, cal.eps_upload_accountant))
    run = li.run_eps(z=z, Q=10, b=1, n_k=325, uploads=uploads, delta=1e-4)
    out.append(Release("Secure FedAvg", f"paper: whole run ({uploads} uploads)", "gaussian", z, 1.0, uploads, p_in,
                       "none for the run (eq. (9) is per upload)", float("nan"), 1e-4, run["eps"]))
    cal = li.calibrate(eps=unified_eps, n=np.full(N, m), N=N, K=K, Q=10, b=10, rounds=rounds, delta=unified_delta,
                       rule="accountant")  # 02_accuracy's secure FedAvg: Q = 10 steps of b = 10 rows
    out.append(Release("Secure FedAvg", f"unified: whole run eps {unified_eps:g}", "gaussian", float(cal.z.min()), 1.0,
                       rounds, li_th.inclusion_prob(b=10, n_k=m, Q=10), "accountant's target", unified_eps, unified_delta,
                       unified_eps))
    return out


def _row(res: audit.AuditResult, *, scheme: str, setting: str, claim: str, claim_eps: float, delta: float,
         upper: float, how: str, trials: int, judged: bool = True) -> dict:
    """One line of the audit table: the audit's lower bound beside the accountant's upper bound and
    the paper's claim (``judged=False``: no claim to compare with).  ``how``: "simulated" (a canary of
    exactly the assumed sensitivity: a check of the accountant under it) or "engine" (end to end);
    ``trials``: runs (or clients) per side, half to select the test, half to count."""
    return {"scheme": scheme, "setting": setting, "audit": how, "trials per side": int(trials), "claim": claim,
            "claimed eps": claim_eps, "delta": delta, "accountant eps (upper)": upper, "audit eps (lower)": res.eps_lower,
            "audit eps, GDP reading": res.eps_lower_gdp, "audit resolution": res.eps_max,
            "GDP reading within resolution": bool(res.eps_lower_gdp <= res.eps_max),
            "lower <= upper": bool(res.eps_lower <= upper * (1 + 1e-9)),
            "lower above claim": bool(res.eps_lower > claim_eps) if judged else None,
            "claim beyond resolution": bool(claim_eps > res.eps_max) if judged else None}


def audit_release(r: Release, *, trials: int, alpha: float = 0.05, seed: int = 0) -> dict:
    """The simulated audit's lower bound beside the accountant's upper bound and the paper's claim:
    the canary moves each release by exactly ``r.sensitivity``, so this checks the paper's
    accountant under its own sensitivity (it cannot refute that sensitivity).  For Gaussian noise
    the row also carries ``accountant eps (lower)``: where the accountant is exact (no sampling) or
    bounds from below (the PLD's optimistic estimate under Poisson sampling,
    :func:`fldp.accounting.epsilon_lower_gaussian`), an eps the releases certainly spend, which no
    audit's trials cap."""
    res = audit.audit_mechanism(noise=r.noise, scale=r.scale, sensitivity=r.sensitivity, rounds=r.rounds,
                                sampling_prob=r.sampling_prob, trials=trials, delta=r.delta, alpha=alpha, seed=seed)
    row = _row(res, scheme=r.scheme, setting=r.setting, claim=r.claim, claim_eps=r.claim_eps, delta=r.delta,
               upper=r.accountant_eps, how="simulated", trials=trials)
    row["accountant eps (lower)"] = (accounting.epsilon_lower_gaussian(
        noise_multiplier=r.scale / r.sensitivity, count=r.rounds, delta=r.delta, sampling_prob=r.sampling_prob)
        if r.noise == "gaussian" else None)
    return row


def _toy_client(seed: int):
    """A small client (8 rows, 5 features) and its neighbour with one outlier row (the canary)."""
    g = seeding.torch_generator(seed, "audit_client")
    x = torch.randn(8, 5, generator=g)
    y = (x[:, 0] > 0).long()
    return (x, y), (torch.cat([x, 30 * torch.ones(1, 5)]), torch.cat([y, torch.tensor([0])]))


def _toy_model():
    return models.MultinomialLogReg(in_features=5, num_classes=2)


def audit_nbafl(*, trials: int, eps: float = 2.0, delta: float = 1e-5, C: float = 1.0,
                C_update: float = NBAFL_UPDATE_CLIP, alpha: float = 0.05, seed: int = 0) -> List[dict]:
    """One real engine upload of NbAFL, end to end, on the toy client (m = 8 rows; the canary an
    outlier row), with NbAFL's proximal local objective (mu = 0.01) and the toy training of every
    engine audit (:data:`TOY_TRAINING`), each calibrated to ``eps`` for that one upload:

    * as the paper calibrates it: parameters clipped to C, sigma_U = c (2C/m) / eps (Sec. III-A,
      L = 1, T = 1); its claim rests on the sensitivity 2C/m, which this audit can refute;
    * as the benchmark runs it: the update clipped to ``C_update``, the accountant's noise at the
      sensitivity 2 C_update (:func:`nbafl_calibration`).

    Each row carries ``shift``, the measured ||upload(D) - upload(D')|| without noise
    (:func:`upload_shift`), beside ``sensitivity``, the one the noise is calibrated to."""
    out_client, in_client = _toy_client(seed)
    m = len(out_client[1])
    paper = nbafl.calibrate(eps=eps, delta=delta, C=C, L=1, N=2, T=1, m=m)
    sound = nbafl_calibration(eps=eps, delta=delta, N=2, T=1, m=m, C_update=C_update)
    rows = []
    for name, setting, cfg, cal, claim, upper in (
            ("NbAFL, paper's calibration", f"one upload, params clipped to C = {C:g}, sensitivity 2C/m = {2 * C / m:g}",
             engine.FLConfig(num_rounds=1, mu=NBAFL_TRAINING["mu"], clip=C, clip_mode="params", **TOY_TRAINING), paper,
             f"({eps:g}, {delta:g})-DP per upload (sigma_U = c 2C/(m eps), L = 1)", paper.eps_run),
            ("NbAFL, as benchmarked", f"one upload, update clipped to C_u = {C_update:g}, sensitivity 2 C_u",
             nbafl_config(T=1, K=None, C_update=C_update, mu=NBAFL_TRAINING["mu"], **TOY_TRAINING), sound,
             f"({eps:g}, {delta:g})-DP per upload (accountant at 2 C_u)", eps)):
        res = audit.audit_uploads(_toy_model(), out_client, in_client, cfg, trials=trials, delta=delta, alpha=alpha,
                                  seed=seed, uplink=engine.gaussian_uplink(cal.sigma_U, sensitivity=cal.sensitivity_U))
        row = _row(res, scheme=name, setting=setting, claim=claim, claim_eps=eps, delta=delta, upper=upper, how="engine",
                   trials=trials)
        row.update(sensitivity=cal.sensitivity_U, shift=upload_shift(_toy_model(), out_client, in_client, cfg))
        rows.append(row)
    return rows


def audit_adaptive(*, trials: int, c: float = 15.0, p: Optional[float] = 0.0, dp_eps: float = 30.0,
                   alpha: float = 0.05, seed: int = 0) -> List[dict]:
    """One real engine round of the adaptive scheme (noise c times the update's norm, the direction
    filter) and of the paper's local DP baseline (median clipping, sigma = c_dp S / eps), each
    with ``trials`` clients holding a client's data and ``trials`` its neighbour with an outlier.
    The baseline's accountant bound is what one upload of multiplier c_dp / eps really spends at
    the paper's sensitivity S (44.8 at eps = 30: c_dp / eps is the classic constant, valid only
    for eps < 1); the adaptive scheme's is inf (no finite eps, ``01_audit``'s derivation)."""
    out_client, in_client = _toy_client(seed)
    rows = []
    for name, scheme, claim, eps, hook in (
            (f"adaptive noise (c = {c:g}, p = {p})", "ours", "none (no DP claim)", float("nan"),
             an.hooks(scheme="ours", c=c, p=p)["uplink"]),
            (f"its DP baseline, local (eps = {dp_eps:g})", "dp", f"({dp_eps:g}, {an.DELTA:g})-DP per upload", dp_eps,
             an.hooks(scheme="dp", eps=dp_eps, dp="local")["uplink"])):
        cfg = an.config(scheme=scheme, rounds=1, K=2 * trials, eval_every=10**9, **TOY_TRAINING)
        cfg = engine.with_config(cfg, clients_per_round=None)
        res = audit.audit_uploads(_toy_model(), out_client, in_client, cfg, uplink=hook, trials=trials, delta=an.DELTA,
                                  alpha=alpha, seed=seed)
        upper = (mechanisms.gaussian_eps(sigma=an.dp_noise_multiplier(eps=dp_eps), delta=an.DELTA, sensitivity=1.0) if scheme == "dp"
                 else float("inf"))
        rows.append(_row(res, scheme=name, setting="one upload, end to end (engine)", claim=claim, claim_eps=eps,
                         delta=an.DELTA, upper=upper, how="engine", trials=trials, judged=scheme == "dp"))
    return rows


def controls(*, trials: int, engine_trials: int, alpha: float = 0.05, seed: int = 0) -> List[dict]:
    """Broken mechanisms the audit must catch (its lower bound above the eps they claim), each
    beside its correct twin: a Gaussian with noise 10x too small, an upload whose clipping is
    skipped (the real engine round), and amplification by sampling claimed where the canary is
    in every release."""
    from fldp import accounting, mechanisms

    rows = []
    z = accounting.calibrate_gaussian_run(target_eps=2.0, target_delta=1e-5, rounds=10)
    for name, scale in (("Gaussian, 10 releases, calibrated to eps 2", z), ("... noise 10x too small", z / 10)):
        r = audit.audit_mechanism(noise="gaussian", scale=scale, sensitivity=1.0, rounds=10, trials=trials,
                                  delta=1e-5, alpha=alpha, seed=seed)
        rows.append({"control": name, "claimed eps": 2.0, "audit eps (lower)": r.eps_lower, "broken": scale < z})
    claimed = accounting.planned_epsilon(event=accounting.gaussian(noise_multiplier=1.0), rounds=50,
                                         client_sampling_prob=0.1, delta=1e-5)
    for name, q in (("Poisson-sampled Gaussian (q = 0.1, 50 releases)", 0.1), ("... but the canary is always in", 1.0)):
        r = audit.audit_mechanism(noise="gaussian", scale=1.0, sensitivity=1.0, rounds=50, sampling_prob=q, trials=trials,
                                  delta=1e-5, alpha=alpha, seed=seed)
        rows.append({"control": name, "claimed eps": claimed, "audit eps (lower)": r.eps_lower, "broken": q == 1.0})
    out_client, in_client = _toy_client(seed)
    sigma = mechanisms.analytic_gaussian_sigma(eps=2.0, delta=1e-5, sensitivity=2.0)  # one upload, models clipped to norm 1: sensitivity 2
    for name, clip in (("one upload clipped to norm 1, calibrated to eps 2 (engine)", 1.0), ("... clipping skipped", None)):
        cfg = engine.FLConfig(num_rounds=1, clip=clip, clip_mode="params" if clip else None, **TOY_TRAINING)
        r = audit.audit_uploads(_toy_model(), out_client, in_client, cfg,
                                uplink=engine.gaussian_uplink(sigma, sensitivity=2.0), trials=engine_trials, delta=1e-5,
                                alpha=alpha, seed=seed)
        rows.append({"control": name, "claimed eps": 2.0, "audit eps (lower)": r.eps_lower, "broken": clip is None})
    for row in rows:
        row["caught"] = bool(row["audit eps (lower)"] > row["claimed eps"])
    return rows


# -- the four schemes at equal true privacy -------------------------------------------------------
TASKS = {"mnist-mlp": ("mnist", "mlp"), "mnist-logreg": ("mnist", "logreg"), "adult-logreg": ("adult", "logreg")}
SCHEMES = ("nbafl", "fedsgd_dpc", "secure_fedavg", "adaptive")
#: The DP schemes whose eps in the benchmark is sound: the sensitivity each is calibrated to is one
#: its local training provably respects (what the ranking "at equal true eps" may rest on).
SOUND = {
    "nbafl": "the update clipped to C_u: two neighbours' uploads differ by at most 2 C_u (triangle inequality)",
    "fedsgd_dpc": "one gradient of per-sample gradients clipped to xi_2, Poisson-sampled: 2 xi_2 / (q d_i) "
                  "(Zhou et al., Theorem 2's sensitivity, DP-SGD's accountant)",
    "secure_fedavg": "each of the Q steps' mini-batch gradient clipped to G: Lemma 1's 4 Q G eta bounds any "
                     "two trajectories (Li et al.; li2021/02 re-derives it)",
}
#: What each scheme's ceiling (``private=False``) keeps of its local training.
CEILINGS = {
    "nbafl": "NbAFL's proximal local epoch and its update clipping, no noise",
    "fedsgd_dpc": "FedSGD-DPC's one gradient per queried client, no clipping and no noise (zhou.run, private=False)",
    "secure_fedavg": "secure FedAvg's Q = 10 clipped steps of b = 10 rows, no noise (li2021.run, private=False)",
    "adaptive": "the adaptive scheme's local epoch without its noise (regular FedAvg, adaptive_noise.run)",
}


def _task(task: str, N: int, seed: int, subsample: Optional[int], max_test: Optional[int]):
    from fldp import data as D, validate

    validate.choice("task", task, TASKS)
    name, kind = TASKS[task]
    fed = D.cached_federated(name, N, "iid", seed=seed, subsample=subsample, max_test=max_test,
                             pixels="unit" if name == "mnist" else "standardized")  # once per worker and split
    features, classes = fed.x_test.shape[1], 2 if name == "adult" else 10
    model = models.MLP(in_features=features) if kind == "mlp" else \
        models.MultinomialLogReg(in_features=features, num_classes=classes, bias=True)
    return fed, model


def accuracy_run(*, scheme: str, task: str, eps: Optional[float], private: bool = True, delta: float = 1e-5, N: int = 20,
                 K: int = 10, rounds: int = 20, seed: int = 0, subsample: Optional[int] = None,
                 max_test: Optional[int] = None, c: float = 10.0, C_update: float = NBAFL_UPDATE_CLIP) -> dict:
    """One run of ``scheme`` on ``task`` (same N, K clients per round, rounds for every scheme) with
    its noise calibrated by the accountant so that each client's *whole run* is (eps, delta)-DP at a
    sensitivity its local training respects (:data:`SOUND`); returns the final test accuracy, the
    realised spend (where the scheme keeps privacy records) and the eps the paper's own calibration
    would have claimed for that noise (FedSGD-DPC and secure FedAvg; None for NbAFL, whose paper
    clips parameters, not updates).  Each scheme keeps its own local training (NbAFL: one proximal
    local epoch, update clipped to ``C_update``; FedSGD-DPC: one gradient reply per round from K
    queried clients; secure FedAvg: Q = 10 steps of b = 10 rows; adaptive noise: one local epoch
    with noise c times the update's norm, c <= K).  ``private=False``: the scheme's ceiling, its own
    local training without noise (:data:`CEILINGS`; ``eps`` is ignored); the adaptive scheme has
    no eps (``eps=None``)."""
    from fldp import accounting, validate

    validate.choice("scheme", scheme, SCHEMES)
    if private and scheme != "adaptive" and eps is None:
        raise ValueError(f"eps=None: scheme={scheme!r} needs a target eps (or private=False for its ceiling)")
    fed, model = _task(task, N, seed, subsample, max_test)
    out = {"scheme": scheme, "task": task, "eps": eps if private else None, "private": bool(private),
           "paper_eps_for_this_noise": None, "eps_spent": None}
    if scheme == "nbafl":
        cfg = nbafl_config(T=rounds, K=K, C_update=C_update, private=private, seed=seed, eval_every=rounds)
        cal = nbafl_calibration(eps=eps, delta=delta, N=N, T=rounds, m=fed.m, C_update=C_update) if private else None
        h = engine.run(model, fed, cfg, uplink=engine.gaussian_uplink(cal.sigma_U, sensitivity=cal.sensitivity_U)
                       if private else None)
        if private:
            out["eps_spent"] = accounting.spent(h, delta=delta).eps
    elif scheme == "fedsgd_dpc":
        h, cal = zhou.run(model, fed, mechanism="gaussian", eps=eps or 1.0, b=K, T=rounds, delta=delta,
                          rule="accountant", private=private, seed=seed, eval_every=rounds)
        if private:
            paper = zhou.calibrate(mechanism="gaussian", eps=1.0, delta=delta, b=K, T=rounds, N=N, d_i=int(fed.m))
            out["paper_eps_for_this_noise"] = paper.scale / cal.scale  # Theorem 2's sigma is proportional to 1/eps
            out["eps_spent"] = cal.eps_run
    elif scheme == "secure_fedavg":
        h, cal = li.run(model, fed, eps=eps or 1.0, Q=10, b=10, K=K, rounds=rounds, delta=delta, rule="accountant",
                        private=private, seed=seed, eval_every=rounds)
        if private:
            out["eps_spent"] = cal.eps_run
            w = cal.worst  # eq. (9)'s sigma is proportional to 1/eps: the eps it would claim for one upload
            out["paper_eps_for_this_noise"] = (li_th.sigma_eq9(eps=1.0, delta=delta, q=float(cal.q[w]), sensitivity_df=1.0)
                                               / float(cal.z[w]))
    else:
        r = an.run(model, fed, scheme="ours" if private else "regular", rounds=rounds, K=K, c=c, p=0.0, local_epochs=1,
                   batch_size=50, lr=0.05, seed=seed, eval_every=rounds)
        h = r.history
    out["test_acc"] = float(h.test_acc[-1])
    out["diverged_at"] = h.diverged_at
    return out


#: Bumped when accuracy_run's numbers change (the run store keys on it): 2 = NbAFL update-clipped at
#: 2 C_u (was the paper's 2C/m), per-scheme ceilings (``private=False``).
accuracy_run.store_version = 2


# -- verdicts of 02_accuracy ------------------------------------------------------------------------
def chance_accuracy(task: str, *, N: int = 20, seed: int = 0, subsample: Optional[int] = None,
                    max_test: Optional[int] = None) -> float:
    """What an untrained model scores on ``task``'s test set: the share of its most frequent label
    (the best constant guess; about 0.11 on MNIST, 0.76 on Adult)."""
    fed, _ = _task(task, N, seed, subsample, max_test)
    y = fed.y_test.long().cpu()
    return float(torch.bincount(y).max()) / len(y)


def same_ranking(acc, *, min_effect: float, min_seeds: Optional[int] = None):
    """Claim: the schemes rank the same way on every task.  ``acc[task][scheme]``: per-seed final
    accuracies, the same seeds in the same order everywhere.  Every pair of schemes is ordered on
    every task by the one paired rule (:func:`fldp.verdicts.paired_greater`, which holds on one
    side and fails on the other beyond ``min_effect``): the claim **fails** when a pair is ordered
    one way on one task and the other way on another, **holds** when every pair is ordered, the
    same way, on every task, and is otherwise ``inconclusive`` (the open pairs' first reason:
    ``diverged`` when a paired difference is not finite, else ``spread``)."""
    from fldp import verdicts as V

    min_seeds = V.MIN_SEEDS if min_seeds is None else min_seeds
    tasks = list(acc)
    schemes = list(acc[tasks[0]]) if tasks else []
    if len(tasks) < 2 or len(schemes) < 2 or any(list(acc[t]) != schemes for t in tasks):
        raise ValueError("acc needs at least two tasks, each with the same schemes (at least two)")
    signs, reasons = {}, []
    for i, a in enumerate(schemes):
        for b in schemes[i + 1:]:
            for t in tasks:
                v = V.paired_greater(acc[t][a], acc[t][b], labels=(a, b), min_effect=min_effect, min_seeds=min_seeds)
                signs[(a, b, t)] = {"holds": 1, "fails": -1}.get(v.verdict, 0)
                if not signs[(a, b, t)]:
                    reasons.append(v.reason)
    means = {t: sorted(schemes, key=lambda s: -float(np.mean(acc[t][s]))) for t in tasks}
    stats = {"ranking_by_mean": means, "pairs": {f"{a} vs {b}": {t: signs[(a, b, t)] for t in tasks}
                                                 for i, a in enumerate(schemes) for b in schemes[i + 1:]}}
    flipped = [f"{a} vs {b}" for i, a in enumerate(schemes) for b in schemes[i + 1:]
               if {signs[(a, b, t)] for t in tasks} >= {1, -1}]
    if flipped:
        return V.Verdict("fails", None, f"ordered oppositely on two tasks: {', '.join(flipped)}", stats)
    if not reasons:
        return V.Verdict("holds", None, f"every pair ordered the same way on every task: {means[tasks[0]]}", stats)
    reason = min(reasons, key=V.REASON_ORDER.index)
    return V.inconclusive(reason, f"{len(reasons)} pair(s) of schemes not ordered on some task (paired seeds); "
                                  f"rankings by mean: {means}", stats=stats)


# -- 01_audit: the rows as audited, and the verdict of a paper's claim from its audit ----------------
def zhou_gaussian_release(*, eps: float = 1.0, b: int = 1, T: int = 100, N: int = 10, d_i: int = 6000,
                          delta: float = 1e-5) -> Release:
    """FedSGD-DPC's Gaussian mechanism at the paper's Gaussian point (Zhou et al., Sec. VII:
    eps in {0.1, 0.5, 1}, T = 100, b in {1, 5, 10}, q = 0.01, delta = 1e-5; N = 10 clients of
    6,000 rows), Theorem 2's sigma with the classic c_2 (the paper leaves c_2 out)."""
    cal = zhou.calibrate(mechanism="gaussian", eps=eps, delta=delta, rule="paper", b=b, T=T, N=N, d_i=d_i)
    return Release("FedSGD-DPC (gaussian)", f"paper: eps {eps:g}, b = {b}, T = {T}", "gaussian", cal.scale,
                   cal.sensitivity, cal.replies_max, cal.q, f"({eps:g}, {delta:g})-DP per client (Theorem 2, c_2 classic)",
                   eps, delta, cal.eps_run)


def audited_releases(**kw) -> List[Release]:
    """:func:`releases` (same keywords) as ``01_audit`` audits them: FedSGD-DPC's Gaussian row at
    the paper's Gaussian point (:func:`zhou_gaussian_release`; :func:`releases` puts it at the
    Laplace runs' eps 5, b = 5, T = 50), and NbAFL's row labelled for what is audited: the T = 25
    uploads composed, each with the noise the paper's sigma_U = c L Ds_U / eps gives at L = 1."""
    from dataclasses import replace

    out = []
    for r in releases(**kw):
        if r.setting.startswith("paper") and r.scheme == "FedSGD-DPC (gaussian)":
            r = zhou_gaussian_release()
        elif r.setting.startswith("paper") and r.scheme == "NbAFL":
            r = replace(r, setting=f"paper: eps 60, L = 1, T = {r.rounds} uploads",
                        claim=f"(60, 0.01)-DP per client, read for the run: {r.rounds} uploads composed, each with "
                              "the noise of one exposure (L = 1)")
        out.append(r)
    return out


def audit_verdict(row: dict):
    """The verdict of a paper's accountant from its simulated row of :func:`audit_release` (a check
    of the accountant under the paper's own sensitivity, which it takes as given), one rule both
    ways: **fails** when an eps the releases certainly spend exceeds the claim (the audit's
    certified lower bound, or ``accountant eps (lower)`` where the accountant is exact or bounds
    from below); **holds** when the accountant's upper bound for the same releases is within the
    claim (a proof); otherwise ``inconclusive: resolution`` when the claim lies beyond what the
    audit's trials can certify, and ``inconclusive: no-power`` when it does not (an audit within a
    claim that the accountant says is exceeded is too small to reach it)."""
    from fldp import verdicts as V

    low, claim, up = float(row["audit eps (lower)"]), float(row["claimed eps"]), float(row["accountant eps (upper)"])
    exact = row.get("accountant eps (lower)")
    stats = {"lower": low, "accountant lower": exact, "claimed": claim, "accountant": up,
             "resolution": float(row["audit resolution"])}
    if low > claim:
        return V.Verdict("fails", None, f"certified lower bound {low:.3g} above the claimed {claim:g}", stats)
    if exact is not None and float(exact) > claim * (1 + 1e-9):
        return V.Verdict("fails", None, f"the accountant's lower bound {float(exact):.3g} (exact, or the PLD's optimistic "
                                        f"estimate) above the claimed {claim:g}; the audit certifies {low:.3g}", stats)
    if up <= claim * (1 + 1e-9):
        return V.Verdict("holds", None, f"certified lower bound {low:.3g} and accountant {up:.3g} within the claimed "
                                        f"{claim:g}", stats)
    gate = V.gate_resolution(claim, limit=row["audit resolution"], what="the claimed eps")
    return gate or V.inconclusive("no-power", f"certified lower bound {low:.3g} within the claimed {claim:g}, but the "
                                              f"accountant says the same releases spend {up:.3g}: the audit does not reach it",
                                  stats=stats)


def end_to_end_verdict(row: dict):
    """The verdict of a claim from an end-to-end (engine) audit row, which tests the sensitivity the
    noise is calibrated to as well as its accountant: ``inconclusive: resolution`` when the claimed
    eps is beyond the audit's resolution; ``fails`` when the certified lower bound exceeds the claim
    (the upload moves further than the calibration allows, or its accountant understates: ``why``
    says which by the accountant's eps at the assumed sensitivity); otherwise ``inconclusive:
    no-power``: an audit within a claim is no proof of it."""
    from fldp import verdicts as V

    low, claim, up = float(row["audit eps (lower)"]), float(row["claimed eps"]), float(row["accountant eps (upper)"])
    stats = {"lower": low, "claimed": claim, "accountant at the assumed sensitivity": up,
             "resolution": float(row["audit resolution"])}
    cause = ("the accountant at the assumed sensitivity is within the claim, so the sensitivity is exceeded"
             if up <= claim * (1 + 1e-9) else f"the accountant at the assumed sensitivity already says {up:.3g}")

    def decide():
        if low > claim:
            return V.Verdict("fails", None, f"certified lower bound {low:.3g} above the claimed {claim:g} ({cause})", stats)
        return V.inconclusive("no-power", f"certified lower bound {low:.3g} within the claimed {claim:g}: no evidence "
                                          "either way", stats=stats)

    return V.first(V.gate_resolution(claim, limit=row["audit resolution"], what="the claimed eps"), decide)


# -- figures ------------------------------------------------------------------------------------------
def audit_figure(rows: List[dict], *, alpha: float):
    """``01_audit``'s figure: per row the accountant's upper bound (a bar; inf drawn to the top,
    hatched and marked), the audit's certified lower bound (0 drawn at the floor), its Gaussian-DP
    reading (hollow where above the resolution: not certified), the claim and the resolution, each
    row labelled with how it was audited and its trials per side."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(14, 5.4), layout="constrained")
    x = np.arange(len(rows))
    up = np.array([float(r["accountant eps (upper)"]) for r in rows])
    finite = [v for r in rows for v in (r["accountant eps (upper)"], r["audit resolution"], r["audit eps, GDP reading"])
              if np.isfinite(float(v)) and float(v) > 0]
    top, floor = 3 * max(finite), 1e-2
    inf = ~np.isfinite(up)
    ax.bar(x[~inf], up[~inf], color="0.85", label="accountant: upper bound at the assumed sensitivity")
    ax.bar(x[inf], np.full(inf.sum(), top), color="white", edgecolor="0.5", hatch="//", label="accountant: inf (not DP)")
    for xi in x[inf]:
        ax.text(xi, top / 1.6, "inf", ha="center", fontsize=11, fontweight="bold")
    low = np.array([float(r["audit eps (lower)"]) for r in rows])
    ax.plot(x[low > 0], low[low > 0], "o", color="C3", ms=8, label=f"audit: certified lower bound (1 - alpha = {1 - alpha:g})")
    if (low <= 0).any():
        ax.plot(x[low <= 0], np.full((low <= 0).sum(), floor * 1.3), "v", color="C3", ms=8, label="audit lower bound 0 (at the floor)")
    gdp = np.array([float(r["audit eps, GDP reading"]) for r in rows])
    ok = np.array([bool(r["GDP reading within resolution"]) for r in rows]) & (gdp > 0)
    ax.plot(x[ok], gdp[ok], "^", color="C1", label="audit: Gaussian-DP reading (within the resolution)")
    over = np.array([not r["GDP reading within resolution"] for r in rows])
    ax.plot(x[over], np.minimum(gdp[over], top), "^", mfc="none", color="C1", ms=8,
            label="Gaussian-DP reading above the resolution: NOT certified")
    claim = np.array([np.nan if r["claimed eps"] is None else float(r["claimed eps"]) for r in rows])
    ax.plot(x, claim, "x", color="k", ms=9, mew=2, label="the paper's claim")
    ax.plot(x, [r["audit resolution"] for r in rows], "_", color="C0", ms=22, mew=2, label="audit resolution (perfect separation)")
    sim = [i for i, r in enumerate(rows) if r["audit"] == "simulated"]
    if sim and len(sim) < len(rows):
        ax.axvline(max(sim) + 0.5, color="0.3", ls="--", lw=1)
    n = {h: sorted({r["trials per side"] for r in rows if r["audit"] == h}) for h in ("simulated", "engine")}
    ax.set(yscale="log", ylim=(floor, top * 1.5), ylabel="eps", xticks=x, xlim=(-0.6, len(rows) - 0.4),
           title="Audit lower bound vs accountant upper bound: left of the dashed line simulated (an accountant check at the "
                 f"assumed sensitivity, {', '.join(f'{v:,}' for v in n['simulated'])} runs per side), right end to end on the "
                 f"engine ({', '.join(f'{v:,}' for v in n['engine'])} clients per side)")
    ax.title.set_fontsize(9)
    ax.set_xticklabels([f"{r['scheme']}\n{r['setting']}\n[{r['audit']}, {r['trials per side']:,} per side]" for r in rows],
                       rotation=60, ha="right", fontsize=6.5)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1)); ax.grid(alpha=0.3, axis="y")
    return fig


def accuracy_figure(runs: dict, *, tasks, eps_list, adaptive_audit: Optional[dict], delta: float, c: float, title: str):
    """``02_accuracy``'s figure: per task each sound DP scheme's final accuracy against the whole-run
    eps (mean, min-max band over seeds) with its ceiling (the same training without noise) dashed in
    its colour; the adaptive scheme, which has no eps, off the eps axis at a column of its own,
    labelled with its audit (``adaptive_audit``: its row of ``01_audit``), its ceiling beside it.
    ``runs[task, scheme, eps or None or "ceiling"]``: per-seed results of :func:`accuracy_run`."""
    import matplotlib.pyplot as plt

    from fldp import plots

    fig, axes = plt.subplots(1, len(tasks), figsize=(5.4 * len(tasks), 4.4), squeeze=False, layout="constrained")
    x_ad = max(eps_list) * 4
    acc = lambda key: np.array([r["test_acc"] for r in runs[key]])
    for ax, t in zip(axes[0], tasks):
        for i, s in enumerate(SOUND):
            plots.mean_band(ax, eps_list, np.array([acc((t, s, e)) for e in eps_list]).T, label=s, marker="o", color=f"C{i}")
            ax.axhline(acc((t, s, "ceiling")).mean(), ls="--", lw=1, color=f"C{i}", label=f"{s}: ceiling (no noise)")
        a, ceil = acc((t, "adaptive", None)), acc((t, "adaptive", "ceiling"))
        ax.errorbar([x_ad], [a.mean()], yerr=[[a.mean() - a.min()], [a.max() - a.mean()]], fmt="s", color="C3", capsize=3,
                    label=f"adaptive noise (c = {c:g}): no eps")
        ax.plot([x_ad], [ceil.mean()], "_", color="C3", ms=18, mew=2, label="adaptive: ceiling (no noise)")
        ax.axvline(np.sqrt(max(eps_list) * x_ad), color="0.5", lw=1, ls=":")
        if adaptive_audit is None:
            where = "no finite eps"
        else:
            lo, res = float(adaptive_audit["audit eps (lower)"]), float(adaptive_audit["audit resolution"])
            where = (f"no finite eps\n(01_audit: >= {lo:.1f} per upload,\n" +
                     ("its resolution)" if lo >= res * (1 - 1e-9) else f"resolution {res:.1f})"))
        ax.set(xscale="log", xlabel=f"true whole-run eps per client (delta = {delta:g})", ylabel="final test accuracy", title=t,
               xticks=list(eps_list) + [x_ad], xticklabels=[f"{e:g}" for e in eps_list] + [where])
        ax.xaxis.set_minor_formatter(plt.NullFormatter()); ax.tick_params(axis="x", labelsize=7); ax.grid(alpha=0.3)
    axes[0, -1].legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle(title)
    return fig


# -- the benchmark chapters' claims (notebooks/benchmark/01_audit, 02_accuracy) --------------------
#: Half a point of test accuracy: the minimum material effect of the benchmark's orderings.
ACC_EFFECT = 0.005


BENCH = ("the benchmark's own setting: every scheme at the same true eps by the accountant, 5 seeds, the tasks "
         "MNIST-MLP, MNIST-logistic regression and Adult-logistic regression")
CONTROLS = "the audit's own controls (no paper's setting): calibrated mechanisms beside broken twins"


def claims() -> dict:
    """The benchmark chapters' fixed claims (:class:`fldp.verdicts.Claim`), by name."""
    return {
        "broken_caught": Claim(
            "audit: broken mechanisms caught", "each broken control's certified lower bound exceeds the eps it claims",
            kind="diagnostic", setting="reading", setting_note=CONTROLS,
            falsifier="a broken control (noise 10x too small, amplification claimed for an always-present canary, "
                      "clipping skipped) whose certified lower bound stays at or below its claimed eps"),
        "nbafl_2Cm": Claim(
            "NbAFL: the upload sensitivity 2C/m holds (end to end)",
            "one upload of NbAFL's local training moves by at most Ds_U = 2C/m, so sigma_U = c Ds_U / eps makes it "
            "(eps, delta)-DP",
            kind="paper", source="Sec. III-A, eq. (5)-(6): Ds_U = 2C/m, sigma_U = c L Ds_U / eps", setting="reading",
            setting_note="a toy client (8 rows, 5 features, the canary an outlier row), one upload, NbAFL's mu = 0.01 "
                         "with 2 local epochs of batches of 3 at lr 0.5; C at the toy's scale",
            falsifier="a certified end-to-end audit lower bound above the claimed eps while the accountant at 2C/m "
                      "stays within it"),
        "zhou_understates": Claim(
            "FedSGD-DPC's calibration understates what its noise spends",
            "for the noise that spends a whole-run eps by the accountant, Theorem 2 (classic c_2) would state a smaller "
            "eps, for the same whole run",
            kind="derived", setting="reading", setting_note=BENCH + "; Theorem 2's c_2 read as the classic "
                                                                    "sqrt(2 ln(1.25/delta)) (the paper leaves it out)",
            falsifier="a FedSGD-DPC run whose Theorem 2 eps for its noise is at or above the accountant's whole-run eps "
                      "for the same noise"),
        "ranking": Claim(
            "ranking at equal true eps", "the schemes whose eps is sound rank the same way on every task",
            kind="diagnostic", setting="reading", setting_note=BENCH + "; the middle eps of the grid",
            falsifier="a pair of schemes ordered one way on one task and the other way on another, each ordering "
                      "beyond half a point on paired seeds",
            min_effect=ACC_EFFECT, units="test accuracy, as a fraction"),
    }


def accountant_check_claim(*, scheme: str, claim: str, setting: str, reading: str = ""):
    """The claim that a paper's accountant, under its own sensitivity, spends no more than it claims
    (``benchmark/01_audit``'s simulated rows)."""
    return Claim(f"{scheme}: accountant check of {claim}",
                  f"under the sensitivity the paper assumes, its noise spends no more than it claims ({claim}; {setting})",
                  kind="derived", setting="reading" if reading else "paper", setting_note=reading,
                  falsifier="an eps the releases certainly spend above the claim: a certified audit lower bound "
                            "(confidence 1 - alpha) for a canary of exactly the paper's sensitivity, or the accountant's "
                            "own lower bound where it is exact")


def grows_claim(*, scheme: str, task: str):
    """The benchmark's diagnostic that ``scheme``'s accuracy on ``task`` rises with the true eps."""
    return Claim(f"{scheme} on {task}: accuracy grows with eps", "final accuracy rises with the true eps over the grid",
                  kind="diagnostic", setting="reading", setting_note=BENCH,
                  falsifier="each seed's fitted change of accuracy over the log-eps grid negative beyond half a point",
                  min_effect=ACC_EFFECT, units="test accuracy, as a fraction")


def ceiling_claim(*, scheme: str, how: str):
    """The benchmark's diagnostic that ``scheme``'s own training trains without noise."""
    return Claim(f"{scheme}: its training trains without noise (ceiling)",
                  f"{how}: every seed on every task ends above the untrained threshold",
                  kind="diagnostic", setting="reading", setting_note=BENCH,
                  falsifier="a seed of the noiseless run below the untrained threshold (chance plus a tenth of the gap "
                            "to 1, or diverged) on some task: then the algorithm, not its noise, costs the accuracy")

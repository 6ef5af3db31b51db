"""One valid keyword example per public formula function, for tests/test_properties_domain.py.

The functions covered are every public function of :mod:`fldp.mechanisms`,
:mod:`fldp.accounting`, :mod:`fldp.audit` and each paper's ``theory`` module: the names in a
module's ``__all__`` plus any public function defined in the module (so that a new function
is covered whether or not it was added to ``__all__``).  :func:`public_functions` enumerates
them; the domain test fails when one has no entry in :data:`EXAMPLES`.

The values come from the existing tests and the docstrings (the papers' own settings where
they are cheap).  Objects that a call consumes or mutates (a torch generator, a model) are
wrapped in :class:`Fresh` and rebuilt for every call.
"""
from __future__ import annotations

import importlib
import inspect
import math

import numpy as np
import torch

MODULES = (
    "fldp.mechanisms",
    "fldp.accounting",
    "fldp.audit",
    "fldp.papers.wei2020.theory",
    "fldp.papers.wei2020.claims",
    "fldp.papers.zhou.theory",
    "fldp.papers.li2021.theory",
    "fldp.papers.adaptive_noise.theory",
)


class Fresh:
    """A value rebuilt for every call (``make()``), e.g. a torch generator."""

    def __init__(self, make):
        self.make = make

    def __repr__(self) -> str:
        return "Fresh(...)"


def materialise(kwargs: dict) -> dict:
    return {k: (v.make() if isinstance(v, Fresh) else v) for k, v in kwargs.items()}


def public_functions() -> dict:
    """``{"module.name": function}`` for every public function of :data:`MODULES`."""
    out = {}
    for modname in MODULES:
        mod = importlib.import_module(modname)
        names = set(getattr(mod, "__all__", ())) | {
            n for n, o in vars(mod).items()
            if not n.startswith("_") and callable(o) and getattr(o, "__module__", None) == modname}
        for n in sorted(names):
            obj = getattr(mod, n)
            if inspect.isclass(obj) or not callable(obj):  # classes and constants: not formulas
                continue
            if inspect.signature(obj).return_annotation in ("Claim", "V.Claim"):  # a claim's text: not a formula
                continue
            out[f"{modname}.{n}"] = obj
    return out


def budget(n: int) -> int:
    """Examples for a property whose examples are expensive: ``n`` under the ``ci`` profile,
    30 times as many under ``thorough`` (tests/conftest.py; HYPOTHESIS_PROFILE)."""
    import os
    return n if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 30 * n


def _gen():
    return Fresh(lambda: torch.Generator().manual_seed(0))


def _events():
    from fldp import accounting as A
    return A.gaussian(noise_multiplier=1.0)


def _records():
    from fldp import accounting as A
    g = A.gaussian(noise_multiplier=2.0)
    return [A.PrivacyRecord(round=1, clients=(0, 1), uplink=(g, g), downlink=None),
            A.PrivacyRecord(round=2, clients=(0,), uplink=(g,), downlink=None)]


def _audit_uploads_case():
    from fldp import engine, mechanisms, models
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 5, generator=g)
    y = (x[:, 0] > 0).long()
    canary = (torch.cat([x, 30 * torch.ones(1, 5)]), torch.cat([y, torch.tensor([0])]))
    sigma = mechanisms.analytic_gaussian_sigma(eps=2.0, delta=1e-5, sensitivity=2.0)
    cfg = engine.FLConfig(num_rounds=1, local_epochs=1, batch_size=4, lr=0.5, clip=1.0, clip_mode="params")
    return dict(model=Fresh(lambda: models.MultinomialLogReg(in_features=5, num_classes=2)),
                client_out=(x, y), client_in=canary, config=cfg,
                uplink=engine.gaussian_uplink(sigma, sensitivity=2.0), trials=8, delta=1e-5,
                alpha=0.05, seed=0)


def _zhou_U():
    import functools
    from fldp.papers.zhou import theory as zt
    return functools.partial(zt.U_laplace, C1=10.0, C2=0.01, C3=5.0, gamma=4.0)


LAP = dict(N=4, p=10, d=100.0, eps=1.0, xi1=3.0)                 # tests/test_zhou_theory.py
CURV = dict(G=2.0, lam=2.0, mu=1.0, Gamma=0.5, Y0=3.0)
GAU = dict(N=4, p=10, d=100.0, eps=1.0, delta=math.exp(-2.0), xi2=2.0, c2=1.0, q=0.5, Lambda=1.0)
NOY0 = {k: v for k, v in CURV.items() if k != "Y0"}
WEI_T2 = dict(T=25, eps=60.0, Theta=1.0, P=0.83, kappa0=1e-3, kappa1=1e-2)
WEI_K = dict(rho=1.0, B=1.0, mu=10.0)  # lambda2 < 0: mu > rho B (1 + B/2)
WEI_D2 = dict(WEI_K, eps=60.0, Theta=1.0, beta=1.0, l=1.0, c=3.1, m=1200, N=50, C=20.0, L=1, d=1000,
              lambda1="derived")  # the re-derived Theorem 2
SCORES_OUT = [0.1 * i for i in range(20)]
SCORES_IN = [0.1 * i + 0.5 for i in range(20)]


def examples() -> dict:
    """``{"module.name": kwargs}``: one valid call of every public function."""
    x = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    ev = _events()
    M, A, AU = "fldp.mechanisms.", "fldp.accounting.", "fldp.audit."
    W, Z = "fldp.papers.wei2020.theory.", "fldp.papers.zhou.theory."
    L, AN = "fldp.papers.li2021.theory.", "fldp.papers.adaptive_noise.theory."
    ex = {
        # fldp.mechanisms
        M + "classic_gaussian_c": dict(delta=1e-5),
        M + "classic_gaussian_valid": dict(eps=0.5),
        M + "classic_gaussian_sigma": dict(eps=0.5, delta=1e-5, sensitivity=1.0),
        M + "gaussian_delta": dict(eps=1.0, sigma=2.0, sensitivity=1.0),
        M + "analytic_gaussian_sigma": dict(eps=1.0, delta=1e-5, sensitivity=1.0, tol=1e-12),
        M + "gaussian_eps": dict(sigma=2.0, delta=1e-5, sensitivity=1.0, tol=1e-12),
        M + "laplace_scale": dict(eps=1.0, sensitivity=1.0),
        M + "gaussian_noise": dict(shape=(3, 2), sigma=1.0, generator=_gen()),
        M + "laplace_noise": dict(shape=(3, 2), scale=1.0, generator=_gen()),
        M + "row_norms": dict(x=x, ord=2),
        M + "clip_l2": dict(x=x, bound=1.0),
        M + "clip_l1": dict(x=x, bound=1.0),
        # fldp.accounting
        A + "gaussian": dict(noise_multiplier=1.0),
        A + "laplace": dict(noise_multiplier=1.0),
        A + "poisson_sampled": dict(event=ev, sampling_prob=0.1),
        A + "sampled_without_replacement": dict(event=ev, sample_size=10, population=100),
        A + "self_composed": dict(event=ev, count=5),
        A + "composed": dict(events=[ev, ev]),
        A + "without_sampling": dict(event=ev),
        A + "client_event": dict(records=_records(), client=0),
        A + "epsilon": dict(event=ev, delta=1e-5, accountant="pld", relation="add_remove"),
        A + "delta_for": dict(event=ev, eps=1.0, accountant="pld", relation="add_remove"),
        A + "epsilon_lower_gaussian": dict(noise_multiplier=2.0, count=5, delta=1e-5, sampling_prob=1.0),
        A + "spent": dict(records=_records(), delta=1e-5, accountant="pld", relation="add_remove"),
        A + "compare": dict(records=ev, delta=1e-5, relation="add_remove"),
        A + "planned_epsilon": dict(event=ev, rounds=5, client_sampling_prob=0.1, delta=1e-5, accountant="rdp",
                                    relation="add_remove"),
        A + "calibrate_noise_multiplier": dict(
            make_event=lambda z: _self_composed(z, 5), target_eps=2.0, target_delta=1e-5, accountant="pld",
            tol=1e-4, relation="add_remove"),
        A + "calibrate_gaussian_run": dict(target_eps=2.0, target_delta=1e-5, rounds=5, sampling_prob=1.0,
                                           accountant="rdp", tol=1e-4),  # PLD of a sampled one: seconds
        # fldp.audit
        AU + "eps_from_rates": dict(tpr=0.5, fpr=0.1, delta=1e-5),
        AU + "gdp_mu": dict(tpr=0.6, fpr=0.2),
        AU + "gdp_eps": dict(mu=1.0, delta=1e-5),
        AU + "max_certifiable_eps": dict(n=100, alpha=0.05, delta=1e-5),
        AU + "audit_scores": dict(scores_out=SCORES_OUT, scores_in=SCORES_IN, delta=1e-5, alpha=0.05, seed=0),
        AU + "simulate": dict(noise="gaussian", scale=1.0, sensitivity=1.0, rounds=2, trials=20,
                              sampling_prob=1.0, seed=0),
        AU + "audit_mechanism": dict(delta=1e-5, alpha=0.05, noise="gaussian", scale=1.0, sensitivity=1.0,
                                     rounds=2, trials=20, sampling_prob=1.0, seed=0),
        AU + "audit_uploads": _audit_uploads_case(),
        # Wei et al. 2020
        W + "gaussian_c": dict(delta=0.01),
        W + "half_normal_mean": dict(sigma=1.0),
        W + "uplink_sensitivity": dict(C=20.0, m=1200),
        W + "sigma_uplink": dict(C=20.0, m=1200, eps=60.0, L=1, c=3.1),
        W + "downlink_sensitivity": dict(C=20.0, m=1200, p_i=0.02),
        W + "sigma_downlink": dict(C=20.0, m=1200, N=50, T=25, L=1, eps=60.0, c=3.1),
        W + "sigma_aggregate": dict(C=20.0, m=1200, N=50, T=25, L=1, eps=60.0, c=3.1),
        W + "lambdas": dict(WEI_K, lambda1="derived"),
        W + "theorem2_constants": dict(WEI_K, beta=1.0, l=1.0, c=3.1, m=1200, N=50, kappa_sign="paper",
                                       moments="derived", d=1000, C=20.0, lambda1="derived"),
        W + "theorem2_P": dict(WEI_K, l=1.0),
        W + "theorem2_best_contraction": dict(rho=1.0, B=1.0, l=1.0),
        W + "theorem2_noise_terms": dict(T=25, eps=60.0, c=3.1, m=1200, N=50, scale=1.0),
        W + "theorem2_bound": dict(WEI_T2),
        W + "theorem2_bound_general": dict(T=25, eps=60.0, Theta=1.0, beta=1.0, l=1.0, c=3.1, m=1200, N=50,
                                           C=20.0, kappa_sign="paper", **WEI_K),
        W + "theorem2_second_derivative": dict(WEI_T2),
        W + "theorem2_second_derivative_fd": dict(WEI_T2, h=1e-3),
        W + "theorem2_optimal_T": dict({k: v for k, v in WEI_T2.items() if k != "T"}, T_max=50),
        W + "noise_moments": dict(sigma=1.0, d=10),
        W + "theorem2_bound_derived": dict(WEI_D2, T=25),
        W + "theorem2_optimal_T_derived": dict(WEI_D2, T_max=50),
        W + "remark4_C_max": {k: v for k, v in WEI_D2.items() if k != "C"},
        W + "krandom_K_min": dict(eps=60.0, T=120, N=50),
        W + "krandom_b": dict(eps=60.0, T=200, N=50, K=20),
        W + "krandom_gamma": dict(eps=60.0, L=1, N=50, K=20),
        W + "krandom_T_min": dict(eps=60.0, N=50, K=20, condition="eq69"),
        W + "krandom_conditions": dict(eps=60.0, T=200, N=50, K=20, L=1),
        W + "sigma_downlink_krandom": dict(C=20.0, m=1200, N=50, K=20, T=200, L=1, eps=60.0, c=3.1,
                                           switch="eq21", on_undefined_b="raise"),
        W + "theorem3_alpha2": dict(WEI_K, K=20, N=50, alphas="independent"),
        W + "theorem3_Q": dict(WEI_K, l=1.0, K=20, N=50, alphas="independent"),
        W + "theorem3_mu_min": dict(rho=1.0, B=1.0, K=20, N=50, alphas="independent"),
        W + "theorem3_constants": dict(WEI_K, l=1.0, K=20, N=50, alphas="independent"),
        W + "theorem3_bound": dict(T=200, eps=60.0, K=20, N=50, m=1200, Theta=1.0, beta=1.0, l=1.0, c=3.1,
                                   moments="derived", d=1000, C=20.0, L=1, alphas="independent", **WEI_K),
        W + "theorem3_optimal_K": dict(T=200, eps=60.0, N=10, m=1200, Theta=1.0, beta=1.0, l=1.0, c=3.1,
                                       moments="derived", d=1000, C=20.0, L=1, alphas="independent", **WEI_K),
        W + "theorem3_C_max": dict(T=200, eps=60.0, K=20, N=50, m=1200, Theta=1.0, beta=1.0, l=1.0, c=3.1, L=1,
                                   d=1000, alphas="independent", **WEI_K),
        "fldp.papers.wei2020.claims.remark5_verdict": dict(rows={"eps=60": {"K_star": 5, "bound": 1.0, "bound_K_N": 2.0,
                                                     "K_min_valid": 2, "K_69": 3.1}}, N=10),
        "fldp.papers.wei2020.claims.remark5_verdict_nonvacuous": dict(rows={"eps=60": {"K_star": 5, "bound": 1.0, "bound_K_N": 2.0,
                                                                "K_min_valid": 2}}, N=10, Theta=3.0),
        W + "uplink_exposures_privacy": dict(eps=60.0, delta=0.01, L=1),
        # Zhou et al.
        Z + "first_step_reading": dict(hessian_top=[[2.0, 3.0], [2.5, 3.5]], secant_min_per_step=[0.5, 0.6]),
        Z + "check_queries": dict(N=10, b=2, T=5, d_i=600),
        Z + "laplace_scale": dict(eps=1.0, b=1, T=22, N=10, d_i=6000, xi1=300.0),
        Z + "gaussian_sigma": dict(eps=0.5, delta=1e-5, b=10, T=100, N=10, d_i=6000, xi2=10.0, c2=1.0),
        Z + "aggregated_laplace_variance": dict(eta=0.1, b=2, T=5, **LAP),
        Z + "aggregated_gaussian_variance": dict(eta=0.1, T=5, N=4, p=10, d=100.0, eps=1.0,
                                                 delta=math.exp(-2.0), xi2=2.0, c2=1.0),
        Z + "client_sampling_expectation": dict(d_i=[1.0, 3.0, 2.0], nu=[4.0, 8.0, 1.0], b=2),
        Z + "client_sampling_variance": dict(N=4, b=2, G=2.0),
        Z + "sampled_gradient_variance": dict(N=4, b=2, G=2.0, d=100.0, q=0.5, Lambda=1.0),
        Z + "one_step_bound": dict(dist_sq=1.0, mu=1.0, lam=2.0, eta=0.25, Gamma=0.5),
        Z + "gamma_of": dict(mu=1.0, lam=2.0),
        Z + "learning_rate": dict(t=3, mu=1.0, lam=2.0),
        Z + "theorem3_schedule": dict(mu=1.0, lam=2.0),
        Z + "appendix_e_coverage": dict(lr=0.05, decay=0.01, mu=0.3, lam=6.0),
        Z + "theorem2_c1_needed": dict(eps=0.5, q=0.01, b=1, T=100, N=10),
        Z + "omega0_laplace": dict(N=4, b=2, G=2.0, lam=2.0, Gamma=0.5),
        Z + "omega1_laplace": dict(b=2, T=5, **LAP),
        Z + "laplace_bound": dict(t=5, T=5, b=2, **LAP, **CURV),
        Z + "omega0_gaussian": dict(N=4, b=2, G=2.0, lam=2.0, Gamma=0.5, d=100.0, q=0.5, Lambda=1.0),
        Z + "omega1_gaussian": dict(p=10, T=5, N=4, d=100.0, eps=1.0, delta=math.exp(-2.0), xi2=2.0, c2=1.0),
        Z + "gaussian_bound": dict(t=5, T=5, b=2, **GAU, **CURV),
        Z + "laplace_A": dict(b=2.0, **LAP, **NOY0),
        Z + "T_star": dict(b=2.0, **LAP, **CURV),
        Z + "laplace_B": dict(T=5.0, **LAP, **CURV),
        Z + "b_star": dict(T=50.0, N=10, p=7840, d=60000.0, eps=1.0, xi1=300.0, G=17.95, clamp=True),
        Z + "laplace_C": dict(**LAP, **CURV),
        Z + "U_laplace": dict(T=5.0, b=2.0, C1=10.0, C2=0.01, C3=5.0, gamma=4.0),
        Z + "laplace_kkt_solutions": dict(C1=10.0, C2=0.01, C3=5.0, gamma=4.0, N=4),
        Z + "laplace_optimum": dict(C1=10.0, C2=0.01, C3=5.0, gamma=4.0, N=4),
        Z + "gaussian_E": dict(**GAU, **CURV),
        Z + "U_gaussian": dict(T=5.0, b=2.0, E1=10.0, E2=3.0, E3=0.5, gamma=4.0),
        Z + "gaussian_solutions": dict(E1=10.0, E2=3.0, E3=0.5, gamma=4.0, N=4),
        Z + "gaussian_optimum": dict(E1=10.0, E2=3.0, E3=0.5, gamma=4.0, N=4),
        Z + "acs": dict(U=_zhou_U(), T0=1.0, b0=2.0, N=4, T_max=1e4, tol=1e-9, max_iter=50),
        Z + "acs_multistart": dict(U=_zhou_U(), N=4, T_max=1e4, tol=1e-9, max_iter=50),
        Z + "table1": dict(mu=1.0, lam=1.5, G=17.95, Gamma=80.0, Y0=100.0, xi1=300.0, p=7840, d=60000.0,
                           N=10, eps_values=[1.0, 5.0], b_rounding="up"),
        Z + "implied_gamma": dict(T_a=22.0, eps_a=1.0, T_b=32.0, eps_b=5.0),
        # Li, Chang & Chi 2020
        L + "paper_lr": dict(t=10, eta0=0.2, decay=0.01),
        L + "theorem1_lr": dict(t=10, mu=0.1, kappa=12.5),
        L + "lemma1_sensitivity": dict(Q=10, G=2.0, eta=0.2),
        L + "lemma1_sensitivity_steps": dict(G=2.0, etas=[0.2, 0.19, 0.18]),
        L + "per_sample_sensitivity": dict(Q=10, G=2.0, eta=0.2, b=4),
        L + "lemma1_lr_ratio": dict(Q=10, decay=0.01),
        L + "sampling_ratio": dict(b=1, n_k=325, Q=10),
        L + "inclusion_prob": dict(b=1, n_k=325, Q=10),
        L + "amplified_eps": dict(eps=0.5, b=1, n_k=325, Q=10),
        L + "amplified_guarantee": dict(eps=0.5, delta=1e-4, b=1, n_k=325, Q=10),
        L + "eq8_bound": dict(eps=0.5, q=0.03),
        L + "eq8_valid": dict(eps=0.5),
        L + "amplified_gaussian_eps": dict(sigma=5.0, sensitivity_df=1.0, delta=1e-4, b=1, n_k=325, Q=10),
        L + "sigma_eq9": dict(eps=0.5, delta=1e-4, q=0.03, sensitivity_df=16.0),
        L + "theorem1_A": dict(p=[0.5, 0.5], gamma_sq=[1.0, 2.0], b=1, Q=10, G=2.0, L=1.0, Gamma=0.1),
        L + "theorem1_B": dict(M=7850, Q=10, b=1, G=2.0, n=6000, L=1.0, eps=0.5, delta=1e-4),
        L + "theorem1_C": dict(N=100, K=50, Q=10, G=2.0),
        L + "theorem1_bound": dict(T=100, L=1.25, mu=0.1, A=1.0, B=2.0, C=0.5, w0_dist_sq=1.0),
        L + "rounds_eq13": dict(Q=10, M=7850, b=1, G=2.0, n=6000, L=1.0, eps=0.5, delta=1e-4, K=50,
                                sum_p2_gamma2=1.0, Gamma=0.1),
        L + "rounds_theorem1": dict(Q=10, M=7850, b=1, G=2.0, n=6000, N=100, K=50, L=1.0, eps=0.5,
                                    delta=1e-4, sum_p2_gamma2=1.0, Gamma=0.1),
        L + "optimal_Q": dict(rounds=lambda Q: (Q - 3) ** 2 + 1.0, Q_max=10),
        # adaptive noise
        AN + "noise_std": dict(c=1.0, update_norm=2.0, dim=100),
        AN + "aggregate_noise_variance": dict(weights=[0.5, 0.5], sigmas=[0.1, 0.2]),
        AN + "max_noise_scale": dict(K=10, rho=0.5, dropouts=2),
        AN + "paper_max_noise_scale": dict(K=10, dropouts=2),
        AN + "angle_moments": dict(dim=100),
        AN + "angle_cdf": dict(theta=80.0, dim=100),
        AN + "angle_pdf": dict(theta=80.0, dim=100),
        AN + "threshold": dict(dim=100, p=-1.0),
        AN + "acceptance_probability": dict(dim=100, p=-1.0, c=1.0, reading="noise"),
        AN + "filter_drift": dict(dim=100, p=-1.0, c=1.0),
        AN + "expected_tries": dict(dim=100, p=-1.0, c=1.0, reading="noise"),
        AN + "expected_tries_normal": dict(p=-1.0),
        AN + "cost_multiple": dict(dims=[10, 100], p=-1.0, c=1.0, reading="noise"),
        AN + "mean_tries_interval": dict(dims=[10, 100], p=-1.0, vectors=5, level=0.95),
        AN + "descent_probability": dict(c=1.0, K=4, dim=10, rho=0.5, dropouts=1, trials=50, seed=0),
        AN + "fixed_direction_aggregate": dict(dim=10, K=3, c=1.0, p=0.0, trials=40, seed=0),
        AN + "theorem1_elements": dict(along=[0.1 * ((7 * i) % 11) - 0.5 for i in range(30)],
                                       across=[0.1 * ((5 * i) % 13) - 0.6 for i in range(30)]),
    }
    return ex


def _self_composed(z, count):
    from fldp import accounting as A
    return A.self_composed(A.gaussian(noise_multiplier=z), count=count)


def nonfinite(x, path: str = "result"):
    """The path of the first NaN or infinite number inside ``x`` (numbers, arrays, tensors,
    tuples, dicts, dataclasses, attrs classes), or None."""
    import dataclasses

    import attr

    if x is None or isinstance(x, (bool, np.bool_, str, bytes)):
        return None
    if isinstance(x, (int, np.integer)):
        return None
    if isinstance(x, (float, np.floating)):
        return None if math.isfinite(x) else path
    if isinstance(x, torch.Tensor):
        if x.is_floating_point() and not bool(torch.isfinite(x).all()):
            return path
        return None
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc" and not np.isfinite(x).all():
            return path
        if x.dtype == object:
            for i, v in enumerate(x.ravel()):
                p = nonfinite(v, f"{path}[{i}]")
                if p:
                    return p
        return None
    if isinstance(x, dict):
        for k, v in x.items():
            p = nonfinite(v, f"{path}[{k!r}]")
            if p:
                return p
        return None
    if isinstance(x, (tuple, list)):
        names = getattr(x, "_fields", None)
        for i, v in enumerate(x):
            p = nonfinite(v, f"{path}.{names[i]}" if names else f"{path}[{i}]")
            if p:
                return p
        return None
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            p = nonfinite(getattr(x, f.name), f"{path}.{f.name}")
            if p:
                return p
        return None
    if attr.has(type(x)):
        for a in attr.fields(type(x)):
            p = nonfinite(getattr(x, a.name), f"{path}.{a.name}")
            if p:
                return p
    return None

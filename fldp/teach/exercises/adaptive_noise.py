"""Exercises on the adaptive CLT noise scheme: notebooks/adaptive_noise/exercises.ipynb.

Each setting below is the one the notebook's exercise cell gives; every answer and every known
wrong answer is computed with :mod:`fldp.papers.adaptive_noise.theory` (whose docstring says how
the OCR'd formulas are read).
"""
from __future__ import annotations

import math

from fldp.teach.exercises.core import Choice, Exercise, Mistake, Number

__all__ = [
    "LAYER", "AGGREGATE", "DESCENT", "FILTER", "noise_std", "aggregate", "max_c", "filter_tries",
    "dp_guarantee", "EXERCISES"
]

LAYER = dict(c=15.0, update_norm=0.5, dim=51_200)  # the CNN's conv2 weights (32 x 64 x 5 x 5)
AGGREGATE = dict(K=20)                             # clients, equal weights n_k/n = 1/K, the layer above
DESCENT = dict(K=20, rho=0.5, dropouts=0)          # pairwise cosine of the updates
FILTER = dict(dim=10, p=-1.0, c=15.0)              # the CNN's last bias (10 parameters)


def _th():
    from fldp.papers.adaptive_noise import theory

    return theory


def _std():
    return _th().noise_std(c=LAYER["c"], update_norm=LAYER["update_norm"], dim=LAYER["dim"])


# ------------------------------------------------------------------ 1. per-coordinate noise
noise_std = Exercise(
    id="adaptive_noise.noise_std",
    title="the per-coordinate noise of one client's layer",
    kind=Number(rel=0.005),
    solve=_std,
    mistakes=(
        Mistake("norm_not_std", "that is the norm of the layer's whole noise vector, ||r_k|| = c ||Delta w_k||; "
                "spread over d = {dim} coordinates each has std ||r_k|| / sqrt(d)",
                value=lambda: LAYER["c"] * LAYER["update_norm"]),
        Mistake("over_d", "divide by sqrt(d), not by d: ||r_k||^2 = d sigma_k^2", value=lambda: LAYER["c"] * LAYER["update_norm"] / LAYER["dim"]),
        Mistake("max_1", "std 1 is Algorithm 1's printed max(1, ...) read literally; that max is an OCR artefact of "
                "the fraction c ||Delta w_k|| / ||r_k|| (Sec. 4.2.1, Appendix A): the noise scales with the update",
                value=1.0),
        Mistake("no_norm", "you left out the update's norm: the noise is c times ||Delta w_k||, per coordinate "
                "c ||Delta w_k|| / sqrt(d)", value=lambda: LAYER["c"] / math.sqrt(LAYER["dim"])),
    ),
    hint="r_k ~ N(0, I) rescaled to ||r_k|| = c ||Delta w_k||: per coordinate sigma_k = c ||Delta w_k|| / sqrt(d) "
         "(fldp.papers.adaptive_noise.theory.noise_std)",
    facts=lambda: dict(LAYER),
)


# ------------------------------------------------------------------ 2. Theorem 1: the aggregate
def _aggregate_std():
    K = AGGREGATE["K"]
    return math.sqrt(_th().aggregate_noise_variance(weights=[1.0 / K] * K, sigmas=[_std()] * K))


aggregate = Exercise(
    id="adaptive_noise.aggregate",
    title="the noise of the aggregate by Theorem 1",
    kind=Number(rel=0.005),
    solve=_aggregate_std,
    mistakes=(
        Mistake("stds_add", "you averaged standard deviations; variances add: sum_k (1/K)^2 sigma_k^2 = sigma^2/K, "
                "so the std falls like 1/sqrt(K), not 1/K", value=lambda: _std() / AGGREGATE["K"]),
        Mistake("no_averaging", "that is one client's std: the aggregate sum_k (n_k/n) r_k of K = {K} independent "
                "noises has variance sum_k (n_k/n)^2 sigma_k^2", value=_std),
        Mistake("no_weights", "you summed the K noises without the weights n_k/n = 1/K (Theorem 1 weighs each "
                "client's noise by its data share)", value=lambda: _std() * math.sqrt(AGGREGATE["K"])),
        Mistake("variance", "that is the variance; give the standard deviation", value=lambda: _aggregate_std() ** 2),
    ),
    hint="Theorem 1: each coordinate of R = sum_k (n_k/n) r_k has variance sum_k (n_k/n)^2 sigma_k^2 "
         "(fldp.papers.adaptive_noise.theory.aggregate_noise_variance)",
    facts=lambda: dict(AGGREGATE),
)


# ------------------------------------------------------------------ 3. the largest c
def _max_c(**change):
    d = {**DESCENT, **change}
    return _th().max_noise_scale(K=d["K"], rho=d["rho"], dropouts=d["dropouts"])


max_c = Exercise(
    id="adaptive_noise.max_c",
    title="the largest c that keeps the aggregated noise below the aggregated update",
    kind=Number(rel=0.005),
    solve=_max_c,
    mistakes=(
        Mistake("paper_rule", "c <= K is the paper's rule (Sec. 4.2.1); Theorem 1 itself gives "
                "E||sum r_k||^2 = c^2 sum ||Delta w_k||^2, which grows like K while ||sum Delta w_k||^2 grows at most "
                "like K^2: c <= sqrt(K rho + 1 - rho)",
                value=lambda: float(_th().paper_max_noise_scale(K=DESCENT["K"], dropouts=DESCENT["dropouts"]))),
        Mistake("aligned", "sqrt(K) holds only for aligned updates (rho = 1); with pairwise cosine rho = {rho} "
                "the bound is sqrt(K rho + 1 - rho)", value=lambda: _max_c(rho=1.0)),
        Mistake("no_sqrt", "you compared squared norms and forgot the square root: c^2 <= K rho + 1 - rho",
                value=lambda: _max_c() ** 2),
    ),
    hint="E||sum_k r_k||^2 <= ||sum_k Delta w_k||^2 for K equal-norm updates of pairwise cosine rho: "
         "c^2 <= K rho + 1 - rho (fldp.papers.adaptive_noise.theory.max_noise_scale)",
    facts=lambda: dict(DESCENT),
)


# ------------------------------------------------------------------ 4. the direction filter's cost
def _tries(**kw):
    return _th().expected_tries(dim=FILTER["dim"], p=FILTER["p"], **kw)


filter_tries = Exercise(
    id="adaptive_noise.filter_tries",
    title="how many draws the direction filter costs on a small layer",
    kind=Number(rel=0.005),
    solve=_tries,
    mistakes=(
        Mistake("normal", "that is 1/Phi(p), the angle read as exactly normal (Table 4's multiples); at d = {dim} "
                "the angle between two random vectors is not normal (its density is sin^(d-2)): use its exact law",
                value=lambda: _th().expected_tries_normal(p=FILTER["p"])),
        Mistake("perturbed", "that is the other reading (Algorithm 1, line 10: the angle between Delta w and "
                "Delta w + r, at c = {c:g}); the exercise asks for fldp's default, the angle between the update and "
                "the noise, the reading Table 4's costs fit", value=lambda: _tries(c=FILTER["c"], reading="perturbed")),
        Mistake("probability", "that is the probability that one draw passes the filter; the expected number of "
                "draws is its inverse (a geometric number of tries)",
                value=lambda: 1.0 / _tries()),
        Mistake("kept_above", "you kept the draws ABOVE the threshold; the filter keeps an angle below "
                "theta_thres = mean + p std", value=lambda: 1.0 / (1.0 - 1.0 / _tries())),
    ),
    hint="the acceptance probability is the random-vector angle's CDF at theta_thres = mean + p std, and the "
         "expected draws its inverse (fldp.papers.adaptive_noise.theory.expected_tries)",
    facts=lambda: dict(FILTER),
)


# ------------------------------------------------------------------ 5. what (eps, delta)?
dp_guarantee = Exercise(
    id="adaptive_noise.dp_guarantee",
    title="which (eps, delta) the adaptive scheme gives a client",
    kind=Choice(("a", "b", "c", "d")),
    solve=lambda: "d",
    mistakes=(
        Mistake("c_as_multiplier", "c multiplies the update's own norm, not a fixed sensitivity: the noise "
                "relative to what one record can change is not fixed, so no noise multiplier follows", value="a"),
        Mistake("theorem1_gaussian", "Theorem 1 gives the noise's law, but a Gaussian mechanism needs noise whose "
                "scale does not depend on the data, against a bounded sensitivity; here the scale is the update's "
                "norm, which the data decide", value="b"),
        Mistake("like_baseline", "a similar noise size does not make a similar guarantee: the baseline clips and "
                "adds noise of a fixed scale (a guarantee, at best the paper's), the scheme scales its noise to the "
                "update, which no clipping bounds", value="c"),
    ),
    hint="what happens to a client whose update is (nearly) zero?",
)


EXERCISES = (noise_std, aggregate, max_c, filter_tries, dp_guarantee)

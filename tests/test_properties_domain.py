"""Domain properties of every public formula function .

For every public function of fldp.mechanisms, fldp.accounting, fldp.audit and each paper's
theory module (tests/property_examples.py enumerates them and holds one valid call of each):

* **no function escapes**: a public function without an example fails
  :func:`test_every_public_function_has_an_example`;
* **bad input is refused by name**: for every numeric parameter (and every element of a
  numeric list), NaN, a string, a bool, None (where the signature's default is not None) and
  an empty array raise ``ValueError`` whose message names the parameter (fldp/validate.py's
  style, ``eps=-1 is out of range: eps must be in (0, inf)``); a choice parameter refuses an
  unknown string the same way;
* **edge values never give NaN or inf silently**: inf, -inf, a negative value and zero
  either raise such a ValueError or return a result without NaN or inf;
* the same property under Hypothesis: any one numeric parameter of the valid call replaced by
  a float of sensible magnitude (|x| in [1e-6, 1e6], or 0, +-inf, NaN) or a small integer.

Results that are legitimately infinite (or NaN) are listed in :data:`ALLOW_NONFINITE` with the
reason.  The exhaustive checks loop over fixed values; the Hypothesis property draws from the
profile chosen in tests/conftest.py (``HYPOTHESIS_PROFILE=ci`` or ``thorough``).
"""
from __future__ import annotations

import inspect
import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import property_examples as P

FUNCTIONS = P.public_functions()
EXAMPLES = P.examples()
NAMES = sorted(FUNCTIONS)

# Results that may hold inf (or NaN), with the reason.  Key: (function, parameter) -> reason;
# the parameter is the one that was changed from the valid call.
ALLOW_NONFINITE = {
    ("fldp.audit.eps_from_rates", "fpr"):
        "FPR = 0 with TPR > delta certifies every eps: the lower bound is inf (docstring)",
    ("fldp.audit.eps_from_rates", "tpr"):
        "TPR = 1 with FPR < 1 - delta: the second trade-off line certifies every eps (inf)",
    ("fldp.audit.gdp_mu", "fpr"): "FPR = 0: no finite mu explains the point (mu = inf)",
    ("fldp.audit.gdp_mu", "tpr"): "TPR = 1: no finite mu explains the point (mu = inf)",
    ("fldp.audit.gdp_eps", "mu"): "mu = inf (perfect separation) has eps = inf at every delta",
    ("fldp.audit.gdp_eps", "delta"):
        "delta = 0: the GDP reading does not apply to pure DP; NaN marks 'not applicable' (docstring)",
    ("fldp.audit.audit_scores", "delta"):
        "delta = 0 (a pure-DP audit): eps_lower_gdp is NaN, the GDP reading does not apply (gdp_eps)",
    ("fldp.audit.audit_mechanism", "delta"):
        "delta = 0 (a pure-DP audit): eps_lower_gdp is NaN, the GDP reading does not apply (gdp_eps)",
    ("fldp.audit.audit_uploads", "delta"):
        "delta = 0 (a pure-DP audit): eps_lower_gdp is NaN, the GDP reading does not apply (gdp_eps)",
    ("fldp.papers.zhou.theory.gaussian_solutions", None):
        "Solution 1 of Sec. VI-B is T* = inf (U decreases in T for ever, U -> E3)",
    ("fldp.papers.zhou.theory.gaussian_optimum", None):
        "Solution 1 of Sec. VI-B is T* = inf (U decreases in T for ever, U -> E3)",
    ("fldp.papers.adaptive_noise.theory.expected_tries", "p"):
        "p so negative that the threshold is 0 degrees: no draw passes, infinitely many tries (docstring)",
    ("fldp.papers.adaptive_noise.theory.cost_multiple", "p"):
        "p so negative that a layer's threshold is 0 degrees: infinitely many tries (expected_tries)",
    ("fldp.papers.adaptive_noise.theory.expected_tries_normal", "p"):
        "Phi(p) underflows to 0 below p = -38: 1/Phi(p) is beyond the floats (inf, docstring)",
    ("fldp.papers.adaptive_noise.theory.filter_drift", "p"):
        "p so negative that no draw passes: the mean given acceptance is undefined (NaN, docstring)",
}

# Parameter values that are not errors although the generic rule would say so: (function,
# parameter, kind) -> reason.
NOT_AN_ERROR = {
    ("fldp.mechanisms.gaussian_noise", "shape", "empty"): "shape () is a scalar draw",
    ("fldp.mechanisms.laplace_noise", "shape", "empty"): "shape () is a scalar draw",
}

BAD = {"nan": math.nan, "string": "a", "bool": True, "none": None, "empty": np.array([])}
EDGE = {"inf": math.inf, "-inf": -math.inf, "negative": "negative", "zero": 0}


def _numeric(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _numeric_list(v) -> bool:
    return isinstance(v, (list, tuple, np.ndarray)) and len(v) > 0 and all(_numeric(x) for x in v)


def numeric_params(name: str) -> list:
    return [k for k, v in EXAMPLES[name].items() if _numeric(v) or _numeric_list(v)]


def choice_params(name: str) -> list:
    return [k for k, v in EXAMPLES[name].items() if isinstance(v, str)]


def _none_allowed(name: str, param: str) -> bool:
    p = inspect.signature(FUNCTIONS[name]).parameters.get(param)
    return p is not None and p.default is None


def names_param(message: str, param: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])", message) is not None


def call(name: str, **changes):
    kwargs = P.materialise(EXAMPLES[name])
    kwargs.update(changes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy/absl warnings are not the property
        return FUNCTIONS[name](**kwargs)


def _negative(v):
    if isinstance(v, (int, np.integer)):
        return -abs(int(v)) or -1
    return -abs(float(v)) or -1.0


def check(name: str, param: str, value, *, must_raise: bool, shown=None):
    """None if the property holds for ``name(param=value)``, else a one-line failure."""
    shown = repr(value) if shown is None else shown
    try:
        result = call(name, **{param: value})
    except ValueError as err:
        if names_param(str(err), param):
            return None
        return f"{name}({param}={shown}): ValueError does not name {param!r}: {err}"
    except Exception as err:  # noqa: BLE001 - any other type is the failure we report
        return f"{name}({param}={shown}): {type(err).__name__} instead of ValueError: {err}"
    if must_raise:
        return f"{name}({param}={shown}): accepted (returned {result!r:.80})"
    bad = P.nonfinite(result)
    if bad and (name, param) not in ALLOW_NONFINITE and (name, None) not in ALLOW_NONFINITE:
        return f"{name}({param}={shown}): {bad} is not finite (no ValueError)"
    return None


def _variants(name: str, param: str, value, kind: str):
    """(value for the parameter, how to show it): the whole parameter and, for a list, its first element."""
    ex = EXAMPLES[name][param]
    yield value, repr(value)
    if _numeric_list(ex) and kind != "empty":
        seq = list(ex)
        seq[0] = value
        yield type(ex)(seq) if isinstance(ex, tuple) else seq, f"[{value!r}, ...]"


def test_every_public_function_has_an_example():
    missing = [n for n in FUNCTIONS if n not in EXAMPLES]
    assert not missing, ("public functions without an example in tests/property_examples.py "
                         f"(add one): {missing}")
    stale = [n for n in EXAMPLES if n not in FUNCTIONS]
    assert not stale, f"examples of functions that no longer exist: {stale}"
    assert len(FUNCTIONS) >= 129
    for name, param in ALLOW_NONFINITE:
        assert name in FUNCTIONS and (param is None or param in numeric_params(name)), (name, param)


@pytest.mark.parametrize("name", NAMES)
def test_the_example_is_valid_and_finite(name):
    result = call(name)
    bad = P.nonfinite(result)
    assert not bad or (name, None) in ALLOW_NONFINITE, f"{name}: {bad} of the valid example is not finite"


@pytest.mark.parametrize("name", NAMES)
def test_bad_and_edge_values_are_refused_by_name(name):
    failures = []
    for param in numeric_params(name):
        ex = EXAMPLES[name][param]
        for kind, value in BAD.items():
            if kind == "none" and _none_allowed(name, param):
                continue
            if (name, param, kind) in NOT_AN_ERROR:
                continue
            for v, shown in _variants(name, param, value, kind):
                failures.append(check(name, param, v, must_raise=True, shown=shown))
        for kind, value in EDGE.items():
            scalar = ex if _numeric(ex) else ex[0]
            if value == "negative":
                value = _negative(scalar)
            elif kind == "zero":
                value = 0 if isinstance(scalar, (int, np.integer)) else 0.0
            for v, shown in _variants(name, param, value, kind):
                failures.append(check(name, param, v, must_raise=False, shown=shown))
    for param in choice_params(name):
        failures.append(check(name, param, "__bogus__", must_raise=True))
    failures = [f for f in failures if f]
    assert not failures, f"{len(failures)} failure(s):\n" + "\n".join(failures)


SPECIAL = st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan])
FLOATS = st.one_of(SPECIAL, st.floats(1e-6, 1e6), st.floats(-1e6, -1e-6))
INTS = st.integers(-3, 60)


@pytest.mark.parametrize("name", [n for n in NAMES if numeric_params(n)])
@given(data=st.data())
def test_any_single_value_is_refused_by_name_or_gives_a_finite_result(name, data):
    param = data.draw(st.sampled_from(numeric_params(name)), label="param")
    ex = EXAMPLES[name][param]
    scalar = ex if _numeric(ex) else ex[0]
    value = data.draw(st.one_of(INTS, FLOATS) if isinstance(scalar, (int, np.integer)) else FLOATS,
                      label="value")
    if _numeric_list(ex) and data.draw(st.booleans(), label="element"):
        seq = list(ex)
        seq[0] = value
        value = type(ex)(seq) if isinstance(ex, tuple) else seq
    failure = check(name, param, value, must_raise=False)
    assert failure is None, failure

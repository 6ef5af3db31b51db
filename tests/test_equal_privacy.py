"""fldp.equal_privacy: each scheme's release as its paper calibrates it (hand-computed), audited."""
from __future__ import annotations

import math

import pytest

from fldp import equal_privacy as ep


@pytest.fixture(scope="module")
def rel():
    return {(r.scheme, r.setting.split(":")[0], r.rounds): r for r in ep.releases(unified_eps=4.0, unified_delta=1e-5)}


@pytest.mark.slow
def test_releases_follow_each_papers_calibration(rel):
    c = math.sqrt(2 * math.log(1.25 / 0.01))
    nb = rel["NbAFL", "paper", 25]
    assert nb.scale == pytest.approx(2 * c * 20 / (1200 * 60)) and nb.sensitivity == pytest.approx(2 * 20 / 1200)
    assert nb.accountant_eps == pytest.approx(4883.6, rel=1e-3)  # wei2020/05's spend table
    lap = rel["FedSGD-DPC (laplace)", "paper", 25]  # b T / N = 25 replies of the round-robin client
    assert lap.scale == pytest.approx(2 * 5 * 50 * 300 / (10 * 6000 * 5)) and lap.sensitivity == pytest.approx(2 * 300 / 6000)
    gau = rel["FedSGD-DPC (gaussian)", "paper", 25]
    assert gau.sampling_prob == 0.01 and gau.sensitivity == pytest.approx(10 / (0.01 * 6000))
    li = rel["Secure FedAvg", "paper", 1]
    assert li.sampling_prob == pytest.approx(1 - (1 - 1 / 325) ** 10) and li.claim_eps == 0.5
    assert rel["Secure FedAvg", "paper", 100].accountant_eps == pytest.approx(47.36, abs=0.05)  # book/parts/li2021.md
    for (scheme, setting, _), r in rel.items():
        if setting == "unified":
            assert r.accountant_eps == 4.0 and r.delta == 1e-5, scheme


@pytest.mark.slow
def test_audits_stay_below_the_accountant_and_refute_what_they_can(rel):
    rows = {(r["scheme"], r["setting"]): r for r in (ep.audit_release(x, trials=20_000) for x in rel.values())}
    assert all(r["lower <= upper"] for r in rows.values())
    assert all(r["audit"] == "simulated" and r["trials per side"] == 20_000 for r in rows.values())
    li = next(r for (s, st), r in rows.items() if s == "Secure FedAvg" and "one upload" in st)
    assert li["lower above claim"] and li["audit eps (lower)"] > 0.75  # (0.5, 1e-4) per upload does not hold (by 1.5x+)
    nb = next(r for (s, st), r in rows.items() if s == "NbAFL" and st.startswith("paper"))
    assert nb["claim beyond resolution"] and not nb["lower above claim"]  # eps 60 is beyond any feasible audit
    unified = next(r for (s, st), r in rows.items() if s == "NbAFL" and st.startswith("unified"))
    assert "update clipped" in unified["setting"]


def test_accuracy_run_spends_its_target_and_the_paper_would_claim_less():
    r = ep.accuracy_run(scheme="nbafl", task="adult-logreg", eps=4.0, N=4, K=2, rounds=2, seed=0)
    assert r["eps_spent"] == pytest.approx(4.0, rel=1e-3)  # the accountant's inversion, realised
    assert r["paper_eps_for_this_noise"] is None and 0.0 <= r["test_acc"] <= 1.0  # NbAFL's paper clips params, not updates
    with pytest.raises(ValueError, match="eps=None"):
        ep.accuracy_run(scheme="nbafl", task="adult-logreg", eps=None)
    with pytest.raises(ValueError, match="scheme='dpsgd'"):
        ep.accuracy_run(scheme="dpsgd", task="adult-logreg", eps=4.0)
    with pytest.raises(ValueError, match="task='cifar'"):
        ep.accuracy_run(scheme="nbafl", task="cifar", eps=4.0)


def test_same_ranking_holds_fails_on_a_counter_example_and_is_inconclusive_on_a_tie():
    a, b = [0.9, 0.91, 0.92, 0.9, 0.93], [0.5, 0.52, 0.49, 0.5, 0.51]
    same = {"t1": {"x": a, "y": b}, "t2": {"x": a, "y": b}}
    assert ep.same_ranking(same, min_effect=0.005).verdict == "holds"
    flipped = {"t1": {"x": a, "y": b}, "t2": {"x": b, "y": a}}
    v = ep.same_ranking(flipped, min_effect=0.005)
    assert v.verdict == "fails" and "x vs y" in v.why
    tie = {"t1": {"x": a, "y": b}, "t2": {"x": a, "y": [0.9, 0.92, 0.91, 0.91, 0.92]}}
    assert ep.same_ranking(tie, min_effect=0.005).label == "inconclusive: spread"
    assert ep.same_ranking({"t1": {"x": a[:2], "y": b[:2]}, "t2": {"x": a[:2], "y": b[:2]}}, min_effect=0.005).label == "inconclusive: spread"  # 2 seeds
    nan = {"t1": {"x": a, "y": b}, "t2": {"x": a, "y": [float("nan")] + b[1:]}}
    assert ep.same_ranking(nan, min_effect=0.005).label == "inconclusive: diverged"
    with pytest.raises(ValueError, match="at least two tasks"):
        ep.same_ranking({"t1": {"x": a, "y": b}}, min_effect=0.005)


def test_chance_accuracy_is_the_most_frequent_test_label():
    chance = ep.chance_accuracy("adult-logreg", N=4, max_test=500)
    assert 0.7 < chance < 0.8  # Adult: about 76 % earn at most 50K


def test_audited_releases_put_zhou_at_its_gaussian_point_and_label_nbafl():
    rows = {(r.scheme, r.setting.split(":")[0]): r for r in ep.audited_releases(unified_eps=4.0, unified_delta=1e-5)}
    assert len(rows) == len({(r.scheme, r.setting.split(":")[0]) for r in ep.releases()})  # the same rows, two replaced
    gau = rows["FedSGD-DPC (gaussian)", "paper"]  # Sec. VII: eps 1, b = 1, T = 100, q = 0.01
    assert gau.claim_eps == 1.0 and gau.rounds == 10 and gau.sampling_prob == 0.01  # b T / N = 10 replies
    c2 = math.sqrt(2 * math.log(1.25 / 1e-5))   # Theorem 2: sigma = c_2 xi_2 sqrt(b T log(1/delta)) / (d_i eps sqrt(N))
    assert gau.scale == pytest.approx(c2 * 10 * math.sqrt(100 * math.log(1e5)) / (6000 * math.sqrt(10)))
    assert gau.accountant_eps == pytest.approx(3.927, abs=0.01)  # zhou/03: eq. (5) spends 3.93 at eps = 1
    nb = rows["NbAFL", "paper"]
    assert nb.rounds == 25 and "25 uploads composed" in nb.claim and "one exposure" in nb.claim


def test_audit_verdict_refutes_only_what_the_audit_certifies():
    row = lambda low, claim, up, res=10.0: {"audit eps (lower)": low, "claimed eps": claim, "accountant eps (upper)": up,
                                            "audit resolution": res}
    assert ep.audit_verdict(row(1.7, 0.5, 2.0)).verdict == "fails"
    assert ep.audit_verdict(row(0.3, 0.5, 0.5)).verdict == "holds"                      # the accountant proves it
    assert ep.audit_verdict(row(0.99, 1.0, 3.9)).label == "inconclusive: no-power"     # below the claim, spends more
    assert ep.audit_verdict(row(9.0, 60.0, 4884.0)).label == "inconclusive: resolution"
    exact = dict(row(9.0, 60.0, 4884.0), **{"accountant eps (lower)": 4884.0})           # an exact accountant decides
    assert ep.audit_verdict(exact).verdict == "fails" and "4.88e+03" in ep.audit_verdict(exact).why
    r = ep.audit_release(ep.zhou_gaussian_release(), trials=20_000)                   # the audit stays below the accountant ...
    assert r["lower <= upper"] and r["audit eps (lower)"] <= 1.0
    assert 3.85 < r["accountant eps (lower)"] <= r["accountant eps (upper)"]          # ... the optimistic PLD does not
    assert ep.audit_verdict(r).verdict == "fails"


def test_nbafl_as_benchmarked_clips_so_that_the_measured_shift_is_within_its_sensitivity():
    """On the benchmark's own task and training (MNIST, m = 500 rows, one proximal epoch): one row
    replaced by another, or an outlier added, moves NbAFL's upload by less than the 2 C_u its noise is
    calibrated to; the paper's parameter clipping at C = 20 moves it past 2C/m for the added outlier."""
    import torch

    from fldp import engine

    fed, model = ep._task("mnist-logreg", 20, 0, 10_000, 500)
    x, y = fed.client(0)
    x, y = x[:fed.m].clone(), y[:fed.m].clone()
    cal = ep.nbafl_calibration(eps=4.0, delta=1e-5, N=20, T=20, m=fed.m)
    assert cal.sensitivity_U == pytest.approx(2 * ep.NBAFL_UPDATE_CLIP) and cal.eps_run == 4.0
    replaced = x.clone(), y.clone()
    replaced[0][0], replaced[1][0] = 1.0, (y[0] + 1) % 10
    added = torch.cat([x, torch.full((1, x.shape[1]), 3.0)]), torch.cat([y, y[:1]])
    sound = ep.nbafl_config(T=1, K=None)
    shifts = [ep.upload_shift(model, (x, y), other, sound) for other in (replaced, added)]
    assert all(0.0 < s <= cal.sensitivity_U for s in shifts), shifts
    paper = engine.FLConfig(num_rounds=1, clip=20.0, clip_mode="params", **ep.NBAFL_TRAINING)
    assert ep.upload_shift(model, (x, y), added, paper) > 2 * 20.0 / fed.m * 3  # 2C/m = 0.08 exceeded 3x+


def test_audit_nbafl_refutes_the_papers_sensitivity_end_to_end_and_not_the_benchmarks():
    paper, sound = ep.audit_nbafl(trials=1000, eps=2.0)
    assert paper["audit"] == sound["audit"] == "engine" and paper["trials per side"] == 1000
    assert paper["sensitivity"] == pytest.approx(2 * 1.0 / 8) and paper["shift"] > 5 * paper["sensitivity"]
    assert paper["accountant eps (upper)"] < 2.0 < paper["audit eps (lower)"]  # the accountant is fine: the sensitivity is not
    v = ep.end_to_end_verdict(paper)
    assert v.verdict == "fails" and "sensitivity is exceeded" in v.why
    assert sound["shift"] <= sound["sensitivity"] == pytest.approx(2 * ep.NBAFL_UPDATE_CLIP)
    assert sound["audit eps (lower)"] <= 2.0 and sound["lower <= upper"]
    assert ep.end_to_end_verdict(sound).label == "inconclusive: no-power"


def test_the_dp_baselines_accountant_bar_is_what_one_upload_spends():
    ours, dp = ep.audit_adaptive(trials=200, dp_eps=30.0)
    assert dp["accountant eps (upper)"] == pytest.approx(44.82, abs=0.01)  # c_dp / 30 is not (30, 1e-5)-DP
    assert math.isinf(ours["accountant eps (upper)"]) and ours["lower above claim"] is None
    assert dp["claim beyond resolution"] and dp["audit resolution"] < 5  # 100 clients per side certify little


def test_ceilings_run_each_schemes_training_without_noise():
    for s in ep.SCHEMES:
        r = ep.accuracy_run(scheme=s, task="adult-logreg", eps=None, private=False, N=4, K=2, rounds=2, seed=0, max_test=500)
        assert r["private"] is False and r["eps"] is None and r["eps_spent"] is None and 0.5 < r["test_acc"] <= 1.0, r
    assert set(ep.SOUND) == {"nbafl", "fedsgd_dpc", "secure_fedavg"} and set(ep.CEILINGS) == set(ep.SCHEMES)


def test_a_benchmark_run_reads_its_split_once_per_worker_and_keeps_its_archived_numbers():
    """accuracy_run loads its split through the per-process cache (data preparation was 40 % of a
    typical run): the second run on one split prepares nothing, and both return exactly what the run
    archive holds for that configuration (the cached split is the same data)."""
    import json
    from pathlib import Path

    from fldp import data as D
    from helpers import assert_as_archived

    archive = Path(__file__).resolve().parent.parent / "results" / "archive" / "benchmark" / "02_accuracy.jsonl"
    record = next(r for r in map(json.loads, archive.read_text().splitlines())
                  if r["config"]["task"] == "adult-logreg" and r["config"]["scheme"] == "nbafl")
    from fldp.seeding import one_thread

    D.cached_federated.cache_clear()
    with one_thread():  # as the archived run computed
        first = ep.accuracy_run(**record["config"])
        misses = D.cached_federated.cache_info().misses
        again = ep.accuracy_run(**{**record["config"], "eps": record["config"]["eps"] * 2})
    assert D.cached_federated.cache_info().misses == misses  # the same split, not prepared again
    assert_as_archived(first, record, "benchmark/02_accuracy")
    assert again["test_acc"] != first["test_acc"] or again["eps_spent"] != first["eps_spent"]

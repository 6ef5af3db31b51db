"""Runs that train together (``fn.together``) through the sweep: grouped by everything but
``fn.together_over``, stored each under its own key with the numbers each returns alone, their
cost shared; a group with a failing run fails that run only.  With Zhou et al.'s real runs."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fldp.repro import store as S
from fldp.repro import sweep
from fldp.papers.zhou import experiments as ex

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
import sweep_toy  # noqa: E402


def configs(xs=(1.0, 2.0), seeds=(0, 1, 2), **kw):
    return [dict(x=x, seed=s, **kw) for x in xs for s in seeds]


def test_jobs_group_what_may_train_together_and_share_the_workers():
    cs = configs(xs=(1.0, 2.0), seeds=(2, 0, 1))
    jobs = sweep.together_jobs(sweep_toy.toy_pair, cs, range(len(cs)), workers=1)
    assert jobs == [[1, 2, 0], [4, 5, 3]]  # one group per x, ordered by seed
    jobs = sweep.together_jobs(sweep_toy.toy_pair, cs, range(len(cs)), workers=4)
    assert jobs == [[1, 2], [0], [4, 5], [3]]  # at most ceil(6 / 4) runs a job: every worker has work
    assert sweep.together_jobs(sweep_toy.toy, configs(), range(6), workers=1) == [[i] for i in range(6)]


@pytest.mark.parametrize("backend", ["inprocess", "processes"])
def test_grouped_runs_are_stored_alone_with_their_own_numbers(tmp_path, monkeypatch, backend):
    monkeypatch.setenv("TOY_LOG", str(tmp_path / "log"))
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    store = S.RunStore(tmp_path / "store")
    cs = configs(fail_at=2.0)
    out = sweep.run_all(sweep_toy.toy_pair, cs, store=store, backend=backend, workers=1, raise_on_failure=False,
                        progress=False)
    assert out.results[:3] == [sweep_toy.toy_pair(**c) for c in cs[:3]] and out.results[3:] == [None] * 3
    assert sorted(str(f.config["seed"]) for f in out.failures) == ["0", "1", "2"]  # x = 2 failed, run by run
    assert (tmp_path / "log").read_text().split("\n").count("group 3") == 2  # both groups ran as groups
    for c in cs[:3]:  # each under its own key; the group's time shared
        rec = store.load(sweep_toy.toy_pair, c)
        assert rec.result == sweep_toy.toy_pair(**c) and rec.seconds == out.run_seconds[cs.index(c)]
    again = sweep.run_all(sweep_toy.toy_pair, cs[:3], store=store, backend=backend, workers=1, progress=False)
    assert again.reused == 3 and again.ran == 0


def test_zhou_runs_trained_together_are_the_runs_alone(tmp_path):
    """Full-batch Laplace runs of three seeds and two budgets, and Poisson-sampled Gaussian runs of
    two seeds and two budgets (a non-private one among them): one sweep, stored, each equal to
    fedsgd_dpc_run alone, bit for bit; the stored cost is the group's share."""
    small = dict(N=6, subsample=1200, max_test=200, T=3, b=3)
    settings = [dict(small, mechanism="laplace", eps=e, seed=s) for e in (1.0, 10.0) for s in (0, 1, 2)]
    settings += [dict(small, mechanism="gaussian", eps=e, q=0.1, xi=1.0, seed=s) for e in (0.5, None) for s in (0, 1)]
    store = S.RunStore(tmp_path / "store")
    out = sweep.run_all(ex.fedsgd_dpc_run, settings, store=store, backend="inprocess", progress=False)
    for c, got in zip(settings, out.results):
        assert got == S.normalise(ex.fedsgd_dpc_run(**c))
    recs = [store.load(ex.fedsgd_dpc_run, c) for c in settings[:6]]
    assert len({r.cpu_s for r in recs}) == 1 and recs[0].cpu_s > 0  # one group of six, its CPU time shared
    with pytest.raises(ValueError, match="differ only in"):
        ex.fedsgd_dpc_runs([settings[0], dict(settings[0], T=4)])

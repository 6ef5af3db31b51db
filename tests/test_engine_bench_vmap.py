"""benchmarks/engine_bench.py's torch.func anchor (``vmap_round``: clients' parameters stacked,
``vmap`` over clients of ``grad`` of ``functional_call``) computes the engine's round.

Each of the five regimes (regimes 3 and 5 with fewer clients and epochs, so that the file runs in
seconds) with its own clipping bound and with the binding one, and the same models on uneven toy
clients whose batches differ in size and end at different steps (the schedule's weights and
masks), with Poisson sampling for per-sample clipping.  A wrong round (learning rate doubled) must
not match, so the comparison can fail.

Tolerance: rtol = atol = 1e-5 (assert_close: |a - b| <= atol + rtol |b|).  Engine and anchor do
the same float32 arithmetic in another order (closed-form or fused gradients against autograd,
other summation orders); each operation rounds at 2^-24 ~ 6e-8 relative, and a round of at most 24
local steps over parameters of size <= ~1 accumulates at most a few hundred such roundings, ~1e-6
in the worst case (observed: at most 1.1e-7).  1e-5 leaves that a margin of 10x (100x over what is
observed) while the wrong rounds differ by 6.8e-4 to 0.16, 30x and more above it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from helpers import load_script, toy_federation

from fldp import engine

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "engine_bench.py"
RTOL = ATOL = 1e-5


@pytest.fixture(scope="module")
def eb():
    return load_script(SCRIPT, "engine_bench_vmap")


@pytest.fixture(scope="module")
def regimes(eb):
    """The five regimes, 3 and 5 made small (4 resp. 3 clients, one epoch)."""
    out = {}
    for key, make in {"1": eb.regime_li, "2": eb.regime_zhou, "3": eb.regime_wei, "4": eb.regime_persample,
                      "5": eb.regime_cnn}.items():
        rg = make()
        if key == "3":
            rg = with_cfg(eb, rg, clients_per_round=4)
        elif key == "5":
            rg = with_cfg(eb, rg, clients_per_round=3, local_epochs=1)
        out[key] = rg
    return out


def with_cfg(eb, rg, data=None, **changes):
    """``rg`` with config changes (and other data), fresh module caches."""
    return eb.Regime(**{**rg.__dict__, "cfg": engine.with_config(rg.cfg, **changes),
                        "data": rg.data if data is None else data, "nets": {}})


def assert_vmap_is_engine(eb, rg, t=1):
    w = eb.start_params(rg)
    ref = eb.engine_round(rg, w, t)
    assert float((ref - w).abs().max()) > 1e-3, "the round must move the model"
    torch.testing.assert_close(eb.vmap_round(rg, w, t), ref, rtol=RTOL, atol=ATOL)
    # a wrong round does not match: the check can fail
    lr = rg.cfg.lr
    wrong = with_cfg(eb, rg, lr=(lambda s: 2 * lr(s)) if callable(lr) else 2 * lr)
    bad = eb.vmap_round(wrong, w, t)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(bad, ref, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("key", ["1", "2", "3", "4", "5"])
def test_the_vmap_round_is_the_engine_round_in_each_regime(eb, regimes, key):
    rg = regimes[key]
    assert eb.vmap_unsupported(rg) is None
    assert_vmap_is_engine(eb, rg)
    if rg.tight_clip:  # with a bound that binds: the clipping paths are compared
        assert_vmap_is_engine(eb, with_cfg(eb, rg, clip=rg.tight_clip))


UNEVEN = [5, 11, 3, 17, 8]  # batches of 4: last batches of 1-3 rows, clients done after 1-5 steps


@pytest.mark.parametrize("key", ["1", "3", "5"])
def test_uneven_clients_masks_and_finished_epochs(eb, regimes, key):
    """Shuffled epochs over clients of unequal sizes: partial last batches (weights 1/size) and
    clients whose epoch ended (all weights 0, no step), as the engine; with the regimes' l2 (1),
    proximal term and parameter clip (3) and convolutions (5), clipping made to bind (1, 3)."""
    rg = regimes[key]
    f = rg.data.x_train.shape[1]
    data = toy_federation(UNEVEN, f, seed=3, classes=2 if key == "1" else 10)
    changes = dict(clients_per_round=4, local_epochs=2, local_steps=None, batch_size=4, sampling="shuffle")
    if key == "1":
        changes.update(clip=0.3, lr=lambda s: 0.2 / (1 + 0.1 * s))  # Li's decaying step, a binding clip
    if key == "3":
        changes.update(clip=1.0, mu=0.5)
    sub = with_cfg(eb, rg, data=data, **changes)
    sel = engine.select_clients(sub.cfg, len(UNEVEN), 1)
    schedule = list(engine.batch_schedule(data.counts[sel], sub.cfg, engine.batch_generators(sub.cfg, sel, 1)))
    masks = torch.stack([(wts != 0).any(1) for _, wts in schedule])
    assert not bool(masks.all()), "some client must finish its epoch early"
    assert_vmap_is_engine(eb, sub)


@pytest.mark.parametrize("key", ["4", "1"])
@pytest.mark.parametrize("sampling", ["fraction", "poisson"])
def test_per_sample_clipping_with_unequal_batches(eb, regimes, key, sampling):
    """Per-sample clipping (vmap over samples inside the client step) on uneven clients: batch sizes
    round(q d_i) or Poisson (weights 1/(q d_i)), two local steps, a binding clip; with Li's model
    (1) the l2 term is added unclipped, as the engine does."""
    rg = regimes[key]
    data = toy_federation([30, 12, 45, 7], rg.data.x_train.shape[1], seed=5, classes=10 if key == "4" else 2,
                          x_scale=3.0)
    sub = with_cfg(eb, rg, data=data, sample_rate=0.3, sampling=sampling, local_steps=2, batch_size=None,
                   clip=0.5, clip_mode="sample_grad", clients_per_round=None)
    assert_vmap_is_engine(eb, sub)


def test_the_output_line_has_the_vmap_column(eb, regimes):
    rg = regimes["2"]
    r = {"engine": 0.02, "naive": 0.04, "speedup": 2.0, "roof_pct": 8.0, "vmap": 0.03}
    assert re.fullmatch(r"zhou-mnist-logreg: engine 0\.02 s, naive 0\.04 s, vmap 0\.03 s, speed-up 2\.0x, "
                        r"vs vmap 1\.5x, 8\.0% of roofline", eb.line(rg, r))
    del r["vmap"]
    assert eb.line(rg, r) == "zhou-mnist-logreg: engine 0.02 s, naive 0.04 s, speed-up 2.0x, 8.0% of roofline"
    r.update(opacus=0.06, vmap=0.01)
    assert eb.line(regimes["4"], r) == ("per-sample: engine 0.02 s, naive 0.04 s, opacus 0.06 s, vmap 0.01 s, "
                                        "speed-up 2.0x, vs opacus 3.0x, vs vmap 0.5x")


def test_a_round_the_anchor_cannot_write_is_named_not_failed(eb, regimes, monkeypatch):
    rg = with_cfg(eb, regimes["2"], dropout=0.2)
    assert "dropout" in eb.vmap_unsupported(rg)
    with pytest.raises(NotImplementedError):
        eb.vmap_round(rg, eb.start_params(rg), 1)
    monkeypatch.setattr(eb, "vmap_unsupported", lambda rg: "a reason")
    r = eb.measure(regimes["2"], repeats=1, roof=100.0)
    assert "vmap" not in r and r["vmap_na"] == "regime 2: the vmap anchor does not write a reason"
    assert ", vmap n/a (regime 2: the vmap anchor does not write a reason), speed-up" in eb.line(regimes["2"], r)

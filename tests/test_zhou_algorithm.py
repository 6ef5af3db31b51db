"""FedSGD-DPC (Zhou et al., Algorithm 1) on the engine, against a plain per-client reference."""
import math

import dp_accounting
import numpy as np
import pytest
import torch

from fldp import accounting, engine, mechanisms, models
from fldp.papers.zhou import algorithm as alg
from helpers import plain_round, toy_federation


TOY = dict(features=5, x_scale=2.0, test=4)  # toy_federation(counts, **TOY)


def reference_round(model, data, w, clients, t, cal, lr, lr_decay, seed, norm):
    """One round of Algorithm 1 written out (``helpers.plain_round``): each client's mean of
    per-sample clipped gradients over all its rows (autograd, one sample at a time), its own
    noise, (N/b) sum d_i/d, eta_t."""
    def noise(c, reply):
        gen = engine.generator(seed, "uplink", t, c)
        if cal.mechanism == "laplace":
            return reply + cal.scale * mechanisms.laplace_noise(reply.shape, scale=1.0, generator=gen, dtype=reply.dtype)
        return reply + cal.scale * mechanisms.gaussian_noise(reply.shape, sigma=1.0, generator=gen, dtype=reply.dtype)

    return plain_round(w, data, clients, loss=lambda p, x, y: model.per_sample_loss(p[None], x[None], y[None])[0],
                       clip_mode="sample_grad", clip_bound=cal.xi, clip_norm=norm, upload="gradient", noise=noise,
                       aggregation="unbiased", server_lr=lr / (1 + lr_decay * (t - 1)))


@pytest.mark.parametrize("mechanism,norm", [("laplace", "l1")])
def test_rounds_match_per_client_reference(mechanism, norm):
    data, model = toy_federation([6] * 4, **TOY), models.MultinomialLogReg(in_features=5, num_classes=3)
    N, b, T, seed = 4, 2, 3, 7
    cal = alg.calibrate(mechanism=mechanism, eps=2.0, b=b, T=T, N=N, d_i=6, xi=1.5)
    cfg = alg.config(mechanism=mechanism, b=b, T=T, xi=1.5, lr=0.3, lr_decay=0.5, seed=seed)
    state = engine.init_state(model, data, cfg)
    w = state.params.clone()
    for t in range(1, T + 1):
        state, ctx = engine.round_step(model, data, cfg, state, uplink=alg.uplink(cal, data))
        assert ctx.selected.tolist() == [(2 * (t - 1)) % 4, (2 * (t - 1) + 1) % 4]  # round robin
        w = reference_round(model, data, w, ctx.selected, t, cal, 0.3, 0.5, seed, norm)
        torch.testing.assert_close(state.params, w, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_gaussian_reply_is_poisson_sampled_and_accounted():
    data, model = toy_federation([50] * 4, **TOY), models.MultinomialLogReg(in_features=5, num_classes=3)
    hist, cal = alg.run(model, data, mechanism="gaussian", eps=1.0, b=2, T=4, q=0.2, xi=1.0,
                        rule="accountant", seed=1, eval_every=4)
    ev = hist.privacy[0].uplink[0]
    assert isinstance(ev, dp_accounting.PoissonSampledDpEvent) and ev.sampling_probability == 0.2
    # xi_2 / (q d_i) is the sensitivity of the Poisson-sampled sum over the expected batch
    assert cal.sensitivity == pytest.approx(1.0 / (0.2 * 50))
    assert cal.replies_max == 2 and cal.eps_run <= 1.0 + 1e-9 and cal.eps_run > 0.99
    assert accounting.spent(hist, delta=1e-5).eps == pytest.approx(cal.eps_run, rel=1e-9)


def test_laplace_paper_calibration_by_hand():
    # Theorem 1: scale = 2 b T xi_1 / (N d_i eps) = 2*1*22*300 / (10*6000*1) = 0.22
    cal = alg.calibrate(mechanism="laplace", eps=1.0, b=1, T=22, N=10, d_i=6000, xi=300)
    assert cal.scale == pytest.approx(0.22)
    assert cal.sensitivity == pytest.approx(0.1)          # 2 xi_1 / d_i
    assert cal.replies_assumed == pytest.approx(2.2)       # bT/N
    # round robin: clients 0, 1 reply 3 times, the others 2; pure eps = 3 * 0.1 / 0.22
    assert cal.replies_max == 3 and cal.eps_pure == pytest.approx(3 / 2.2)
    fixed = alg.calibrate(mechanism="laplace", eps=1.0, b=1, T=22, N=10, d_i=6000, xi=300, rule="accountant")
    assert fixed.scale == pytest.approx(0.3) and fixed.eps_pure == pytest.approx(1.0)
    assert fixed.eps_run <= 1.0 + 1e-12     # PLD at delta > 0 is at most the pure eps


def test_gaussian_paper_calibration_classic_c2():
    c2 = math.sqrt(2 * math.log(1.25 / 1e-5))
    cal = alg.calibrate(mechanism="gaussian", eps=1.0, b=10, T=100, N=10, d_i=6000, q=0.01, xi=10.0)
    sigma = c2 * 10 * math.sqrt(10 * 100 * math.log(1e5) / 10) / 6000  # eq. (5)
    assert cal.c2 == pytest.approx(c2) and cal.scale == pytest.approx(sigma)
    assert cal.noise_multiplier == pytest.approx(sigma * 0.01 * 6000 / 10)


def test_replies_round_robin():
    assert alg.replies(N=10, b=1, T=22).tolist() == [3, 3] + [2] * 8
    assert alg.replies(N=10, b=5, T=4).tolist() == [2] * 10
    assert alg.replies(N=10, b=5, T=4, sampler="uniform").tolist() == [2.0] * 10


@pytest.mark.parametrize("kw,name", [
    (dict(b=11), "b"), (dict(b=0), "b"), (dict(q=0.0, mechanism="gaussian"), "q"),
    (dict(q=1.5, mechanism="gaussian"), "q"), (dict(eps=0.0), "eps"), (dict(delta=1.0), "delta"),
    (dict(T=0), "T"), (dict(q=0.5), "q"), (dict(mechanism="exponential"), "mechanism")])
def test_bad_parameters_name_the_parameter(kw, name):
    args = dict(mechanism="laplace", eps=1.0, b=1, T=10, N=10, d_i=100)
    with pytest.raises(ValueError, match=name):
        alg.calibrate(**{**args, **kw})


def test_uplink_sampling_prob_wraps_event():
    hook = engine.gaussian_uplink(1.0, sensitivity=0.5, sampling_prob=0.1)
    with pytest.raises(ValueError, match="sampling_prob"):
        engine.gaussian_uplink(1.0, sensitivity=0.5, sampling_prob=0.0)
    data, model = toy_federation([6] * 4, **TOY), models.MultinomialLogReg(in_features=5, num_classes=3)
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, sampling="poisson", sample_rate=0.1,
                          upload="gradient", clip=1.0, clip_mode="sample_grad")
    _, ctx = engine.round_step(model, data, cfg, engine.init_state(model, data, cfg), uplink=hook)
    ev = hook.event(ctx)
    assert len(ev) == 4 and all(e.sampling_probability == 0.1 and e.event.noise_multiplier == 2.0 for e in ev)
    assert np.isfinite(accounting.epsilon(ev[0], delta=1e-5))


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_a_zhou_run_with_cached_row_norms_returns_its_archived_numbers(mechanism):
    """FedSGD-DPC clips every sample's gradient; the rows' norms now come from the split's cache
    (fldp.data.FederatedData.row_norms) instead of being recomputed at every step.  A run from the
    run archive (full batches under Laplace, 1 % batches under Gaussian) returns exactly what it
    returned when it was archived (within float rounding on another processor: helpers.assert_as_archived)."""
    import json

    from helpers import assert_as_archived
    from pathlib import Path

    from fldp.seeding import one_thread

    from fldp.papers.zhou import experiments

    archive = Path(__file__).resolve().parent.parent / "results" / "archive" / "zhou" / "04_experiments.jsonl"
    record = next(r for r in map(json.loads, archive.read_text().splitlines())
                  if r["config"]["mechanism"] == mechanism and 1 < r["config"]["T"] <= 10)
    with one_thread():  # as the archived run computed
        assert_as_archived(experiments.fedsgd_dpc_run(**record["config"]), record, "zhou/04_experiments")

"""The batched engine against a plain per-client reference, the loss written here with torch.nn.

The reference is ``helpers.plain_round``: a Python loop over clients, each trained alone by
autograd on the loss of an ``nn.Sequential`` (called on the flat parameters with
``torch.func.functional_call``), exactly as a tutorial would; it borrows from the engine only
the client ids and batch indices of each round (so both see the same data order), never its
arithmetic.
"""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fldp import engine, models
from helpers import clip, engine_schedule, plain_round, toy_federation

IN, HID, OUT = 12, 16, 3
COUNTS = [10, 12, 7, 15, 9, 11]
TOY = dict(features=IN, classes=OUT, per_client=True, test=20)  # toy_federation(counts, **TOY)


def fixed_noise(shape, t, ids=None):
    """Deterministic 'noise' so that engine and reference add the same numbers."""
    base = torch.sin(torch.arange(math.prod(shape[-1:]), dtype=torch.float32) * 0.37 + t)
    if ids is None:
        return 0.01 * base
    return 0.01 * base[None, :] * torch.cos(ids.to(torch.float32) + t)[:, None]


def fixed_uplink(ctx, uploads):
    return uploads + fixed_noise(uploads.shape, ctx.t, ctx.clients)


def fixed_downlink(ctx, w):
    return w + fixed_noise(w.shape, ctx.t + 100)


def nn_loss(model):
    """Per-sample cross-entropy of an ``nn.Sequential`` MLP whose weights are the flat ``params``
    (laid out as ``models.MLP``'s: w1 [IN, HID], b1, w2 [HID, OUT], b2)."""
    net = nn.Sequential(nn.Linear(IN, HID), nn.ReLU(), nn.Linear(HID, OUT))

    def loss(params, x, y):
        p = {k: v[0] for k, v in model.unflatten(params[None]).items()}
        weights = {"0.weight": p["w1"].T, "0.bias": p["b1"], "2.weight": p["w2"].T, "2.bias": p["b2"]}
        return F.cross_entropy(torch.func.functional_call(net, weights, (x,)), y, reduction="none")

    return loss


def reference_run(model, data, cfg, w, noise):
    """Plain FL, round after round: ``helpers.plain_round`` on the clients and batches the
    engine's seeds give, with the same fixed noise (per client, then at the server)."""
    step, loss = 0, nn_loss(model)
    for t in range(1, cfg.num_rounds + 1):
        selected = engine.select_clients(cfg, data.num_clients, t)
        schedule = engine_schedule(cfg, data, selected, t)
        uplink = (lambda c, u: u + fixed_noise((1, len(u)), t, torch.tensor([c]))[0]) if noise else None
        downlink = (lambda v: v + fixed_noise(v.shape, t + 100)) if noise else None
        w = plain_round(w, data, selected, loss=loss, lr=cfg.learning_rate, schedule=schedule, step=step,
                        clip_mode=cfg.clip_mode, clip_bound=cfg.clip, clip_norm=cfg.clip_norm, mu=cfg.mu,
                        upload=cfg.upload, noise=uplink, aggregation="weighted",
                        server_lr=cfg.server_learning_rate(t), downlink=downlink)
        step += len(schedule)
    return w


CASES = {
    "full participation, epochs, mini-batch": dict(local_epochs=2, batch_size=4),
    "K-of-N, steps, full batch, prox, clipping": dict(local_steps=3, clients_per_round=3, mu=0.5,
                                                       clip=1.5, clip_mode="params"),
    "K-of-N, steps, mini-batch": dict(local_steps=4, batch_size=5, clients_per_round=4),
    "updates, server lr, update clipping": dict(local_steps=2, batch_size=3, upload="update",
                                                server_lr=0.7, clip=0.05, clip_mode="update"),
    "gradients, decaying server lr (Zhou)": dict(local_steps=1, sampling="fraction", sample_rate=0.3,
                                                 upload="gradient", server_lr=lambda t: 0.5 / t,
                                                 clients_per_round=4),
    "per-sample l1 clipping, fraction q": dict(local_steps=2, sampling="fraction", sample_rate=0.5,
                                               clip=0.3, clip_mode="sample_grad", clip_norm="l1"),
    "per-sample l2 clipping, Poisson": dict(local_steps=3, sampling="poisson", sample_rate=0.4,
                                            clip=0.5, clip_mode="sample_grad"),
    "batch clipping, fixed b, decaying lr (Li)": dict(local_steps=3, batch_size=2, clip=0.2,
                                                      clip_mode="batch_grad", clients_per_round=3,
                                                      lr=lambda s: 0.2 / (1 + 0.01 * s)),
    "epochs, unequal clients, K-of-N, decaying lr": dict(local_epochs=1, batch_size=4, clients_per_round=3,
                                                         lr=lambda s: 0.3 / (1 + 0.1 * s)),
}


@pytest.mark.parametrize("noise", [False, True], ids=["noise off", "fixed noise"])
@pytest.mark.parametrize("case", CASES)
def test_batched_engine_matches_per_client_reference(case, noise):
    data = toy_federation(COUNTS, **TOY)
    model = models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(**{"num_rounds": 3, "lr": 0.1, "seed": 3, "noise": noise, **CASES[case]})
    w0 = model.init(torch.Generator().manual_seed(1))
    hist = engine.run(model, data, cfg, init_params=w0, uplink=fixed_uplink, downlink=fixed_downlink)
    ref = reference_run(model, data, cfg, w0, noise)
    assert torch.allclose(hist.params, ref, atol=1e-5, rtol=0), float((hist.params - ref).abs().max())
    # the run really moved the model (a test that cannot fail is a defect)
    assert float((hist.params - w0).abs().max()) > 1e-3


def test_noise_switch_changes_result():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=2, local_steps=2, lr=0.1)
    a = engine.run(model, data, cfg, uplink=fixed_uplink).params
    b = engine.run(model, data, engine.with_config(cfg, noise=False), uplink=fixed_uplink).params
    c = engine.run(model, data, cfg).params  # no hook at all
    assert float((a - b).abs().max()) > 1e-4  # fixed noise is 0.01 * sin(...) per coordinate
    assert torch.equal(b, c)


def gaussian_run(seed, sigma=0.05, **kw):
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=3, local_epochs=1, batch_size=4, lr=0.1, clients_per_round=3,
                          seed=seed, **kw)
    return engine.run(model, data, cfg, uplink=engine.gaussian_uplink(sigma),
                      downlink=engine.gaussian_downlink(sigma))


def test_same_seed_same_numbers_different_seed_different_noise():
    a, b, c = gaussian_run(0), gaussian_run(0), gaussian_run(1)
    assert torch.equal(a.params, b.params)
    assert a.test_loss == b.test_loss and a.clients == b.clients
    assert float((a.params - c.params).abs().max()) > 1e-3


def test_streams_are_independent():
    """Changing the noise level leaves client selection and batch order unchanged."""
    a, b = gaussian_run(0, sigma=0.05), gaussian_run(0, sigma=0.2)
    assert a.clients == b.clients
    g1, g2 = engine.generator(0, "uplink", 1), engine.generator(0, "downlink", 1)
    assert not torch.equal(torch.randn(5, generator=g1), torch.randn(5, generator=g2))


def test_client_selection():
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, clients_per_round=4, seed=5)
    sel = [engine.select_clients(cfg, 10, t) for t in range(1, 30)]
    assert all(len(s) == 4 and len(set(s.tolist())) == 4 and s.max() < 10 for s in sel)
    assert len({tuple(s.tolist()) for s in sel}) > 20  # varies across rounds
    rr = engine.FLConfig(num_rounds=1, local_steps=1, clients_per_round=4, sampler="round_robin")
    assert [engine.select_clients(rr, 10, t).tolist() for t in (1, 2, 3)] == [
        [0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]


def test_aggregation_forms():
    data = toy_federation(COUNTS, **TOY)
    uploads = torch.arange(6, dtype=torch.float32)[:2, None].repeat(1, 3) + 1  # rows of 1s and 2s
    clients = torch.tensor([0, 3])
    # p = counts/64: 10/64 and 15/64
    w = engine.aggregate(uploads, clients, data, "weighted", 2)
    assert torch.allclose(w, torch.full((3,), (10 * 1 + 15 * 2) / 25))
    w = engine.aggregate(uploads, clients, data, "unbiased", 2)
    assert torch.allclose(w, torch.full((3,), 6 / 2 * (10 * 1 + 15 * 2) / 64))
    assert torch.allclose(engine.aggregate(uploads, clients, data, "mean", 2), torch.full((3,), 1.5))


def test_dropout_removes_uploads():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=20, local_steps=1, lr=0.1, dropout=0.5, seed=2)
    hist = engine.run(model, data, cfg)
    sizes = [len(c) for c in hist.clients[1:]]
    assert min(sizes) < 6 and 40 < sum(sizes) < 80  # about half of 6 x 20 uploads


def test_grad_clipping_bounds_every_step():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    w0 = model.init(torch.Generator().manual_seed(0))
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, lr=1.0, clip=1e-3, clip_mode="batch_grad")
    out = engine.local_train(model, w0, data, torch.arange(6), cfg)
    assert torch.allclose((out - w0).norm(dim=1), torch.full((6,), 1e-3), rtol=1e-4)


@pytest.mark.parametrize("name,kw", [("mlp", dict(in_features=IN, hidden=HID, num_classes=OUT)),
                                     ("logreg", dict(in_features=IN, num_classes=OUT)),
                                     ("binary_logreg", dict(in_features=IN, l2=0.1))])
def test_closed_form_gradients_match_autograd(name, kw):
    model = models.make_model(name, **kw)
    g = torch.Generator().manual_seed(0)
    params = torch.randn(4, model.dim, generator=g) * 0.3
    x = torch.randn(4, 7, IN, generator=g)
    y = torch.randint(0, model.num_classes, (4, 7), generator=g)
    mask = torch.rand(4, 7, generator=g) > 0.3
    p = params.clone().requires_grad_(True)
    (auto,) = torch.autograd.grad(model.loss(p, x, y, mask).sum(), p)
    assert torch.allclose(model.grad(params, x, y, mask), auto, atol=1e-5)


def test_cnn_grouped_convolution_matches_per_client_modules():
    model = models.CNN(channels=(4, 6), hidden=8)
    g = torch.Generator().manual_seed(0)
    params = torch.stack([model.init(g) for _ in range(3)])
    x = torch.randn(3, 5, 784, generator=g)
    out = model.forward(params, x)
    for i in range(3):
        p = {k: v[0] for k, v in model.unflatten(params[i:i + 1]).items()}
        h = F.max_pool2d(F.relu(F.conv2d(x[i].view(5, 1, 28, 28), p["conv1"], p["cb1"])), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2"], p["cb2"])), 2).flatten(1)
        ref = F.relu(h @ p["fc1"] + p["fb1"]) @ p["fc2"] + p["fb2"]
        assert torch.allclose(out[i], ref, atol=1e-5)


@pytest.mark.parametrize("kw,name", [
    (dict(num_rounds=0, local_steps=1), "num_rounds"),
    (dict(num_rounds=1), "local_steps"),
    (dict(num_rounds=1, local_steps=1, local_epochs=1), "local_steps"),
    (dict(num_rounds=1, local_steps=1, lr=-0.1), "lr"),
    (dict(num_rounds=1, local_steps=1, clip=0.0, clip_mode="params"), "clip"),
    (dict(num_rounds=1, local_steps=1, clip_mode="params"), "clip"),
    (dict(num_rounds=1, local_steps=1, clip_mode="weights", clip=1.0), "clip_mode"),
    (dict(num_rounds=1, local_steps=1, dropout=1.0), "dropout"),
    (dict(num_rounds=1, local_steps=1, aggregation="median"), "aggregation"),
])
def test_bad_config_is_rejected_with_parameter_name(kw, name):
    with pytest.raises(ValueError, match=name):
        engine.FLConfig(**kw)


@pytest.mark.parametrize("k", [0, 7])
def test_clients_per_round_out_of_range(k):
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, clients_per_round=k)
    with pytest.raises(ValueError, match=r"clients_per_round=.* \[1, 6\]"):
        engine.run(model, data, cfg)


def test_result_does_not_depend_on_client_chunk():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=2, local_epochs=2, batch_size=4, lr=0.1, mu=0.1)
    runs = [engine.run(model, data, engine.with_config(cfg, client_chunk=c)).params for c in (1, 4, 6)]
    assert torch.allclose(runs[0], runs[1], atol=1e-6) and torch.allclose(runs[0], runs[2], atol=1e-6)


@pytest.mark.parametrize("name,kw", [("mlp", dict(in_features=IN, hidden=HID, num_classes=OUT)),
                                     ("binary_logreg", dict(in_features=IN, l2=0.1))])
def test_evaluate_matches_training_loss(name, kw):
    model = models.make_model(name, **kw)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(model.dim, generator=g) * 0.3
    x, y = torch.randn(50, IN, generator=g), torch.randint(0, model.num_classes, (50,), generator=g)
    loss, acc = model.evaluate(w, x, y, chunk=16)
    assert loss == pytest.approx(float(model.loss(w[None], x[None], y[None])[0]), rel=1e-5)
    assert acc == pytest.approx(float((model.forward(w[None], x[None])[0].argmax(-1) == y).float().mean()))


# -- per-sample clipping ----------------------------------------------------------------------
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_sample_and_batch_clipping_agree_at_batch_size_1_and_differ_otherwise(norm):
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    w0 = model.init(torch.Generator().manual_seed(0))
    out = {}
    for b in (1, 5):
        for mode in ("sample_grad", "batch_grad"):
            cfg = engine.FLConfig(num_rounds=1, local_steps=3, batch_size=b, lr=0.5, clip=0.05,
                                  clip_mode=mode, clip_norm=norm)
            out[b, mode] = engine.local_train(model, w0, data, torch.arange(6), cfg)
    assert torch.allclose(out[1, "sample_grad"], out[1, "batch_grad"], atol=1e-6)
    assert float((out[5, "sample_grad"] - out[5, "batch_grad"]).abs().max()) > 1e-3


@pytest.mark.parametrize("name,kw", [("mlp", dict(in_features=IN, hidden=HID, num_classes=OUT)),
                                     ("logreg", dict(in_features=IN, num_classes=OUT)),
                                     ("logreg", dict(in_features=IN, num_classes=OUT, bias=True)),
                                     ("binary_logreg", dict(in_features=IN, l2=0.1))])
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_closed_form_per_sample_clipping_matches_per_sample_autograd(name, kw, norm):
    """The ghost-norm closed forms against one autograd backward per sample."""
    model = models.make_model(name, **kw)
    g = torch.Generator().manual_seed(0)
    params = torch.randn(3, model.dim, generator=g) * 0.5
    x, y = torch.randn(3, 6, IN, generator=g), torch.randint(0, model.num_classes, (3, 6), generator=g)
    w = torch.rand(3, 6, generator=g)
    bound = 0.2
    got = engine.gradient(model, params, x, y, weights=w, clip=bound, clip_norm=norm)
    ref = torch.zeros_like(params)
    for c in range(3):
        for b in range(6):
            p = params[c:c + 1].clone().requires_grad_(True)
            (gb,) = torch.autograd.grad(model.per_sample_loss(p, x[c:c + 1, b:b + 1], y[c:c + 1, b:b + 1]).sum(), p)
            ref[c] += w[c, b] * clip(gb[0], bound, norm)
        if name == "binary_logreg":
            ref[c] += kw["l2"] * params[c]  # d/dw of lambda/2 ||w||^2, not clipped
    assert torch.allclose(got, ref, atol=1e-6), float((got - ref).abs().max())
    # clipping was active: the unclipped weighted gradient differs
    assert float((engine.gradient(model, params, x, y, weights=w) - got).abs().max()) > 1e-3


def test_per_sample_clipping_through_torch_func_for_models_without_closed_form():
    model = models.CNN(channels=(2, 3), hidden=4)
    g = torch.Generator().manual_seed(0)
    params = torch.stack([model.init(g) for _ in range(2)])
    x, y = torch.randn(2, 3, 784, generator=g), torch.randint(0, 10, (2, 3), generator=g)
    got = engine.gradient(model, params, x, y, clip=0.1)
    for c in range(2):
        ref = 0
        for b in range(3):
            p = params[c:c + 1].clone().requires_grad_(True)
            (gb,) = torch.autograd.grad(model.per_sample_loss(p, x[c:c + 1, b:b + 1], y[c:c + 1, b:b + 1]).sum(), p)
            ref = ref + clip(gb[0], 0.1) / 3
        assert torch.allclose(got[c], ref, atol=1e-6)
    assert torch.all(got.norm(dim=1) <= 0.1 + 1e-6)


# -- sampling of local data ---------------------------------------------------------------------
def test_sampling_schemes_draw_the_sizes_the_papers_define():
    counts = torch.tensor([100, 40, 7])
    g = lambda: [engine.generator(0, "batch", 1, i) for i in range(len(counts))]
    frac = engine.FLConfig(num_rounds=1, local_steps=2, sampling="fraction", sample_rate=0.1)
    for idx, w in engine.batch_schedule(counts, frac, g()):
        assert (w > 0).sum(dim=1).tolist() == [10, 4, 1]  # round(q d_i), at least 1
        for k, c in enumerate(counts.tolist()):
            rows = idx[k][w[k] > 0]
            assert len(set(rows.tolist())) == len(rows) and int(rows.max()) < c  # without replacement
    fixed = engine.FLConfig(num_rounds=1, local_steps=1, batch_size=5)
    (idx, w), = engine.batch_schedule(counts, fixed, g())
    assert (w > 0).sum(dim=1).tolist() == [5, 5, 5] and torch.allclose(w[w > 0], torch.tensor(0.2))
    pois = engine.FLConfig(num_rounds=1, local_steps=400, sampling="poisson", sample_rate=0.2)
    sizes = torch.stack([(w > 0).sum(dim=1) for _, w in engine.batch_schedule(counts, pois, g())]).float()
    assert torch.allclose(sizes.mean(0), 0.2 * counts.float(), rtol=0.06)  # Binomial(d_i, q) sizes
    assert sizes[:, 0].std() > 2  # the size varies
    _, w = next(engine.batch_schedule(counts, pois, g()))
    assert torch.allclose(w[0][w[0] > 0], torch.tensor(1 / 20.0))  # 1/(q d_i), not 1/batch size


def test_step_counter_is_global_with_epochs_unequal_clients_and_K_of_N():
    """Bug fix: the counter handed to a callable lr went backwards between rounds."""
    data, model = toy_federation([3, 40, 5, 38, 4, 6], **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=6, local_epochs=1, batch_size=4, clients_per_round=2, seed=1,
                          lr=lambda s: 0.1 / (1 + s))
    seen = []
    engine.run(model, data, cfg, observer=lambda ctx: seen.append((ctx.step, len(ctx.lrs))))
    starts = [s for s, _ in seen]
    assert starts == [sum(n for _, n in seen[:i]) for i in range(len(seen))]
    assert len({n for _, n in seen}) > 1  # rounds had different numbers of steps


# -- uploads, server step, hooks and observer ----------------------------------------------------
def test_switching_noise_off_keeps_the_server_step():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=2, local_steps=1, upload="gradient", server_lr=0.3, noise=False)
    plain = engine.FLConfig(num_rounds=2, local_steps=1, upload="gradient", server_lr=1.0, noise=False)
    a = engine.run(model, data, cfg, uplink=engine.gaussian_uplink(1.0)).params
    b = engine.run(model, data, plain).params
    w0 = model.init(engine.generator(0, "init"))
    assert float((a - w0).abs().max()) > 1e-4 and float((a - b).abs().max()) > 1e-4


def test_observer_sees_uploads_before_and_after_noise():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=2, local_steps=1, upload="update", clients_per_round=4, dropout=0.3, seed=4)
    rounds = []
    engine.run(model, data, cfg, uplink=engine.gaussian_uplink(0.5), observer=rounds.append)
    for ctx in rounds:
        assert ctx.uploads.shape == ctx.clean.shape == (len(ctx.clients), model.dim)
        assert set(ctx.clients.tolist()) <= set(ctx.selected.tolist())
        noise = ctx.uploads - ctx.clean  # std 0.5; its sample std has standard error 0.5 / sqrt(2 n)
        assert abs(float(noise.std()) - 0.5) < 4 * 0.5 / (2 * noise.numel()) ** 0.5
        assert torch.allclose(ctx.params, ctx.global_params + ctx.aggregate)


def test_per_client_noise_is_not_shifted_by_dropouts():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    noise = {}
    for p in (0.0, 0.5):
        cfg = engine.FLConfig(num_rounds=1, local_steps=1, dropout=p, seed=2)
        engine.run(model, data, cfg, uplink=engine.gaussian_uplink(1.0),
                   observer=lambda ctx: noise.__setitem__(p, dict(zip(ctx.clients.tolist(), ctx.uploads - ctx.clean))))
    assert 0 < len(noise[0.5]) < 6
    for c, n in noise[0.5].items():
        assert torch.equal(n, noise[0.0][c])


def test_laplace_uplink_scale_per_client():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=1, local_steps=1)
    scale = lambda ctx: 0.1 * (1 + ctx.clients.to(torch.float32))
    got = []
    engine.run(model, data, cfg, uplink=engine.laplace_uplink(scale), observer=got.append)
    n = got[0].uploads - got[0].clean
    z = n / (0.1 * torch.arange(1, 7.0))[:, None]  # Lap(1) if each client got its own scale
    assert abs(float(z.abs().mean()) - 1) < 0.08 and abs(float(z.var()) - 2) < 0.3  # E|x| = b, var 2b^2
    assert float(n[5].abs().mean() / n[0].abs().mean()) > 4


def test_median_clip_bound_is_the_rounds_median_update_norm():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=2, local_steps=2, upload="update", clip="median", clip_mode="update")
    rounds = []
    engine.run(model, data, cfg, observer=rounds.append)
    for ctx in rounds:
        assert ctx.clip == pytest.approx(float(ctx.raw_norms.median()))
        assert float(ctx.clean.norm(dim=1).max()) <= ctx.clip * (1 + 1e-5)
        assert int((ctx.raw_norms > ctx.clip).sum()) >= 2  # the larger half was clipped


def test_unbiased_aggregation_of_parameters_warns_when_sizes_differ():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, clients_per_round=2, aggregation="unbiased")
    with pytest.warns(UserWarning, match="random factor"):
        engine.run(model, data, cfg)
    rounds = []
    engine.run(model, data, engine.with_config(cfg, upload="update"), observer=rounds.append)  # no warning
    ctx = rounds[0]
    p = data.weights[ctx.clients]
    assert torch.allclose(ctx.aggregate, (6 / 2) * (p[:, None] * ctx.uploads).sum(0))


def test_grouping_unequal_clients_gives_the_same_model():
    data = toy_federation([2, 30, 3, 25, 4, 28], **TOY)
    model = models.MLP(IN, HID, OUT)
    for kw in (dict(local_epochs=2, batch_size=4), dict(local_steps=2)):
        cfg = engine.FLConfig(num_rounds=1, lr=0.1, mu=0.1, **kw)
        w0 = model.init(torch.Generator().manual_seed(0))
        a = engine.local_train(model, w0, data, torch.arange(6), engine.with_config(cfg, client_chunk=2))
        b = engine.local_train(model, w0, data, torch.arange(6), engine.with_config(cfg, client_chunk=6))
        assert torch.allclose(a, b, atol=1e-6)


def test_history_records_who_uploaded_with_which_mechanism():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=3, local_steps=1, clients_per_round=3, seed=1)
    hist = engine.run(model, data, cfg, uplink=engine.gaussian_uplink(0.5, sensitivity=0.25))
    assert [r.round for r in hist.privacy] == [1, 2, 3]
    for r, sel in zip(hist.privacy, hist.clients[1:]):
        assert list(r.clients) == sel and len(r.uplink) == 3
        assert all(e.noise_multiplier == pytest.approx(2.0) for e in r.uplink)
    off = engine.run(model, data, engine.with_config(cfg, noise=False), uplink=engine.gaussian_uplink(0.5, 0.25))
    assert all(e is None for r in off.privacy for e in r.uplink)


@pytest.mark.parametrize("kw,name", [
    (dict(num_rounds=1, local_steps=2, upload="gradient"), "local_steps=1"),
    (dict(num_rounds=1, local_steps=1, sampling="poisson"), "sample_rate"),
    (dict(num_rounds=1, local_steps=1, sampling="poisson", sample_rate=1.5), "sample_rate"),
    (dict(num_rounds=1, local_epochs=1, sampling="fraction", sample_rate=0.1), "local_steps"),
    (dict(num_rounds=1, local_steps=1, upload="weights"), "upload"),
    (dict(num_rounds=1, local_steps=1, server_lr=0.0), "server_lr"),
    (dict(num_rounds=1, local_steps=1, clip="median", clip_mode="sample_grad"), "median"),
    (dict(num_rounds=1, local_steps=1, clip=1.0, clip_mode="params", upload="update"), "clip_mode"),
])
def test_bad_new_config_is_rejected_with_parameter_name(kw, name):
    with pytest.raises(ValueError, match=name):
        engine.FLConfig(**kw)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_cuda_run_matches_cpu():
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=2, local_epochs=1, batch_size=4, clients_per_round=3)
    cpu = engine.run(model, data, cfg)
    gpu = engine.run(model, data, engine.with_config(cfg, device="cuda"))
    assert gpu.params.device.type == "cuda"
    assert torch.allclose(cpu.params, gpu.params.cpu(), atol=1e-4)


def test_fused_mlp_step_equals_gradient_then_update():
    data, model = toy_federation([5, 9, 7, 9, 6, 8], **TOY), models.MLP(IN, HID, OUT)
    plain = models.MLP(IN, HID, OUT)
    plain.sgd_step_ = None  # the generic path: gradient(), prox term, update
    w0 = model.init(torch.Generator().manual_seed(0))
    cfg = engine.FLConfig(num_rounds=1, local_epochs=2, batch_size=4, lr=0.2, mu=0.3)
    a = engine.local_train(model, w0, data, torch.arange(6), cfg)
    b = engine.local_train(plain, w0, data, torch.arange(6), cfg)
    assert torch.allclose(a, b, atol=1e-6) and float((a - w0).abs().max()) > 1e-2


def test_a_diverging_run_stops_and_says_where():
    from fldp import data as fdata, models
    fd = fdata.federated_dataset("mnist", 5, "iid", seed=0, subsample=200, max_test=50)
    model = models.MultinomialLogReg(bias=True)
    cfg = engine.FLConfig(num_rounds=50, local_steps=1, lr=1e30, upload="update", eval_every=10)
    with pytest.warns(UserWarning, match="diverged in round"):
        hist = engine.run(model, fd, cfg)
    assert hist.diverged_at is not None and 1 <= hist.diverged_at < 50
    assert hist.rounds[-1] == hist.diverged_at - 1          # the last finite model is evaluated
    assert hist.to_dict()["diverged_at"] == hist.diverged_at
    assert bool(torch.isfinite(hist.params).all())


def test_lagged_median_clip_is_the_median_of_all_earlier_rounds_norms():
    """clip="median_lagged": round t clips at the median of every unclipped upload norm of
    rounds 1..t-1 (round 1: its own), computed here by hand from the observed raw norms."""
    data, model = toy_federation(COUNTS, **TOY), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=4, local_steps=2, upload="update", clip="median_lagged", clip_mode="update")
    rounds = []
    engine.run(model, data, cfg, observer=rounds.append)
    seen = []
    for i, ctx in enumerate(rounds):
        expected = float(ctx.raw_norms.median()) if i == 0 else float(torch.tensor(seen).median())
        assert ctx.clip == pytest.approx(expected)
        assert float(ctx.clean.norm(dim=1).max()) <= ctx.clip * (1 + 1e-5)
        seen += ctx.raw_norms.tolist()
    assert rounds[2].clip != pytest.approx(float(rounds[2].raw_norms.median()))  # it lags


def test_lagged_median_clip_needs_an_upload_clip_mode():
    with pytest.raises(ValueError, match="median_lagged"):
        engine.FLConfig(num_rounds=1, local_steps=1, clip="median_lagged", clip_mode="sample_grad")


def test_client_chunk_takes_every_client_of_a_round_on_a_gpu():
    cnn = models.CNN(channels=(32, 64), hidden=512)        # the adaptive scheme's paper CNN
    assert engine.client_chunk(cnn) == 1                     # a CPU's cache holds one such client
    assert engine.client_chunk(cnn, device="cuda") == (2 << 30) // (cnn.dim * 32) == 115
    assert engine.client_chunk(models.MLP(IN, HID, OUT), device="cuda") > 10_000

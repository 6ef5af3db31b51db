"""The batched engine against a plain per-client reference written here with torch.nn.

The reference trains one ``nn.Sequential`` per client with ``torch.optim.SGD`` in a Python
loop, exactly as a tutorial would; it borrows from the engine only the client ids and batch
indices of each round (so both see the same data order), never its arithmetic.
"""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fldp import engine, models
from fldp.data import FederatedData

IN, HID, OUT = 12, 16, 3
COUNTS = [10, 12, 7, 15, 9, 11]


def toy_data(seed=0):
    g = torch.Generator().manual_seed(seed)
    n, n_max = len(COUNTS), max(COUNTS)
    x = torch.randn(n, n_max, IN, generator=g)
    y = torch.randint(0, OUT, (n, n_max), generator=g)
    counts = torch.tensor(COUNTS)
    rows = torch.cat([x[i, :c] for i, c in enumerate(COUNTS)])
    labels = torch.cat([y[i, :c] for i, c in enumerate(COUNTS)])
    return FederatedData(x, y, counts, rows, labels, rows[:20], labels[:20])


def fixed_noise(shape, t, ids=None):
    """Deterministic 'noise' so that engine and reference add the same numbers."""
    base = torch.sin(torch.arange(math.prod(shape[-1:]), dtype=torch.float32) * 0.37 + t)
    if ids is None:
        return 0.01 * base
    return 0.01 * base[None, :] * torch.cos(ids.to(torch.float32) + t)[:, None]


def fixed_uplink(ctx, uploads, g):
    return uploads + fixed_noise(uploads.shape, ctx.t, ctx.clients)


def fixed_downlink(ctx, w, g):
    return w + fixed_noise(w.shape, ctx.t + 100)


def to_net(model, flat):
    p = model.unflatten(flat[None])
    net = nn.Sequential(nn.Linear(IN, HID), nn.ReLU(), nn.Linear(HID, OUT))
    with torch.no_grad():
        net[0].weight.copy_(p["w1"][0].T)
        net[0].bias.copy_(p["b1"][0])
        net[2].weight.copy_(p["w2"][0].T)
        net[2].bias.copy_(p["b2"][0])
    return net


def from_net(net):
    return torch.cat([net[0].weight.detach().T.reshape(-1), net[0].bias.detach(),
                      net[2].weight.detach().T.reshape(-1), net[2].bias.detach()])


def reference_run(model, data, cfg, w, noise):
    """Plain FL: a Python loop over clients, one nn.Module and one optimizer each."""
    for t in range(1, cfg.num_rounds + 1):
        selected = engine.select_clients(cfg, data.num_clients, t)
        schedule = list(engine.batch_schedule(data.counts[selected], cfg, engine.generator(cfg.seed, "batch", t)))
        uploads = []
        for k, cid in enumerate(selected.tolist()):
            net = to_net(model, w)
            anchor = [p.detach().clone() for p in net.parameters()]
            opt = torch.optim.SGD(net.parameters(), lr=cfg.lr)
            for idx, mask in schedule:
                rows = idx[k][mask[k]]
                if len(rows) == 0:
                    continue
                opt.zero_grad()
                loss = F.cross_entropy(net(data.x[cid, rows]), data.y[cid, rows])
                loss = loss + sum(cfg.mu / 2 * ((p - a) ** 2).sum() for p, a in zip(net.parameters(), anchor))
                loss.backward()
                opt.step()
            wi = from_net(net)
            if cfg.clip_mode == "params":
                wi = wi / max(1.0, float(wi.norm()) / cfg.clip)
            uploads.append(wi)
        uploads = torch.stack(uploads)
        if noise:
            uploads = uploads + fixed_noise(uploads.shape, t, selected)
        p = data.counts[selected].float()
        w = (p[:, None] * uploads).sum(0) / p.sum()
        if noise:
            w = w + fixed_noise(w.shape, t + 100)
    return w


CASES = {
    "full participation, epochs, mini-batch": dict(local_epochs=2, batch_size=4),
    "K-of-N, steps, full batch, prox, clipping": dict(local_steps=3, clients_per_round=3, mu=0.5,
                                                       clip=1.5, clip_mode="params"),
    "K-of-N, steps, mini-batch": dict(local_steps=4, batch_size=5, clients_per_round=4),
}


@pytest.mark.parametrize("noise", [False, True], ids=["noise off", "fixed noise"])
@pytest.mark.parametrize("case", CASES)
def test_batched_engine_matches_per_client_reference(case, noise):
    data = toy_data()
    model = models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=3, lr=0.1, seed=3, noise=noise, **CASES[case])
    w0 = model.init(torch.Generator().manual_seed(1))
    hist = engine.run(model, data, cfg, init_params=w0, uplink=fixed_uplink, downlink=fixed_downlink)
    ref = reference_run(model, data, cfg, w0, noise)
    assert torch.allclose(hist.params, ref, atol=1e-5, rtol=0), float((hist.params - ref).abs().max())
    # the run really moved the model (a test that cannot fail is a defect)
    assert float((hist.params - w0).abs().max()) > 1e-3


def test_noise_switch_changes_result():
    data, model = toy_data(), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=2, local_steps=2, lr=0.1)
    a = engine.run(model, data, cfg, uplink=fixed_uplink).params
    b = engine.run(model, data, engine.with_config(cfg, noise=False), uplink=fixed_uplink).params
    c = engine.run(model, data, cfg).params  # no hook at all
    assert float((a - b).abs().max()) > 1e-4  # fixed noise is 0.01 * sin(...) per coordinate
    assert torch.equal(b, c)


def gaussian_run(seed, sigma=0.05, **kw):
    data, model = toy_data(), models.MLP(IN, HID, OUT)
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
    data = toy_data()
    uploads = torch.arange(6, dtype=torch.float32)[:2, None].repeat(1, 3) + 1  # rows of 1s and 2s
    clients = torch.tensor([0, 3])
    # p = counts/64: 10/64 and 15/64
    w = engine.aggregate(uploads, clients, data, "weighted", 2)
    assert torch.allclose(w, torch.full((3,), (10 * 1 + 15 * 2) / 25))
    w = engine.aggregate(uploads, clients, data, "unbiased", 2)
    assert torch.allclose(w, torch.full((3,), 6 / 2 * (10 * 1 + 15 * 2) / 64))
    assert torch.allclose(engine.aggregate(uploads, clients, data, "mean", 2), torch.full((3,), 1.5))


def test_dropout_removes_uploads():
    data, model = toy_data(), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=20, local_steps=1, lr=0.1, dropout=0.5, seed=2)
    hist = engine.run(model, data, cfg)
    sizes = [len(c) for c in hist.clients[1:]]
    assert min(sizes) < 6 and 40 < sum(sizes) < 80  # about half of 6 x 20 uploads


def test_grad_clipping_bounds_every_step():
    data, model = toy_data(), models.MLP(IN, HID, OUT)
    w0 = model.init(torch.Generator().manual_seed(0))
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, lr=1.0, clip=1e-3, clip_mode="grad")
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
    data, model = toy_data(), models.MLP(IN, HID, OUT)
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, clients_per_round=k)
    with pytest.raises(ValueError, match=r"clients_per_round=.* \[1, 6\]"):
        engine.run(model, data, cfg)


def test_result_does_not_depend_on_client_chunk():
    data, model = toy_data(), models.MLP(IN, HID, OUT)
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

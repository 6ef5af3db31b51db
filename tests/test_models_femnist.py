"""Zhou et al.'s FEMNIST CNN (Sec. VII-A): 110,526 parameters, batched over clients."""
import math

import pytest
import torch
import torch.nn.functional as F

from fldp import engine, models
from fldp.data import FederatedData
from fldp.papers.zhou import algorithm as zhou_alg


def layer_sizes(model):
    return {name: math.prod(shape) for name, shape in model.shapes.items()}


def test_parameter_counts_are_the_papers():
    model = zhou_alg.femnist_cnn()
    sizes = layer_sizes(model)
    assert model.dim == 110_526
    assert sizes["conv1"] + sizes["cb1"] == 416  # 16 x (1 x 5 x 5) + 16
    assert sizes["conv2"] + sizes["cb2"] == 12_832  # 32 x (16 x 5 x 5) + 32
    assert sizes["fc1"] + sizes["fb1"] == 97_278 == 1_569 * 62  # (7*7*32 + 1) x 62
    assert list(model.shapes) == ["conv1", "cb1", "conv2", "cb2", "fc1", "fb1"]  # no hidden layer
    assert model.num_classes == 62
    # the paper's model is the shared CNN with the paper's settings, nothing more
    built = models.make_model("cnn", channels=(16, 32), hidden=None, num_classes=62, padding="same")
    assert isinstance(model, models.CNN) and built.dim == 110_526 and built.shapes == model.shapes


def test_default_cnn_layout_is_unchanged():
    model = models.CNN()
    assert list(model.shapes) == ["conv1", "cb1", "conv2", "cb2", "fc1", "fb1", "fc2", "fb2"]
    assert model.shapes["fc1"] == (64 * 4 * 4, 512) and model.shapes["fc2"] == (512, 10)
    assert model.dim == 582_026
    a = model.init(torch.Generator().manual_seed(3))
    b = models.make_model("cnn").init(torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


def test_init_bounds_follow_fan_in():
    model = zhou_alg.femnist_cnn()
    p = model.unflatten(model.init(torch.Generator().manual_seed(0))[None])
    for name, fan_in in (("conv1", 25), ("cb1", 25), ("conv2", 400), ("cb2", 400), ("fc1", 1568), ("fb1", 1568)):
        bound = 1 / math.sqrt(fan_in)
        assert float(p[name].abs().max()) <= bound
        assert float(p[name].abs().max()) > 0.5 * bound


def test_forward_shape_and_matches_per_client_modules():
    model = zhou_alg.femnist_cnn()
    g = torch.Generator().manual_seed(0)
    params = torch.stack([model.init(g) for _ in range(2)])
    x = torch.rand(2, 4, 784, generator=g)
    out = model.forward(params, x)
    assert out.shape == (2, 4, 62)
    for i in range(2):
        p = {k: v[0] for k, v in model.unflatten(params[i:i + 1]).items()}
        h = F.max_pool2d(F.relu(F.conv2d(x[i].view(4, 1, 28, 28), p["conv1"], p["cb1"], padding=2)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2"], p["cb2"], padding=2)), 2)
        assert h.shape == (4, 32, 7, 7)
        ref = h.flatten(1) @ p["fc1"] + p["fb1"]
        assert torch.allclose(out[i], ref, atol=1e-5)


@pytest.mark.parametrize("kw", [dict(hidden=None), dict(padding="same", hidden=6),
                                dict(kernel_size=3, num_classes=5, hidden=None),
                                dict(in_channels=3, image_size=12, kernel_size=3, hidden=None)])
def test_generalised_cnn_layouts(kw):
    model = models.CNN(channels=(2, 3), **kw)
    g = torch.Generator().manual_seed(1)
    params = torch.stack([model.init(g) for _ in range(3)])
    features = model.in_channels * model.image_size ** 2
    out = model.forward(params, torch.randn(3, 2, features, generator=g))
    assert out.shape == (3, 2, model.num_classes)
    assert params.shape[1] == sum(layer_sizes(model).values())


def test_too_small_image_is_rejected():
    with pytest.raises(ValueError, match="image_size"):
        models.CNN(image_size=8)
    with pytest.raises(ValueError, match="padding"):
        models.CNN(padding="full")


def clip(v, bound, norm):
    n = float(v.abs().sum() if norm == "l1" else v.norm())
    return v * min(1.0, bound / n) if n > 0 else v


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_per_sample_clipped_gradient_matches_a_loop(norm):
    """engine.gradient's torch.func path (vmap over clients and samples) against one
    autograd backward per sample."""
    model = zhou_alg.femnist_cnn()
    g = torch.Generator().manual_seed(0)
    params = torch.stack([model.init(g) for _ in range(2)])
    x = torch.rand(2, 3, 784, generator=g)
    y = torch.randint(0, 62, (2, 3), generator=g)
    w = torch.rand(2, 3, generator=g)
    bound = 0.5 if norm == "l1" else 0.05  # below every sample's norm: clipping is active
    got = engine.gradient(model, params, x, y, weights=w, clip=bound, clip_norm=norm)
    assert got.shape == (2, 110_526)
    ref = torch.zeros_like(params)
    for c in range(2):
        for b in range(3):
            p = params[c:c + 1].clone().requires_grad_(True)
            (gb,) = torch.autograd.grad(model.per_sample_loss(p, x[c:c + 1, b:b + 1], y[c:c + 1, b:b + 1]).sum(), p)
            ref[c] += w[c, b] * clip(gb[0], bound, norm)
    assert torch.allclose(got, ref, atol=1e-5), float((got - ref).abs().max())
    unclipped = engine.gradient(model, params, x, y, weights=w)
    assert float((unclipped - got).abs().max()) > 1e-4


def test_local_training_with_l1_sample_clipping_runs():
    """One FedSGD-style round on random 62-class data: the model plugs into the engine."""
    model = zhou_alg.femnist_cnn()
    g = torch.Generator().manual_seed(0)
    xs = [torch.rand(n, 784, generator=g) for n in (4, 3)]
    ys = [torch.randint(0, 62, (n,), generator=g) for n in (4, 3)]
    data = FederatedData.from_clients(xs, ys, torch.rand(5, 784, generator=g), torch.randint(0, 62, (5,), generator=g))
    w0 = model.init(torch.Generator().manual_seed(1))
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, batch_size=2, lr=0.1, clip=200.0,
                          clip_mode="sample_grad", clip_norm="l1", upload="gradient")
    out = engine.local_train(model, w0, data, torch.arange(2), cfg)
    assert out.shape == (2, 110_526) and bool(torch.isfinite(out).all())

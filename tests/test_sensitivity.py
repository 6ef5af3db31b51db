"""fldp.sensitivity: neighbouring pairs, shared batch schedule, hand-computed distances."""
import pytest
import torch

from fldp import engine, models
from fldp import sensitivity as S


def pool(n=40, f=5, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, f, generator=g), torch.randint(0, classes, (n,), generator=g)


def test_pairs_differ_in_exactly_one_sample():
    x, y = pool()
    for repl in ("random", "flip"):
        pairs = S.neighbouring_pairs(y, m=8, num_pairs=6, seed=1, replacement=repl)
        assert pairs.index.shape == (6, 8) and pairs.m == 8 and pairs.num_pairs == 6
        d, p = S.pair_data(x, y, pairs)
        assert d.counts.tolist() == [8] * 6 and p.counts.tolist() == [8] * 6
        for k in range(6):
            assert len(set(pairs.index[k].tolist())) == 8  # m distinct rows
            (dx, dy), (px, py) = d.client(k), p.client(k)
            rows_x = (dx != px).any(dim=1)
            rows_y = dy != py
            changed = (rows_x | rows_y).nonzero().flatten().tolist()
            assert changed == [int(pairs.position[k])]
            if repl == "random":
                assert int(pairs.new_index[k]) not in pairs.index[k].tolist()
                assert bool(rows_x[pairs.position[k]])
            else:  # same image, another label
                assert not bool(rows_x[pairs.position[k]]) and bool(rows_y[pairs.position[k]])
    again = S.neighbouring_pairs(y, m=8, num_pairs=6, seed=1)
    assert torch.equal(again.index, S.neighbouring_pairs(y, m=8, num_pairs=6, seed=1).index)


def test_one_gd_step_flip_distance_is_lr_norm_x_over_m():
    # Binary logistic regression, no bias, no L2, start w = 0, one full-batch GD step:
    # w = -lr * mean_j (sigmoid(0) - y_j) x_j.  Flipping y_j -> 1 - y_j changes the j-th term by
    # (2 y_j - 1) x_j, so ||w(D) - w(D')|| = lr ||x_j|| / m exactly.
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(30, 4, generator=g), torch.randint(0, 2, (30,), generator=g)
    model = models.BinaryLogReg(4, l2=0.0, bias=False)
    pairs = S.neighbouring_pairs(y, m=10, num_pairs=5, seed=2, replacement="flip")
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, lr=0.3)
    wd, wp = S.pair_uploads(model, torch.zeros(4), x, y, pairs, cfg, chunk=2)
    got = (wd - wp).norm(dim=1)
    want = 0.3 * x[pairs.new_index].norm(dim=1) / 10
    assert torch.allclose(got, want, rtol=1e-5)


def test_identical_pair_gives_zero_distance_so_schedules_are_shared():
    # D' = D (the "replacement" is the same row with the same label): with several
    # mini-batch epochs the two sides match bit for bit only if they see the same batches.
    x, y = pool(n=60, f=6)
    base = S.neighbouring_pairs(y, m=12, num_pairs=4, seed=0)
    same = S.NeighbourPairs(base.index, base.position,
                            base.index[torch.arange(4), base.position],
                            y[base.index[torch.arange(4), base.position]])
    model = models.MLP(6, 8, 3)
    start = model.init(torch.Generator().manual_seed(0))
    cfg = engine.FLConfig(num_rounds=1, local_epochs=3, batch_size=5, lr=0.5, mu=0.01)
    wd, wp = S.pair_uploads(model, start, x, y, same, cfg, chunk=3)
    assert torch.equal(wd, wp)
    wd, wp = S.pair_uploads(model, start, x, y, base, cfg, clip=0.5)
    assert (wd - wp).norm(dim=1).max() <= 2 * 0.5 + 1e-6  # the triangle-inequality bound 2C
    assert (wd.norm(dim=1) <= 0.5 + 1e-6).all()


def test_aggregated_distances_are_p_i_times_the_upload_distance():
    wd = torch.zeros(3, 2)
    wp = torch.tensor([[3.0, 4.0], [3.0, 4.0], [0.0, 1.0]])
    got = S.aggregated_distances(wd, wp, torch.tensor([0.5, 0.25, 0.25]))
    assert got.tolist() == pytest.approx([2.5, 1.25, 0.25])
    with pytest.raises(ValueError):
        S.aggregated_distances(wd, wp[:2], torch.ones(3) / 3)


def test_bad_arguments():
    _, y = pool()
    with pytest.raises(ValueError):
        S.neighbouring_pairs(y, m=40, num_pairs=2)  # no row left to swap in
    with pytest.raises(ValueError):
        S.neighbouring_pairs(y, m=5, num_pairs=2, replacement="worst")


def test_descend_is_full_batch_local_training_and_reaches_the_argmin():
    # descend's steps are engine.local_train's with batch_size=None (full batch, the same mu) ...
    x, y = pool(n=30, f=6)
    model = models.MLP(6, 8, 3)
    start = model.init(torch.Generator().manual_seed(1))
    xs, ys = x.view(3, 10, 6), y.view(3, 10)
    snaps = list(S.descend(model, start, xs, ys, lr=0.2, mu=0.1, steps=7, checkpoints=[0, 3]))
    assert [s for s, _, _ in snaps] == [0, 3, 7]
    assert torch.equal(snaps[0][1], start.expand(3, -1))
    from fldp.data import FederatedData
    fed = FederatedData(x, y, torch.full((3,), 10), x[:1], y[:1])
    cfg = engine.FLConfig(num_rounds=1, local_epochs=7, batch_size=None, lr=0.2, mu=0.1)
    assert torch.allclose(snaps[-1][1], engine.local_train(model, start, fed, torch.arange(3), cfg), atol=1e-6)
    # ... and on a strongly convex objective (logistic regression + proximal term) they reach
    # its argmin: the residual ||grad|| falls to rounding, and the point is a stationary one.
    lin = models.BinaryLogReg(6, l2=0.0, bias=False)
    yb = (y % 2).view(3, 10)
    (_, w0, r0), (_, w, r) = S.descend(lin, torch.zeros(6), xs, yb, lr=0.5, mu=1.0, steps=300, checkpoints=[0])
    assert (r0 > 1e-2).all() and (r < 1e-5).all()
    g = engine.gradient(lin, w, xs, yb) + 1.0 * w
    assert torch.allclose(g.norm(dim=1), r, atol=1e-7)


def test_descend_refuses_bad_arguments_at_the_call():
    x, y = pool(n=20, f=6)
    model = models.MLP(6, 8, 3)
    start = model.init(torch.Generator().manual_seed(1))
    for kw in (dict(lr=0.0), dict(steps=0), dict(mu=-1.0), dict(checkpoints=[9])):
        args = dict(lr=0.1, mu=0.0, steps=5) | kw
        with pytest.raises(ValueError):
            S.descend(model, start, x.view(2, 10, 6), y.view(2, 10), **args)
    with pytest.raises(ValueError):
        S.descend(model, start, x.view(2, 10, 6), y.view(4, 5), lr=0.1, mu=0.0, steps=5)

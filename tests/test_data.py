"""Data loading and partitions: real files (linked from ../shared/data by .ci/run) and errors."""
import os

import numpy as np
import pytest
import torch

from fldp import data
from fldp.data import sources

HAVE_MNIST = (data.data_dir() / "mnist" / "train-images-idx3-ubyte.gz").exists()
HAVE_ADULT = (data.data_dir() / "adult" / "adult.data").exists()


@pytest.mark.skipif(not HAVE_MNIST, reason="MNIST files not in the data directory")
def test_mnist_through_torchvision(tmp_path, monkeypatch):
    monkeypatch.setenv("FLDP_CACHE_DIR", str(tmp_path))  # a fresh torchvision root, as on a new machine
    monkeypatch.setattr(sources, "_network_available", lambda urls, timeout=3.0: False)
    sources._load_cached.cache_clear()
    ds = data.load("mnist")
    sources._load_cached.cache_clear()
    assert ds.x_train.shape == (60000, 784) and ds.x_test.shape == (10000, 784)
    assert torch.bincount(ds.y_test).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    # pixel mean 33.3184 / 255 (shared/data/SOURCES.md) after normalisation with (0.1307, 0.3081)
    assert float(ds.x_train.mean() * 0.3081 + 0.1307) == pytest.approx(33.3184 / 255, abs=1e-4)


@pytest.mark.skipif(not HAVE_ADULT, reason="Adult files not in the data directory")
def test_adult_as_li_et_al():
    ds = data.load("adult")
    assert ds.x_train.shape[0] == 32561 and ds.x_test.shape[0] == 16281
    assert int(ds.y_train.sum()) == 7841 and int(ds.y_test.sum()) == 3846  # '>50K' counts, SOURCES.md
    assert ds.x_train.shape[1] == ds.x_test.shape[1]
    assert float(ds.x_train.min()) == 0.0 and float(ds.x_train.max()) == 1.0
    assert not torch.isnan(ds.x_train).any()


def test_missing_files_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("FLDP_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FLDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sources, "_network_available", lambda urls, timeout=3.0: False)
    sources._load_cached.cache_clear()
    with pytest.raises(data.MissingDataError) as err:
        data.load("mnist")
    msg = str(err.value)
    for f in data.IMAGE_FILES:
        assert f"put {f} at {tmp_path / 'mnist' / f}" in msg
    assert isinstance(err.value, ValueError)
    with pytest.raises(ValueError, match=r"put adult.test at .*adult/adult.test"):
        (tmp_path / "adult").mkdir()
        (tmp_path / "adult" / "adult.data").write_text("")
        data.load("adult")
    sources._load_cached.cache_clear()


def test_unknown_dataset_and_partition():
    with pytest.raises(ValueError, match="dataset='cifar'"):
        data.load("cifar")
    with pytest.raises(ValueError, match="partition='pathological'"):
        data.partition(torch.zeros(10, dtype=torch.long), 2, "pathological")
    with pytest.raises(ValueError, match="num_clients"):
        data.partition(torch.zeros(10, dtype=torch.long), 0)
    with pytest.raises(ValueError, match="alpha"):
        data.partition(torch.zeros(10, dtype=torch.long), 2, "dirichlet", alpha=0)


LABELS = torch.arange(1000) % 10


def test_iid_partition_equal_and_disjoint():
    parts = data.partition(LABELS[:997], 10, "iid", seed=1)
    assert [len(p) for p in parts] == [99] * 10  # remainder of 7 dropped
    allidx = torch.cat(parts)
    assert len(set(allidx.tolist())) == 990
    assert all(torch.equal(a, b) for a, b in zip(parts, data.partition(LABELS[:997], 10, "iid", seed=1)))
    assert not torch.equal(parts[0], data.partition(LABELS[:997], 10, "iid", seed=2)[0])


def test_dirichlet_partition_covers_everything_and_skews():
    parts = data.partition(LABELS, 10, "dirichlet", seed=0, alpha=0.1)
    allidx = torch.cat(parts)
    assert sorted(allidx.tolist()) == list(range(1000))
    top_share = [np.bincount(LABELS[p].numpy(), minlength=10).max() / len(p) for p in parts]
    assert np.mean(top_share) > 0.5  # alpha = 0.1: most clients dominated by one class
    iid_like = data.partition(LABELS, 10, "dirichlet", seed=0, alpha=1000.0)
    assert np.mean([np.bincount(LABELS[p].numpy(), minlength=10).max() / len(p) for p in iid_like]) < 0.2


def test_classes_per_client():
    parts = data.partition(LABELS, 10, "classes", seed=0, classes_per_client=2)
    assert all(len(torch.unique(LABELS[p])) <= 2 for p in parts)  # shards align with classes here
    assert sorted(torch.cat(parts).tolist()) == list(range(1000))
    one = data.partition(torch.arange(100) % 2, 100 // 10, "classes", classes_per_client=1)
    assert all(len(torch.unique((torch.arange(100) % 2)[p])) == 1 for p in one)


def toy_federation():
    ds = data.Dataset("toy", torch.arange(20.0)[:, None], torch.arange(20) % 2, torch.zeros(3, 1),
                      torch.zeros(3, dtype=torch.long))
    return data.federate(ds, [torch.tensor([0, 1, 2]), torch.tensor([5, 6, 7, 8, 9]), torch.tensor([12])])


def test_federate_stores_client_rows_flat():
    fd = toy_federation()
    assert fd.x_train[:, 0].tolist() == [0, 1, 2, 5, 6, 7, 8, 9, 12]  # no padding; also the global train set
    assert fd.y_train.tolist() == [0, 1, 0, 1, 0, 1, 0, 1, 0]
    assert fd.counts.tolist() == [3, 5, 1] and fd.offsets.tolist() == [0, 3, 8]
    assert fd.num_clients == 3 and fd.m == 1
    assert torch.allclose(fd.weights, torch.tensor([3 / 9, 5 / 9, 1 / 9]))
    assert fd.client(1)[0][:, 0].tolist() == [5, 6, 7, 8, 9]


def test_gather_clamps_positions_to_each_clients_own_rows():
    fd = toy_federation()
    x, y = fd.gather(torch.tensor([2, 0, 1]), torch.tensor([[0, 3], [2, 4], [4, 0]]))
    assert x.shape == (3, 2, 1) and y.shape == (3, 2)
    assert x[..., 0].tolist() == [[12, 12], [2, 2], [9, 5]]  # beyond the count: the client's last row
    assert y.tolist() == [[0, 0], [0, 0], [1, 1]]
    x, y = fd.gather(torch.tensor([[1], [0]]), torch.tensor([[1], [1]]))  # clients as a column, as the engine passes them
    assert x[..., 0].tolist() == [[6], [1]]


def test_padded_pads_only_to_the_largest_given_client():
    fd = toy_federation()
    x, y, mask = fd.padded(torch.tensor([0, 2]))
    assert x.shape == (2, 3, 1) and y.shape == (2, 3)
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]] and mask.dtype == x.dtype
    assert (x[..., 0] * mask).tolist() == [[0, 1, 2], [12, 0, 0]]
    x, _, mask = fd.padded(torch.arange(3))
    assert x.shape == (3, 5, 1) and mask.sum().item() == 9


def test_from_clients_to_and_padded():
    xs = [torch.randn(n, 4) for n in (2, 5)]
    ys = [torch.randint(0, 3, (n,)) for n in (2, 5)]
    fd = data.FederatedData.from_clients(xs, ys, torch.zeros(1, 4), torch.zeros(1, dtype=torch.long))
    assert torch.equal(fd.x_train, torch.cat(xs)) and fd.counts.tolist() == [2, 5]
    moved = fd.to("cpu")
    assert torch.equal(moved.gather(torch.tensor([1]), torch.tensor([[4]]))[0][0, 0], xs[1][4])
    assert moved.counts.device.type == "cpu" and moved.offsets.tolist() == [0, 2]
    x, y, mask = fd.padded(torch.tensor([0, 1]))  # padded only on request, to the largest client
    assert x.shape == (2, 5, 4) and torch.equal(x[0, :2], xs[0]) and torch.equal(y[1], ys[1])
    assert mask.sum(dim=1).tolist() == [2, 5] and not hasattr(fd, "x")
    with pytest.raises(ValueError, match="at least one row"):
        data.FederatedData(fd.x_train, fd.y_train, torch.tensor([7, 0]), fd.x_test, fd.y_test)
    with pytest.raises(ValueError, match="counts sum to 6"):
        data.FederatedData(fd.x_train, fd.y_train, torch.tensor([1, 5]), fd.x_test, fd.y_test)


def test_failed_download_gives_the_same_clear_message(tmp_path, monkeypatch):
    import torchvision

    monkeypatch.setenv("FLDP_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FLDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sources, "_network_available", lambda urls, timeout=3.0: True)
    monkeypatch.setattr(torchvision.datasets.MNIST, "mirrors", ["http://127.0.0.1:9/"])  # refuses at once
    sources._load_cached.cache_clear()
    with pytest.raises(data.MissingDataError, match=r"put train-images-idx3-ubyte.gz at"):
        data.load("mnist")
    sources._load_cached.cache_clear()


# -- the decompressed cache follows its source files ------------------------------------------
@pytest.fixture
def offline_cache(tmp_path, monkeypatch):
    """A fresh cache dir, no network, and an empty in-process cache around the test."""
    monkeypatch.setenv("FLDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sources, "_network_available", lambda urls, timeout=3.0: False)
    sources._load_cached.cache_clear()
    yield tmp_path / "cache"
    sources._load_cached.cache_clear()


@pytest.mark.skipif(not HAVE_MNIST, reason="MNIST files not in the data directory")
def test_switching_to_an_empty_data_dir_does_not_reuse_the_cache(tmp_path, monkeypatch, offline_cache):
    real = data.data_dir()
    monkeypatch.setenv("FLDP_DATA_DIR", str(real))
    assert data.load("mnist").x_train.shape == (60000, 784)  # decompressed under offline_cache
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("FLDP_DATA_DIR", str(empty))
    sources._load_cached.cache_clear()
    with pytest.raises(data.MissingDataError) as err:
        data.load("mnist")
    for f in data.IMAGE_FILES:
        assert f"put {f} at {empty / 'mnist' / f}" in str(err.value)


@pytest.mark.skipif(not HAVE_MNIST, reason="MNIST files not in the data directory")
def test_a_data_dir_with_the_same_files_reuses_the_cache(tmp_path, monkeypatch, offline_cache):
    real = data.data_dir()
    monkeypatch.setenv("FLDP_DATA_DIR", str(real))
    first = data.load("mnist")
    (root,) = (offline_cache / "torchvision").iterdir()
    decompressed = sorted(p for p in root.rglob("*-ubyte") if not p.is_symlink())
    assert len(decompressed) == 4
    before = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in decompressed]
    other = tmp_path / "other"
    (other / "mnist").mkdir(parents=True)
    for f in data.IMAGE_FILES:  # the same files, reached through another data dir
        (other / "mnist" / f).symlink_to((real / "mnist" / f).resolve())
    monkeypatch.setenv("FLDP_DATA_DIR", str(other))
    sources._load_cached.cache_clear()
    again = data.load("mnist")
    assert [p.name for p in (offline_cache / "torchvision").iterdir()] == [root.name]
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in decompressed] == before  # not decompressed again
    assert torch.equal(again.x_train, first.x_train) and torch.equal(again.y_test, first.y_test)


def test_cache_folder_is_keyed_to_the_source_files(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        for f in data.IMAGE_FILES:
            (d / f).write_bytes(b"x")
    os.utime(b / data.IMAGE_FILES[0], ns=(1, 1))
    for f in data.IMAGE_FILES[1:]:
        os.utime(b / f, ns=(1, 1))
        os.utime(a / f, ns=(1, 1))
    os.utime(a / data.IMAGE_FILES[0], ns=(2, 2))
    key = sources._torchvision_root
    assert key("mnist", a) != key("mnist", b)  # other files (paths)
    (tmp_path / "link").symlink_to(a)
    assert key("mnist", tmp_path / "link") == key("mnist", a)  # the same files through a link
    before = key("mnist", a)
    os.utime(a / data.IMAGE_FILES[0], ns=(3, 3))  # replaced or touched in place
    assert key("mnist", a) != before
    (a / data.IMAGE_FILES[1]).unlink()
    assert key("mnist", a) != before
    assert key("mnist", tmp_path / "nothing") == key("mnist", tmp_path / "nothing-either")


def test_gather_full_batch_of_consecutive_equal_clients_is_a_view():
    from fldp.data import FederatedData
    x = torch.arange(48, dtype=torch.float32).reshape(12, 4)
    y = torch.arange(12)
    fd = FederatedData(x, y, torch.tensor([3, 3, 3, 3]), x[:2], y[:2])
    clients, full = torch.tensor([1, 2]), torch.arange(3).expand(2, 3).clone()
    xv, yv = fd.gather(clients, full)
    assert xv.data_ptr() == x[3].data_ptr()           # no copy
    assert torch.equal(xv, x[3:9].view(2, 3, 4)) and torch.equal(yv, y[3:9].view(2, 3))
    # not consecutive, not every row, or unequal sizes: the copying path, same values
    xs, _ = fd.gather(torch.tensor([2, 0]), full)
    assert xs.data_ptr() != x.data_ptr() and torch.equal(xs[1], x[0:3])
    xp, _ = fd.gather(clients, torch.tensor([[0, 2, 1], [0, 1, 2]]))
    assert torch.equal(xp[0], x[[3, 5, 4]])


def test_unit_pixels_undo_the_standardisation():
    from fldp import data as D
    std = D.federated_dataset("mnist", 2, "iid", subsample=200, max_test=50)
    unit = D.federated_dataset("mnist", 2, "iid", subsample=200, max_test=50, pixels="unit")
    assert float(unit.x_train.min()) == pytest.approx(0.0, abs=1e-6)
    assert float(unit.x_train.max()) == pytest.approx(1.0, abs=1e-6)
    torch.testing.assert_close(unit.x_test, std.x_test * 0.3081 + 0.1307)
    with pytest.raises(ValueError, match="pixels"):
        D.federated_dataset("mnist", 2, "iid", subsample=200, pixels="raw")


@pytest.mark.skipif(not HAVE_MNIST, reason="MNIST files not in the data directory")
def test_cached_federated_loads_each_split_once():
    data.cached_federated.cache_clear()
    a = data.cached_federated("mnist", 3, "dirichlet", seed=1, subsample=300, max_test=20, alpha=0.5)
    assert data.cached_federated("mnist", 3, "dirichlet", alpha=0.5, max_test=20, subsample=300, seed=1) is a
    fresh = data.federated_dataset("mnist", 3, "dirichlet", seed=1, subsample=300, max_test=20, alpha=0.5)
    for name in ("x_train", "y_train", "counts", "x_test", "y_test"):
        assert torch.equal(getattr(a, name), getattr(fresh, name)), name
    other = data.cached_federated("mnist", 3, "dirichlet", seed=2, subsample=300, max_test=20, alpha=0.5)
    assert other is not a and not torch.equal(other.y_train, a.y_train)
    assert data.cached_federated.cache_info().currsize == 2
    data.cached_federated.cache_clear()
    assert data.cached_federated.cache_info().currsize == 0


def test_row_norms_are_those_of_the_gathered_rows_bit_for_bit():
    """gather_norms (the per-sample clipping's ||x_b||, computed once per split) equals the norm of
    the rows gather returns, exactly: full batches (views), sampled positions and positions past a
    client's end (its last row), for l2 and l1."""
    g = torch.Generator().manual_seed(3)
    counts = torch.tensor([5, 5, 3])
    fed = data.FederatedData(torch.randn(13, 7, generator=g), torch.zeros(13, dtype=torch.int64), counts,
                             torch.zeros(1, 7), torch.zeros(1, dtype=torch.int64))
    cases = [(torch.tensor([0, 1]), torch.arange(5).expand(2, 5)),            # a full batch: a view
             (torch.tensor([2, 0]), torch.tensor([[0, 4, 2], [1, 1, 3]])),  # past client 2's end
             (torch.tensor([1]), torch.tensor([[4, 0]]))]
    for clients, idx in cases:
        x, _ = fed.gather(clients, idx)
        for ord in (1, 2):
            assert torch.equal(fed.gather_norms(clients, idx, ord), torch.linalg.vector_norm(x, ord=ord, dim=-1))
    assert fed.row_norms(2) is fed.row_norms(2)  # computed once
    with pytest.raises(ValueError, match="ord must be 1 or 2"):
        fed.row_norms(3)


def test_to_the_device_the_data_is_on_is_the_object_itself():
    """engine.run moves the data to the run's device; on that device already it keeps the object, so
    the split's cached row norms serve every run on it (a copy lost them at every run)."""
    fed = data.FederatedData(torch.ones(4, 3), torch.zeros(4, dtype=torch.int64), torch.tensor([2, 2]),
                             torch.ones(1, 3), torch.zeros(1, dtype=torch.int64))
    assert fed.to("cpu") is fed and fed.to(torch.device("cpu")) is fed
    norms = fed.row_norms(2)
    assert fed.to("cpu").row_norms(2) is norms

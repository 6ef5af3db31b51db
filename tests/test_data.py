"""Data loading and partitions: real files (linked from ../shared/data by .ci/run) and errors."""
import os

import numpy as np
import pytest
import torch

from fldp import data

HAVE_MNIST = (data.data_dir() / "mnist" / "train-images-idx3-ubyte.gz").exists()
HAVE_ADULT = (data.data_dir() / "adult" / "adult.data").exists()


@pytest.mark.skipif(not HAVE_MNIST, reason="MNIST files not in the data directory")
def test_mnist_through_torchvision(tmp_path, monkeypatch):
    monkeypatch.setenv("FLDP_CACHE_DIR", str(tmp_path))  # a fresh torchvision root, as on a new machine
    monkeypatch.setattr(data, "_network_available", lambda urls, timeout=3.0: False)
    data._load_cached.cache_clear()
    ds = data.load("mnist")
    data._load_cached.cache_clear()
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
    monkeypatch.setattr(data, "_network_available", lambda urls, timeout=3.0: False)
    data._load_cached.cache_clear()
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
    data._load_cached.cache_clear()


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


def test_federate_pads_and_weights():
    ds = data.Dataset("toy", torch.arange(20.0)[:, None], torch.arange(20) % 2, torch.zeros(3, 1),
                      torch.zeros(3, dtype=torch.long))
    fd = data.federate(ds, [torch.tensor([0, 1, 2]), torch.tensor([5, 6, 7, 8, 9])])
    assert fd.x.shape == (2, 5, 1) and fd.counts.tolist() == [3, 5] and fd.m == 3
    assert torch.allclose(fd.weights, torch.tensor([3 / 8, 5 / 8]))
    assert fd.x[1, :, 0].tolist() == [5, 6, 7, 8, 9]


def test_failed_download_gives_the_same_clear_message(tmp_path, monkeypatch):
    import torchvision

    monkeypatch.setenv("FLDP_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FLDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(data, "_network_available", lambda urls, timeout=3.0: True)
    monkeypatch.setattr(torchvision.datasets.MNIST, "mirrors", ["http://127.0.0.1:9/"])  # refuses at once
    data._load_cached.cache_clear()
    with pytest.raises(data.MissingDataError, match=r"put train-images-idx3-ubyte.gz at"):
        data.load("mnist")
    data._load_cached.cache_clear()

"""FEMNIST (Zhou et al., Sec. VII-A) from tiny synthetic LEAF JSON and EMNIST idx files."""
import gzip
import json
import os

import numpy as np
import pytest
import torch

from fldp import data
from fldp.data import femnist

# 7 writers (names deliberately not in sorted order) with 3..9 samples each
WRITERS = {"f0042_17": 5, "f0001_03": 9, "f0100_55": 3, "f0007_11": 7, "f0003_40": 4, "f0500_00": 8, "f0020_21": 6}
CLASSES = [0, 1, 9, 10, 35, 36, 61]  # digits, upper and lower case: 62 classes partly covered


@pytest.fixture
def data_root(tmp_path, monkeypatch):
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv("FLDP_DATA_DIR", str(root))
    monkeypatch.setenv("FLDP_CACHE_DIR", str(tmp_path / "cache"))
    femnist._femnist_cached.cache_clear()
    yield root
    femnist._femnist_cached.cache_clear()


def write_leaf(folder, writers=WRITERS, test_per_writer=1):
    """LEAF's preprocess output: train/*.json (writers split over two files) and test/*.json.
    Training sample k (global, in writing order) has pixel 0 = k / 1000, so rows can be traced."""
    (folder / "train").mkdir(parents=True)
    (folder / "test").mkdir(parents=True)
    rng = np.random.default_rng(0)
    k, truth = 0, {}
    names = list(writers)
    for f, chunk in enumerate((names[:4], names[4:])):
        blob = {"users": chunk, "num_samples": [], "user_data": {}}
        for u in chunk:
            n = writers[u]
            x = rng.random((n, 784)).round(3)
            x[:, 0] = (k + np.arange(n)) / 1000
            y = rng.choice(CLASSES, n).tolist()
            truth[u] = (list(range(k, k + n)), y)
            k += n
            blob["num_samples"].append(n)
            blob["user_data"][u] = {"x": x.tolist(), "y": y}
        (folder / "train" / f"all_data_{f}_niid_1_keep_0_train_9.json").write_text(json.dumps(blob))
    test = {"users": names, "num_samples": [test_per_writer] * len(names),
            "user_data": {u: {"x": rng.random((test_per_writer, 784)).tolist(),
                              "y": rng.choice(CLASSES, test_per_writer).tolist()} for u in names}}
    (folder / "test" / "all_data_0_niid_1_keep_0_test_9.json").write_text(json.dumps(test))
    return truth


def idx_bytes(arr):
    arr = np.asarray(arr, dtype=np.uint8)
    header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    return header + arr.tobytes()


def upright(k):
    """An asymmetric 28x28 image as it should be read: a bar on row 2 (cols 5-20), one pixel
    at row 20, col 3, and the sample number k at the (symmetric) corner (27, 27)."""
    img = np.zeros((28, 28), dtype=np.uint8)
    img[2, 5:21] = 200
    img[20, 3] = 255
    img[27, 27] = k
    return img


def write_emnist(folder, n_train=40, n_test=6, compress=True):
    """EMNIST ByClass idx files: each image stored transposed, as EMNIST does."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    y_train = rng.choice([0, 5, 30, 61], n_train)  # ~10 per class: room for a Dirichlet split
    y_train[:2] = (0, 61)
    arrays = {"train-images-idx3": np.stack([upright(k).T for k in range(n_train)]),
              "train-labels-idx1": y_train,
              "test-images-idx3": np.stack([upright(k).T for k in range(n_test)]),
              "test-labels-idx1": rng.integers(0, 62, n_test)}
    for stem, arr in arrays.items():
        name = f"emnist-byclass-{stem}-ubyte"
        if compress:
            with gzip.open(folder / f"{name}.gz", "wb") as fh:
                fh.write(idx_bytes(arr))
        else:
            (folder / name).write_bytes(idx_bytes(arr))
    return y_train


# -- LEAF --------------------------------------------------------------------------------
def test_leaf_files_load_with_their_writers(data_root):
    truth = write_leaf(data_root / "femnist")
    assert data.femnist_available() and data.femnist_source() == "leaf"
    fem = data.load_femnist()
    ds, n = fem.dataset, sum(WRITERS.values())
    assert fem.source == "leaf"
    assert ds.x_train.shape == (n, 784) and ds.x_test.shape == (7, 784)
    assert ds.x_train.dtype == torch.float32 and ds.y_train.dtype == torch.int64
    assert 0 <= float(ds.x_train.min()) and float(ds.x_train.max()) <= 1
    assert set(ds.y_train.tolist()) <= set(CLASSES) and set(ds.y_test.tolist()) <= set(CLASSES)
    assert fem.writer_names == tuple(sorted(WRITERS))
    ids = (ds.x_train[:, 0] * 1000).round().long()
    for w, name in enumerate(fem.writer_names):
        rows = (fem.writers == w).nonzero().flatten()
        assert ids[rows].tolist() == truth[name][0] and ds.y_train[rows].tolist() == truth[name][1]


def test_leaf_writers_grouped_into_n_clients(data_root):
    truth = write_leaf(data_root / "femnist")
    n = sum(WRITERS.values())
    for grouping in ("balanced", "round_robin"):
        fed = data.federated_dataset("femnist", 3, pixels="unit", grouping=grouping, seed=4)
        assert fed.num_clients == 3 and int(fed.counts.sum()) == n
        ids = (fed.x_train[:, 0] * 1000).round().long()
        assert sorted(ids.tolist()) == list(range(n))  # every sample on exactly one client
        owner = {}
        for c in range(3):
            xc, yc = fed.client(c)
            for k in (xc[:, 0] * 1000).round().long().tolist():
                owner[k] = c
        for rows, _ in truth.values():  # a writer is never split
            assert len({owner[k] for k in rows}) == 1
        if grouping == "balanced":  # greedy, largest writer first: 9+4+3, 8+5, 7+6
            assert sorted(fed.counts.tolist()) == [13, 13, 16]
        else:  # 7 writers -> 3, 2, 2
            per = [sum(1 for rows, _ in truth.values() if owner[rows[0]] == c) for c in range(3)]
            assert sorted(per) == [2, 2, 3]
    assert fed.y_test.shape == (7,)
    one_each = data.federated_dataset("femnist", 7, pixels="unit")  # the natural clients
    assert sorted(one_each.counts.tolist()) == sorted(WRITERS.values())
    with pytest.raises(ValueError, match="num_clients"):
        data.federated_dataset("femnist", 8)


def test_leaf_grouping_is_seeded(data_root):
    write_leaf(data_root / "femnist")
    a = data.federated_dataset("femnist", 3, seed=1, grouping="round_robin")
    b = data.federated_dataset("femnist", 3, seed=1, grouping="round_robin")
    assert torch.equal(a.x_train, b.x_train) and torch.equal(a.counts, b.counts)
    others = [data.federated_dataset("femnist", 3, seed=s, grouping="round_robin") for s in range(2, 6)]
    assert any(not torch.equal(a.x_train, o.x_train) for o in others)


def test_standardised_and_unit_pixels(data_root):
    write_leaf(data_root / "femnist")
    std = data.federated_dataset("femnist", 2, seed=0)
    unit = data.federated_dataset("femnist", 2, seed=0, pixels="unit")
    assert abs(float(std.x_train.mean())) < 1e-5 and float(std.x_train.std()) == pytest.approx(1, abs=1e-3)
    ds = data.load("femnist")
    assert torch.allclose(data.unit_pixels(ds).x_train, data.load_femnist().dataset.x_train, atol=1e-5)
    mean, s = ds.pixel_stats
    assert torch.allclose(std.x_train * s + mean, unit.x_train, atol=1e-5)
    assert torch.allclose(std.x_test * s + mean, unit.x_test, atol=1e-5)


def test_leaf_own_layout_subsample_and_partition_schemes(data_root):
    write_leaf(data_root / "femnist" / "data")  # leaf/data/femnist/data/{train,test}
    assert data.femnist_source() == "leaf"
    sub = data.federated_dataset("femnist", 2, subsample=20, max_test=3, pixels="unit")
    assert int(sub.counts.sum()) == 20 and sub.y_test.shape == (3,)
    iid = data.federated_dataset("femnist", 4, "iid")
    assert iid.counts.tolist() == [10] * 4
    with pytest.raises(ValueError, match="scheme='shards'"):
        data.federated_dataset("femnist", 2, "shards")


def test_cache_follows_the_source_files(data_root, tmp_path):
    write_leaf(data_root / "femnist")
    first = data.load_femnist()
    assert int(first.dataset.y_train[0]) != 2
    f = sorted((data_root / "femnist" / "train").glob("*.json"))[0]
    blob = json.loads(f.read_text())
    blob["user_data"][blob["users"][0]]["y"][0] = 2
    f.write_text(json.dumps(blob))
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    femnist._femnist_cached.cache_clear()  # also without this: the key in memory changes
    second = data.load_femnist()
    assert int(second.dataset.y_train[(second.writers == second.writer_names.index(blob["users"][0])).nonzero()[0]]) == 2
    folders = sorted(p.name for p in (tmp_path / "cache" / "femnist").iterdir())
    assert len(folders) == 2 and all(p.startswith("leaf-") for p in folders)
    # the cache itself is read back: same arrays without the JSON files being parsed again
    femnist._femnist_cached.cache_clear()
    third = data.load_femnist()
    assert torch.equal(third.dataset.x_train, second.dataset.x_train)
    assert torch.equal(third.writers, second.writers)


# -- EMNIST --------------------------------------------------------------------------------
@pytest.mark.parametrize("compress", [True, False])
def test_emnist_images_are_transposed_back(data_root, compress):
    y = write_emnist(data_root / "emnist", compress=compress)
    assert data.femnist_source() == "emnist" and data.femnist_available()
    fem = data.load_femnist()
    assert fem.source == "emnist" and fem.writers is None
    ds = fem.dataset
    assert ds.x_train.shape == (40, 784) and ds.x_test.shape == (6, 784)
    assert ds.y_train.tolist() == y.tolist() and int(ds.y_train.max()) == 61
    img = ds.x_train[5].reshape(28, 28)
    assert torch.equal((img * 255).round().to(torch.uint8), torch.from_numpy(upright(5)))
    assert float(img[2, 10]) > 0 and float(img[10, 2]) == 0  # the bar is a row, not a column
    assert float(img[20, 3]) == 1.0 and float(img[3, 20]) == 0


def test_emnist_clients_are_a_dirichlet_split(data_root):
    write_emnist(data_root / "emnist")
    fed = data.federated_dataset("femnist", 4, pixels="unit", seed=3)
    assert fed.num_clients == 4 and int(fed.counts.sum()) == 40
    ids = (fed.x_train.view(-1, 28, 28)[:, 27, 27] * 255).round().long()
    assert sorted(ids.tolist()) == list(range(40))  # every sample on exactly one client
    ref = data.partition(data.load_femnist().dataset.y_train, 4, "dirichlet", seed=3,
                         alpha=data.FEMNIST_DIRICHLET_ALPHA)
    assert fed.counts.tolist() == [len(p) for p in ref]
    other = data.federated_dataset("femnist", 4, "dirichlet", pixels="unit", seed=3, alpha=100.0)
    assert int(other.counts.sum()) == 40
    with pytest.raises(ValueError, match="writer ids"):
        data.federated_dataset("femnist", 4, "writers")


def test_leaf_is_preferred_and_source_can_be_chosen(data_root):
    write_leaf(data_root / "femnist")
    write_emnist(data_root / "emnist")
    assert data.load_femnist().source == "leaf"
    assert data.load_femnist("emnist").source == "emnist"
    assert data.federated_dataset("femnist", 2, source="emnist").counts.sum() == 40


def test_cache_follows_emnist_files(data_root, tmp_path):
    write_emnist(data_root / "emnist")
    assert data.load_femnist().dataset.x_train.shape[0] == 40
    for f in (data_root / "emnist").iterdir():
        f.unlink()
    write_emnist(data_root / "emnist", n_train=30)
    assert data.load_femnist().dataset.x_train.shape[0] == 30
    assert len(list((tmp_path / "cache" / "femnist").glob("emnist-*"))) == 2


def test_not_an_idx_file(data_root):
    write_emnist(data_root / "emnist")
    with gzip.open(data_root / "emnist" / data.EMNIST_FILES[0], "wb") as fh:
        fh.write(b"\x00\x00\x0d\x03garbage")
    with pytest.raises(ValueError, match="not an idx file"):
        data.load_femnist()


# -- missing files -------------------------------------------------------------------------
def test_missing_files_name_both_folders(data_root):
    assert not data.femnist_available() and data.femnist_source() is None
    (data_root / "emnist").mkdir()
    (data_root / "emnist" / data.EMNIST_FILES[1]).write_bytes(b"")  # one of four: incomplete
    (data_root / "femnist" / "train").mkdir(parents=True)  # train without test: incomplete
    (data_root / "femnist" / "train" / "a.json").write_text("{}")
    assert not data.femnist_available()
    with pytest.raises(data.MissingDataError) as err:
        data.federated_dataset("femnist", 10)
    msg = str(err.value)
    assert "femnist" in msg and str(data_root / "femnist" / "train") in msg
    assert str(data_root / "femnist" / "test") in msg
    for f in data.EMNIST_FILES:
        assert f"put {f} at {data_root / 'emnist' / f}" in msg
    assert f"{data.EMNIST_FILES[1]} at {data_root / 'emnist' / data.EMNIST_FILES[1]}  (found)" in msg
    assert data.LEAF_URL in msg and data.EMNIST_URL in msg
    assert isinstance(err.value, ValueError)
    with pytest.raises(data.MissingDataError, match="femnist"):
        data.load("femnist")
    with pytest.raises(data.MissingDataError) as err:
        data.load_femnist("emnist")
    assert data.EMNIST_URL in str(err.value) and data.LEAF_URL not in str(err.value)
    with pytest.raises(ValueError, match="source='kaggle'"):
        data.load_femnist("kaggle")

"""The stored run functions of the Zhou et al. (FedSGD-DPC) and Li, Chang & Chi (secure FedAvg)
experiment notebooks: a run read back from the store equals the run computed, and equals a
direct call; the sweep helpers give the same summaries with and without a store (tiny data)."""
from __future__ import annotations

import pytest

from fldp.repro import store as S
from fldp.papers.li2021 import experiments as li
from fldp.papers.zhou import experiments as zhou
from store_checks import assert_read_back

ZHOU_FIXED = dict(N=10, subsample=200, max_test=100, data_seed=0, lr=0.05, lr_decay=0.01)
LI_FIXED = dict(N=10, rounds=3, subsample=400, max_test=200, data_seed=0, eval_every=1)


def zhou_config(mechanism="laplace", seed=1):
    return dict(zhou.setting(mechanism, 1.0, 2, 3, xi1=300.0, xi2=10.0, q=0.5, curve=True, **ZHOU_FIXED), seed=seed)


def li_config(eps=0.5, seed=1, **changes):
    return dict(li.setting(eps, 2, 2, 5, **{**LI_FIXED, **changes}), seed=seed)


CASES = [
    pytest.param(zhou.fedsgd_dpc_run, zhou_config("laplace"), (zhou, "federated_data"), id="zhou-laplace"),
    pytest.param(zhou.fedsgd_dpc_run, zhou_config("gaussian"), (zhou, "federated_data"), id="zhou-gaussian"),
    pytest.param(li.secure_fedavg_run, li_config(), (li, "federated_data"), id="li-iid"),
    pytest.param(li.secure_fedavg_run, li_config(None, scheme="one_class", clients_per_class="equal"),
                 (li, "federated_data"), id="li-one-class-without-dp"),
]


@pytest.mark.parametrize("fn, config, loader", CASES)
def test_run_twice_through_the_store_reads_it_back(tmp_path, monkeypatch, fn, config, loader, output_dir):
    first = assert_read_back(S.RunStore(tmp_path / "runs"), fn, config, monkeypatch, loader)
    assert set(first) >= {"rounds", "acc", "eps_run"} and len(first["rounds"]) == len(first["acc"])


def test_the_configuration_names_every_argument_but_the_seed():
    cfg = zhou_config()
    assert set(cfg) == set(zhou.fedsgd_dpc_run.__kwdefaults__) | {"mechanism", "eps", "b", "T"}
    assert (cfg["xi"], cfg["q"], cfg["eval_every"]) == (300.0, None, 1)
    assert zhou.setting("gaussian", 1.0, 2, 100, xi1=300.0, xi2=10.0, q=0.5)["eval_every"] == 100
    cfg = li_config()
    assert set(cfg) == set(li.secure_fedavg_run.__kwdefaults__) | {"eps", "Q", "b", "K", "rounds"}
    with pytest.raises(TypeError, match=r"unknown setting\(s\) \['typo'\]"):
        li.setting(0.5, 1, 1, 5, rounds=3, typo=1)
    with pytest.raises(TypeError, match=r"missing setting\(s\) \['rounds'\]"):
        li.setting(0.5, 1, 1, 5)  # rounds is required


@pytest.mark.parametrize("module, settings", [
    (zhou, {"a": {k: v for k, v in zhou_config().items() if k != "seed"},
            "b": {k: v for k, v in zhou_config("gaussian").items() if k != "seed"}}),
    (li, {"a": {k: v for k, v in li_config().items() if k != "seed"}}),
], ids=["zhou", "li"])
def test_summaries_over_seeds_in_one_sweep_equal_plain_calls(tmp_path, module, settings, output_dir):
    import numpy as np

    st = S.RunStore(tmp_path / "runs")
    stored = module.seed_summaries(st, [0, 1], settings)
    plain = module.seed_summaries(None, [0, 1], settings)
    again = module.seed_summaries(st, [0, 1], settings)
    assert list(stored) == list(settings) and len(list(st.records())) == 2 * len(settings)
    for k in settings:
        for out in (plain[k], again[k]):
            np.testing.assert_array_equal(out["acc"]["runs"], stored[k]["acc"]["runs"])
            np.testing.assert_array_equal(out["eps_run"]["runs"], stored[k]["eps_run"]["runs"])
            np.testing.assert_array_equal(out["rounds"], stored[k]["rounds"])
        assert stored[k]["acc"]["runs"].shape[0] == 2


def test_clipped_without_noise_is_the_non_private_run_clipped():
    """``clip_only=True`` clips as the mechanism does and adds no noise: with a bound no row reaches
    it equals the plain run bit for bit; with a tight bound it differs from it; it has no
    calibration; and it must come with eps=None."""
    base = dict(zhou.setting("laplace", None, 2, 3, xi1=300.0, xi2=10.0, q=0.5, **ZHOU_FIXED), seed=1)
    plain = zhou.fedsgd_dpc_run(**base)
    loose = zhou.fedsgd_dpc_run(**{**base, "clip_only": True, "xi": 1e9})
    tight = zhou.fedsgd_dpc_run(**{**base, "clip_only": True, "xi": 1.0})
    assert loose["loss"] == plain["loss"] and loose["acc"] == plain["acc"]
    assert tight["loss"][-1] != plain["loss"][-1] and tight["calibration"] is None and tight["eps_run"] is None
    with pytest.raises(ValueError, match="clip_only=True .* needs eps=None, got eps=1.0"):
        zhou.fedsgd_dpc_run(**{**base, "eps": 1.0, "clip_only": True})


def test_a_setting_added_later_keeps_the_keys_of_earlier_runs():
    """``fedsgd_dpc_run.added_later``: the key leaves ``clip_only`` out at its default (so every
    archived run keeps its key: test_run_keys.py pins one) and keys it when set."""
    cfg = zhou_config()
    assert S.run_key(zhou.fedsgd_dpc_run, cfg) == S.run_key(zhou.fedsgd_dpc_run, {**cfg, "clip_only": False})
    assert S.run_key(zhou.fedsgd_dpc_run, cfg) != S.run_key(zhou.fedsgd_dpc_run, {**cfg, "eps": None, "clip_only": True})
    assert S.run_key(zhou.fedsgd_dpc_run, {**cfg, "eps": None}) != \
        S.run_key(zhou.fedsgd_dpc_run, {**cfg, "eps": None, "clip_only": True})

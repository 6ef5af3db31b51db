"""The adaptive CLT noise chapter's stored runs (fldp.papers.adaptive_noise.experiments): a run
read back from the run store is the run computed, on tiny configurations."""
import math

import pytest
import torch

from fldp.repro import store as S
from fldp.papers.adaptive_noise import experiments as ex
from store_checks import assert_read_back

TINY = dict(N=4, alpha=1.0, K=2, rounds=1, subsample=200, max_test=120, channels=(2, 2), hidden=8,
            local_epochs=1, batch_size=32, eval_every=1, seed=0)
ATTACK = dict(aux_size=40, num_shadows=2, targets=1)
CASES = [
    (ex.utility_run, dict(scheme="regular")),                        # snr inf: stored as "inf"
    (ex.utility_run, dict(scheme="ours", c=2.0, p=0.0, dropout=0.5)),
    (ex.utility_run, dict(scheme="dp", eps=30.0, dp="central")),     # spent: server_eps inf
    (ex.privacy_run, dict(scheme="ours", c=2.0, p=0.0, **ATTACK)),
    (ex.privacy_run, dict(scheme="dp", eps=30.0, keep_params=True, **ATTACK)),
]


@pytest.mark.parametrize("fn, spec", CASES, ids=lambda v: v.__name__ if callable(v) else v["scheme"])
def test_run_read_back_from_the_store_is_the_run(tmp_path, monkeypatch, fn, spec):
    cfg = ex.full_config(fn, **TINY, **spec)
    assert_read_back(S.RunStore(tmp_path), fn, cfg, monkeypatch, (ex, "_train"))
    assert ex.full_config(fn, **TINY, **spec, device="cpu", lr=0.1) == cfg  # defaults spelt out: the same run


def test_sweep_runs_gives_runs_by_name_with_their_settings_times_and_non_finite_numbers(tmp_path):
    specs = {"regular": dict(scheme="regular"), "DP": dict(scheme="dp", eps=30.0, dp="central")}
    runs = ex.sweep_runs(ex.utility_run, specs, store=S.RunStore(tmp_path), timed=True, **TINY)
    assert list(runs) == ["regular", "DP"]
    assert runs["regular"]["snr"] == [math.inf] and "spent" not in runs["regular"]
    assert runs["DP"]["eps"] == 30.0 and runs["DP"]["dp"] == "central" and runs["DP"]["spent"]["server_eps"] == math.inf
    assert all(r["wall_s"] > 0 for r in runs.values())
    again = ex.sweep_runs(ex.utility_run, specs, store=S.RunStore(tmp_path), timed=True, **TINY)
    assert [r["wall_s"] for r in again.values()] == [r["wall_s"] for r in runs.values()]  # read back: as they ran
    strip = lambda rs: {k: {n: v for n, v in r.items() if n != "wall_s"} for k, r in rs.items()}
    assert strip(again) == strip(runs) == strip(ex.sweep_runs(ex.utility_run, specs, store=None, **TINY))


def test_kept_params_are_the_final_model_exactly():
    cfg = ex.full_config(ex.privacy_run, **TINY, scheme="regular", keep_params=True, **ATTACK)
    out = S.normalise(ex.privacy_run(**cfg))
    model = ex.models.CNN(channels=(2, 2), hidden=8)
    w = torch.tensor(out["params"])
    assert w.dtype == torch.float32 and w.shape == (model.dim,)
    assert out["attack_guesses"] > 0 and out["attack_guesses"] % 2 == 0  # members and as many non-members, for gate_power
    _, _, _, r = ex._train(**{k: v for k, v in cfg.items() if k not in ("aux_size", "num_shadows", "targets", "keep_params")},
                           dropout=0.0)
    assert torch.equal(w, r.history.params)


def test_the_store_gives_non_finite_numbers_back_exactly(tmp_path):
    """Regular FL's SNR is inf and some attack scores are NaN: the store must return them as such."""
    store = S.RunStore(tmp_path)
    store.save(ex.utility_run, {"scheme": "regular", "N": 4, "alpha": 1.0, "K": 2, "rounds": 1},
               {"snr": [math.inf, -math.inf, math.nan, 1.0]}, 0.1)
    back = store.load(ex.utility_run, {"scheme": "regular", "N": 4, "alpha": 1.0, "K": 2, "rounds": 1}).result
    assert back["snr"][0] == math.inf and math.isnan(back["snr"][2]) and back["snr"][3] == 1.0
    with pytest.raises(TypeError, match=r"unknown setting\(s\) \['bogus'\]"):
        ex.full_config(ex.utility_run, **TINY, bogus=1)


def test_a_diverged_run_is_not_attacked():
    """A run whose uploads stop being finite (lr far too large) ends with its round recorded and
    no attack numbers, instead of failing the sweep (the notebook gates it as diverged)."""
    import warnings

    cfg = ex.full_config(ex.privacy_run, **{**TINY, "rounds": 3}, scheme="regular", lr=1e30, **ATTACK)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = ex.privacy_run(**cfg)
    assert out["diverged_at"] is not None and out["attack_guesses"] == 0
    assert math.isnan(out["attack_acc"]) and len(out["per_class_acc"]) == 10


def test_sweep_runs_over_seeds_gives_each_name_its_runs_in_seed_order(tmp_path):
    """seeds=[...]: one sweep, each name maps to one run per seed, each the plain call at that seed."""
    specs = {"regular": dict(scheme="regular"), "DP lagged": dict(scheme="dp", eps=30.0, dp_clip="lagged")}
    runs = ex.sweep_runs(ex.utility_run, specs, store=S.RunStore(tmp_path), seeds=[0, 3], **{**TINY, "rounds": 2})
    assert list(runs) == ["regular", "DP lagged"] and [len(v) for v in runs.values()] == [2, 2]
    assert runs["DP lagged"][1]["dp_clip"] == "lagged"
    plain = S.normalise(ex.utility_run(**{**TINY, "rounds": 2, "seed": 3, "scheme": "dp", "eps": 30.0, "dp_clip": "lagged"}))
    assert runs["DP lagged"][1]["acc"] == plain["acc"] and runs["DP lagged"][1]["acc"] != runs["DP lagged"][0]["acc"]
    # Round 1 alike (the lagged bound has no past yet), then it lags.  With K = 2 a round's own median
    # is the smaller norm, so when the lagged bound is below both norms both rules clip both uploads
    # to their bound and the SNR (scale-free then) can agree in round 2 as well: compare over 3 rounds.
    lagged3 = S.normalise(ex.utility_run(**{**TINY, "rounds": 3, "seed": 3, "scheme": "dp", "eps": 30.0,
                                            "dp_clip": "lagged"}))
    per_round = S.normalise(ex.utility_run(**{**TINY, "rounds": 3, "seed": 3, "scheme": "dp", "eps": 30.0}))
    assert per_round["snr"][0] == pytest.approx(lagged3["snr"][0]) and per_round["snr"][1:] != lagged3["snr"][1:]


def test_privacy_run_attacks_the_final_global_model_too():
    out = S.normalise(ex.privacy_run(**ex.full_config(ex.privacy_run, **TINY, scheme="regular", **ATTACK)))
    assert 0.0 <= out["attack_acc_global"] <= 1.0 and 0.0 <= out["attack_acc"] <= 1.0

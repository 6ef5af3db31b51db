"""The stored run functions of Wei et al. 2020 notebooks 02-03 and 08 (fldp.papers.wei2020.experiments)
and of the FedAvg baseline (fldp.baseline): a second call through the run store gives the same
result, read back (the expensive inner function raises if it is called again); tiny configurations."""
import pytest

from fldp import baseline
from fldp.repro import store as S
from fldp.papers.wei2020 import experiments as ex
from store_checks import assert_read_back


CASES = [  # (run function, tiny configuration, (module, attribute) of the expensive call)
    (ex.lemma1_pairs, dict(m=20, lr=0.05, local_epochs=1, batch_size=10, mu=0.01, num_pairs=3, seed=0,
                           replacement="random", Cs=[20.0, 2.0], n_fed=2), (ex.sensitivity, "pair_uploads")),
    (ex.lemma1_descent, dict(m=20, lr=0.1, steps=4, mu=0.01, num_pairs=3, seed=0, replacement="random", Cs=[20.0, 2.0],
                             checkpoints=[0, 2], chunk=2), (ex.sensitivity, "descend")),
    (ex.eq16_noise, dict(sigma_U=0.5, sigma_D=0.1, N=3, dim=50, reps=2, seed=0, first_draw=2, keep=10),
     (ex.M, "gaussian_noise")),
    (ex.nbafl_constants, dict(N=2, seed=0, T_traj=1, T_star=2, mu_factor=2.0, hessian_sample=50, hessian_iters=2,
                              lr=0.05, batch_size=50, local_epochs=1, mu=0.01, subsample=200, max_test=100),
     (ex.constants, "estimate_nbafl_constants")),
    (ex.calibrated_run, dict(N=2, T=1, eps=4.0, delta=1e-5, C=20.0, where="uplink", sensitivity="2C", mu=0.01, lr=0.05,
                             local_epochs=1, batch_size=50, seed=0, subsample=200, max_test=100), (ex.nbafl, "run")),
    (baseline.fedavg_run, dict(N=2, T=1, scheme="dirichlet", seed=0, subsample=200, max_test=100),
     (baseline.engine, "run")),
]


@pytest.mark.parametrize("fn, cfg, inner", CASES, ids=lambda v: v.__name__ if callable(v) else None)
def test_second_run_is_read_back_from_the_store(tmp_path, monkeypatch, fn, cfg, inner):
    assert_read_back(S.RunStore(tmp_path), fn, cfg, monkeypatch, inner, timing=("wall_time_s",))


def test_lemma1_pairs_gives_one_distance_list_per_C_and_the_aggregate():
    out = S.normalise(ex.lemma1_pairs(**CASES[0][1]))
    assert len(out["norms"]) == 3 and [len(d) for d in out["distances"]] == [3, 3] and len(out["aggregate"]) == 2
    assert max(out["distances"][1]) <= 2 * 2.0 + 1e-9  # clipped at C = 2: at most 2C apart


def test_lemma1_descent_reads_every_checkpoint_and_starts_from_one_model():
    cfg = CASES[1][1]
    out = S.normalise(ex.lemma1_descent(**cfg))
    assert out["steps"] == [0, 2, 4] and len(out["distances"]) == 3 and len(out["residual"]) == 3
    assert all(len(d) == 2 and all(len(c) == 3 for c in d) for d in out["distances"])
    assert max(out["distances"][0][0]) == 0  # both sides start from w0
    assert max(out["distances"][-1][1]) <= 2 * 2.0 + 1e-9 and len(out["loss"]) == len(out["norms"]) == 3
    first = S.normalise(ex.lemma1_pairs(m=20, lr=0.1, local_epochs=1, batch_size=None, mu=0.01, num_pairs=3, seed=0,
                                        replacement="random", Cs=[20.0]))
    # the same pairs as lemma1_pairs: one full-batch step of local_train is descend's first step
    one = S.normalise(ex.lemma1_descent(**dict(cfg, steps=1, checkpoints=[])))
    assert one["distances"][-1][0] == pytest.approx(first["distances"][0], rel=1e-4, abs=1e-7)


def test_calibrated_run_with_2C_over_m_is_nbafl_run_and_2C_adds_m_times_the_noise():
    from fldp.papers.wei2020 import simulations as sim
    tiny = dict(N=2, T=2, eps=4.0, delta=1e-5, C=20.0, mu=0.01, lr=0.05, local_epochs=1, batch_size=50, seed=0,
                subsample=200, max_test=100, eval_every=2)
    ours = S.normalise(ex.calibrated_run(**tiny, where="uplink", sensitivity="2C/m"))
    theirs = S.normalise(sim.nbafl_run(**tiny, L=2, rule="uplink"))
    assert ours["train_loss"] == theirs["train_loss"] and ours["test_acc"] == theirs["test_acc"]
    clip = S.normalise(ex.calibrated_run(**tiny, where="uplink", sensitivity="2C"))
    assert clip["calibration"]["sigma_U"] == pytest.approx(100 * ours["calibration"]["sigma_U"])  # m = 100
    assert clip["calibration"]["upload_sensitivity"] == 40.0
    assert clip["eps_spent"] == pytest.approx(4.0, rel=2e-3) and ours["eps_spent"] == pytest.approx(4.0, rel=2e-3)
    summary = ex.calibrated_summary_over_seeds(None, [0, 1], **tiny, where="uplink", sensitivity="2C")
    assert summary["test_acc"]["runs"].shape == (2,) and len(summary["spent"]) == 2


def test_wei2020_seed_summaries_batch_the_settings_and_match_them_one_by_one(tmp_path, monkeypatch):
    """simulations.seed_summaries asks every setting's runs in one batch (one run_all call, so the
    workers stay busy) and gives each setting the summary seed_summary gives it alone."""
    import numpy as np

    from fldp.repro import sweep
    from fldp.papers.wei2020 import simulations as sim

    tiny = dict(N=2, T=2, delta=0.01, C=20.0, L=1, mu=0.01, lr=0.05, local_epochs=1, batch_size=50,
                subsample=200, max_test=100, eval_every=1)
    settings = {"non-private": dict(tiny, eps=None), 60: dict(tiny, eps=60.0)}
    batches = []
    real = sweep.run_all
    monkeypatch.setattr(sweep, "run_all", lambda fn, configs, **kw: batches.append(len(configs)) or real(fn, configs, **kw))
    st = S.RunStore(tmp_path)
    both = sim.seed_summaries(st, [0, 1], settings)
    assert batches == [4]  # 2 settings x 2 seeds, one call
    for key, cfg in settings.items():
        alone = sim.seed_summary(st, [0, 1], **cfg)
        for metric in ("train_loss", "test_acc", "w_norm"):
            np.testing.assert_array_equal(both[key][metric]["runs"], alone[metric]["runs"])
        assert both[key]["spent"] == alone["spent"]
    assert both[60]["spent"][0] is not None and both["non-private"]["spent"] == [None, None]
    assert not np.array_equal(both[60]["train_loss"]["runs"], both["non-private"]["train_loss"]["runs"])

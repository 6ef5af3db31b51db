"""Shared helpers of the Sec. VI notebooks (05-08): readings, the paired difference panel,
the checks and claims (paired orderings, argmins, power gates, collapsing one cause into one
claim), the settings map's cells and the spend table, on synthetic numbers (no training)."""
import math
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from fldp import accounting, verdicts as V  # noqa: E402

from fldp.repro import results
from fldp.papers.wei2020 import algorithm as nbafl, claims, simulations as sim  # noqa: E402


def summary(curves):
    runs = np.asarray(curves, dtype=float)
    return {"train_loss": {"runs": runs}, "test_acc": {"runs": 1 - runs}, "rounds": list(range(runs.shape[1]))}


def test_reading_L_is_T_and_range():
    assert sim.Reading(L="T").L_for(30) == 30 and sim.Reading(L=5).L_for(30) == 5
    with pytest.raises(ValueError, match="L"):
        sim.Reading(L=40).L_for(30)
    assert sim.Reading(C=5.0, L="T", lr=0.002, note="x").label == "C = 5, L = T, lr = 0.002 (x)"


def test_curves_difference_panel_is_paired_by_seed():
    base = summary([[2.0, 1.0], [2.0, 3.0]])
    noisy = summary([[2.0, 1.5], [2.0, 3.1]])  # per-seed differences at t=1: 0.5 and 0.1 -> mean 0.3
    fig = sim.curves({None: (base, None), 50: (noisy, None)}, "t", sim.eps_label, baseline=None)
    diff_lines = fig.axes[2].get_lines()
    assert len(fig.axes) == 3 and np.allclose(diff_lines[1].get_ydata(), [0.0, 0.3])
    assert len(sim.curves({50: (noisy, None)}, "t", sim.eps_label).axes) == 2  # no baseline: two panels


RISE = np.array([0.10, 0.12, 0.09, 0.11, 0.13])  # five paired seeds, all positive


def toy_claim(cid, statement="falls (on paired seeds)"):
    return V.Claim(cid, statement, kind="paper", source="Remark 2", setting="reading", setting_note="placeholder",
                   falsifier="f", **claims.SIM_LOSS)


def test_order_claim_judges_paired_seeds_and_records_the_tags():
    rec = results.Recorder("toy", "x", quick=True)
    lo = np.array([0.30, 0.50, 0.40, 0.60, 0.35])  # a wide spread between seeds, a clear paired difference
    note = dict(setting_note="C = 20, L = 1")
    assert sim.order_claim(rec, toy_claim("a"), [lo + RISE, lo], ["hi", "lo"], **note).verdict.verdict == "holds"
    assert sim.order_claim(rec, toy_claim("b"), [lo, lo + RISE], ["hi", "lo"], **note).verdict.verdict == "fails"
    tie = sim.order_claim(rec, toy_claim("c"), [lo + [0.01, -0.01, 0.0, 0.02, -0.02], lo], ["hi", "lo"], **note)
    two = sim.order_claim(rec, toy_claim("d"), [[1.0, 1.1], [0.5, 0.6]], ["hi", "lo"], **note)  # 2 seeds: no verdict
    assert tie.verdict.label == two.verdict.label == "inconclusive: spread"
    # a private run that did not train (above ln 10) is the claim's evidence, not a reason to withhold the verdict
    assert sim.order_claim(rec, toy_claim("e"), [lo + 3.0, lo], ["hi", "lo"], **note).verdict.verdict == "holds"
    blown = sim.order_claim(rec, toy_claim("f"), [lo + [np.inf, 0, 0, 0, 0], lo], ["hi", "lo"], **note)
    assert blown.verdict.label == "inconclusive: diverged"                      # numbers that are not finite
    small = sim.order_claim(rec, toy_claim("g"), [lo * 1.005, lo], ["hi", "lo"], **note)  # 0.5 % higher: not material
    assert small.verdict.label == "inconclusive: spread"
    a = rec.claims[0]
    assert (a["kind"], a["setting"], a["setting_note"], a["source"]) == ("paper", "reading", "C = 20, L = 1", "Remark 2")
    assert a["statement"] == "falls (on paired seeds)" and a["min_effect"] == sim.LOSS_EFFECT["min_effect"] == 0.01
    assert a["falsifier"] and a["measured"]["mean"] == {"hi": round(float((lo + RISE).mean()), 5), "lo": 0.43}
    sim.order_claim(rec, toy_claim("h"), [lo + RISE, lo], ["hi", "lo"])  # no setting note: the catalogue's stays
    assert rec.claims[-1]["setting_note"] == "placeholder"


def test_simulation_claims_catalogue_keeps_the_recorded_text():
    """The catalogue entries of 05-08 rebuild the text those chapters recorded before it moved there."""
    eps = claims.sim_eps_order(K=None, order=["eps = 50", "eps = 60", "clipped, no noise"])
    assert (eps.id, eps.kind, eps.setting) == ("Remark 2 / Fig. 2", "paper", "reading")
    assert eps.statement == ("final loss falls as eps grows (eps = 50 > eps = 60 > clipped, no noise, all clients) "
                             "(on paired seeds)")
    assert eps.source == claims.SIM_SOURCES["eps"] and eps.falsifier == claims.SIM_ORDER_FALSIFIER
    k4 = claims.sim_eps_order(K=4, order=["eps = 50"])
    assert k4.id == "Fig. 4 (K-random)" and k4.statement.endswith("(eps = 50, K-random, K = 4) (on paired seeds)")
    assert claims.sim_clients_order(metric="test loss", eps=60).statement == \
        "final test loss falls as N grows (eps = 60) (on paired seeds)"
    assert claims.sim_optimal_T(T_first=2, T_last=8).falsifier.endswith("grid's ends T = 2 or T = 8")
    assert claims.sim_krandom_T(K=4, T=8).statement == "K-random (K = 4) beats NbAFL with all clients at T = 8"
    assert claims.sim_optimal_K(N=10).statement == "an optimal K < N exists and beats K = N = 10 (every eps)"
    fig9 = claims.fig9_theorem2(constants="from 03_convergence", reading="C = 200", T=8)
    assert fig9.kind == "derived" and fig9.min_effect is None and fig9.setting_note.startswith(
        "constants rho, beta, l, B, Theta from 03_convergence at C = 200; eps = 60") and fig9.setting_note.endswith("T = 8")
    honest = {v: claims.remark2_honest_eps(variant=v, target_eps=[1, 16]) for v in claims.HONEST_EPS_NOTE}
    assert [c.id for c in honest.values()] == ["Remark 2 at honest eps (uplink noise)",
                                               "Remark 2 at honest eps (server noise)",
                                               "Remark 2 at honest eps (uplink noise, sensitivity 2C)"]
    assert honest["server 2C/m"].statement == ("the final loss falls as the whole-run eps grows (1, 16, non-private) "
                                               "(on paired seeds)")
    assert honest["uplink 2C"].setting_note.endswith("on the uplink at sensitivity 2C (not the paper's per-exposure one)")
    with pytest.raises(ValueError, match="variant"):
        claims.remark2_honest_eps(variant="server 2C", target_eps=[1])
    every = [eps, k4, claims.sim_krandom_map, *honest.values()]
    assert all(c.min_effect == sim.LOSS_EFFECT["min_effect"] and c.units for c in every)


def test_noise_power_gate():
    base = np.array([0.21, 0.25, 0.19, 0.23, 0.22])
    assert sim.gate_noise_power({"all": (base + RISE, base)}) is None  # the noise moves the loss
    tiny = base + [1e-5, -2e-5, 0.0, 1e-5, -1e-5]
    gate = sim.gate_noise_power({"all": (tiny, base), "K-random": (tiny, base)})
    assert gate.label == "inconclusive: no-power" and set(gate.stats) == {"all", "K-random"}
    assert sim.gate_noise_power({"all": (tiny, base), "K-random": (base + RISE, base)}) is None  # one shows it
    # a private run below its noiseless baseline refutes the ordering: no gate may hide it
    assert sim.gate_noise_power({"all": (tiny, base), "K-random": (base - RISE, base)}) is None


def cal(**kw):
    defaults = dict(eps=60, delta=0.01, C=20.0, L=1, N=50, K=None, T=50, m=1200, c=3.1, sigma_U=2e-3, sigma_D=0.0,
                    rule="test")
    return nbafl.Calibration(**{**defaults, **kw})


def test_krandom_precondition_is_named_not_a_gate():
    # L = T: sigma_D = 0 for both, K-random only averages fewer uploads -> the runs still differ: a verdict at this reading
    pre = sim.krandom_precondition(cal(L=50), cal(L=50, K=20))
    assert "precondition is absent" in pre and "K-random does not lower the noise" in pre
    v = sim.at_reading(V.holds_if(False, why="K = 20 worse"), pre)
    assert v.verdict == "fails" and v.why.startswith("K = 20 worse (at this reading") and v.stats["precondition absent"] == pre
    assert sim.at_reading(V.holds_if(True, why="ok"), None).why == "ok"
    # L = 1: the paper's own calibration gives all clients a server noise and K-random none
    real = [nbafl.calibrate(eps=60, delta=0.01, C=20.0, L=1, N=50, T=50, m=1200, K=k) for k in (None, 20)]
    assert real[0].sigma_D > 0 == real[1].sigma_D and sim.krandom_precondition(*real) is None
    assert sim.broadcast_noise(cal(sigma_U=3.0, sigma_D=4.0, N=9)) == pytest.approx(math.sqrt(16 + 1))


def check(cid, verdict):
    return sim.Check(toy_claim(cid, "s"), verdict, {"mean": {"x": 1.0}})


def test_collapse_gates_first_and_keeps_every_part():
    parts = [check("Fig. 2", V.holds_if(True)), check("Fig. 6", V.inconclusive("spread", "few seeds"))]
    power = V.inconclusive("no-power", "noise ~1e-3")
    one = sim.collapse(toy_claim("all", "st"), parts, gate=power, measured={"sigma": 1e-3})
    assert one.verdict is power and one.measured["sigma"] == 1e-3 and one.claim.id == "all"
    assert one.measured["Fig. 6"]["verdict"] == "inconclusive: spread" and one.measured["Fig. 2"]["mean"] == {"x": 1.0}
    assert one.measured["Fig. 2"]["statement"] == "s"
    assert sim.collapse(toy_claim("all", "st"), parts).verdict.label == "inconclusive: spread"
    with pytest.raises(ValueError, match="distinct"):
        sim.collapse(toy_claim("all", "st"), parts + parts[:1])


class FakeRunner(sim.Runner):
    """A runner whose final losses are given (seeds x values) and whose data set has m = 1200."""

    def __init__(self, L, losses, N=50, T=25):
        super().__init__(sim.Reading(C=20.0, L=L), N=N, T=T, delta=0.01, seeds=range(5))
        self.losses = losses

    def fed(self, n, seed, sub):
        return SimpleNamespace(m=1200)

    def runs_many(self, requests):
        """What fig_T and fig_K ask in one batch (by T, or by K): each request's column of the given losses."""
        def column(req):
            by = "T" if "T" in req else "K"
            values = sorted({r[by] for r in requests.values()})
            arr = np.asarray(self.losses(req["eps"], values, req.get("K") if by == "T" else None))
            return arr[:, [values.index(req[by])]]
        return {key: ({"train_loss": {"runs": column(req)}}, None) for key, req in requests.items()}


class NoRec:
    def add(self, *a):
        pass

    def savefig(self, *a):
        pass


def test_paper_runs_at_true_eps_reads_06s_tables():
    key = "true whole-run eps at delta=0.01"
    m06 = {"spend": [{"paper eps": e, "L": L, key: 1000.0 * e / L} for L in (4, 1) for e in (60, 50)],
           "map": [{"C": 20.0, "L": 1, "lr": 0.05, "acc eps=50": 0.9}, {"C": 5.0, "L": 4, "lr": 0.05, "acc eps=50": 0.5}]}
    out = sim.paper_runs_at_true_eps(m06, C=20.0, lr=0.05)
    assert out == [{"L": 1, "paper eps": 50, "true eps": 50000.0, "acc": 0.9},
                   {"L": 4, "paper eps": 50, "true eps": None, "acc": None}]  # no cell (C = 20, L = 4) in 06's map


def test_simulation_figures_draw_the_numbers_given():
    from fldp.papers.wei2020 import simulation_figures as sfig

    T_list, arr = [2, 4, 8], np.array([[2.0, 1.5, 1.2], [2.1, 1.6, 1.1]])
    vac = {"P_at_mu": 0.9999, "mu_star": 3.0, "P_star": 0.99, "P_star^T": 0.92, "bound_share_of_Theta": 0.95,
           "l/(rho B (1+B/2))": 0.02, "needed for P*^T <= 1/2": 0.17}
    fig = sfig.fig9_bound_vs_experiment(T_list=T_list, experiment={60: arr}, T_grid=np.arange(1, 9),
                                        bounds={(60, 1.0): np.linspace(3, 2, 8), (60, 400.0): np.linspace(9, 8, 8)},
                                        C=200.0, N=10, reading="C = 200", vacuity=vac, mu=0.01)
    labels = [ln.get_label() for ln in fig.axes[0].get_lines()]
    assert labels[-2:] == ["bound + F*, eps = 60, 2C = 1 (paper)", "bound + F*, eps = 60, 2C = 400"]
    assert "P*^8 = 0.92" in fig.texts[0].get_text()
    rows = [{"C": C, "L": L, "lr": 0.05, "min z": z, "all seeds apart": z > 1, "progress": 0.8}
            for (C, L), z in zip([(1.0, 1), (20.0, 1), (1.0, 4), (20.0, 4)], [0.5, 12.0, -3.0, 2.0])]
    fig = sfig.fig_settings_map(rows=rows, C_list=[1.0, 20.0], L_list=[1, 4], lr_list=[0.05], eps_list=[50, 60],
                                N=10, T=4, num_seeds=2, min_progress=0.5)
    assert fig.axes[0].images[0].get_array()[0, 1] == 10  # z clipped at 10
    assert [t.get_text() for t in fig.axes[0].texts][:2] == ["0.5", "12.0\napart"]
    accs = {"uplink 2C/m": np.array([[0.2, 0.8], [0.3, 0.9]]), "uplink 2C": np.array([[0.1, 0.1], [0.1, 0.1]])}
    fig = sfig.fig_calibrated_accuracy(target_eps=[1, 16], accs=accs, nonprivate_acc=0.95, N=10, T=4, C=20.0,
                                       paper_runs=[{"L": 1, "paper eps": 50, "true eps": 600.0, "acc": 0.9},
                                                   {"L": 4, "paper eps": 50, "true eps": None, "acc": None}],
                                       target_delta=1e-5)
    ax = fig.axes[0]
    assert len(ax.collections) == 3 and ax.get_xscale() == "log"  # two seed bands and one of the paper's runs
    import matplotlib.pyplot as plt
    plt.close("all")


def test_fig_T_interior_minimum_and_krandom_at_its_reading():
    T_list = [5, 10, 20, 30, 50]
    bowl = np.array([0.5, 0.35, 0.30, 0.36, 0.45]) + (np.arange(5) * 0.01)[:, None]  # minimum at T = 20 for every seed
    down = np.array([0.5, 0.4, 0.3, 0.2, 0.1]) + (np.arange(5) * 0.01)[:, None]  # falls through the grid
    for curve, want in ((bowl, "holds"), (down, "fails")):
        _, (interior, krandom) = sim.fig_T(FakeRunner("T", lambda e, v, k, c=curve: c + (0.05 if k else 0.0)), NoRec(),
                                           eps_T=[60], T_list=T_list, K=20, K_eps=[60], name="t")
        assert interior.verdict.verdict == want and interior.measured["eps = 60, K = 50"]["argmin_T"] in (20, 50)
        # L = T: sigma_D = 0 for both schedules; K-random (0.05 higher on every seed) is judged, the precondition named
        assert krandom.verdict.verdict == "fails" and "precondition is absent" in krandom.verdict.why
    _, (_, krandom) = sim.fig_T(FakeRunner(1, lambda e, v, k: bowl - (0.05 if k else 0.0)), NoRec(),
                                eps_T=[60], T_list=T_list, K=20, K_eps=[60], name="t")
    assert krandom.verdict.verdict == "holds"  # L = 1: K-random carries less noise, and it is below on every seed


def test_fig_K_judged_at_L_is_T_with_the_precondition_named_and_by_the_near_best_set():
    K_list = [5, 10, 20, 30, 50]
    rising = np.array([0.6, 0.45, 0.37, 0.34, 0.31]) + (np.arange(5) * 0.01)[:, None]  # best at K = N
    _, at_L_T = sim.fig_K(FakeRunner("T", lambda e, v, k: rising), NoRec(), eps_K=[50, 60], K_list=K_list, name="k")
    assert at_L_T.verdict.verdict == "fails" and "no K < N lowers the noise" in at_L_T.verdict.why
    _, judged = sim.fig_K(FakeRunner(1, lambda e, v, k: rising), NoRec(), eps_K=[50], K_list=K_list, name="k")
    assert judged.verdict.verdict == "fails" and judged.measured["eps = 50"]["argmin_K"] == 50
    with pytest.raises(ValueError, match="K < N"):
        sim.fig_K(FakeRunner(1, lambda e, v, k: rising[:, -1:]), NoRec(), eps_K=[50], K_list=[50], name="k")


def test_separation_is_descriptive():
    out = sim.separation([[2.0, 4.0], [2.0, 2.0], [1.0, 2.0]])
    assert out["gap"] == [1.0, 0.5] and out["apart"] == [False, False] and not out["all_apart"]
    assert out["z"][0] == pytest.approx(1.0 / math.sqrt(0.5)) and out["min_z"] == pytest.approx(out["z"][1])
    assert sim.separation([[3.0, 3.2], [2.0, 2.1]])["all_apart"]
    assert sim.separation([[1.0, 1.0], [2.0, 2.0]])["min_z"] == -math.inf
    with pytest.raises(ValueError, match="two"):
        sim.separation([[1.0]])


def test_map_cell_row_and_verdict():
    base = np.array([0.30, 0.50, 0.40, 0.60, 0.35])
    row, verdict = sim.map_cell([base + 3 * RISE, base + 2 * RISE, base + RISE, base], [50, 60, 100], start=2.3)
    assert verdict.verdict == "holds" and row["verdict"] == "holds" and row["in order"]
    assert row["loss non-private"] == pytest.approx(base.mean()) and set(row) >= {"loss eps=50", "min z", "all seeds apart"}
    assert row["progress"] == pytest.approx((2.3 - (base + RISE).mean()) / (2.3 - base.mean()))


def test_side_by_side_finds_parts_of_a_collapsed_claim():
    here = [{"id": "Remark 2 / Fig. 2"}, {"id": "Fig. 9"}, {"id": "new"}]
    there = [{"id": "Fig. 9", "verdict": "fails", "reason": None, "measured": {}},
             {"id": "all", "verdict": "inconclusive", "reason": "no-power",
              "measured": {"Remark 2 / Fig. 2": {"verdict": "inconclusive: spread"}, "sigma": 1e-3}}]
    assert sim.side_by_side(here, there) == {"Remark 2 / Fig. 2": "inconclusive: no-power [inconclusive: spread]",
                                              "Fig. 9": "fails", "new": "--"}


def test_setting_notes():
    assert "clips" in sim.clipping_note(5.0, 10.0) and "rarely binds" in sim.clipping_note(20.0, 10.0)
    off = {60: (None, cal(sigma_D=0.0))}
    assert "is off" in sim.server_noise_note(off, off, 20)
    assert "up to 0.001" in sim.server_noise_note({60: (None, cal(sigma_D=1e-3))}, off, 20)
    runner = FakeRunner(1, None)
    assert sim.reading_note(runner).startswith("C = 20, L = 1, lr = 0.05") and "5 seed(s)" in sim.reading_note(runner)


def test_spend_table_matches_the_calibration():
    rows = sim.spend_table(sim.Reading(C=20.0, L="T"), delta=0.01, N=50, m=1200,
                           configs=[("Fig. 2", 60, 25, None), ("Fig. 4", 60, 25, 20)])
    cal = nbafl.calibrate(eps=60, delta=0.01, C=20.0, L=25, N=50, T=25, m=1200)
    rdp = accounting.planned_epsilon(event=accounting.gaussian(noise_multiplier=cal.sigma_U / cal.sensitivity_U),
                                     rounds=25, delta=0.01, accountant="rdp")  # one accountant for the table
    assert rows[0]["L"] == 25 and rows[0]["true eps (RDP, delta=0.01)"] == pytest.approx(rdp)
    assert rdp >= cal.eps_run  # RDP is never tighter than the calibration's PLD figure
    c = math.sqrt(2 * math.log(125))
    assert rows[0]["multiplier z"] == pytest.approx(c * 25 / 60)
    assert rows[0]["true eps, K-random amplified"] is None
    assert rows[1]["K"] == 20 and rows[1]["true eps, K-random amplified"] < rows[1]["true eps (RDP, delta=0.01)"]


# --- the clipped, noiseless baseline, the clipping/noise split, one accountant, the delta warning (tiny runs)

TINY = dict(N=2, T=2, delta=0.01, L=1, mu=0.01, lr=0.05, local_epochs=1, batch_size=50, seed=0,
            subsample=200, max_test=100)


def test_clipping_only_above_the_model_norm_is_the_non_private_run():
    plain = sim.nbafl_run(eps=None, C=20.0, **TINY)
    clipped = sim.nbafl_run(eps=None, C=1e6, rule="clip", **TINY)
    assert clipped["train_loss"] == plain["train_loss"] and clipped["test_acc"] == plain["test_acc"]
    assert clipped["calibration"]["sigma_U"] == 0 and clipped["calibration"]["sigma_D"] == 0
    assert clipped["eps_spent"] is None and len(clipped["test_loss"]) == len(plain["train_loss"])


def test_clipping_only_below_the_model_norm_changes_the_run_and_clips_to_C():
    plain = sim.nbafl_run(eps=None, C=20.0, **TINY)
    clipped = sim.nbafl_run(eps=None, C=0.5, rule="clip", **TINY)
    assert plain["w_norm"] > 0.5 and clipped["w_norm"] <= 0.5 + 1e-6
    assert clipped["train_loss"][-1] != plain["train_loss"][-1]


def test_clip_rule_refuses_an_eps():
    with pytest.raises(ValueError, match="eps"):
        sim.nbafl_run(eps=50.0, C=20.0, rule="clip", **TINY)


def test_clipping_share_splits_the_gap_per_seed_by_hand():
    runs = lambda *v: ({"train_loss": {"runs": np.array([[9.0, x] for x in v])}}, None)  # noqa: E731
    groups = {None: runs(1.0, 2.0), sim.CLIP: runs(1.5, 2.1), 50: runs(2.0, 2.6)}
    out = sim.clipping_share(groups, [50])["eps = 50"]
    # gap = mean(2.0-1.0, 2.6-2.0) = 0.8; clipping = mean(0.5, 0.1) = 0.3; noise = 0.5
    assert out["gap"] == pytest.approx(0.8) and out["clipping"] == pytest.approx(0.3)
    assert out["noise"] == pytest.approx(0.5) and out["clipping share"] == pytest.approx(0.375)


def test_spend_table_uses_one_accountant_and_amplification_lowers_the_spend():
    rows = sim.spend_table(sim.Reading(C=200.0, L=1), delta=0.01, N=50, m=1200, configs=[("f", 50, 25, 20)])
    (row,) = rows
    z = 3.1075 * 1 / 50  # c L / eps with c = sqrt(2 ln(125))
    assert row["multiplier z"] == pytest.approx(math.sqrt(2 * math.log(125)) / 50)
    assert z == pytest.approx(row["multiplier z"], rel=1e-4)
    one = accounting.gaussian(noise_multiplier=row["multiplier z"])
    assert row["true eps (RDP, delta=0.01)"] == pytest.approx(
        accounting.planned_epsilon(event=one, rounds=25, delta=0.01, accountant="rdp"))
    assert row["true eps, K-random amplified"] < row["true eps (RDP, delta=0.01)"]


def test_delta_warning_only_at_or_above_one_over_m():
    assert sim.delta_warning(delta=0.01, m=1200).startswith("delta = 0.01 is at least 1/m = 1/1200")
    assert sim.delta_warning(delta=1e-5, m=1200) == ""
    with pytest.raises(ValueError, match="delta"):
        sim.delta_warning(delta=1.5, m=1200)


def test_plot_helpers_keep_curves_inside_the_frame_and_ticks_plain():
    import matplotlib.pyplot as plt

    from fldp import plots

    fig, ax = plt.subplots()
    ax.set_yscale("symlog", linthresh=1e-3)
    plots.symlog_limits(ax, [np.array([0.45, 0.5]), np.array([[-0.002], [0.0005]])], linthresh=1e-3)
    assert ax.get_ylim() == pytest.approx((-0.006, 1.5))  # 3x beyond the extremes; 5e-4 is inside the linear part
    ax.set_yscale("log"); ax.set_ylim(0.2, 0.9); plots.plain_log_ticks(ax.yaxis)
    fig.canvas.draw()
    labels = {t.get_text() for t in ax.yaxis.get_minorticklabels() + ax.yaxis.get_majorticklabels()} - {""}
    assert {"0.3", "0.6"} <= labels and not any("e" in t or "times" in t for t in labels)
    plt.close(fig)


def test_fig_T_judges_only_schedules_whose_noise_grows_with_T():
    """At L = 1, K-random's server noise is 0 at every T of a grid below its switch (Lemma 4), so
    its broadcast noise is flat in T and Remark 4's trade-off cannot show: it is reported with the
    reason, and the claim is judged on all clients (whose sigma_D grows past T = L sqrt(N))."""
    T_list = [5, 10, 20, 30, 50]
    bowl = np.array([0.5, 0.35, 0.30, 0.36, 0.45]) + (np.arange(5) * 0.01)[:, None]
    down = np.array([0.5, 0.4, 0.3, 0.2, 0.1]) + (np.arange(5) * 0.01)[:, None]
    runner = FakeRunner(1, lambda e, v, k: down if k else bowl)
    assert runner.calibration(60, T=50, K=20).sigma_D == 0 and runner.calibration(60, T=50).sigma_D > 0
    _, (interior, _) = sim.fig_T(runner, NoRec(), eps_T=[60], T_list=T_list, K=20, K_eps=[60], name="t")
    assert interior.verdict.verdict == "holds"  # all clients' bowl alone; K-random's falling curve is not judged
    flat = interior.measured["reported, not judged"]["eps = 60, K = 20"]
    assert flat.startswith("not judged: the broadcast noise is") and "near-best T: fails" in flat
    noise = interior.measured["eps = 60, K = 20"]["broadcast noise over T"]
    assert len(set(noise)) == 1 and interior.measured["eps = 60, K = 50"]["broadcast noise over T"][-1] > noise[0]
    only_flat = FakeRunner(1, lambda e, v, k: down)
    _, (nothing, _) = sim.fig_T(only_flat, NoRec(), eps_T=[60], T_list=[2, 4, 6], K=20, K_eps=[60], name="t")
    assert nothing.verdict.label == "inconclusive: no-power"  # T <= L sqrt(N) = 7.07: no schedule's noise grows


def test_eps_accuracy_check_orders_from_the_noiseless_baseline_down():
    acc = lambda *v: ({"test_acc": {"runs": np.array([[0.1, x] for x in v])}}, None)  # noqa: E731
    base = np.array([0.90, 0.91, 0.92, 0.93, 0.94])
    groups = {sim.CLIP: acc(*base), 100: acc(*(base - 0.02)), 50: acc(*(base - 0.05)), None: acc(*base)}
    chk = sim.eps_accuracy_check(groups, eps_list=[50, 100], K=None)
    assert chk.verdict.verdict == "holds" and chk.claim.id == "Fig. 3 (accuracy)"
    assert list(chk.measured["mean final accuracy"]) == ["clipped, no noise", "eps = 100", "eps = 50"]
    assert chk.measured["mean final accuracy"]["eps = 50"] == pytest.approx(0.87)
    groups[100] = acc(*(base - 0.06))  # eps = 100 below eps = 50 by a point on every seed
    assert sim.eps_accuracy_check(groups, eps_list=[50, 100], K=20).verdict.verdict == "fails"


def test_clients_noise_gap_is_the_private_minus_the_non_private_loss_of_the_same_N_and_seed():
    class Plain(FakeRunner):
        def runs_many(self, requests):  # the non-private test loss: 0.3 at every N and seed
            return {n: ({"test_loss": {"runs": np.full((5, 2), 0.3)}}, None) for n in requests}

    private = {n: ({"test_loss": {"runs": np.column_stack([np.ones(5), 0.3 + g + 0.001 * np.arange(5)])}}, None)
               for n, g in ((50, 0.05), (100, 0.02))}
    chk = sim.clients_noise_gap(Plain(1, None), NoRec(), private, eps=60, N_list=[50, 100], m=600, name="g")
    assert chk.measured["mean gap"] == {"N = 50": pytest.approx(0.052), "N = 100": pytest.approx(0.022)}
    assert chk.verdict.verdict == "holds" and chk.claim.kind == "derived"  # 0.03 > 0.003 on every seed
    private[100] = private[50]
    assert sim.clients_noise_gap(Plain(1, None), NoRec(), private, eps=60, N_list=[50, 100], m=600,
                                 name="g").verdict.label == "inconclusive: spread"  # equal gaps: within 0.003
    import matplotlib.pyplot as plt
    plt.close("all")

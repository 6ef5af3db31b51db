"""Tests for fldp.accounting: numbers checked against independent oracles (closed-form
privacy profiles written out here, opacus' own RDP analysis, dp_accounting's accountants
run directly on the unsimplified events), never against this module's earlier output."""
from __future__ import annotations

import math
import random
from types import SimpleNamespace

import dp_accounting
import pytest
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant
from scipy import stats

from fldp import accounting as A
from fldp import mechanisms as m

DELTA = 1e-5


def exact_gaussian_delta(eps: float, z: float) -> float:
    """Balle & Wang 2018 Thm 8, sensitivity 1, written out with scipy (the oracle)."""
    u, v = 1 / (2 * z), eps * z
    return stats.norm.cdf(u - v) - math.exp(eps) * stats.norm.cdf(-u - v)


# ----------------------------------------------------------------------------- Gaussian


@pytest.mark.parametrize("z", [0.8, 2.0])
def test_one_gaussian_pld_is_the_exact_profile_and_rdp_is_larger(z):
    exact = m.gaussian_eps(sigma=z, delta=DELTA, sensitivity=1.0)
    assert exact_gaussian_delta(exact, z) == pytest.approx(DELTA, rel=1e-8)
    # dp_accounting's PLD accountant itself (discretised) agrees with the exact profile ...
    raw_pld = PLDAccountant().compose(dp_accounting.GaussianDpEvent(z)).get_epsilon(DELTA)
    assert raw_pld == pytest.approx(exact, rel=2e-3)
    assert raw_pld >= exact - 1e-9  # pessimistic discretisation: never below
    # ... which is why epsilon(..., "pld") may read it off the exact profile.
    eps_pld = A.epsilon(A.gaussian(noise_multiplier=z), delta=DELTA, accountant="pld")
    assert eps_pld == pytest.approx(exact, rel=1e-9)
    eps_rdp = A.epsilon(A.gaussian(noise_multiplier=z), delta=DELTA, accountant="rdp")
    assert eps_rdp > 1.03 * eps_pld  # z = 1: 4.7285 vs 4.3772
    # delta_for inverts epsilon
    assert A.delta_for(A.gaussian(noise_multiplier=z), eps=exact) == pytest.approx(DELTA, rel=1e-6)


def test_k_gaussians_compose_to_one_with_multiplier_z_over_sqrt_k():
    k, z = 25, 5.0  # z / sqrt(k) = 1
    exact = m.gaussian_eps(sigma=1.0, delta=DELTA, sensitivity=1.0)  # 4.377178
    assert exact == pytest.approx(4.377178, abs=1e-6)
    unrolled = A.composed([A.gaussian(noise_multiplier=z)] * k)
    assert A.epsilon(unrolled, delta=DELTA) == pytest.approx(exact, rel=1e-9)
    assert A.epsilon(A.self_composed(A.gaussian(noise_multiplier=z), count=k),
                     delta=DELTA) == pytest.approx(exact, rel=1e-9)
    # dp_accounting's PLD convolving 4 copies of z = 2 (no merging) lands on the same value
    raw = PLDAccountant().compose(dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(2.0)] * 4)).get_epsilon(DELTA)
    assert raw == pytest.approx(exact, rel=1e-3)
    # RDP adds alpha / (2 z^2): merged and unmerged are the same number
    raw_rdp = RdpAccountant().compose(dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(z)] * k)).get_epsilon(DELTA)
    assert A.epsilon(unrolled, delta=DELTA, accountant="rdp") == pytest.approx(raw_rdp, rel=1e-12)


def test_mixed_gaussians_compose_exactly():
    # two releases at z = 3 and one at z = 1.5: z_eff = (2/9 + 1/2.25)^(-1/2) = 1.224745
    ev = A.composed([A.gaussian(noise_multiplier=3.0)] * 2 + [A.gaussian(noise_multiplier=1.5)])
    z_eff = (2 / 9 + 1 / 2.25) ** -0.5
    assert z_eff == pytest.approx(1.224745, abs=1e-6)
    eps = A.epsilon(ev, delta=DELTA)
    assert exact_gaussian_delta(eps, z_eff) == pytest.approx(DELTA, rel=1e-6)
    raw = PLDAccountant().compose(ev).get_epsilon(DELTA)  # 3.466823 by convolution
    assert raw == pytest.approx(eps, rel=1e-3)


# ----------------------------------------------------------------------------- Laplace


def test_laplace_basic_composition_and_pure_dp():
    b, k = 2.0, 5  # eps0 = 1/b = 0.5 per release, basic composition k/b = 2.5
    ev = A.self_composed(A.laplace(noise_multiplier=b), count=k)
    tiny = A.epsilon(ev, delta=1e-12)
    assert tiny <= k / b + 1e-9
    assert tiny == pytest.approx(k / b, abs=1e-3)  # all k losses at max w.p. 2^-k >> delta
    assert A.epsilon(ev, delta=1e-5) < tiny  # 2.49968: some gain beyond basic composition
    assert A.epsilon(ev, delta=1e-12, accountant="rdp") > tiny  # 2.50687 (RDP, delta 1e-8)
    # one Laplace with b = 1/eps0 is (eps0, 0)-DP: eps -> eps0 as delta -> 0
    eps0 = 0.3
    single = A.laplace(noise_multiplier=1 / eps0)
    assert A.epsilon(single, delta=1e-12) == pytest.approx(eps0, abs=1e-4)
    # and its exact profile: delta(eps) = 1 - exp((eps - eps0) / 2) for eps < eps0
    assert A.delta_for(single, eps=0.2) == pytest.approx(1 - math.exp(-0.05), rel=1e-4)


# ----------------------------------------------------------------------------- opacus


def test_opacus_published_number():
    opacus_rdp = pytest.importorskip("opacus.accountants.analysis.rdp")

    z, q, steps = 1.5, 0.04, 2250
    ours = A.planned_epsilon(event=A.gaussian(noise_multiplier=z), rounds=steps,
                             client_sampling_prob=q, delta=DELTA, accountant="rdp")
    same = A.epsilon(A.self_composed(A.poisson_sampled(A.gaussian(noise_multiplier=z),
                                                       sampling_prob=q), count=steps),
                     delta=DELTA, accountant="rdp")
    assert same == ours
    # Independent oracle: opacus' own analysis (its test pins 7.32911117143).
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    rdp = opacus_rdp.compute_rdp(q=q, noise_multiplier=z, steps=steps, orders=orders)
    theirs, best_order = opacus_rdp.get_privacy_spent(orders=orders, rdp=rdp, delta=DELTA)
    assert theirs == pytest.approx(7.32911117143, abs=1e-9)
    assert best_order == pytest.approx(3.9)
    # dp_accounting: same conversion and optimal order 3.9, but its series for fractional
    # orders runs longer (stops relative to the total, opacus at an absolute e^-30), so
    # RDP(3.9) is 4.124928 vs 4.124705 and eps 7.3293347: 2.2e-4 (3e-5 relative) above.
    assert ours == pytest.approx(7.3293347, abs=1e-6)
    assert 0 < ours - theirs < 3e-4
    # PLD on the same event is tighter (6.7688)
    pld = A.planned_epsilon(event=A.gaussian(noise_multiplier=z), rounds=steps,
                            client_sampling_prob=q, delta=DELTA, accountant="pld")
    assert pld == pytest.approx(6.7688, abs=1e-3)
    assert pld < ours


# ----------------------------------------------------------------------------- spent


def hand_records(downlink=A.gaussian(noise_multiplier=10.0)):
    """3 clients, 6 rounds: client 0 uploads in rounds 1-5, client 1 in 1-2, client 2 never."""
    up = A.gaussian(noise_multiplier=2.0)
    recs = []
    for t in range(1, 7):
        clients = tuple(c for c, last in ((0, 5), (1, 2)) if t <= last)
        recs.append(A.PrivacyRecord(round=t, clients=clients, uplink=(up,) * len(clients),
                                    downlink=downlink))
    return recs


def test_spent_per_client_on_hand_made_records():
    recs = hand_records()
    s = A.spent(SimpleNamespace(privacy=recs), delta=DELTA, clients=[0, 1, 2])
    assert s.uploads == {0: 5, 1: 2, 2: 0}
    assert s.per_client[0] > s.per_client[1] > s.per_client[2] > 0
    assert s.worst_client == 0 and s.eps == s.per_client[0]
    # each equals its directly composed event, and the exact merged Gaussian
    g2, g10 = A.gaussian(noise_multiplier=2.0), A.gaussian(noise_multiplier=10.0)
    for c, n in ((0, 5), (1, 2)):
        direct = A.composed([g2] * n + [g10] * 6)
        assert s.per_client[c] == A.epsilon(direct, delta=DELTA)
        z_eff = (n / 4 + 6 / 100) ** -0.5
        assert exact_gaussian_delta(s.per_client[c], z_eff) == pytest.approx(DELTA, rel=1e-6)
    assert s.per_client[2] == pytest.approx(m.gaussian_eps(sigma=10 / math.sqrt(6), delta=DELTA, sensitivity=1.0))
    # the client events are data: runs of identical events are SelfComposedDpEvents
    assert A.client_event(recs, 2) == dp_accounting.SelfComposedDpEvent(g10, 6)
    ev0 = A.client_event(recs, 0)
    assert set(map(repr, ev0.events)) == {repr(dp_accounting.SelfComposedDpEvent(g2, 5)),
                                          repr(dp_accounting.SelfComposedDpEvent(g10, 6))}
    assert A.client_event(hand_records(downlink=None), 2) == dp_accounting.NoOpDpEvent()
    # clients=None: the clients that uploaded; RDP orders them the same way, above PLD
    assert A.spent(recs, delta=DELTA).per_client.keys() == {0, 1}
    r = A.spent(recs, delta=DELTA, accountant="rdp", clients=range(3))
    assert r.per_client[0] > r.per_client[1] > r.per_client[2]
    assert all(r.per_client[c] > s.per_client[c] for c in range(3))
    both = A.compare(recs, delta=DELTA)
    assert both == {"pld": s.eps, "rdp": r.eps}


def test_no_noise_gives_inf():
    g = A.gaussian(noise_multiplier=1.0)
    recs = [A.PrivacyRecord(round=1, clients=(0, 1), uplink=(g, None), downlink=None),
            A.PrivacyRecord(round=2, clients=(2,), uplink=None, downlink=None)]
    s = A.spent(recs, delta=DELTA)
    assert s.per_client == {0: m.gaussian_eps(sigma=1.0, delta=DELTA, sensitivity=1.0), 1: math.inf, 2: math.inf}
    assert s.eps == math.inf and s.worst_client == 1
    assert A.epsilon(None, delta=DELTA) == math.inf
    assert A.delta_for(dp_accounting.NonPrivateDpEvent(), eps=5.0, accountant="rdp") == 1.0
    assert A.epsilon(dp_accounting.NoOpDpEvent(), delta=DELTA, accountant="rdp") == 0.0


def test_spent_100_clients_1000_rounds():
    """The realised spend of a long run (how fast: benchmarks/accounting_bench.py, not a timed test)."""
    rng = random.Random(0)
    g, d = A.gaussian(noise_multiplier=1.0), A.gaussian(noise_multiplier=20.0)
    recs = []
    for t in range(1, 1001):
        clients = tuple(rng.sample(range(100), 10))
        recs.append(A.PrivacyRecord(round=t, clients=clients, uplink=(g,) * 10, downlink=d))
    s = A.spent(recs, delta=DELTA, clients=range(100))
    worst = s.worst_client
    z_eff = (s.uploads[worst] + 1000 / 400) ** -0.5
    assert s.eps == pytest.approx(m.gaussian_eps(sigma=z_eff, delta=DELTA, sensitivity=1.0), rel=1e-12)
    assert sum(s.uploads.values()) == 10_000
    assert s.uploads[worst] == max(s.uploads.values())


# ----------------------------------------------------------------------------- unsupported


def test_sampling_without_replacement_needs_rdp_replace_one():
    swor = A.sampled_without_replacement(A.gaussian(noise_multiplier=1.0),
                                         sample_size=10, population=100)
    for acc in ("pld", "rdp"):
        with pytest.raises(ValueError,
                           match="supported by accountant='rdp' with relation='replace_one'"):
            A.epsilon(swor, delta=DELTA, accountant=acc)
    eps = A.epsilon(swor, delta=DELTA, accountant="rdp", relation="replace_one")
    # amplified: below its sound no-amplification bound, the unsampled Gaussian (RDP 4.7285)
    no_amp = A.epsilon(A.without_sampling(swor), delta=DELTA, accountant="rdp",
                       relation="replace_one")
    assert no_amp == A.epsilon(A.gaussian(noise_multiplier=1.0), delta=DELTA, accountant="rdp")
    assert 0 < eps < no_amp / 2  # 2.2751 vs 4.7285
    # replace-one goes through RDP only: dp_accounting's PLD would charge z = 1 as z = 1/2
    raw = PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    assert raw.compose(dp_accounting.GaussianDpEvent(1.0)).get_epsilon(DELTA) == pytest.approx(
        m.gaussian_eps(sigma=0.5, delta=DELTA, sensitivity=1.0), rel=1e-3)
    with pytest.raises(ValueError, match="accountant='rdp' with relation='replace_one'"):
        A.epsilon(A.gaussian(noise_multiplier=1.0), delta=DELTA, relation="replace_one")
    both = A.compare(swor, delta=DELTA, relation="replace_one")
    assert both["rdp"] == eps and both["pld"].startswith("skipped")
    # Poisson-sampled Laplace: PLD only
    pl = A.poisson_sampled(A.laplace(noise_multiplier=1.0), sampling_prob=0.1)
    both = A.compare(pl, delta=DELTA)
    assert isinstance(both["pld"], float) and "accountant='pld'" in both["rdp"]


# ----------------------------------------------------------------------------- calibration


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
@pytest.mark.parametrize("target", [0.5, 2.0, 8.0])
def test_gaussian_run_calibration_never_overshoots(accountant, target):
    tol, rounds = 1e-4, 50
    z = A.calibrate_gaussian_run(target_eps=target, target_delta=DELTA, rounds=rounds,
                                 accountant=accountant, tol=tol)

    def eps(nm):
        return A.epsilon(A.self_composed(A.gaussian(noise_multiplier=nm), count=rounds),
                         delta=DELTA, accountant=accountant)

    assert eps(z) <= target
    assert eps(z - tol) > target  # within tol of the optimum
    if accountant == "pld":  # independent: the exact analytic calibration, sigma / sqrt(T)
        sigma = m.analytic_gaussian_sigma(eps=target, delta=DELTA, sensitivity=1.0)
        assert z == pytest.approx(sigma * math.sqrt(rounds), abs=2 * tol)


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_laplace_calibration_never_overshoots(accountant):
    tol = 1e-3

    def make(b):
        return A.self_composed(A.laplace(noise_multiplier=b), count=10)

    b = A.calibrate_noise_multiplier(make, target_eps=2.0, target_delta=1e-6,
                                     accountant=accountant, tol=tol)
    assert A.epsilon(make(b), delta=1e-6, accountant=accountant) <= 2.0
    assert A.epsilon(make(b - tol), delta=1e-6, accountant=accountant) > 2.0
    assert b < 10 / 2.0  # beats basic composition (b = k / eps = 5)


def test_sampled_calibration_rdp():
    tol = 1e-4
    z = A.calibrate_gaussian_run(target_eps=3.0, target_delta=DELTA, rounds=200,
                                 sampling_prob=0.04, accountant="rdp", tol=tol)

    def eps(nm):
        return A.planned_epsilon(event=A.gaussian(noise_multiplier=nm), rounds=200,
                                 client_sampling_prob=0.04, delta=DELTA, accountant="rdp")

    assert eps(z) <= 3.0 < eps(z - tol)
    # independent: dp_accounting's own RDP accountant and calibration on its own event
    ref = dp_accounting.calibrate_dp_mechanism(
        RdpAccountant,
        lambda nm: dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.04, dp_accounting.GaussianDpEvent(nm)), 200),
        3.0, DELTA, bracket_interval=dp_accounting.LowerEndpointAndGuess(1e-3, 1.0), tol=1e-6)
    assert z == pytest.approx(ref, abs=2 * tol)


def test_sampled_calibration_many_rounds_never_overshoots():
    # 2250 rounds at q = 0.04 (DP-SGD on MNIST, Abadi et al. 2016): eps 7.33 at z = 1.5
    z = A.calibrate_gaussian_run(target_eps=7.0, target_delta=1e-5, rounds=2250,
                                 sampling_prob=0.04, accountant="rdp", tol=1e-6)

    def eps(nm):
        return A.planned_epsilon(event=A.gaussian(noise_multiplier=nm), rounds=2250,
                                 client_sampling_prob=0.04, delta=1e-5, accountant="rdp")

    assert eps(z) <= 7.0 < eps(z * (1 - 1e-3))
    assert 1.5 < z < 1.6


# ----------------------------------------------------------------------------- bad input


G1 = A.gaussian(noise_multiplier=1.0)


@pytest.mark.parametrize("call, name", [
    (lambda: A.gaussian(noise_multiplier=0), "noise_multiplier"),
    (lambda: A.laplace(noise_multiplier=-1.0), "noise_multiplier"),
    (lambda: A.poisson_sampled(G1, sampling_prob=0.0), "sampling_prob"),
    (lambda: A.poisson_sampled(G1, sampling_prob=1.5), "sampling_prob"),
    (lambda: A.poisson_sampled("gauss", sampling_prob=0.5), "event"),
    (lambda: A.sampled_without_replacement(G1, sample_size=11,
                                           population=10), "sample_size"),
    (lambda: A.sampled_without_replacement(G1, sample_size=1,
                                           population=0), "population"),
    (lambda: A.self_composed(G1, count=0), "count"),
    (lambda: A.composed([G1, None]), r"events\[1\]"),
    (lambda: A.epsilon(G1, delta=0.0), "delta"),
    (lambda: A.epsilon(G1, delta=DELTA, accountant="moments"), "accountant"),
    (lambda: A.epsilon(G1, delta=DELTA, relation="swap"), "relation"),
    (lambda: A.delta_for(G1, eps=-1.0), "eps"),
    (lambda: A.PrivacyRecord(round=1, clients=(0, 1), uplink=(None,), downlink=None), "uplink"),
    (lambda: A.PrivacyRecord(round=1, clients=(0, 0), uplink=None, downlink=None), "clients"),
    (lambda: A.PrivacyRecord(round=-1, clients=(), uplink=None, downlink=None), "round"),
    (lambda: A.PrivacyRecord(round=1, clients=(0,), uplink=("g",), downlink=None), r"uplink\[0\]"),
    (lambda: A.spent("history", delta=DELTA), "records"),
    (lambda: A.spent([], delta=DELTA, clients=[-1]), r"clients\[0\]"),
    (lambda: A.client_event([], -2), "client"),
    (lambda: A.planned_epsilon(event=G1, rounds=0, delta=DELTA), "rounds"),
    (lambda: A.planned_epsilon(event=G1, rounds=5,
                               client_sampling_prob=0.0, delta=DELTA), "client_sampling_prob"),
    (lambda: A.calibrate_gaussian_run(target_eps=-1.0, target_delta=DELTA, rounds=5), "target_eps"),
    (lambda: A.calibrate_gaussian_run(target_eps=1.0, target_delta=1.0, rounds=5), "target_delta"),
    (lambda: A.calibrate_noise_multiplier(3.0, target_eps=1.0, target_delta=DELTA), "make_event"),
    (lambda: A.calibrate_noise_multiplier(lambda z: A.gaussian(noise_multiplier=z), target_eps=1.0,
                                          target_delta=DELTA, tol=0.0), "tol"),
])
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_rdp_of_a_sampled_gaussian_logs_no_dropped_order_warnings(caplog):
    import logging

    e = A.gaussian(noise_multiplier=0.31)
    with caplog.at_level(logging.WARNING, logger="absl"):
        before = logging.getLogger("absl").level
        eps = A.planned_epsilon(event=e, rounds=25, client_sampling_prob=0.4, delta=0.01, accountant="rdp")
        assert logging.getLogger("absl").level == before  # the logger's level is restored
    assert eps == pytest.approx(117.7, rel=1e-3) and not [r for r in caplog.records if r.name == "absl"]


def test_epsilon_lower_gaussian_brackets_the_true_eps():
    """Without sampling the exact profile: equal to epsilon(); with Poisson sampling the optimistic
    PLD, at most the pessimistic one and within 1 % of it on this grid."""
    ev = A.self_composed(A.gaussian(noise_multiplier=2.0), count=25)
    exact = A.epsilon(ev, delta=0.01)
    assert A.epsilon_lower_gaussian(noise_multiplier=2.0, count=25, delta=0.01) == pytest.approx(exact, rel=1e-12)
    sub = A.self_composed(A.poisson_sampled(A.gaussian(noise_multiplier=2.0), sampling_prob=0.01), count=10)
    lo, hi = A.epsilon_lower_gaussian(noise_multiplier=2.0, count=10, delta=1e-5, sampling_prob=0.01), A.epsilon(sub, delta=1e-5)
    assert lo <= hi and lo == pytest.approx(hi, rel=0.01)
    with pytest.raises(ValueError, match="count=0 is out of range"):
        A.epsilon_lower_gaussian(noise_multiplier=2.0, count=0, delta=1e-5)

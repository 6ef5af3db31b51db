"""Privacy attacks on toy problems whose answer is known.

* Membership inference (Shokri et al. 2017): a target that memorises random labels (train
  accuracy 100 %, test accuracy about chance) leaks membership; a target trained on neither
  the members nor the non-members does not (accuracy about 1/2).
* Label composition (Wang et al. 2019): one full-batch gradient step of clients with known
  label proportions on well-separated classes gives those proportions back; noise 100x
  the update's norm hides them.
* SNR and the metrics against numbers computed by hand.
"""
import math

import pytest
import torch

from fldp import attacks, engine, models
from fldp.data import FederatedData

D, K = 64, 5          # membership toy: 64 features, 5 random labels
SHADOW_CFG = dict(num_rounds=1, local_steps=200, sampling="full", lr=0.5)


def random_rows(n, seed, d=D, k=K):
    """Gaussian features with random labels: nothing to learn, everything to memorise."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.randint(0, k, (n,), generator=g)


def train_target(model, start, x, y, cfg):
    data = FederatedData.from_clients([x], [y], x, y)
    return engine.local_train(model, start, data, torch.tensor([0]), cfg)[0]


@pytest.fixture(scope="module")
def toy():
    """A logistic regression that memorises 100 random-label members (n = 100 < d = 64 x 5
    parameters per class: separable), the auxiliary set of the attacker (200 rows from the
    same distribution: shadow training sets of 100, like the target's), 100 non-members."""
    model = models.MultinomialLogReg(D, K, bias=True)
    cfg = engine.FLConfig(**SHADOW_CFG, seed=7)
    start = model.init(torch.Generator().manual_seed(0))
    members, nonmembers, aux = random_rows(100, 1), random_rows(100, 2), random_rows(200, 3)
    target = train_target(model, start, *members, cfg)
    return dict(model=model, cfg=cfg, start=start, target=target, members=members,
                nonmembers=nonmembers, aux=aux)


# -- metrics ------------------------------------------------------------------------------------
def test_binary_metrics_hand_computed():
    pred = torch.tensor([1, 1, 1, 0, 0, 0, 1, 0], dtype=torch.bool)
    truth = torch.tensor([1, 1, 0, 1, 0, 0, 0, 0], dtype=torch.bool)
    # tp = 2, fp = 2, fn = 1, tn = 3
    m = attacks.binary_metrics(pred, truth)
    assert m["accuracy"] == pytest.approx(5 / 8)
    assert m["precision"] == pytest.approx(2 / 4)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))  # 4/7


def test_binary_metrics_no_positive_prediction_gives_zero_not_nan():
    m = attacks.binary_metrics(torch.zeros(4, dtype=torch.bool), torch.tensor([1, 0, 1, 0]))
    assert m == {"accuracy": 0.5, "precision": 0.0, "recall": 0.0, "f1": 0.0}


# -- shadow models --------------------------------------------------------------------------------
def test_shadow_split_halves_seeded():
    x, y = random_rows(11, 0)
    data, in_mask = attacks.shadow_split(x, y, num_shadows=4, seed=3)
    assert in_mask.shape == (4, 11) and in_mask.dtype == torch.bool
    assert in_mask.sum(dim=1).tolist() == [5] * 4
    assert data.num_clients == 4 and data.counts.tolist() == [5] * 4
    for s in range(4):
        xs, ys = data.client(s)
        assert torch.equal(xs, x[in_mask[s]]) and torch.equal(ys, y[in_mask[s]])
    again = attacks.shadow_split(x, y, num_shadows=4, seed=3)[1]
    other = attacks.shadow_split(x, y, num_shadows=4, seed=4)[1]
    assert torch.equal(in_mask, again) and not torch.equal(in_mask, other)
    assert len({tuple(r.tolist()) for r in in_mask}) > 1  # the shadows get different halves


def test_train_shadows_is_one_engine_round_through_the_uplink(toy):
    model, start = toy["model"], toy["start"]
    data, _ = attacks.shadow_split(*toy["aux"], num_shadows=3, seed=0)
    cfg = engine.FLConfig(num_rounds=1, local_steps=5, sampling="full", lr=0.5,
                          clients_per_round=1, dropout=0.5)  # both overridden: every shadow trains
    local = engine.local_train(model, start, data, torch.arange(3), cfg)
    assert torch.allclose(attacks.train_shadows(model, data, cfg, start), local)
    upd = engine.with_config(cfg, upload="update")

    def shift(ctx, uploads):  # a public "mechanism": the attacker applies it to its shadows too
        return uploads + (ctx.clients.to(uploads.dtype) + 1)[:, None]

    shadows = attacks.train_shadows(model, data, upd, start, uplink=shift)
    expected = local + torch.tensor([1.0, 2.0, 3.0])[:, None]
    assert torch.allclose(shadows, expected, atol=1e-5)
    one_step = engine.with_config(cfg, local_steps=1)
    grad = engine.with_config(one_step, upload="gradient")  # the shadow: one local step
    assert torch.allclose(attacks.train_shadows(model, data, grad, start),
                          engine.local_train(model, start, data, torch.arange(3), one_step), atol=1e-6)


def test_attack_features_are_clamped_log_probabilities(toy):
    model, target = toy["model"], toy["target"]
    x = toy["members"][0][None, :7]
    f = attacks.attack_features(model, target[None], x)
    assert f.shape == (1, 7, K)
    ref = torch.log_softmax(model.forward(target[None], x), -1).clamp_min(math.log(1e-12))
    assert torch.allclose(f, ref)
    assert torch.allclose(f.exp().sum(-1), torch.ones(1, 7), atol=1e-4)
    assert torch.allclose(attacks.attack_features(model, target[None], x, chunk=3), f, atol=1e-5)


def test_per_class_attack_learns_a_rule_that_differs_by_class():
    """Class 0: members have feature 0 > 0; class 1: members have feature 0 < 0.  One
    model per class learns both rules."""
    g = torch.Generator().manual_seed(0)
    f = torch.randn(800, 2, generator=g)
    y = torch.arange(800) % 2
    member = (f[:, 0] > 0) == (y == 0)
    att = attacks.fit_attack(f, y, member, per_class=True, hidden=16, steps=200, seed=0)
    acc = (att.predict(f, y) == member).float().mean()
    assert acc > 0.95
    assert torch.equal(att.predict_proba(f, y),
                       attacks.fit_attack(f, y, member, hidden=16, steps=200, seed=0).predict_proba(f, y))


# -- the whole membership attack ------------------------------------------------------------------
@pytest.mark.parametrize("per_class", [True, False])
def test_membership_attack_detects_a_memorising_target(toy, per_class):
    model = toy["model"]
    train_acc = model.evaluate(toy["target"], *toy["members"])[1]
    test_acc = model.evaluate(toy["target"], *toy["nonmembers"])[1]
    assert train_acc == 1.0 and test_acc < 0.4  # memorised; chance is 1/5
    res = attacks.membership_attack(model, toy["target"], members=toy["members"],
                                    nonmembers=toy["nonmembers"], aux=toy["aux"], config=toy["cfg"],
                                    start=toy["start"], per_class=per_class, seed=0)
    assert res.accuracy > 0.8 and res.f1 > 0.8  # measured 0.88 and 0.885 (5 seeds: >= 0.88)
    assert res.attack_train_accuracy > 0.9
    assert res.num_members == res.num_nonmembers == 100
    assert len(res.per_class_accuracy) == len(res.per_class_f1) == K
    d = res.to_dict()
    assert set(d) >= {"accuracy", "precision", "recall", "f1", "per_class_accuracy", "per_class_f1",
                      "num_members", "num_nonmembers"}


def test_membership_attack_is_chance_when_outputs_ignore_membership(toy):
    """The target trained on other rows of the same distribution: members and non-members
    are exchangeable for it.  250 + 250 rows: std of the accuracy 0.022, bound 3 std."""
    model, cfg = toy["model"], toy["cfg"]
    target = train_target(model, toy["start"], *random_rows(100, 4), cfg)
    members, nonmembers = random_rows(250, 5), random_rows(300, 6)
    res = attacks.membership_attack(model, target, members=members, nonmembers=nonmembers,
                                    aux=toy["aux"], config=cfg, start=toy["start"], seed=0)
    assert res.num_members == res.num_nonmembers == 250  # balanced: the larger set truncated
    assert abs(res.accuracy - 0.5) < 0.07
    # balanced: accuracy = (TPR + 1 - FPR) / 2
    assert res.accuracy == pytest.approx((res.recall + 1 - res.fpr) / 2)


def test_membership_attack_is_seeded_and_takes_a_training_callable(toy):
    kw = dict(members=toy["members"], nonmembers=toy["nonmembers"], aux=toy["aux"],
              num_shadows=4, steps=100, seed=1)
    model, cfg, start = toy["model"], toy["cfg"], toy["start"]
    a = attacks.membership_attack(model, toy["target"], config=cfg, start=start, **kw)
    b = attacks.membership_attack(model, toy["target"], config=cfg, start=start, **kw)
    c = attacks.membership_attack(model, toy["target"], **kw,
                                  train=lambda data: attacks.train_shadows(model, data, cfg, start))
    assert a.to_dict() == b.to_dict() == c.to_dict()


def test_membership_attack_agrees_with_art_on_the_same_shadow_outputs(toy):
    """ART's MembershipInferenceBlackBox (random-forest attack model), fed the same shadow
    models' prediction vectors, reaches the same accuracy as ours within 0.07 (measured:
    ART 0.905, ours 0.88).  ART's default neural attack model (one model, label in a
    separate branch, lr 1e-4) reaches only about 0.70 here, so it is not the reference."""
    try:
        from art.attacks.inference.membership_inference import MembershipInferenceBlackBox
        from art.estimators.classification import BlackBoxClassifier
    except ImportError:
        pytest.skip("adversarial-robustness-toolbox is not installed (pip install -e '.[dev]')")
    model, target = toy["model"], toy["target"]
    xa, ya = toy["aux"]
    data, in_mask = attacks.shadow_split(xa, ya, num_shadows=10, seed=0)
    shadows = attacks.train_shadows(model, data, toy["cfg"], toy["start"])
    feats = attacks.attack_features(model, shadows, xa.expand(10, *xa.shape)).reshape(-1, K)
    fy, member = ya.repeat(10), in_mask.reshape(-1)
    x_eval = torch.cat([toy["members"][0], toy["nonmembers"][0]])
    y_eval = torch.cat([toy["members"][1], toy["nonmembers"][1]])
    truth = torch.arange(200) < 100
    tf = attacks.attack_features(model, target[None], x_eval[None])[0]

    ours = attacks.binary_metrics(attacks.fit_attack(feats, fy, member, seed=0).predict(tf, y_eval), truth)
    predict = lambda x: torch.softmax(model.forward(target[None], torch.as_tensor(x)[None])[0], -1).numpy()
    art = MembershipInferenceBlackBox(BlackBoxClassifier(predict, (D,), K), attack_model_type="rf")
    art.attack_model.set_params(random_state=0)  # seeded (ART 1.20 rejects an unfitted forest as attack_model)
    probs = feats.exp().numpy()  # ART takes probability vectors (Shokri's raw outputs)
    m = member.numpy()
    art.fit(y=fy[m].numpy(), pred=probs[m], test_y=fy[~m].numpy(), test_pred=probs[~m])
    guess = torch.as_tensor(art.infer(None, y_eval.numpy(), pred=tf.exp().numpy())).reshape(-1) > 0.5
    theirs = attacks.binary_metrics(guess, truth)
    assert theirs["accuracy"] > 0.8 and ours["accuracy"] > 0.8
    assert abs(theirs["accuracy"] - ours["accuracy"]) < 0.07


# -- label composition ---------------------------------------------------------------------------
PROPS = torch.tensor([[0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0],
                      [0.0, 0.0, 0.2, 0.8], [1.0, 0.0, 0.0, 0.0]])


@pytest.fixture(scope="module")
def clients():
    """5 clients of 200 rows with the label proportions PROPS; 4 well-separated Gaussian
    classes in 20 dimensions; the attacker's 100 auxiliary rows per class."""
    c, d = PROPS.shape[1], 20
    g = torch.Generator().manual_seed(0)
    means = 3 * torch.randn(c, d, generator=g)

    def sample(counts):
        y = torch.cat([torch.full((int(n),), j) for j, n in enumerate(counts)])
        return means[y] + 0.5 * torch.randn(len(y), d, generator=g), y

    xs, ys = zip(*[sample((p * 200).round().long()) for p in PROPS])
    return FederatedData.from_clients(xs, ys, xs[0], ys[0]), sample([100] * c), d, c, g


def test_label_composition_and_l1_distance():
    ys = [torch.tensor([0, 0, 1, 2]), torch.tensor([2, 2])]
    expected = torch.tensor([[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]])
    assert torch.allclose(attacks.label_composition(ys), expected)
    data = FederatedData.from_clients([torch.zeros(4, 1), torch.zeros(2, 1)], ys, torch.zeros(1, 1), ys[1][:1])
    assert torch.allclose(attacks.label_composition(data, num_classes=4),
                          torch.cat([expected, torch.zeros(2, 1)], dim=1))
    assert torch.allclose(attacks.l1_distance(expected, torch.full((2, 3), 1 / 3)),
                          torch.tensor([1 / 6 + 1 / 12 + 1 / 12, 4 / 3]))


def test_class_gradients_are_the_mean_gradient_of_each_class(clients):
    _, (xa, ya), d, c, _ = clients
    model = models.MLP(d, 8, c)
    w = model.init(torch.Generator().manual_seed(1))
    basis = attacks.class_gradients(model, w, xa, ya, layers=["w2", "b2"])
    idx = attacks.layer_slice(model, ["b2", "w2"])  # model order, whatever the list's order
    a, b = model._offsets["w2"][0], model._offsets["b2"][1]
    assert torch.equal(idx, torch.arange(a, b))
    for j in range(c):
        p = w[None].clone().requires_grad_(True)
        model.loss(p, xa[ya == j][None], ya[ya == j][None]).sum().backward()
        assert torch.allclose(basis[j], p.grad[0, idx], atol=1e-6)


@pytest.mark.parametrize("which", ["logreg", "mlp_last_layer", "gradient_upload"])
def test_label_composition_from_one_full_batch_step(clients, which):
    data, (xa, ya), d, c, _ = clients
    model = models.MLP(d, 32, c) if which == "mlp_last_layer" else models.MultinomialLogReg(d, c, bias=True)
    layers = ["w2", "b2"] if which == "mlp_last_layer" else None
    w = model.init(torch.Generator().manual_seed(1))
    upload = "gradient" if which == "gradient_upload" else "update"
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, sampling="full", upload=upload, lr=0.1)
    local = engine.local_train(model, w, data, torch.arange(data.num_clients), cfg)
    up = local if upload == "gradient" else local - w
    idx = attacks.layer_slice(model, layers)
    basis = attacks.class_gradients(model, w, xa, ya, layers=layers)
    est = attacks.infer_label_composition(up[:, idx], basis, upload=upload)
    truth = attacks.label_composition(data, num_classes=c)
    assert torch.allclose(truth, PROPS)
    assert torch.allclose(est.sum(dim=1), torch.ones(len(est))) and bool((est >= 0).all())
    assert attacks.l1_distance(est, truth).max() < 0.1  # measured <= 0.07


def test_noise_of_100x_the_update_norm_hides_the_composition(clients):
    data, (xa, ya), d, c, g = clients
    model = models.MultinomialLogReg(d, c, bias=True)
    w = model.init(torch.Generator().manual_seed(1))
    cfg = engine.FLConfig(num_rounds=1, local_steps=1, sampling="full", upload="update", lr=0.1)
    up = engine.local_train(model, w, data, torch.arange(data.num_clients), cfg) - w
    z = torch.randn(up.shape, generator=g)
    noisy = up + z / z.norm(dim=1, keepdim=True) * 100 * up.norm(dim=1, keepdim=True)
    basis = attacks.class_gradients(model, w, xa, ya)
    truth = attacks.label_composition(data, num_classes=c)
    clean_err = attacks.l1_distance(attacks.infer_label_composition(up, basis), truth).mean()
    noisy_err = attacks.l1_distance(attacks.infer_label_composition(noisy, basis), truth).mean()
    assert clean_err < 0.1 and noisy_err > 0.3  # measured 0.027 and 0.88


def test_infer_label_composition_exact_and_degenerate_cases():
    basis = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    updates = -torch.tensor([[3.0, 2.0, 5.0],    # a = (3, 1): 3/4, 1/4 (the third axis is noise)
                             [-1.0, -1.0, 0.0]])  # points away from every class: a = 0 -> uniform
    est = attacks.infer_label_composition(updates, basis)
    assert torch.allclose(est, torch.tensor([[0.75, 0.25], [0.5, 0.5]]))


# -- SNR ---------------------------------------------------------------------------------------------
def test_snr_hand_computed():
    clean = torch.tensor([[1.0, -1.0, 1.0, -1.0], [0.0, 2.0, 0.0, 2.0]])  # variances 1 and 1
    noise = torch.tensor([[2.0, -2.0, 2.0, -2.0], [0.0, 0.0, 0.0, 3.0]])  # variances 4 and 27/16
    out = attacks.snr(clean, clean + noise)
    assert torch.allclose(out, torch.tensor([0.25, 16 / 27]))
    assert attacks.snr(clean[0], clean[0] + noise[0]).item() == pytest.approx(0.25)
    assert attacks.snr(clean, clean).tolist() == [math.inf, math.inf]
    g = torch.Generator().manual_seed(0)
    big = 2 * torch.randn(3, 100_000, generator=g)
    assert torch.allclose(attacks.snr(big, big + torch.randn(3, 100_000, generator=g)),
                          torch.full((3,), 4.0), rtol=0.03)


def test_snr_of_a_noise_hook_matches_its_scale():
    """Through the engine: Gaussian noise of std sigma on updates whose coordinates have
    variance v gives SNR v / sigma^2."""
    x, y = random_rows(60, 0, d=10, k=3)
    data = FederatedData.from_clients([x[:30], x[30:]], [y[:30], y[30:]], x, y)
    model = models.MLP(10, 256, 3)
    cfg = engine.FLConfig(num_rounds=1, local_steps=2, sampling="full", upload="update", lr=0.1)
    seen = {}
    engine.round_step(model, data, cfg, engine.State(0, model.init(torch.Generator().manual_seed(0))),
                      uplink=engine.gaussian_uplink(1e-3), observer=lambda ctx: seen.update(c=ctx))
    ctx = seen["c"]
    expected = ctx.clean.double().var(dim=1, correction=0) / 1e-6
    # the noise variance is estimated from D coordinates: relative standard error sqrt(2 / D)
    assert torch.allclose(attacks.snr(ctx.clean, ctx.uploads).double(), expected, rtol=4 * (2 / model.dim) ** 0.5)


# -- bad input -----------------------------------------------------------------------------------------
def test_bad_input_names_the_parameter(toy):
    model, target = toy["model"], toy["target"]
    x, y = toy["aux"]
    with pytest.raises(ValueError, match="num_shadows"):
        attacks.shadow_split(x, y, num_shadows=0)
    with pytest.raises(ValueError, match="aux"):
        attacks.shadow_split(x, y[:-1])
    with pytest.raises(ValueError, match="num_shadows"):
        attacks.membership_attack(model, target, members=toy["members"], nonmembers=toy["nonmembers"],
                                  aux=toy["aux"], config=toy["cfg"], num_shadows=0)
    with pytest.raises(ValueError, match="members"):
        attacks.membership_attack(model, target, members=(x, y[:3]), nonmembers=toy["nonmembers"],
                                  aux=toy["aux"], config=toy["cfg"])
    with pytest.raises(ValueError, match="exactly one of train"):
        attacks.membership_attack(model, target, members=toy["members"], nonmembers=toy["nonmembers"],
                                  aux=toy["aux"])
    with pytest.raises(ValueError, match="target"):
        attacks.membership_attack(model, target[:-1], members=toy["members"],
                                  nonmembers=toy["nonmembers"], aux=toy["aux"], config=toy["cfg"])
    with pytest.raises(ValueError, match="start_params"):
        attacks.train_shadows(model, attacks.shadow_split(x, y, num_shadows=2)[0], toy["cfg"], target[:3])
    with pytest.raises(ValueError, match=r"x has shape"):
        attacks.attack_features(model, target[None], x[:5])
    with pytest.raises(ValueError, match="membership"):
        attacks.fit_attack(torch.zeros(4, K), torch.zeros(4, dtype=torch.long), torch.zeros(3))
    with pytest.raises(ValueError, match="labels_y"):
        attacks.fit_attack(torch.zeros(4, K), torch.full((4,), K), torch.zeros(4))
    with pytest.raises(ValueError, match="layers"):
        attacks.layer_slice(model, ["nope"])
    with pytest.raises(ValueError, match="y_aux has no sample of class"):
        attacks.class_gradients(model, target, x[y != 2], y[y != 2])
    with pytest.raises(ValueError, match="updates"):
        attacks.infer_label_composition(torch.zeros(2, 5), torch.zeros(3, 4))
    with pytest.raises(ValueError, match="upload"):
        attacks.infer_label_composition(torch.zeros(2, 4), torch.zeros(3, 4), upload="params")
    with pytest.raises(ValueError, match="clean"):
        attacks.snr(torch.zeros(2, 4), torch.zeros(2, 5))
    with pytest.raises(ValueError, match=r"p has shape"):
        attacks.l1_distance(torch.zeros(2, 3), torch.zeros(2, 4))


def test_empirical_eps_by_hand():
    # TPR 0.6, FPR 0.2: log 3 from the first inequality, log(0.8/0.4) = log 2 from the second
    assert attacks.empirical_eps(tpr=0.6, fpr=0.2) == pytest.approx(math.log(3))
    assert attacks.empirical_eps(tpr=0.5, fpr=0.5) == 0.0
    assert attacks.empirical_eps(tpr=0.6, fpr=0.2, delta=0.1) == pytest.approx(math.log(0.5 / 0.2))
    assert math.isinf(attacks.empirical_eps(tpr=0.3, fpr=0.0))

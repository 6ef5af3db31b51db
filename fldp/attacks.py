"""Privacy attacks every chapter can run against a model or an upload: membership inference
with shadow models (Shokri et al. 2017, "Membership inference attacks against machine learning
models", Sec. IV-V: :func:`shadow_split`, :func:`train_shadows`, :func:`attack_features`,
:func:`fit_attack`, and the whole attack in one call, :func:`membership_attack`), label-composition
inference from an update (Wang et al. 2019, "Eavesdrop the composition proportion of training
labels in federated learning", Sec. III: :func:`class_gradients`, :func:`layer_slice`,
:func:`infer_label_composition`, :func:`label_composition`, :func:`l1_distance`), the
signal-to-noise ratio of an upload (adaptive-noise paper, Sec. 6.2: :func:`snr`) and the eps an
attack's (TPR, FPR) rules out (:func:`empirical_eps`).  Everything is batched (all shadow models
train as the clients of **one** engine round, the per-class attack models and the per-class
gradients are one tensor computation each) and all randomness comes from generators seeded by
``seed``.  The shadows must go through the defence's own uplink hook inside that engine round,
which is why the maintained libraries (ART, privacy-meter) are not used; ART serves the tests as
an independent reference.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable, Optional, Sequence, Union

import numpy as np
import torch
import torch.nn.functional as F

from fldp import engine, seeding, validate
from fldp.data import FederatedData
from fldp.models import Model

__all__ = [
    "LOG_FLOOR", "binary_metrics", "shadow_split", "train_shadows", "attack_features",
    "AttackModel", "fit_attack", "MembershipResult", "train_attack", "evaluate_attack",
    "membership_attack", "empirical_eps", "layer_slice", "class_gradients",
    "infer_label_composition", "label_composition", "l1_distance", "snr"
]

LOG_FLOOR = math.log(1e-12)  # attack features: log-probabilities clamped here (about -27.6)
_PURPOSES = {"split": "attack_split", "balance": "attack_balance", "attack": "attack_fit"}


def _generator(seed: int, purpose: str) -> torch.Generator:
    """The generator of one random choice of the attacks (:mod:`fldp.seeding`; independent
    of the engine's streams)."""
    return seeding.torch_generator(seed, _PURPOSES[purpose])


def _rows(name: str, x: torch.Tensor, y: torch.Tensor) -> None:
    if y.dim() != 1 or len(x) != len(y):
        raise ValueError(f"{name}: x has {len(x)} rows and y has shape {tuple(y.shape)}; "
                         f"{name} needs x[n, ...] and labels y[n]")


def _pair(name: str, pair) -> tuple[torch.Tensor, torch.Tensor]:
    try:
        x, y = pair
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (x[n, ...], y[n])") from None
    x, y = torch.as_tensor(x), torch.as_tensor(y).long()
    _rows(name, x, y)
    return x, y


# -- metrics -------------------------------------------------------------------------------------
def binary_metrics(pred: torch.Tensor, truth: torch.Tensor) -> dict:
    """Accuracy, precision, recall and F1 of boolean predictions against the truth ``[n]``
    (positive = member).  Precision with no positive prediction, recall with no positive
    truth, and F1 when both precision and recall are 0 are 0 (scikit-learn's
    ``zero_division=0``)."""
    pred, truth = torch.as_tensor(pred).bool().reshape(-1), torch.as_tensor(truth).bool().reshape(-1)
    if pred.shape != truth.shape or len(pred) == 0:
        raise ValueError(f"pred has shape {tuple(pred.shape)} and truth {tuple(truth.shape)}: "
                         "they need the same non-zero length")
    tp, fp, fn, correct = _counts(pred, truth, torch.zeros(len(pred), dtype=torch.long), 1)
    return {k: float(v[0]) for k, v in _scores(tp, fp, fn, correct, torch.tensor([len(pred)])).items()}


def _counts(pred, truth, group, num_groups):
    """Per group: true positives, false positives, false negatives, correct predictions."""
    count = lambda m: torch.bincount(group[m], minlength=num_groups).double()
    return count(pred & truth), count(pred & ~truth), count(~pred & truth), count(pred == truth)


def _scores(tp, fp, fn, correct, n):
    """Metrics per group from its counts (NaN for a group of ``n = 0`` rows)."""
    ratio = lambda a, b: torch.where(b > 0, a / b.clamp_min(1), torch.zeros_like(a))
    precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
    out = {"accuracy": correct / n.clamp_min(1), "precision": precision, "recall": recall,
           "f1": ratio(2 * precision * recall, precision + recall)}
    return {k: torch.where(n > 0, v, torch.full_like(v, float("nan"))) for k, v in out.items()}


# -- shadow models (Shokri et al. 2017, Sec. IV-B) -------------------------------------------
def shadow_split(x_aux: torch.Tensor, y_aux: torch.Tensor, *, num_shadows: int = 10,
                 seed: int = 0) -> tuple[FederatedData, torch.Tensor]:
    """Training sets of the shadow models (Shokri et al. 2017, Sec. IV-B): each shadow gets a
    random half (floor(n/2) rows) of the auxiliary set as its "in" set, the rest is its "out"
    set.  Returns a :class:`FederatedData` with one client per shadow model holding its "in"
    rows (test set: the whole auxiliary set) and ``in_mask[S, n]`` (True: row in the
    shadow's training set)."""
    validate.integer("num_shadows", num_shadows, 1)
    x_aux, y_aux = _pair("aux", (x_aux, y_aux))
    n = len(y_aux)
    if n < 2:
        raise ValueError(f"aux has {n} rows: shadow_split needs at least 2 (half in, half out)")
    half = n // 2
    chosen = torch.rand(num_shadows, n, generator=_generator(seed, "split")).argsort(dim=1)[:, :half]
    chosen = chosen.sort(dim=1).values  # each shadow's rows in aux order
    in_mask = torch.zeros(num_shadows, n, dtype=torch.bool).scatter_(1, chosen, True)
    rows = chosen.reshape(-1).to(x_aux.device)
    data = FederatedData(x_aux[rows], y_aux[rows], torch.full((num_shadows,), half), x_aux, y_aux)
    return data, in_mask


def train_shadows(model: Model, shadow_data: FederatedData, config: engine.FLConfig,
                  start_params: torch.Tensor, *, uplink: Optional[engine.Hook] = None,
                  t: int = 1, step: int = 0) -> torch.Tensor:
    """Train every shadow model as a client of **one** batched engine round; ``[S, D]``.

    The round starts from ``start_params`` (the global model the target client received at
    round ``t``; ``step`` is the global local-step counter for a scheduled ``lr``) and runs
    ``config`` with every client selected and no dropout.  The round's uploads are read
    *after* the uplink hook: the defence's mechanism is public, so the attacker trains its
    shadows through the same ``uplink`` (e.g. the same noise hook) to mimic the target's
    outputs (Shokri et al. 2017, Sec. IV-B: shadow models trained "in a similar way" to the
    target).  Choose a ``config.seed`` other than the target's so that the shadows' noise is
    independent of the target's.  The shadow model is the upload itself for
    ``upload="params"``, start + upload for ``"update"`` and start - lr * upload for
    ``"gradient"`` (one local step).
    """
    validate.integer("t", t, 1)
    validate.integer("step", step, 0)
    start = torch.as_tensor(start_params)
    if start.shape != (model.dim,):
        raise ValueError(f"start_params has shape {tuple(start.shape)}; the model needs [{model.dim}]")
    cfg = engine.with_config(config, clients_per_round=None, dropout=0.0)
    data = shadow_data.to(cfg.device)
    start = start.to(cfg.device)
    seen = {}
    engine.round_step(model, data, cfg, engine.State(t - 1, start, step), uplink=uplink,
                      observer=lambda ctx: seen.update(uploads=ctx.uploads))
    up = seen["uploads"]
    if cfg.upload == "params":
        return up
    if cfg.upload == "update":
        return start + up
    return start - cfg.learning_rate(step) * up


# -- attack features and the attack model (Shokri et al. 2017, Sec. IV-C) ------------------------
@torch.no_grad()
def attack_features(model: Model, params: torch.Tensor, x: torch.Tensor, *,
                    chunk: int = 256) -> torch.Tensor:
    """The attack model's input: the full, unsorted prediction vector of each row as
    log-probabilities, ``[C, B, K]`` for ``params[C, D]`` and ``x[C, B, ...]``.

    Shokri et al. (2017, Sec. IV-C) feed the attack model the target's prediction vector with
    the true class known (one attack model per class), so the vector is kept in class order,
    not sorted.  Log-probabilities (a monotone map of each coordinate, so no information is
    lost) are used instead of probabilities because a model that memorises pushes its
    confidence to 1 - 1e-6 on members and 1 - 1e-3 on non-members, a difference probabilities
    squash and logs spread out; they are clamped at log(1e-12) (``LOG_FLOOR``) so that an
    underflowed probability gives a finite input.  Rows go through the model ``chunk`` at a
    time (a CNN's activations for all C models at once are large).
    """
    validate.integer("chunk", chunk, 1)
    if params.dim() != 2 or params.shape[1] != model.dim:
        raise ValueError(f"params has shape {tuple(params.shape)}; the model needs [C, {model.dim}]")
    if x.dim() < 3 or x.shape[0] != params.shape[0]:
        raise ValueError(f"x has shape {tuple(x.shape)}: it needs x[C, B, ...] with "
                         f"C={params.shape[0]} (one batch per row of params)")
    out = [model.forward(params, x[:, a:a + chunk].to(params.device, params.dtype))
           for a in range(0, x.shape[1], chunk)]
    return torch.log_softmax(torch.cat(out, dim=1), dim=-1).clamp_min(LOG_FLOOR)


def _group(y: torch.Tensor, num_groups: int):
    """Rows grouped by label, for padded per-group tensors: (order, group, position, width)."""
    counts = torch.bincount(y, minlength=num_groups)
    order = torch.argsort(y, stable=True)
    grp = y[order]
    pos = torch.arange(len(y), device=y.device) - (torch.cumsum(counts, 0) - counts)[grp]
    return order, grp, pos, max(1, int(counts.max()))


def _padded(x: torch.Tensor, y: torch.Tensor, num_groups: int):
    """``x[n, ...]`` as ``[G, m, ...]`` (group g holds the rows with y == g, zero-padded), the
    validity mask ``[G, m]`` and the index ``(group, position)`` of each row."""
    order, grp, pos, width = _group(y, num_groups)
    out = x.new_zeros((num_groups, width, *x.shape[1:]))
    out[grp, pos] = x[order]
    mask = torch.zeros(num_groups, width, dtype=x.dtype, device=x.device)
    mask[grp, pos] = 1
    where = torch.empty(len(y), 2, dtype=torch.long, device=y.device)
    where[order] = torch.stack([grp, pos], dim=1)
    return out, mask, where


@dataclass
class AttackModel:
    """Shokri et al.'s attack models (2017, Sec. IV-C): one MLP (``hidden`` ReLU units, one
    output logit "member") per class when ``per_class``, stored as class-indexed tensors
    ``w1[G, F, H], b1[G, H], w2[G, H], b2[G]``; otherwise a single MLP (G = 1) whose input
    is the features followed by the one-hot label.  Features are standardised with the
    training set's ``mean`` and ``std``."""

    w1: torch.Tensor
    b1: torch.Tensor
    w2: torch.Tensor
    b2: torch.Tensor
    mean: torch.Tensor
    std: torch.Tensor
    per_class: bool
    num_classes: int
    train_accuracy: float = float("nan")  # on the shadow models' rows (:func:`train_attack`)

    def _inputs(self, features, y):
        z = (features - self.mean) / self.std
        if not self.per_class:
            z = torch.cat([z, F.one_hot(y, self.num_classes).to(z.dtype)], dim=1)
        return z

    def logits(self, features: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The "member" logit of each row ``[n]`` (rows of class c go to class c's model)."""
        features, y = features.to(self.w1.dtype), torch.as_tensor(y).long()
        _check_features(features, y, self.num_classes)
        groups = self.num_classes if self.per_class else 1
        z, mask, where = _padded(self._inputs(features, y), y if self.per_class else torch.zeros_like(y), groups)
        out = _mlp(self, z)  # [G, m]
        return out[where[:, 0], where[:, 1]]

    @torch.no_grad()
    def predict_proba(self, features: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Probability that each row is a member, ``[n]``."""
        return torch.sigmoid(self.logits(features, y))

    def predict(self, features: torch.Tensor, y: torch.Tensor, *, threshold: float = 0.5) -> torch.Tensor:
        """Membership guesses ``[n]`` (bool): probability >= ``threshold``."""
        validate.probability("threshold", threshold)
        return self.predict_proba(features, y) >= threshold


def _mlp(p, z):
    h = torch.relu(torch.baddbmm(p.b1.unsqueeze(1), z, p.w1))
    return torch.baddbmm(p.b2[:, None, None], h, p.w2.unsqueeze(-1)).squeeze(-1)


def _check_features(features, y, num_classes):
    if features.dim() != 2 or y.shape != (len(features),):
        raise ValueError(f"features has shape {tuple(features.shape)} and labels_y {tuple(y.shape)}: "
                         "they need features[n, K] and labels_y[n]")
    if len(y) and (int(y.min()) < 0 or int(y.max()) >= num_classes):
        raise ValueError(f"labels_y must be in [0, {num_classes - 1}] "
                         f"(got {int(y.min())}..{int(y.max())})")


def fit_attack(features: torch.Tensor, labels_y: torch.Tensor, membership: torch.Tensor, *,
               per_class: bool = True, num_classes: Optional[int] = None, hidden: int = 64,
               steps: int = 300, lr: float = 0.01, seed: int = 0) -> AttackModel:
    """Train the attack model(s) on shadow-model outputs (Shokri et al. 2017, Sec. IV-C):
    ``features[n, K]`` (:func:`attack_features`), the true class ``labels_y[n]`` and
    ``membership[n]`` (1: the row was in the shadow's training set); ``num_classes``
    defaults to K, the width of the prediction vectors.

    ``per_class``: one MLP per class, all trained at once as class-indexed weight tensors
    (rows grouped by class and padded, one batched matrix product per layer); otherwise one
    MLP with the one-hot class as extra input.  Full-batch Adam for ``steps`` steps on the
    mean binary cross-entropy of each class's model (summed over classes, so each class's
    model is trained on its own mean loss); PyTorch's default ``nn.Linear`` initialisation
    from ``seed``.
    """
    features = torch.as_tensor(features).float()
    y = torch.as_tensor(labels_y).long()
    member = torch.as_tensor(membership).reshape(-1).float()
    k = num_classes if num_classes is not None else features.shape[-1]
    validate.integer("num_classes", k, 1)
    _check_features(features, y, k)
    if member.shape != y.shape:
        raise ValueError(f"membership has shape {tuple(member.shape)}; it needs [{len(y)}] like labels_y")
    if len(y) == 0:
        raise ValueError("fit_attack needs at least one row of features")
    validate.integer("hidden", hidden, 1)
    validate.integer("steps", steps, 1)
    validate.positive("lr", lr)
    groups = k if per_class else 1
    fin = features.shape[1] + (0 if per_class else k)
    g = _generator(seed, "attack")
    uniform = lambda shape, fan: (2 * torch.rand(shape, generator=g) - 1) / math.sqrt(fan)
    mean, std = features.mean(dim=0), features.std(dim=0, correction=0).clamp_min(1e-6)
    model = AttackModel(uniform((groups, fin, hidden), fin), uniform((groups, hidden), fin),
                        uniform((groups, hidden), hidden), uniform((groups,), hidden),
                        mean, std, per_class, k)
    z, mask, where = _padded(model._inputs(features, y), y if per_class else torch.zeros_like(y), groups)
    target = torch.zeros_like(mask)
    target[where[:, 0], where[:, 1]] = member
    weight = mask / mask.sum(dim=1, keepdim=True).clamp_min(1)  # each class's mean loss
    params = [model.w1, model.b1, model.w2, model.b2]
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=lr)
    with torch.enable_grad():
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            loss = (F.binary_cross_entropy_with_logits(_mlp(model, z), target, reduction="none") * weight).sum()
            loss.backward()
            opt.step()
    for p in params:
        p.requires_grad_(False)
    return model


# -- the whole membership attack -------------------------------------------------------------
@dataclass
class MembershipResult:
    """Attack performance on a balanced set of ``num_members`` members and as many
    non-members, at threshold 0.5; per class: NaN for a class with no evaluated row.
    ``attack_train_accuracy``: the attack model's accuracy on the shadow models' data."""

    accuracy: float
    precision: float
    recall: float
    f1: float
    per_class_accuracy: list
    per_class_f1: list
    num_members: int
    num_nonmembers: int
    attack_train_accuracy: float
    fpr: float = float("nan")   # false-positive rate on the non-members (recall is the TPR)

    @property
    def empirical_eps(self) -> float:
        """:func:`empirical_eps` of this attack's (TPR, FPR) at delta = 0."""
        return empirical_eps(tpr=self.recall, fpr=self.fpr)

    def to_dict(self) -> dict:
        return asdict(self)


def _check_labels(model: Model, **pairs) -> dict:
    """Each ``name=(x, y)`` pair checked (same rows, non-empty, labels among the model's classes)."""
    out, k = {}, model.num_classes
    for name, pair in pairs.items():
        x, y = out[name] = _pair(name, pair)
        if len(y) == 0:
            raise ValueError(f"{name} is empty")
        if int(y.min()) < 0 or int(y.max()) >= k:
            raise ValueError(f"{name}: labels must be in [0, {k - 1}] (the model's classes)")
    return out


def _check_target(model: Model, target) -> torch.Tensor:
    """The attacked model's parameters as a tensor of shape [model.dim]."""
    target = torch.as_tensor(target)
    if target.shape != (model.dim,):
        raise ValueError(f"target has shape {tuple(target.shape)}; the model needs [{model.dim}]")
    return target


def train_attack(model: Model, *, aux, config: Optional[engine.FLConfig] = None,
                 start: Optional[torch.Tensor] = None, uplink: Optional[engine.Hook] = None, t: int = 1,
                 train: Optional[Callable[[FederatedData], torch.Tensor]] = None,
                 num_shadows: int = 10, per_class: bool = True, hidden: int = 64,
                 steps: int = 300, seed: int = 0) -> AttackModel:
    """Steps 1-3 of :func:`membership_attack`: the shadow models and the attack model(s)
    trained on their outputs.  One result attacks any number of targets trained the same way
    (:func:`evaluate_attack`); ``AttackModel.train_accuracy`` is its accuracy on the shadows."""
    validate.integer("num_shadows", num_shadows, 1)
    if (train is None) == (config is None):
        raise ValueError("give exactly one of train (a callable) and config (with start and uplink)")
    xa, ya = _check_labels(model, aux=aux)["aux"]
    k = model.num_classes
    shadow_data, in_mask = shadow_split(xa, ya, num_shadows=num_shadows, seed=seed)
    if train is not None:
        shadows = train(shadow_data)
    else:
        if start is None:
            start = model.init(engine.generator(seed, "init"))
        shadows = train_shadows(model, shadow_data, config, start, uplink=uplink, t=t)
    if shadows.shape != (num_shadows, model.dim):
        raise ValueError(f"the shadow models have shape {tuple(shadows.shape)}; "
                         f"expected [{num_shadows}, {model.dim}]")
    # every (shadow, aux row): in rows are members, out rows non-members
    feats = attack_features(model, shadows, xa.to(shadows.device).expand(num_shadows, *xa.shape))
    feats, fy, member = feats.reshape(-1, k).cpu(), ya.repeat(num_shadows), in_mask.reshape(-1)
    att = fit_attack(feats, fy, member, per_class=per_class, num_classes=k, hidden=hidden, steps=steps, seed=seed)
    att.train_accuracy = float((att.predict(feats, fy) == member).double().mean())
    return att


def evaluate_attack(model: Model, attack: AttackModel, target: torch.Tensor, *, members, nonmembers,
                    seed: int = 0) -> MembershipResult:
    """Step 4 of :func:`membership_attack`: ``attack`` against ``target[D]`` on ``members``
    and ``nonmembers`` (pairs ``(x, y)``), balanced by keeping a seeded random subset of the
    larger one of the size of the smaller; threshold 0.5."""
    target = _check_target(model, target)
    pairs = _check_labels(model, members=members, nonmembers=nonmembers)
    (xm, ym), (xn, yn) = pairs["members"], pairs["nonmembers"]
    k = model.num_classes
    n = min(len(ym), len(yn))
    g = _generator(seed, "balance")
    keep_m, keep_n = torch.randperm(len(ym), generator=g)[:n], torch.randperm(len(yn), generator=g)[:n]
    x_eval = torch.cat([xm[keep_m.to(xm.device)], xn[keep_n.to(xn.device)].to(xm.device)])
    y_eval = torch.cat([ym[keep_m], yn[keep_n]])
    truth = torch.cat([torch.ones(n, dtype=torch.bool), torch.zeros(n, dtype=torch.bool)])
    tf = attack_features(model, target.reshape(1, -1), x_eval.to(target.device)[None])[0].cpu()
    pred = attack.predict(tf, y_eval)
    overall = binary_metrics(pred, truth)
    per = _scores(*_counts(pred, truth, y_eval, k), torch.bincount(y_eval, minlength=k).double())
    return MembershipResult(**overall, per_class_accuracy=per["accuracy"].tolist(),
                            per_class_f1=per["f1"].tolist(), num_members=n, num_nonmembers=n,
                            attack_train_accuracy=attack.train_accuracy, fpr=float((pred & ~truth).sum()) / n)


def membership_attack(model: Model, target: torch.Tensor, *, members, nonmembers, aux,
                      config: Optional[engine.FLConfig] = None, start: Optional[torch.Tensor] = None,
                      uplink: Optional[engine.Hook] = None, t: int = 1,
                      train: Optional[Callable[[FederatedData], torch.Tensor]] = None,
                      num_shadows: int = 10, per_class: bool = True, hidden: int = 64,
                      steps: int = 300, seed: int = 0) -> MembershipResult:
    """Shokri et al.'s (2017) shadow-model membership inference against ``target[D]``.

    1. Split ``aux = (x, y)`` into ``num_shadows`` in/out halves (:func:`shadow_split`).
    2. Train the shadows like the target was trained: ``config`` from ``start`` (default: the
       model's initialisation from ``seed``) through ``uplink`` at round ``t``, as one engine
       round (:func:`train_shadows`); or any ``train(shadow_data) -> params[S, D]``.
    3. Fit the attack model(s) on the shadows' outputs on their in and out rows (:func:`fit_attack`).
    4. Attack the target on ``members`` and ``nonmembers`` (pairs ``(x, y)``), balanced by
       keeping a seeded random subset of the larger one of the size of the smaller.

    Steps 1-3 are :func:`train_attack`, step 4 :func:`evaluate_attack` (call them apart to
    attack several targets with one set of shadows).  Returns a :class:`MembershipResult`
    (threshold 0.5).  The adaptive-noise paper runs it with 10 shadow models on 3,000 auxiliary
    samples and reports accuracy and F1 on a balanced set of members and non-members.
    Example::

        res = attacks.membership_attack(model, w_target, members=(x_in, y_in),
                                        nonmembers=(x_out, y_out), aux=(x_aux, y_aux),
                                        config=cfg, start=w_global, uplink=hook, seed=0)
    """
    target = _check_target(model, target)
    _check_labels(model, members=members, nonmembers=nonmembers)
    att = train_attack(model, aux=aux, config=config, start=start, uplink=uplink, t=t, train=train,
                       num_shadows=num_shadows, per_class=per_class, hidden=hidden, steps=steps, seed=seed)
    return evaluate_attack(model, att, target, members=members, nonmembers=nonmembers, seed=seed)


def empirical_eps(*, tpr: float, fpr: float, delta: float = 0.0) -> float:
    """The eps an attack's operating point rules out: an (eps, delta)-DP mechanism forces
    TPR <= e^eps FPR + delta and 1 - FPR <= e^eps (1 - TPR) + delta (Kairouz et al. 2015), so
    eps >= max(log((TPR - delta) / FPR), log((1 - FPR - delta) / (1 - TPR))), floored at 0.
    A point estimate (no confidence interval): a sign of leakage, not a certified bound."""
    tpr, fpr = validate.probability("tpr", tpr), validate.probability("fpr", fpr)
    delta = validate.probability("delta", delta)
    ratio = lambda a, b: math.inf if b <= 0 and a > 0 else (0.0 if a <= 0 else math.log(a / b))
    return max(0.0, ratio(tpr - delta, fpr), ratio(1 - fpr - delta, 1 - tpr))


# -- label composition (Wang et al. 2019) -------------------------------------------------------
def layer_slice(model: Model, layers: Optional[Sequence[str]] = None) -> torch.Tensor:
    """Flat positions ``[d]`` (in the model's order) of the parameters named ``layers``
    (keys of ``model.shapes``; None: every parameter).  Index an update with
    ``update[:, layer_slice(model, ["w2", "b2"])]``."""
    if layers is None:
        return torch.arange(model.dim)
    if isinstance(layers, str):
        layers = [layers]
    if len(layers) == 0:
        raise ValueError(f"layers is empty: name some of {list(model.shapes)} or pass None for all")
    for name in layers:
        validate.choice("layers", name, model.shapes)
    return torch.cat([torch.arange(*model._offsets[n]) for n in model.shapes if n in set(layers)])


def class_gradients(model: Model, params: torch.Tensor, x_aux: torch.Tensor, y_aux: torch.Tensor, *,
                    num_classes: Optional[int] = None,
                    layers: Optional[Sequence[str]] = None) -> torch.Tensor:
    """g_j, the mean gradient of the loss over the auxiliary samples of class j at ``params[D]``,
    ``[C, d]`` (Wang et al. 2019, Sec. III-B: the attacker's estimate of each class's
    gradient at the global model).  All classes in one engine gradient: the auxiliary rows
    are grouped by class into padded client rows, with a mask.  ``layers`` restricts to
    some parameters (:func:`layer_slice`), e.g. the last layer, where the label information
    lives.  Every class needs at least one auxiliary sample."""
    params = torch.as_tensor(params)
    if params.shape != (model.dim,):
        raise ValueError(f"params has shape {tuple(params.shape)}; the model needs [{model.dim}]")
    x_aux, y_aux = _pair("aux", (x_aux, y_aux))
    c = validate.integer("num_classes", num_classes if num_classes is not None else model.num_classes, 1)
    if len(y_aux) == 0 or int(y_aux.min()) < 0 or int(y_aux.max()) >= c:
        raise ValueError(f"y_aux must be non-empty with labels in [0, {c - 1}]")
    missing = (torch.bincount(y_aux, minlength=c) == 0).nonzero().reshape(-1).tolist()
    if missing:
        raise ValueError(f"y_aux has no sample of class(es) {missing}: class_gradients needs "
                         "at least one auxiliary sample of every class")
    xg, mask, _ = _padded(x_aux.to(params.device, params.dtype), y_aux.to(params.device), c)
    yg = torch.arange(c, device=params.device)[:, None].expand(mask.shape)
    grads = engine.gradient(model, params.expand(c, -1), xg, yg.contiguous(), mask)
    return grads[:, layer_slice(model, layers).to(grads.device)]


def infer_label_composition(updates: torch.Tensor, basis: torch.Tensor, *,
                            upload: str = "update") -> torch.Tensor:
    """Each client's label proportions ``[K, C]`` from its uploads ``updates[K, d]`` and the
    class gradients ``basis[C, d]`` (:func:`class_gradients`; same coordinates).

    Wang et al. 2019, Sec. III: one full-batch gradient step gives
    Delta w = -lr sum_j pi_j g_j, so -Delta w = basis^T a with a = lr pi >= 0.  The unknown lr
    is absorbed in a free non-negative scale: solve min ||basis^T a + Delta w|| over a >= 0
    and return a / sum(a) (uniform when a = 0).  ``upload="gradient"``: the uploads are
    gradients (sum_j pi_j g_j, no minus sign).

    Method: the d-dimensional work is batched, one reduced QR basis^T = Q R and one product
    (-Delta w) Q for all clients, which reduces each client's problem to the C x C
    problem min ||R a - Q^T v|| (the same minimiser); that is solved exactly by scipy's
    active-set NNLS (Lawson-Hanson) in microseconds.  An exact solver needs no step size or
    iteration count, unlike projected gradient, whose convergence depends on the
    conditioning of the class gradients (often poor: they share most of their direction).
    """
    from scipy.optimize import nnls

    validate.choice("upload", upload, ("update", "gradient"))
    updates, basis = torch.as_tensor(updates), torch.as_tensor(basis)
    if basis.dim() != 2:
        raise ValueError(f"basis has shape {tuple(basis.shape)}; it needs basis[C, d]")
    if updates.dim() != 2 or updates.shape[1] != basis.shape[1]:
        raise ValueError(f"updates has shape {tuple(updates.shape)}; it needs updates[K, {basis.shape[1]}] "
                         f"(the coordinates of basis[{basis.shape[0]}, {basis.shape[1]}])")
    q, r = torch.linalg.qr(basis.detach().double().cpu().T)  # [d, r], [r, C]
    v = (-1.0 if upload == "update" else 1.0) * updates.detach().double().cpu()
    rhs = (v @ q).numpy()
    rm = r.numpy()
    a = torch.from_numpy(np.stack([nnls(rm, b)[0] for b in rhs])) if len(rhs) else torch.zeros(0, basis.shape[0])
    total = a.sum(dim=1, keepdim=True)
    uniform = torch.full_like(a, 1.0 / basis.shape[0])
    return torch.where(total > 0, a / total.clamp_min(1e-300), uniform).to(torch.float32)


def label_composition(labels: Union[FederatedData, Sequence[torch.Tensor]], *,
                      num_classes: Optional[int] = None) -> torch.Tensor:
    """True label proportions ``[K, C]`` of each client: of a :class:`FederatedData`'s
    clients, or of one label tensor per client.  ``num_classes`` defaults to the largest
    label + 1.  (From counts ``c[K, C]``: ``c / c.sum(1, keepdim=True)``.)"""
    if isinstance(labels, FederatedData):
        y, counts = labels.y_train.cpu().long(), labels.counts
    else:
        labels = [torch.as_tensor(v).reshape(-1).long().cpu() for v in labels]
        if not labels or any(len(v) == 0 for v in labels):
            raise ValueError("labels needs at least one client, each with at least one label")
        y, counts = torch.cat(labels), torch.tensor([len(v) for v in labels])
    c = validate.integer("num_classes", num_classes if num_classes is not None else int(y.max()) + 1, 1)
    if int(y.min()) < 0 or int(y.max()) >= c:
        raise ValueError(f"labels must be in [0, {c - 1}] (num_classes={c})")
    client = torch.repeat_interleave(torch.arange(len(counts)), counts)
    table = torch.bincount(client * c + y, minlength=len(counts) * c).view(len(counts), c).float()
    return table / counts[:, None].float()


def l1_distance(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """``sum_j |p_j - q_j|`` per row, ``[K]`` (Wang et al. 2019's error of an inferred composition;
    0 to 2 between distributions)."""
    p, q = torch.as_tensor(p), torch.as_tensor(q)
    if p.shape != q.shape:
        raise ValueError(f"p has shape {tuple(p.shape)} and q {tuple(q.shape)}: they need the same shape")
    return (p - q).abs().sum(dim=-1)


# -- signal-to-noise ratio (adaptive-noise paper, Sec. 6.2) ----------------------------------
def snr(clean: torch.Tensor, noisy: torch.Tensor) -> torch.Tensor:
    """SNR of each upload, ``[K]`` for ``[K, D]`` (a scalar for ``[D]``): the variance of the
    clean upload's coordinates over the variance of the noise's, noise = noisy - clean
    (adaptive-noise paper, Sec. 6.2: "variance of actual data / variance of noise").  With an
    observer: ``snr(ctx.clean, ctx.uploads)``.  Variances over the D coordinates (the
    normalisation cancels in the ratio); inf where the noise is 0."""
    clean, noisy = torch.as_tensor(clean), torch.as_tensor(noisy)
    if clean.shape != noisy.shape or clean.dim() not in (1, 2):
        raise ValueError(f"clean has shape {tuple(clean.shape)} and noisy {tuple(noisy.shape)}: "
                         "they need the same shape, [K, D] or [D]")
    if clean.shape[-1] < 2:
        raise ValueError("snr needs at least 2 coordinates per upload (a variance over coordinates)")
    clean64, noise = clean.double(), noisy.double() - clean.double()
    var_s, var_n = clean64.var(dim=-1, correction=0), noise.var(dim=-1, correction=0)
    out = torch.where(var_n > 0, var_s / var_n.clamp_min(1e-300), torch.full_like(var_s, math.inf))
    return out.to(clean.dtype if clean.is_floating_point() else torch.float32)

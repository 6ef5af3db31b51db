"""The papers' models, written once for many clients at a time.  Every model keeps its parameters
as one flat tensor with a leading *client* dimension, ``params[C, D]`` (client ``i`` owns row
``i``), and ``forward(params, x)`` takes a batch per client, ``x[C, B, ...]``, and returns
``[C, B, out]`` with batched matrix products (``torch.baddbmm``) or grouped convolutions, so that
local training of all clients is one tensor computation and clipping, noise and aggregation are
row operations.  The classes: :class:`MLP` 784-256-10 (Wei et al. 2020, Sec. VI),
:class:`MultinomialLogReg` with 7,840 weights and no bias (Zhou et al., Sec. VI),
:class:`BinaryLogReg` with an L2 penalty (Li, Chang & Chi 2020, Sec. 5) and :class:`CNN`, two
convolutional and two fully connected layers (the adaptive CLT noise paper, Sec. 5).  A paper's configuration of a
shared class lives in the paper's home (Zhou et al.'s FEMNIST CNN of 110,526 parameters:
:func:`fldp.papers.zhou.algorithm.femnist_cnn`; Li et al.'s regulariser, bias outside the norm:
:func:`fldp.papers.li2021.algorithm.logreg`).  The two logistic regressions also give closed-form
gradients (:meth:`Model.grad`), which the engine uses instead of autograd for speed.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from fldp import validate

__all__ = [
    "Model", "MLP", "MultinomialLogReg", "BinaryLogReg", "CNN", "sample_weights", "MODELS",
    "make_model"
]


class Model:
    """Base class: parameter layout, initialisation, loss and evaluation.

    Subclasses set ``self.shapes`` (name -> shape, in order) and implement ``forward``.
    """

    shapes: dict[str, tuple[int, ...]]
    num_classes: int

    def __init__(self) -> None:
        self._offsets: dict[str, tuple[int, int]] = {}
        start = 0
        for name, shape in self.shapes.items():
            size = math.prod(shape)
            self._offsets[name] = (start, start + size)
            start += size
        self.dim = start

    # -- work ---------------------------------------------------------------------------
    def layer_flops(self) -> list[int]:
        """Forward FLOPs per sample of each layer, input to output (one multiply-add = 2
        FLOPs).  Default: one dense layer, 2 per parameter (the logistic regressions)."""
        return [2 * self.dim]

    def flops_per_sample(self, *, train: bool) -> int:
        """FLOPs per sample of a forward pass, or (``train=True``) of forward + backward: the
        weight gradient costs a forward again, the input gradient too except for the first
        layer's (not needed), so 3 x forward - first layer (MLP 784-256-10: 818,176;
        ``benchmarks/README``).  The cost model of ``fldp.repro.cost`` counts the engine's work in these."""
        layers = self.layer_flops()
        return 3 * sum(layers) - layers[0] if train else sum(layers)

    # -- layout -------------------------------------------------------------------------
    def unflatten(self, params: torch.Tensor) -> dict[str, torch.Tensor]:
        """Views of ``params[C, D]`` as ``{name: [C, *shape]}`` (no copy)."""
        c = params.shape[0]
        return {n: params[:, a:b].view(c, *self.shapes[n]) for n, (a, b) in self._offsets.items()}

    def init(self, generator: torch.Generator) -> torch.Tensor:
        """One model's parameters ``[D]``, PyTorch's default ``nn.Linear``/``nn.Conv2d`` init:
        weights and biases ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        parts = []
        for name, shape in self.shapes.items():
            fan_in = self._fan_in(name, shape)
            bound = 1.0 / math.sqrt(fan_in)
            u = torch.rand(math.prod(shape), generator=generator, dtype=torch.float32)
            parts.append((2 * u - 1) * bound)
        return torch.cat(parts)

    def _fan_in(self, name: str, shape: tuple[int, ...]) -> int:
        raise NotImplementedError

    # -- computation --------------------------------------------------------------------
    def forward(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def per_sample_loss(self, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Loss of each sample, ``[C, B]``."""
        logits = self.forward(params, x)
        c, b, k = logits.shape
        return F.cross_entropy(logits.reshape(c * b, k), y.reshape(c * b), reduction="none").view(c, b)

    def regulariser(self, params: torch.Tensor) -> torch.Tensor:
        """Per-client penalty added to the empirical loss, ``[C]`` (0 unless overridden)."""
        return params.new_zeros(params.shape[0])

    def loss(self, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
             mask: torch.Tensor | None = None, weights: torch.Tensor | None = None) -> torch.Tensor:
        """Mean loss per client over the valid samples of its batch, ``[C]``.

        ``mask[C, B]`` (0/1) marks valid samples when clients hold unequal amounts of data;
        ``weights[C, B]`` replaces the mean by sum_b weights_b loss_b (e.g. 1/(q d_i) under
        Poisson sampling, where the batch size is random).
        """
        per = self.per_sample_loss(params, x, y)
        data = (per * sample_weights(mask, weights, *per.shape, per.dtype, per.device)).sum(dim=1)
        return data + self.regulariser(params)

    def grad(self, params, x, y, mask=None):
        """Gradient of :meth:`loss` per client, ``[C, D]``, by the closed form
        :meth:`weighted_grad` (models without one: use :func:`fldp.engine.gradient`).  The
        engine uses it instead of autograd where a model has it (the two logistic regressions):
        that removes most of the per-step overhead in the tiny-model regimes of Zhou and Li."""
        return self.weighted_grad(params, x, y, sample_weights(mask, None, *y.shape, params.dtype, params.device))

    # optional fused step: sgd_step_(params, anchor, x, y, weights, lr, mu) updates params in
    # place by one unclipped SGD step (the engine uses it when no gradient clipping applies)
    sgd_step_ = None

    # optional: weighted_grad_runs(params[C, R, D], x, y, weights, clip=None, ord=2) -> [C, R, D],
    # weighted_grad of R models per client on one batch, the same numbers (fldp.engine.run_many)
    weighted_grad_runs = None

    # optional closed form: weighted_grad(params, x, y, weights, clip=None, ord=2) -> [C, D]
    #   = sum_b weights_b clip(g_b) + grad regulariser, g_b the gradient of sample b's loss and
    #   clip(g) = g / max(1, ||g||_ord / clip) (per-sample clipping; the regulariser, which
    #   does not depend on the data, is not clipped).
    weighted_grad = None

    @torch.no_grad()
    def evaluate(self, params: torch.Tensor, x: torch.Tensor, y: torch.Tensor,
                 chunk: int = 20000) -> tuple[float, float]:
        """(mean loss, accuracy) of one model ``params[D]`` on ``(x, y)``.

        The loss includes the regulariser, i.e. it is the objective F(w) the papers bound.
        Every model's ``forward`` returns class logits, so the loss is the cross-entropy of
        those (for :class:`BinaryLogReg`, logits (0, z) make it exactly the logistic loss).
        """
        p = params.reshape(1, -1)
        total_loss, correct = 0.0, 0
        for s in range(0, len(y), chunk):  # one forward pass gives both loss and accuracy
            logits = self.forward(p, x[s:s + chunk].unsqueeze(0))[0]
            yb = y[s:s + chunk]
            total_loss += float(F.cross_entropy(logits, yb, reduction="sum"))
            correct += int((logits.argmax(dim=-1) == yb).sum())
        n = len(y)
        return total_loss / n + float(self.regulariser(p)[0]), correct / n

    def predict(self, params: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.forward(params, x).argmax(dim=-1)


class MLP(Model):
    """Wei et al. 2020, Sec. VI: one hidden layer of 256 ReLU units, softmax over 10 classes."""

    def __init__(self, in_features: int = 784, hidden: int = 256, num_classes: int = 10):
        self.num_classes = num_classes
        self.shapes = {"w1": (in_features, hidden), "b1": (hidden,),
                       "w2": (hidden, num_classes), "b2": (num_classes,)}
        super().__init__()

    def _fan_in(self, name, shape):
        return {"w1": shape[0], "b1": self.shapes["w1"][0], "w2": shape[0], "b2": self.shapes["w2"][0]}[name]

    def layer_flops(self):
        (a, h), (_, o) = self.shapes["w1"], self.shapes["w2"]
        return [2 * (a * h + h), 2 * (h * o + o)]

    def forward(self, params, x):
        p = self.unflatten(params)
        h = torch.relu(torch.baddbmm(p["b1"].unsqueeze(1), x, p["w1"]))
        return torch.baddbmm(p["b2"].unsqueeze(1), h, p["w2"])

    def weighted_grad(self, params, x, y, weights, clip=None, ord=2, x_norm=None):
        """Closed-form backward pass (the chain rule written out; tested against autograd).

        About 3x faster than autograd here, because autograd through views of the flat
        parameter rows allocates and sums a full ``[C, D]`` zero gradient per slice.
        Sample b's gradient is (x_b dh_b^T, dh_b, h_b r_b^T, r_b), so its norm follows from
        the norms of x_b, h_b, r_b, dh_b without forming it (the "ghost clipping" identity
        ||u v^T|| = ||u|| ||v||, exact for l2 and l1); clipping then rescales r_b and dh_b.
        """
        p = self.unflatten(params)
        c, b, _ = x.shape
        h = torch.baddbmm(p["b1"].unsqueeze(1), x, p["w1"]).relu_()  # in place: fewer [C, B, H] temporaries
        r = _softmax_residual(torch.baddbmm(p["b2"].unsqueeze(1), h, p["w2"]), y)
        dh = torch.bmm(r, p["w2"].transpose(1, 2)).mul_(h > 0)
        if clip is not None:
            n = lambda v: torch.linalg.vector_norm(v, ord=ord, dim=-1)
            nx, ndh, nh, nr = n(x) if x_norm is None else x_norm, n(dh), n(h), n(r)
            norm = (nx * ndh + ndh + nh * nr + nr) if ord == 1 else \
                torch.sqrt((nx ** 2 + 1) * ndh ** 2 + (nh ** 2 + 1) * nr ** 2)
            weights = weights * _clip_factor(norm, clip)
        wt = weights.unsqueeze(-1)
        r, dh = r.mul_(wt), dh.mul_(wt)
        return torch.cat([torch.bmm(x.transpose(1, 2), dh).reshape(c, -1), dh.sum(dim=1),
                          torch.bmm(h.transpose(1, 2), r).reshape(c, -1), r.sum(dim=1)], dim=1)


    def sgd_step_(self, params, anchor, x, y, weights, lr, mu=0.0):
        """One SGD step in place, fused: params <- params - lr (g + mu (params - anchor)), g
        the weighted gradient of :meth:`weighted_grad` (no clipping) at the current params.
        The gradient is never formed: each layer's update is one ``baddbmm_`` into its view
        of ``params`` (no [C, D] gradient, no concatenation; benchmarks/)."""
        p = self.unflatten(params)
        h = torch.baddbmm(p["b1"].unsqueeze(1), x, p["w1"]).relu_()
        r = _softmax_residual(torch.baddbmm(p["b2"].unsqueeze(1), h, p["w2"]), y)
        dh = torch.bmm(r, p["w2"].transpose(1, 2)).mul_(h > 0)
        wt = weights.unsqueeze(-1)
        r.mul_(wt), dh.mul_(wt)
        if mu:  # the proximal pull, from the params the gradient was taken at
            params.mul_(1 - lr * mu).add_(anchor, alpha=lr * mu)
        p["w1"].baddbmm_(x.transpose(1, 2), dh, alpha=-lr)
        p["b1"].add_(dh.sum(dim=1), alpha=-lr)
        p["w2"].baddbmm_(h.transpose(1, 2), r, alpha=-lr)
        p["b2"].add_(r.sum(dim=1), alpha=-lr)
        return params


class MultinomialLogReg(Model):
    """Zhou et al., Sec. VI: softmax regression on MNIST, 784 x 10 = 7,840 weights, no bias."""

    def __init__(self, in_features: int = 784, num_classes: int = 10, bias: bool = False):
        self.num_classes = num_classes
        self.bias = bias
        self.shapes = {"w": (in_features, num_classes)}
        if bias:
            self.shapes["b"] = (num_classes,)
        super().__init__()

    def _fan_in(self, name, shape):
        return self.shapes["w"][0]

    def forward(self, params, x):
        p = self.unflatten(params)
        out = torch.bmm(x, p["w"])
        return out + p["b"].unsqueeze(1) if self.bias else out

    def weighted_grad(self, params, x, y, weights, clip=None, ord=2, x_norm=None):
        """Closed form X^T diag(weights) (softmax(XW) - onehot(y)).  Sample b's gradient is
        x_b r_b^T (and r_b for the bias): its norm is ||x_b|| ||r_b|| (l2 and l1 alike).
        ``x_norm``: the rows' norms when known (:meth:`fldp.data.FederatedData.gather_norms`)."""
        c = x.shape[0]
        r = _softmax_residual(self.forward(params, x), y)
        if clip is not None:
            nx = torch.linalg.vector_norm(x, ord=ord, dim=-1) if x_norm is None else x_norm
            nr = torch.linalg.vector_norm(r, ord=ord, dim=-1)
            norm = nr * ((nx + 1) if ord == 1 else torch.sqrt(nx ** 2 + 1)) if self.bias else nr * nx
            weights = weights * _clip_factor(norm, clip)
        r = r * weights.unsqueeze(-1)
        # (r^T x)^T, not x^T r: the skinny product reads x row-major (5x faster on CPU)
        parts = [torch.bmm(r.transpose(1, 2), x).transpose(1, 2).reshape(c, -1)]
        if self.bias:
            parts.append(r.sum(dim=1))
        return torch.cat(parts, dim=1)

    def weighted_grad_runs(self, params, x, y, weights, clip=None, ord=2, x_norm=None):
        """:meth:`weighted_grad` of R models per client on the client's one batch:
        ``params[C, R, D]`` -> ``[C, R, D]``, the numbers of R separate calls.  The R weight
        matrices sit side by side, so each product reads the batch once, R times as wide.  Whether
        the wider product sums in the same order is the math library's choice per shape (on the
        machines measured: yes for MNIST's 784 x 10, not for some tiny ones, nor for a batch of
        one row), so :func:`runs_checked` computes the first batch of every shape both ways."""
        wide = (lambda: self._wide_grad(params, x, y, weights, clip, ord, x_norm)) \
            if not self.bias and x.shape[1] > 1 else None
        return runs_checked(self, wide, params, x, y, weights, clip, ord, x_norm)

    def _wide_grad(self, params, x, y, weights, clip, ord, x_norm):
        c, n_runs, dim = params.shape
        b, k, f = x.shape[1], self.num_classes, self.shapes["w"][0]
        wide = params.view(c, n_runs, f, k).permute(0, 2, 1, 3).reshape(c, f, n_runs * k)
        r = torch.softmax(torch.bmm(x, wide).view(c, b, n_runs, k), dim=-1)  # [C, B, R, K]
        r.scatter_add_(3, y[:, :, None, None].expand(c, b, n_runs, 1),
                       torch.full((c, b, n_runs, 1), -1.0, dtype=r.dtype, device=r.device))
        w = weights.unsqueeze(-1)
        if clip is not None:
            nx = torch.linalg.vector_norm(x, ord=ord, dim=-1) if x_norm is None else x_norm
            w = w * _clip_factor(torch.linalg.vector_norm(r, ord=ord, dim=-1) * nx.unsqueeze(-1), clip)
        r = r * w.expand(c, b, n_runs).unsqueeze(-1)
        g = torch.bmm(r.view(c, b, n_runs * k).transpose(1, 2), x)  # [C, R K, F]
        return g.view(c, n_runs, k, f).transpose(2, 3).reshape(c, n_runs, dim)


#: Per model class and shape of ``weighted_grad_runs``' arguments (clients, rows, runs,
#: parameters, clipped, norm, device, dtype): whether its batched computation gave each run's own
#: numbers on this machine (:func:`runs_checked`, on the first batch of that shape in this process).
RUNS_TOGETHER: dict = {}


def runs_checked(model: Model, together, params, x, y, weights, clip, ord, x_norm):
    """``weighted_grad_runs``: ``together()`` (R models' gradients in one batched computation)
    where it is known to give the numbers of R separate :meth:`Model.weighted_grad` calls for
    this shape, else those R calls; the first batch of a shape is computed both ways and
    compared (:data:`RUNS_TOGETHER`), so a machine whose library sums a shape in another order
    loses the speed, never the numbers.  ``together=None``: always R calls."""
    c, n_runs, dim = params.shape
    key = (type(model).__name__, c, x.shape[1], n_runs, dim, clip is None, ord, str(x.device), x.dtype)
    known = RUNS_TOGETHER.get(key) if together is not None else False
    if known:
        return together()
    alone = torch.stack([model.weighted_grad(params[:, j].contiguous(), x, y, weights, clip, ord, x_norm=x_norm)
                         for j in range(n_runs)], dim=1)
    if known is None:
        RUNS_TOGETHER[key] = bool(torch.equal(together(), alone))
    return alone


class BinaryLogReg(Model):
    """L2-regularised binary logistic regression (Li, Chang, Chi 2020, Sec. 4.1).

    Labels are 0/1; the loss is log(1 + exp(-s z)) with s = 2y - 1 and z = x^T w + b, plus
    ``l2_scale * l2 * ||.||^2`` over w, and over the bias too when ``penalize_bias``.  The
    default (lambda/2 ||(w, b)||^2) is the textbook form.  Li et al. write
    ``lambda ||w||^2`` with the bias b outside the norm (their y_hat = 1/(1 + exp(-w^T x + b))
    only flips b's sign): :func:`fldp.papers.li2021.algorithm.logreg` builds that model
    (``l2_scale=1``, ``penalize_bias=False``), whose strong convexity from the regulariser is 2 lambda.
    """

    def __init__(self, in_features: int, l2: float = 1e-4, bias: bool = True, *,
                 l2_scale: float = 0.5, penalize_bias: bool = True):
        self.num_classes = 2
        self.l2 = validate.nonnegative("l2", l2)
        self.l2_scale = validate.positive("l2_scale", l2_scale)
        self.bias = bias
        self.penalize_bias = bool(penalize_bias)
        self.shapes = {"w": (in_features,)}
        if bias:
            self.shapes["b"] = (1,)
        super().__init__()
        mask = torch.ones(self.dim)
        if bias and not self.penalize_bias:
            mask[-1] = 0.0
        self._penalty = mask  # the coordinates the regulariser covers

    @property
    def strong_convexity(self) -> float:
        """The regulariser's modulus of strong convexity, 2 l2_scale l2 (over the penalised
        coordinates; the loss itself adds curvature along the data's span)."""
        return 2.0 * self.l2_scale * self.l2

    def _fan_in(self, name, shape):
        return self.shapes["w"][0]

    def init(self, generator):
        return torch.zeros(self.dim)  # convex problem: start at the origin, as is customary

    def margin(self, params, x):
        p = self.unflatten(params)
        z = torch.bmm(x, p["w"].unsqueeze(-1)).squeeze(-1)
        return z + p["b"] if self.bias else z

    def forward(self, params, x):
        z = self.margin(params, x)
        return torch.stack([torch.zeros_like(z), z], dim=-1)  # logits of (class 0, class 1)

    def per_sample_loss(self, params, x, y):
        return F.binary_cross_entropy_with_logits(self.margin(params, x), y.to(x.dtype), reduction="none")

    def regulariser(self, params):
        pen = self._penalty.to(params.device, params.dtype)
        return self.l2_scale * self.l2 * (params * params * pen).sum(dim=1)

    def weighted_grad(self, params, x, y, weights, clip=None, ord=2, x_norm=None):
        """Closed form sum_b weights_b (sigmoid(z_b) - y_b) (x_b, 1) + lambda w; sample b's
        data gradient has norm ``|r_b| ||(x_b, 1)||``.  The regulariser is not clipped.
        ``x_norm``: the rows' norms when known."""
        r = torch.sigmoid(self.margin(params, x)) - y.to(x.dtype)
        if clip is not None:
            nx = torch.linalg.vector_norm(x, ord=ord, dim=-1) if x_norm is None else x_norm
            nx = ((nx + 1) if ord == 1 else torch.sqrt(nx ** 2 + 1)) if self.bias else nx
            weights = weights * _clip_factor(r.abs() * nx, clip)
        r = r * weights
        parts = [torch.bmm(r.unsqueeze(1), x).squeeze(1)]
        if self.bias:
            parts.append(r.sum(dim=1, keepdim=True))
        pen = self._penalty.to(params.device, params.dtype)
        return torch.cat(parts, dim=1) + self.strong_convexity * params * pen


class CNN(Model):
    """Two conv layers (each followed by ReLU and 2x2 max-pooling), then fully connected
    layers; all clients run as one grouped convolution (``groups = C``).

    * Default, adaptive CLT noise paper, Sec. 5: 5x5 convolutions without padding (32, 64
      channels), one hidden layer of 512 ReLU units, 10 outputs.  The paper gives the layer
      types but not the widths; these are McMahan et al.'s (2017) MNIST CNN widths.
    * :func:`fldp.papers.zhou.algorithm.femnist_cnn`, Zhou et al., Sec. VII-A: 5x5 'same' convolutions with 16 and 32
      channels (416 and 12,832 parameters), no hidden layer, one output layer of
      1,569 x 62 = 97,278 parameters: 110,526 in all.

    ``hidden=None`` leaves out the hidden layer (the last conv features feed the output
    layer directly).  ``padding``: ``"valid"`` (none; 28 -> 24 -> 12 -> 8 -> 4 for 5x5) or
    ``"same"`` (28 -> 28 -> 14 -> 14 -> 7).  Inputs are flat rows of ``in_channels x
    image_size x image_size`` values.  Parameter names: ``conv1, cb1, conv2, cb2``, then
    ``fc1, fb1`` (and ``fc2, fb2`` with a hidden layer), in that order in the flat vector.
    """

    PADDINGS = ("valid", "same")

    def __init__(self, channels: tuple[int, int] = (32, 64), hidden: int | None = 512,
                 num_classes: int = 10, *, kernel_size: int = 5, padding: str = "valid",
                 in_channels: int = 1, image_size: int = 28):
        c1, c2 = (validate.integer("channels", c, 1) for c in channels)
        k = self.kernel_size = validate.integer("kernel_size", kernel_size, 1)
        self.padding = validate.choice("padding", padding, self.PADDINGS)
        self.in_channels = validate.integer("in_channels", in_channels, 1)
        self.image_size = validate.integer("image_size", image_size, 1)
        self.num_classes = validate.integer("num_classes", num_classes, 1)
        self.hidden = None if hidden is None else validate.integer("hidden", hidden, 1)
        side = self.image_size
        for _ in range(2):  # conv (shrinks by k - 1 without padding), then 2x2 max-pool
            side = (side if padding == "same" else side - k + 1) // 2
            if side < 1:
                raise ValueError(f"image_size={image_size} is too small for two {k}x{k} "
                                 f"convolutions with padding={padding!r} and 2x2 pooling")
        self.features = c2 * side * side  # inputs of the first fully connected layer
        self.shapes = {"conv1": (c1, self.in_channels, k, k), "cb1": (c1,),
                       "conv2": (c2, c1, k, k), "cb2": (c2,)}
        widths = [self.features] + ([] if self.hidden is None else [self.hidden]) + [self.num_classes]
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:]), start=1):
            self.shapes[f"fc{i}"], self.shapes[f"fb{i}"] = (a, b), (b,)
        self._fc = len(widths) - 1  # number of fully connected layers (1 or 2)
        super().__init__()

    def layer_flops(self):
        s, k, side, out = self.shapes, self.kernel_size, self.image_size, []
        for w in ("conv1", "conv2"):  # 2 k^2 c_in c_out per output pixel (and the bias)
            side = side if self.padding == "same" else side - k + 1
            c_out, c_in = s[w][:2]
            out.append(2 * (k * k * c_in + 1) * c_out * side * side)
            side //= 2
        return out + [2 * (a * b + b) for a, b in (s[f"fc{i}"] for i in range(1, self._fc + 1))]

    def _fan_in(self, name, shape):
        s = self.shapes
        if name in ("conv1", "cb1", "conv2", "cb2"):
            w = s["conv" + name[-1]]
            return w[1] * w[2] * w[3]
        return s["fc" + name[-1]][0]

    def forward(self, params, x):
        p = self.unflatten(params)
        c, b = x.shape[:2]
        ch, side = self.in_channels, self.image_size
        h = x.reshape(c, b, ch, side, side).transpose(0, 1).reshape(b, c * ch, side, side)
        k = self.kernel_size
        pad = 0 if self.padding == "valid" else ((k - 1) // 2 if k % 2 else "same")
        for w, bias in (("conv1", "cb1"), ("conv2", "cb2")):
            if w == "conv1" and c > 1:  # one conv2d per client (benchmarks/README: grouped is 3x slower here)
                h = h.reshape(b, c, ch, side, side)
                h = torch.cat([F.conv2d(h[:, i], p[w][i], p[bias][i], padding=pad) for i in range(c)], dim=1)
            else:
                weight = p[w].reshape(-1, *p[w].shape[2:])
                h = F.conv2d(h, weight, p[bias].reshape(-1), padding=pad, groups=c)
            h = torch.relu(F.max_pool2d(h, 2))  # = pool(relu(h)), on a 4x smaller tensor
        h = h.reshape(b, c, -1).transpose(0, 1)  # [C, B, c2 * side * side]
        for i in range(1, self._fc + 1):
            h = torch.baddbmm(p[f"fb{i}"].unsqueeze(1), h, p[f"fc{i}"])
            if i < self._fc:
                h = torch.relu(h)
        return h


def _softmax_residual(logits, y):
    """d(cross-entropy)/d(logits) of each sample: softmax - onehot(y), ``[C, B, K]``."""
    r = torch.softmax(logits, dim=-1)
    r.scatter_add_(2, y.unsqueeze(-1), torch.full(y.shape + (1,), -1.0, dtype=r.dtype, device=r.device))
    return r


def _clip_factor(norm, clip):
    """min(1, clip / norm) per sample (0-norm samples keep factor 1)."""
    return torch.clamp(clip / norm.clamp_min(1e-30), max=1.0)


def sample_weights(mask, weights, c, b, dtype, device=None):
    """Per-sample weights of the data loss: ``weights`` if given, else 1/n_valid on the
    valid samples of ``mask`` (a mean over the batch), else 1/b."""
    if weights is not None:
        return weights.to(dtype)
    if mask is None:
        return torch.full((c, b), 1.0 / b, dtype=dtype, device=device)
    m = mask.to(dtype)
    return m / m.sum(dim=1, keepdim=True).clamp_min(1)


MODELS = {"mlp": MLP, "logreg": MultinomialLogReg, "binary_logreg": BinaryLogReg, "cnn": CNN}


def make_model(name: str, **kwargs) -> Model:
    """Build a shared model by name: ``mlp``, ``logreg``, ``binary_logreg`` or ``cnn``
    (keyword arguments go to its constructor).  A paper's own model lives in its home, e.g.
    :func:`fldp.papers.zhou.algorithm.femnist_cnn` and :func:`fldp.papers.li2021.algorithm.logreg`."""
    validate.choice("model", name, MODELS)
    return MODELS[name](**kwargs)

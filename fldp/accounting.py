"""Privacy accounting as data: each release is a ``dp_accounting`` ``DpEvent``, and a federated
run appends one :class:`PrivacyRecord` per round to ``History.privacy`` (which clients' uploads
were released and by which mechanism, ``uplink``, and the mechanism of the server's broadcast,
``downlink``).  Client ``k``'s guarantee composes its own uploads and every broadcast
(:func:`client_event`), against an honest-but-curious server that sees all of them; the run's
is the worst client's, realised (:func:`spent`) or planned with Poisson client sampling
(:func:`planned_epsilon`), and :func:`calibrate_noise_multiplier` inverts an accountant.  A noise
multiplier is the noise scale over the release's sensitivity to one unit of privacy (one
client's whole data for client-level DP, one sample for record-level DP).  Two accountants
from Google's ``dp_accounting``: ``"pld"``, privacy loss distributions (Koskela et al. 2020),
numerically tight, and ``"rdp"``, Renyi DP (Mironov 2017), whose eps is larger by its
conversion; under add/remove (the default) or replace-one.  PLD is used under add/remove only,
and an event ``dp_accounting`` lacks gets the closest sound bound: :func:`epsilon` and
:func:`without_sampling` say how.
"""
from __future__ import annotations

import contextlib
import logging
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import dp_accounting
from dp_accounting import (
    ComposedDpEvent,
    DpEvent,
    GaussianDpEvent,
    NonPrivateDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    SampledWithoutReplacementDpEvent,
    SelfComposedDpEvent,
)
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from fldp import mechanisms, validate

__all__ = [
    "gaussian",
    "laplace",
    "poisson_sampled",
    "sampled_without_replacement",
    "self_composed",
    "composed",
    "without_sampling",
    "PrivacyRecord",
    "client_event",
    "epsilon",
    "delta_for",
    "Spent",
    "spent",
    "compare",
    "planned_epsilon",
    "calibrate_noise_multiplier",
    "calibrate_gaussian_run",
    "epsilon_lower_gaussian",
]

ACCOUNTANTS = ("pld", "rdp")
RELATIONS = {
    "add_remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
}


# --------------------------------------------------------------------------------------
# Events: keyword-only constructors of dp_accounting's records
# --------------------------------------------------------------------------------------

def _check_event(name: str, value: Any) -> DpEvent:
    if not isinstance(value, DpEvent):
        raise ValueError(f"{name}={value!r} is not a dp_accounting DpEvent "
                         "(build one with fldp.accounting.gaussian, laplace, ...)")
    return value


def _prob(name: str, value: float) -> float:
    """Require a probability in (0, 1]."""
    try:
        q = validate.probability(name, value)
    except ValueError:
        q = 0.0
    if q == 0:
        raise ValueError(f"{name}={value!r} is out of range: {name} must be in (0, 1]")
    return q


def gaussian(*, noise_multiplier: float) -> DpEvent:
    """One Gaussian release: noise std = ``noise_multiplier`` x l2 sensitivity.

    ``dp_accounting.GaussianDpEvent`` (Dwork & Roth 2014, Sec. 3.5.3; exact profile in
    Balle & Wang 2018, Thm 8).  No noise is not a Gaussian: record it as ``None``.
    """
    return GaussianDpEvent(validate.positive("noise_multiplier", noise_multiplier))


def laplace(*, noise_multiplier: float) -> DpEvent:
    """One Laplace release: scale b = ``noise_multiplier`` x l1 sensitivity, (1/b, 0)-DP.

    ``dp_accounting.LaplaceDpEvent`` (Dwork & Roth 2014, Def. 3.3 and Thm 3.6).
    """
    return dp_accounting.LaplaceDpEvent(validate.positive("noise_multiplier", noise_multiplier))


def poisson_sampled(event: DpEvent, *, sampling_prob: float) -> DpEvent:
    """``event`` run on a Poisson sample: each unit is included with prob. ``sampling_prob``.

    ``dp_accounting.PoissonSampledDpEvent`` (amplification by subsampling: Balle, Barthe &
    Gaboardi 2018; Mironov, Talwar & Zhang 2019 for RDP); add/remove relation.
    """
    _check_event("event", event)
    return PoissonSampledDpEvent(_prob("sampling_prob", sampling_prob), event)


def sampled_without_replacement(event: DpEvent, *, sample_size: int, population: int) -> DpEvent:
    """``event`` run on ``sample_size`` units drawn without replacement from ``population``.

    ``dp_accounting.SampledWithoutReplacementDpEvent``: accounted by RDP under the
    replace-one relation only (Wang, Balle & Kasiviswanathan 2019, Thm 9).
    """
    _check_event("event", event)
    population = validate.integer("population", population, 1)
    sample_size = validate.integer("sample_size", sample_size, 1, population,
                                   why="sample_size <= population")
    return SampledWithoutReplacementDpEvent(population, sample_size, event)


def self_composed(event: DpEvent, *, count: int) -> DpEvent:
    """``event`` applied ``count`` times (adaptively): ``dp_accounting.SelfComposedDpEvent``."""
    _check_event("event", event)
    return SelfComposedDpEvent(event, validate.integer("count", count, 1))


def composed(events: Iterable[DpEvent]) -> DpEvent:
    """The (adaptive) composition of ``events``: ``dp_accounting.ComposedDpEvent``.

    A release without noise is ``dp_accounting.NonPrivateDpEvent()``, not ``None``.
    """
    events = list(events)
    for i, e in enumerate(events):
        _check_event(f"events[{i}]", e)
    return ComposedDpEvent(events)


def without_sampling(event: DpEvent) -> DpEvent:
    """``event`` with every sampling wrapper removed: a sound bound without amplification.

    Subsampling never weakens a guarantee under a fixed neighbouring relation (couple the
    two samples so that they differ in at most one unit; then joint convexity of the
    hockey-stick divergence, e.g. Balle, Barthe & Gaboardi 2018, Thm 2).  Use it where
    ``dp_accounting`` (0.6.0) lacks the sampled event: Poisson sampling of anything but a
    Gaussian (RDP) or a Gaussian or Laplace (PLD).  An unsupported event otherwise raises a
    ``ValueError`` naming who supports it.
    """
    _check_event("event", event)
    sampled = (PoissonSampledDpEvent, SampledWithoutReplacementDpEvent,
               dp_accounting.SampledWithReplacementDpEvent)
    if isinstance(event, sampled):
        return without_sampling(event.event)
    if isinstance(event, SelfComposedDpEvent):
        return SelfComposedDpEvent(without_sampling(event.event), event.count)
    if isinstance(event, ComposedDpEvent):
        return ComposedDpEvent([without_sampling(e) for e in event.events])
    return event


# --------------------------------------------------------------------------------------
# Per-round records of a run
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PrivacyRecord:
    """What round ``round`` released: one record per round in ``History.privacy``.

    ``clients[j]``'s upload was released through the mechanism ``uplink[j]``; an entry
    ``None`` means no noise (no guarantee: eps = inf), and ``uplink=None`` means that
    every listed upload was released without noise.  ``downlink`` is the broadcast's
    mechanism, charged to every client whether or not it uploaded (sound; exact for those
    who did); ``None`` means nothing was released beyond the uploads (the broadcast is
    post-processing of them).  A noiseless broadcast is ``NonPrivateDpEvent()``.
    """

    round: int
    clients: Tuple[int, ...]
    uplink: Optional[Tuple[Optional[DpEvent], ...]]
    downlink: Optional[DpEvent]

    def __post_init__(self):
        validate.integer("round", self.round, 0)
        clients = tuple(validate.integer(f"clients[{j}]", c, 0) for j, c in enumerate(self.clients))
        if len(set(clients)) != len(clients):
            raise ValueError(f"clients={clients!r} lists a client twice: each client uploads "
                             "at most once per round")
        object.__setattr__(self, "clients", clients)
        if self.uplink is not None:
            uplink = tuple(self.uplink)
            if len(uplink) != len(clients):
                raise ValueError(f"uplink has {len(uplink)} entries: uplink must have one "
                                 f"entry per client, i.e. {len(clients)}")
            for j, e in enumerate(uplink):
                if e is not None:
                    _check_event(f"uplink[{j}]", e)
            object.__setattr__(self, "uplink", uplink)
        if self.downlink is not None:
            _check_event("downlink", self.downlink)


def _records(records) -> Sequence[PrivacyRecord]:
    """Accept a list of records or anything with a ``.privacy`` list (a ``History``)."""
    records = getattr(records, "privacy", records)
    if not isinstance(records, (list, tuple)):
        raise ValueError(f"records={records!r} is not supported: records must be a list of "
                         "PrivacyRecord or an object whose .privacy is one")
    for i, r in enumerate(records):
        if not isinstance(r, PrivacyRecord):
            raise ValueError(f"records[{i}]={r!r} is not a PrivacyRecord")
    return records


def _key(event: DpEvent):
    try:
        hash(event)
        return event
    except TypeError:  # a ComposedDpEvent holds a list
        return repr(event)


class _Tally:
    """Per-client counts of distinct uplink events, and counts of downlink events."""

    def __init__(self, records: Sequence[PrivacyRecord]):
        self.uplinks: Dict[int, Dict[Any, list]] = {}
        self.uploads: Dict[int, int] = {}
        self.downlinks: Dict[Any, list] = {}
        for r in records:
            for j, c in enumerate(r.clients):
                e = None if r.uplink is None else r.uplink[j]
                _add(self.uplinks.setdefault(c, {}), NonPrivateDpEvent() if e is None else e)
                self.uploads[c] = self.uploads.get(c, 0) + 1
            if r.downlink is not None:
                _add(self.downlinks, r.downlink)

    def event(self, client: int) -> DpEvent:
        pairs = list(self.uplinks.get(client, {}).values()) + list(self.downlinks.values())
        return _compose_counts(pairs)


def _add(counts: Dict[Any, list], event: DpEvent, n: int = 1) -> None:
    k = _key(event)
    if k in counts:
        counts[k][1] += n
    else:
        counts[k] = [event, n]


def _compose_counts(pairs: List[list]) -> DpEvent:
    """Compose ``[(event, count), ...]`` with one SelfComposedDpEvent per distinct event."""
    parts = sorted((e if n == 1 else SelfComposedDpEvent(e, n) for e, n in pairs), key=repr)
    if not parts:
        return NoOpDpEvent()
    return parts[0] if len(parts) == 1 else ComposedDpEvent(parts)


def client_event(records, client: int) -> DpEvent:
    """Client ``client``'s whole-run mechanism: its uploads composed with every broadcast.

    Identical events are grouped into ``SelfComposedDpEvent(event, count)`` (composition
    is commutative for accounting), so 1,000 rounds are a handful of terms;
    ``NoOpDpEvent()`` if nothing concerning the client was released.  Adaptive
    composition (Dwork & Roth 2014, Sec. 3.5; dp_accounting's ``ComposedDpEvent``).
    """
    client = validate.integer("client", client, 0)
    return _Tally(_records(records)).event(client)


# --------------------------------------------------------------------------------------
# epsilon and delta of one event
# --------------------------------------------------------------------------------------

class _Unsupported(ValueError):
    """An accountant of dp_accounting 0.6.0 cannot account this event."""


def _flatten(event: DpEvent, count: int, counts: Dict[Any, list]) -> None:
    """Leaves of ``event`` with multiplicities; sampling with prob. 1 is no sampling."""
    if count == 0 or isinstance(event, NoOpDpEvent):
        return
    if isinstance(event, SelfComposedDpEvent):
        _flatten(event.event, count * event.count, counts)
    elif isinstance(event, ComposedDpEvent):
        for e in event.events:
            _flatten(e, count, counts)
    elif isinstance(event, PoissonSampledDpEvent) and event.sampling_probability == 1:
        _flatten(event.event, count, counts)
    elif (isinstance(event, SampledWithoutReplacementDpEvent)
          and event.sample_size == event.source_dataset_size):
        _flatten(event.event, count, counts)
    elif isinstance(event, (PoissonSampledDpEvent, SampledWithoutReplacementDpEvent)):
        inner = _simplify(event.event)  # sampled Gaussians on one sample merge too
        if inner is None:
            _add(counts, NonPrivateDpEvent(), count)
        elif not isinstance(inner, NoOpDpEvent):
            if isinstance(event, PoissonSampledDpEvent):
                event = PoissonSampledDpEvent(event.sampling_probability, inner)
            else:
                event = SampledWithoutReplacementDpEvent(
                    event.source_dataset_size, event.sample_size, inner)
            _add(counts, event, count)
    else:
        _add(counts, event, count)


def _simplify(event: DpEvent) -> Optional[DpEvent]:
    """A canonical equivalent of ``event``, or None if it contains a non-private release.

    Plain Gaussians merge exactly: n_i releases with multipliers z_i are one Gaussian with
    ``z = (sum n_i / z_i^2)^(-1/2)`` (Dong, Roth & Su 2019, Cor. 3.3, for PLD; RDP adds
    ``alpha/(2 z_i^2)`` (Mironov 2017, Prop. 7), the same).  This keeps PLD fast: dp_accounting
    would otherwise convolve one distribution per distinct multiplier.
    """
    counts: Dict[Any, list] = {}
    _flatten(event, 1, counts)
    precision, rest = 0.0, []
    for e, n in counts.values():
        if isinstance(e, NonPrivateDpEvent):
            return None
        if isinstance(e, GaussianDpEvent):
            if e.noise_multiplier == 0:
                return None
            precision += n / e.noise_multiplier**2
        else:
            rest.append([e, n])
    if precision > 0:
        rest.append([GaussianDpEvent(precision**-0.5), 1])
    return _compose_counts(rest)


@contextlib.contextmanager
def _quiet_rdp_orders():
    """dp_accounting's RDP accountant logs a WARNING (logger "absl") for every order whose series
    does not converge, and drops that order: the bound stays valid (from the other orders), but a
    notebook composing a sampled Gaussian would print hundreds of lines.  Only those are hidden."""
    log = logging.getLogger("absl")
    level = log.level
    log.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        log.setLevel(level)


def _new_accountant(accountant: str, relation: str):
    if accountant == "pld":
        return PLDAccountant(neighboring_relation=RELATIONS[relation])
    return RdpAccountant(neighboring_relation=RELATIONS[relation])


def _supports(event: DpEvent, accountant: str, relation: str) -> bool:
    # dp_accounting's PLD reads a Gaussian's multiplier against the add/remove sensitivity
    # even under replace-one (charging GaussianDpEvent(z) as z/2), its RDP against the
    # replace-one sensitivity; one convention here: replace-one is accounted by RDP only.
    if (accountant, relation) == ("pld", "replace_one"):
        return False
    return _new_accountant(accountant, relation).supports(event)


def _require_support(event: DpEvent, accountant: str, relation: str) -> None:
    if _supports(event, accountant, relation):
        return
    if (accountant, relation) == ("pld", "replace_one"):
        reason = "PLD is used under add/remove only (see the module docstring)"
    else:
        try:
            _new_accountant(accountant, relation).compose(event)
        except dp_accounting.UnsupportedEventError as err:
            reason = str(err).split("Error: ", 1)[-1]
    others = [f"accountant={a!r} with relation={r!r}" for a in ACCOUNTANTS for r in RELATIONS
              if (a, r) != (accountant, relation) and _supports(event, a, r)]
    hint = ("it is supported by " + " and by ".join(others)) if others else (
        "no accountant of dp_accounting supports it; without_sampling(event) gives a sound "
        "bound without amplification")
    raise _Unsupported(f"event is not supported by accountant={accountant!r} with "
                       f"relation={relation!r}: {hint}. Reason: {reason}")


def _checked(event, accountant: str, relation: str):
    """Validate and simplify; returns None for a release without guarantee."""
    validate.choice("accountant", accountant, ACCOUNTANTS)
    validate.choice("relation", relation, RELATIONS)
    if event is None:
        return None
    simple = _simplify(_check_event("event", event))
    if simple is not None:
        _require_support(simple, accountant, relation)
    return simple


def epsilon(event: Optional[DpEvent], *, delta: float, accountant: str = "pld",
            relation: str = "add_remove") -> float:
    """Smallest eps such that ``event`` is (eps, ``delta``)-DP, by the chosen accountant.

    ``dp_accounting.pld.PLDAccountant`` or ``dp_accounting.rdp.RdpAccountant``
    ``.compose(event).get_epsilon(delta)``; under ``"pld"`` a purely Gaussian event uses
    its exact profile (Balle & Wang 2018, Thm 8, :func:`fldp.mechanisms.gaussian_eps`).
    ``math.inf`` if ``event`` is None or contains a ``NonPrivateDpEvent``; 0 if nothing
    was released.  ``relation``: ``"add_remove"`` (default) or ``"replace_one"``.
    Raises ValueError, naming the accountant that can, if this one cannot account it.

    The accountants.  ``"pld"``: privacy loss distributions (Koskela et al. 2020; Doroshenko
    et al. 2022), ``dp_accounting.pld.PLDAccountant``; numerically tight, the only slack a
    pessimistic discretisation of the loss (grid 1e-4).  Compositions of Gaussians are a
    Gaussian (Dong, Roth & Su 2019), so a purely Gaussian event is read off the exact profile
    of Balle & Wang 2018, Thm 8, the limit of the PLD without its grid (and far faster for
    small noise multipliers).  ``"rdp"``: Renyi DP (Mironov 2017; Mironov, Talwar & Zhang
    2019), ``dp_accounting.rdp.RdpAccountant``: it composes exactly, but its conversion to
    (eps, delta) (Canonne, Kamath & Steinke 2020, Prop. 12) is a bound optimised over a finite
    grid of orders, so RDP's eps is always larger, typically by 5-15 %.

    The relations.  Both accountants default to *add/remove one unit*.  ``dp_accounting``
    accounts sampling without replacement only under *replace one unit* (Wang, Balle &
    Kasiviswanathan 2019), where a sum of updates clipped to C has sensitivity 2C, not C, and
    the noise multiplier is relative to 2C.  Replace-one is accounted by RDP only:
    ``dp_accounting``'s PLD reads multipliers against the add/remove sensitivity even under
    replace-one (``GaussianDpEvent(1)`` gives eps 9.997, not 4.377, at delta 1e-5), its RDP
    against the replace-one one.  Sampling without replacement asked of PLD therefore raises
    (use ``accountant="rdp", relation="replace_one"``, a proven, looser bound of the same
    event); we do not substitute Poisson sampling with ``q = m/n``, another sampling scheme
    under another relation and not a proven bound for it.
    """
    delta = validate.open_unit("delta", delta)
    simple = _checked(event, accountant, relation)
    if simple is None:
        return math.inf
    if isinstance(simple, NoOpDpEvent):
        return 0.0
    if accountant == "pld" and isinstance(simple, GaussianDpEvent):
        return mechanisms.gaussian_eps(sigma=simple.noise_multiplier, delta=delta, sensitivity=1.0)
    with _quiet_rdp_orders():
        return float(_new_accountant(accountant, relation).compose(simple).get_epsilon(delta))


def epsilon_lower_gaussian(*, noise_multiplier: float, count: int, delta: float, sampling_prob: float = 1.0) -> float:
    """A lower bound on the eps at ``delta`` of ``count`` releases of the Gaussian mechanism with
    ``noise_multiplier`` (noise std over the add/remove sensitivity), each Poisson-subsampled at
    ``sampling_prob``: where an accountant is exact it bounds from below too, so a claimed eps
    below it is refuted without an audit's resolution limit.

    ``sampling_prob = 1``: compositions of Gaussians are a Gaussian of multiplier z / sqrt(count)
    (Dong, Roth & Su 2019), whose privacy profile is exact (Balle & Wang 2018, Thm 8,
    :func:`fldp.mechanisms.gaussian_eps`): the same number :func:`epsilon` gives.  Otherwise the
    privacy loss distribution's *optimistic* estimate (``dp_accounting``'s
    ``from_gaussian_mechanism(pessimistic_estimate=False)``, Privacy Buckets, grid 1e-4; Koskela et
    al. 2020, Doroshenko et al. 2022), which rounds every privacy loss down, so its eps is at most
    the true one."""
    z = validate.positive("noise_multiplier", noise_multiplier)
    count = validate.integer("count", count, 1)
    delta = validate.open_unit("delta", delta)
    q = _prob("sampling_prob", sampling_prob)
    if q == 1.0:
        return mechanisms.gaussian_eps(sigma=z / math.sqrt(count), delta=delta, sensitivity=1.0)
    from dp_accounting.pld import privacy_loss_distribution as pld

    dist = pld.from_gaussian_mechanism(z, sampling_prob=q, pessimistic_estimate=False, use_connect_dots=False,
                                       value_discretization_interval=1e-4)
    return float(dist.self_compose(count).get_epsilon_for_delta(delta))


def delta_for(event: Optional[DpEvent], *, eps: float, accountant: str = "pld",
              relation: str = "add_remove") -> float:
    """Smallest delta such that ``event`` is (``eps``, delta)-DP: the privacy profile.

    ``PLDAccountant``/``RdpAccountant`` ``.get_delta(eps)``; under ``"pld"`` a purely
    Gaussian event uses its exact profile (Balle & Wang 2018, Thm 8,
    :func:`fldp.mechanisms.gaussian_delta`).  1.0 for no guarantee, 0.0 for nothing released.
    """
    eps = validate.nonnegative("eps", eps)
    simple = _checked(event, accountant, relation)
    if simple is None:
        return 1.0
    if isinstance(simple, NoOpDpEvent):
        return 0.0
    if accountant == "pld" and isinstance(simple, GaussianDpEvent):
        return mechanisms.gaussian_delta(eps=eps, sigma=simple.noise_multiplier, sensitivity=1.0)
    with _quiet_rdp_orders():
        return float(_new_accountant(accountant, relation).compose(simple).get_delta(eps))


# --------------------------------------------------------------------------------------
# A run's budget
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Spent:
    """Realised privacy of a run: ``eps`` is the worst client's, at ``delta``."""

    eps: float
    delta: float
    accountant: str
    per_client: Dict[int, float] = field(repr=False)
    worst_client: Optional[int]
    uploads: Dict[int, int] = field(repr=False)
    relation: str = "add_remove"

    def __str__(self) -> str:
        who = ("" if self.worst_client is None else
               f"; worst client {self.worst_client} ({self.uploads.get(self.worst_client, 0)}"
               f" uploads) of {len(self.per_client)}")
        return (f"({self.eps:.4g}, {self.delta:.3g})-DP by {self.accountant}, "
                f"{self.relation}{who}")


def spent(records, *, delta: float, accountant: str = "pld",
          clients: Optional[Iterable[int]] = None, relation: str = "add_remove") -> Spent:
    """Realised (eps, delta) of a run: each client's :func:`client_event`, then the worst.

    Accounts who actually uploaded when.  Sound because client selection does not depend
    on the data (adaptive composition, Dwork & Roth 2014 Sec. 3.5), but it gets no
    amplification from client sampling: see :func:`planned_epsilon` for that.
    ``clients=None`` means every client that uploaded at least once (a client that never
    uploaded is covered: its event is the broadcasts alone, a part of every other's).
    ``records`` is a list of :class:`PrivacyRecord` or a ``History``.  Clients with the same
    events are accounted once.  Relation: ``relation`` (add/remove one unit by default).
    """
    delta = validate.open_unit("delta", delta)
    validate.choice("accountant", accountant, ACCOUNTANTS)
    validate.choice("relation", relation, RELATIONS)
    tally = _Tally(_records(records))
    if clients is None:
        clients = sorted(tally.uploads)
    else:
        clients = list(dict.fromkeys(
            validate.integer(f"clients[{i}]", c, 0) for i, c in enumerate(clients)))
    cache: Dict[str, float] = {}
    per_client: Dict[int, float] = {}
    for c in clients:
        event = tally.event(c)
        key = repr(_simplify(event))
        if key not in cache:
            cache[key] = epsilon(event, delta=delta, accountant=accountant, relation=relation)
        per_client[c] = cache[key]
    if per_client:
        worst = max(per_client, key=per_client.get)  # first of ties
        eps = per_client[worst]
    else:
        worst = None
        eps = epsilon(_compose_counts(list(tally.downlinks.values())), delta=delta,
                      accountant=accountant, relation=relation)
    return Spent(eps=eps, delta=delta, accountant=accountant, per_client=per_client,
                 worst_client=worst, uploads={c: tally.uploads.get(c, 0) for c in clients},
                 relation=relation)


def compare(records, *, delta: float, relation: str = "add_remove") -> Dict[str, Union[float, str]]:
    """Both accountants side by side: ``{"pld": eps, "rdp": eps}`` (run's worst client).

    ``records`` is a run (as in :func:`spent`) or one ``DpEvent``.  An accountant that cannot
    account the events maps to the reason (a string) instead of a number.  PLD is tighter;
    RDP's gap is its lossy conversion to (eps, delta) (:func:`epsilon`).
    """
    delta = validate.open_unit("delta", delta)
    out: Dict[str, Union[float, str]] = {}
    for acc in ACCOUNTANTS:
        try:
            if isinstance(records, DpEvent):
                out[acc] = epsilon(records, delta=delta, accountant=acc, relation=relation)
            else:
                out[acc] = spent(records, delta=delta, accountant=acc, relation=relation).eps
        except _Unsupported as err:
            out[acc] = f"skipped: {err}"
    return out


def planned_epsilon(*, event: DpEvent, rounds: int, client_sampling_prob: Optional[float] = None,
                    delta: float, accountant: str = "pld", downlink: Optional[DpEvent] = None,
                    relation: str = "add_remove") -> float:
    """A-priori eps of ``rounds`` rounds in which a client takes part with prob. q.

    Each round a client is included independently with prob. ``client_sampling_prob``
    (Poisson; None: every round) and then released through ``event``; ``downlink``, if
    given, is charged every round unamplified (sound, conservative).  Amplification by
    Poisson subsampling under add/remove (Mironov, Talwar & Zhang 2019; Zhu, Dong & Wang
    2022 for PLD), then ``rounds``-fold composition.  For K of N clients drawn without
    replacement, pass ``event=sampled_without_replacement(e, sample_size=K, population=N)``
    with ``accountant="rdp", relation="replace_one"``.
    """
    _check_event("event", event)
    rounds = validate.integer("rounds", rounds, 1)
    per_round = event
    if client_sampling_prob is not None:
        q = _prob("client_sampling_prob", client_sampling_prob)
        per_round = poisson_sampled(event, sampling_prob=q)
    total = self_composed(per_round, count=rounds)
    if downlink is not None:
        total = composed([total, self_composed(_check_event("downlink", downlink), count=rounds)])
    return epsilon(total, delta=delta, accountant=accountant, relation=relation)


# --------------------------------------------------------------------------------------
# Calibration by inversion
# --------------------------------------------------------------------------------------

class _Accountant(dp_accounting.PrivacyAccountant):
    """dp_accounting's accountant interface over :func:`epsilon` (same path, same numbers)."""

    def __init__(self, accountant: str, relation: str):
        super().__init__(RELATIONS[relation])
        self._name, self._relation, self._events = accountant, relation, []

    def _maybe_compose(self, event, count, do_compose):
        if do_compose:
            self._events.append(SelfComposedDpEvent(event, count))
        return None

    def get_epsilon(self, target_delta: float) -> float:
        return epsilon(ComposedDpEvent(self._events), delta=target_delta,
                       accountant=self._name, relation=self._relation)


def calibrate_noise_multiplier(make_event: Callable[[float], DpEvent], *, target_eps: float,
                               target_delta: float, accountant: str = "pld", tol: float = 1e-4,
                               relation: str = "add_remove") -> float:
    """Smallest noise multiplier z (within ``tol``) with ``epsilon(make_event(z)) <= target_eps``.

    One generic inversion, ``dp_accounting.calibrate_dp_mechanism`` (Brent's method), on a
    bracket found by doubling/halving from z = 1; the result is checked and nudged up by
    ``tol`` until it meets the target, so it never overshoots.  ``make_event`` maps a noise
    multiplier to the whole run's ``DpEvent`` and must be monotone (more noise, less eps).
    """
    if not callable(make_event):
        raise ValueError(f"make_event={make_event!r} is not callable: make_event must map a "
                         "noise multiplier to a DpEvent")
    target_eps = validate.positive("target_eps", target_eps)
    target_delta = validate.open_unit("target_delta", target_delta)
    validate.choice("accountant", accountant, ACCOUNTANTS)
    validate.choice("relation", relation, RELATIONS)
    tol = validate.positive("tol", tol)

    def eps_of(z: float) -> float:
        return epsilon(make_event(z), delta=target_delta, accountant=accountant, relation=relation)

    hi = 1.0
    while eps_of(hi) > target_eps:
        hi *= 2.0
        if hi > 2.0**30:
            raise ValueError(f"target_eps={target_eps!r} is out of range: no noise multiplier "
                             "up to 2^30 meets it")
    lo = hi / 2.0
    while eps_of(lo) <= target_eps:
        hi, lo = lo, lo / 2.0
        if lo < 1e-6:
            raise ValueError(f"target_eps={target_eps!r} is out of range: even noise "
                             "multiplier 1e-6 meets it")
    z = float(dp_accounting.calibrate_dp_mechanism(
        lambda: _Accountant(accountant, relation), make_event, target_eps, target_delta,
        bracket_interval=dp_accounting.ExplicitBracketInterval(lo, hi), tol=tol))
    while eps_of(z) > target_eps:  # never overshoot
        z += tol
    return z


def calibrate_gaussian_run(*, target_eps: float, target_delta: float, rounds: int,
                           sampling_prob: float = 1.0, accountant: str = "pld",
                           tol: float = 1e-4) -> float:
    """Noise multiplier of ``rounds`` Gaussian releases (each Poisson-sampled with
    ``sampling_prob`` if < 1) meeting (``target_eps``, ``target_delta``); add/remove.

    :func:`calibrate_noise_multiplier` on ``self_composed(poisson_sampled(gaussian(z)))``:
    the DP-SGD / DP-FedAvg calibration of Abadi et al. 2016 and McMahan et al. 2018.
    """
    rounds = validate.integer("rounds", rounds, 1)
    q = _prob("sampling_prob", sampling_prob)

    def make_event(z: float) -> DpEvent:
        step = gaussian(noise_multiplier=z)
        if q < 1:
            step = poisson_sampled(step, sampling_prob=q)
        return self_composed(step, count=rounds)

    return calibrate_noise_multiplier(make_event, target_eps=target_eps,
                                      target_delta=target_delta, accountant=accountant, tol=tol)

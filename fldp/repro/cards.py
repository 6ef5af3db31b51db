"""One rendering of a claim: a card, shared by REPORT.md, the book's register and chapter pages, and
the run's report (``build/report.{md,html}``).

A ten-column claims table does not fit a page's width, so each claim is one block.  What a reader
needs first is visible at once, in the block's summary line: the verdict (coloured),
the claim's name and kind, its setting in a few words, the claim in one line and the one-line
reason.  What a referee needs is one click away, in the block's detail: the paper's sentence, the
whole setting, the falsifier, the minimum material effect, the measured and the expected numbers
(formatted as lists, floats to :data:`DIGITS` significant digits, never raw JSON) and, for a claim
judged over several settings, each part's verdict with its reason.

The card is one HTML block without blank lines (``<details>``/``<summary>``/``<dl>``), which GitHub's
Markdown renderer, MyST (the book) and a plain HTML page all show the same way; GitHub strips
classes and styles, so its cards mark the verdict with a coloured sign (``style="github"``) while the
book and the HTML report colour it by class (``style="html"``, the ``fldp-*`` classes of
``book/_static/fldp.css`` and :data:`CSS`).  Why not a library: the pieces are escaping and a
recursive list; a template engine would add a dependency for twenty lines.
"""
from __future__ import annotations

import html
import math
import re
from typing import Any, Mapping, Sequence

__all__ = ["DIGITS", "STYLES", "MARKS", "KIND_NAMES", "SETTING_NAMES", "CSS", "verdict_label", "verdict_of",
           "badge", "setting_short", "reason_line", "value_html", "claim_card", "claim_cards"]

#: Floats in the measured and expected numbers are shown to this many significant digits.
DIGITS = 4
#: ``github``: a coloured sign before the verdict (GitHub strips classes); ``html``: classes.
STYLES = ("github", "html")
#: How a part's verdict reads in a claim's reason line ("2 of 3 hold; 1 of 3 open: spread").
_PART_WORDS = {"holds": "hold", "fails": "fail", **{f"inconclusive: {r}": f"open: {r}" for r in (
    "not-run", "diverged", "untrained", "no-power", "resolution", "spread")}}
#: The signs of ``style="github"``.
MARKS = {"holds": "🟢", "fails": "🔴", "inconclusive": "🟡", "not migrated": "⚪"}
KIND_NAMES = {"paper": "paper claim", "derived": "derived check", "diagnostic": "diagnostic"}
SETTING_NAMES = {"paper": "the paper's setting", "reduced": "reduced", "reading": "a reading"}
_SETTING_WORDS = 70   # the setting's first clause, cut at a clause or word, in the summary line
_REASON_CHARS = 200   # the one-line reason, cut at a clause, in the summary line
_NAMES = 6            # a verdict reached at more parts than this is counted in the summary, named in the detail
_LIST_ITEMS = 60      # a longer list of numbers shows its first values and says how many there are

#: The cards' look in a page of its own (``build/report.html``); the book has the same rules in fldp.css.
CSS = """.fldp-claim{border-left:4px solid #999;background:#fafafa;margin:.45em 0;padding:.3em .7em;
overflow-wrap:anywhere}.fldp-claim-holds{border-color:#176317}.fldp-claim-fails{border-color:#b00020}
.fldp-claim-inconclusive{border-color:#c28a00}.fldp-claim summary{cursor:pointer}
.fldp-claim dl{margin:.4em 0 .2em}.fldp-claim dt{font-weight:600;margin-top:.3em}.fldp-claim dd{margin-left:1.2em}
.fldp-verdict{font-weight:700}.fldp-holds{color:#176317}.fldp-fails{color:#b00020}.fldp-inconclusive{color:#8a5a00}"""


def _esc(text: Any) -> str:
    return html.escape(" ".join(str(text).split()), quote=False)


def _migrated(claim: Mapping[str, Any]) -> bool:
    return all(isinstance(claim.get(k), str) and claim.get(k) for k in ("kind", "setting", "verdict", "falsifier"))


def verdict_label(claim: Mapping[str, Any]) -> str:
    """``holds``, ``fails``, ``inconclusive: <reason>``, or ``not migrated`` (a claim saved before
    claims had kinds, settings and verdicts)."""
    if not _migrated(claim):
        return "not migrated"
    v = claim["verdict"]
    return f"{v}: {claim.get('reason')}" if v == "inconclusive" else v


def verdict_of(claim: Mapping[str, Any]) -> str:
    """``holds``, ``fails``, ``inconclusive`` or ``not migrated``."""
    return verdict_label(claim).split(":")[0]


def badge(claim: Mapping[str, Any], *, style: str) -> str:
    """The verdict, coloured: ``🔴 <b>fails</b>`` (``github``) or a ``fldp-verdict`` span (``html``)."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    label, v = verdict_label(claim), verdict_of(claim)
    if style == "github":
        return f"{MARKS[v]} <b>{_esc(label)}</b>"
    return f'<span class="fldp-verdict fldp-{v.replace(" ", "-")}">{_esc(label)}</span>'


def _top_level(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        depth += ch in "([{"
        depth -= ch in ")]}" and depth > 0
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    return parts + [text[start:]]


def _cut_words(text: str, limit: int) -> str:
    """``text`` cut at a word within ``limit`` characters, before any bracket it would leave open."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    depth, last_closed = 0, len(cut)
    for i, ch in enumerate(cut):
        if ch in "([{":
            if depth == 0:
                last_closed = i
            depth += 1
        elif ch in ")]}" and depth:
            depth -= 1
    if depth and cut[:last_closed].strip():  # a text that opens with a bracket keeps it
        cut = cut[:last_closed]
    return cut.rstrip(" ,;:") + " …"


def _cut_clauses(text: str, limit: int) -> str:
    """``text`` cut after its last whole clause (``; `` then ``, `` outside brackets) within
    ``limit`` characters; a first clause longer than that is cut at a word."""
    if len(text) <= limit:
        return text
    for sep in ("; ", ", "):
        kept = ""
        for c in _top_level(text, sep):
            if len(kept) + len(sep) + len(c) > limit:
                break
            kept = f"{kept}{sep}{c}" if kept else c
        if kept:
            return kept + " …"
    return _cut_words(text, limit)


def setting_short(claim: Mapping[str, Any], *, limit: int = _SETTING_WORDS) -> str:
    """The setting in a few words: its name and the first clause of its note (the whole note is in
    the card's detail)."""
    name = SETTING_NAMES.get(claim.get("setting"), str(claim.get("setting") or ""))
    note = " ".join(str(claim.get("setting_note") or "").split())
    first = _top_level(note, "; ")[0].strip() if note else ""
    return f"{name}: {_cut_clauses(first, limit)}" if first else name


def _parts(claim: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    stats = claim.get("stats")
    parts = stats.get("parts") if isinstance(stats, Mapping) else None
    if not isinstance(parts, Mapping):
        return {}
    return {str(k): v for k, v in parts.items() if isinstance(v, Mapping) and v.get("verdict")}


def reason_line(claim: Mapping[str, Any], *, limit: int = _REASON_CHARS) -> tuple[str, bool]:
    """The one-line reason and whether more of it is in the detail.  A claim judged over several
    settings says how many parts reached which verdict, its own first, with the first deciding
    part's reason (``1 of 3 open: spread (eps=10): at eps=10, the interval ...; 2 of 3 hold (eps=1,
    eps=5)``); another its ``why``, cut at a clause when longer than ``limit`` (without one: the
    measured and expected value when they are single values, else the note)."""
    parts = _parts(claim)
    if parts:
        by: dict[str, list[str]] = {}
        for name, part in parts.items():
            by.setdefault(str(part["verdict"]), []).append(f"({name})" if ", " in name else name)
        n = len(parts)
        order = sorted(by, key=lambda v: v.split(":")[0] != claim.get("verdict"))  # the claim's own verdict first
        groups = [f"{len(by[v])} of {n} {_PART_WORDS.get(v, v)}" + (f" ({', '.join(by[v])})" if len(by[v]) <= _NAMES
                                                                    else "") for v in order]
        deciding = next((k for k, p in parts.items() if str(p["verdict"]).split(":")[0] == claim.get("verdict")
                         and p.get("why")), None)  # the first part that reached the claim's verdict, as an example
        if deciding is not None and claim.get("verdict") != "holds":
            first = _top_level(" ".join(str(parts[deciding]["why"]).split()), "; ")[0]
            groups[0] += f": at {deciding}, {_cut_clauses(first, max(60, limit - len(groups[0]) - 40))}"
        return "; ".join(groups), True
    why = " ".join(str(claim.get("why") or "").split())
    if not why and _scalar(claim.get("measured")) and claim.get("measured") is not None:
        expected = claim.get("expected")
        return f"measured {_plain(claim['measured'])}" + (
            f", expected {_plain(expected)}" if _scalar(expected) and expected is not None else ""), False
    if not why and claim.get("note"):
        why = " ".join(str(claim["note"]).split())
    if len(why) <= limit:
        return why, False
    return _cut_clauses(why, limit), True


def _number(x: float) -> str:
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{DIGITS}g}" if math.isfinite(x) else str(x)


def _plain(v: Any) -> str:
    return _number(v) if isinstance(v, (bool, int, float)) else " ".join(str(v).split())


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def value_html(value: Any) -> str:
    """A measured or expected value as HTML: numbers to :data:`DIGITS` significant digits, a list
    of scalars as one line, a mapping as a list of ``key: value`` items (nested as deep as it is)."""
    if value is None:
        return "—"
    if isinstance(value, (bool, int, float)):
        return _number(value)
    if isinstance(value, str):
        return _esc(value)
    if isinstance(value, Mapping):
        if not value:
            return "—"
        return "<ul>" + "".join(f"<li><b>{_esc(k)}</b>: {value_html(v)}</li>" for k, v in value.items()) + "</ul>"
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        if all(_scalar(v) for v in value):
            shown = ", ".join(value_html(v) for v in value[:_LIST_ITEMS])
            more = f" … ({len(value)} values in all)" if len(value) > _LIST_ITEMS else ""
            return f"[{shown}{more}]"
        return "<ol>" + "".join(f"<li>{value_html(v)}</li>" for v in value) + "</ol>"
    return _esc(value)


def _effect(claim: Mapping[str, Any]) -> str:
    effect = claim.get("min_effect")
    if effect is None:
        return ""
    units = " ".join(str(claim.get("units") or "").split())
    return value_html(effect) + (f" ({_esc(units)})" if units else "")


def _kind_text(claim: Mapping[str, Any]) -> str:
    kind = str(claim.get("kind") or "")
    name = KIND_NAMES.get(kind, kind)
    if kind == "paper":
        return f"the paper states it: {_esc(claim.get('source') or '(source not given)')}"
    if kind == "derived":
        return "derived from the paper's mathematics" + (f": {_esc(claim['source'])}" if claim.get("source") else "")
    return f"{_esc(name)}: the project's own finding, not a paper claim"


def _detail(claim: Mapping[str, Any], more: bool) -> str:
    rows = [("Kind", _kind_text(claim)),
            ("Setting", _esc(SETTING_NAMES.get(claim.get("setting"), claim.get("setting") or "")
                             + (f": {claim['setting_note']}" if claim.get("setting_note") else ""))),
            ("Falsifier", _esc(claim.get("falsifier") or "")),
            ("Minimum material effect", _effect(claim)),
            ("Measured", value_html(claim.get("measured"))),
            ("Expected", value_html(claim.get("expected")))]
    parts = _parts(claim)
    if parts:
        items = "".join(f"<li><b>{_esc(name)}</b>: {_esc(p['verdict'])}"
                        + (f" ({_esc(p['why'])})" if p.get("why") else "") + "</li>" for name, p in parts.items())
        rows.append(("Parts", f"<ul>{items}</ul>"))  # each part's reason: the claim's why is made of them
    elif more:
        rows.append(("Why", "<ul>" + "".join(f"<li>{_esc(c)}</li>" for c in _top_level(
            " ".join(str(claim.get("why")).split()), "; ")) + "</ul>"))
    if claim.get("note"):
        rows.append(("Note", _esc(claim["note"])))
    return "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows if v) + "</dl>"


def claim_card(claim: Mapping[str, Any], *, style: str) -> str:
    """One claim as one HTML block (no blank line inside, so Markdown renderers pass it through):
    a ``<details>`` whose summary holds the verdict, the claim's name, kind and setting, the claim
    in one line and the one-line reason; its detail the rest (see the module's docstring)."""
    v = verdict_of(claim)
    name = _esc(claim.get("id") or "")
    statement = _esc(claim.get("statement") or "")
    if v == "not migrated":
        return (f'<details class="fldp-claim fldp-claim-old"><summary>{badge(claim, style=style)} · <b>{name}</b>'
                f"<br>{statement}</summary><p>Saved before claims had kinds, settings and verdicts: its old "
                "verdict is withheld until the notebook is re-run in full mode.</p></details>")
    kind = KIND_NAMES.get(claim["kind"], claim["kind"])
    reason, more = reason_line(claim)
    why = f'<br><span class="fldp-why"><i>Why:</i> {_esc(reason)}</span>' if reason else ""
    return (f'<details class="fldp-claim fldp-claim-{v}"><summary>{badge(claim, style=style)} · <b>{name}</b> · '
            f'<i>{_esc(kind)}, {_esc(setting_short(claim))}</i><br>{statement}{why}</summary>'
            f"{_detail(claim, more)}</details>")


def claim_cards(claims: Sequence[Mapping[str, Any]], *, style: str) -> list[str]:
    """The cards of ``claims`` as Markdown lines: one block each, a blank line between them."""
    out: list[str] = []
    for c in claims:
        out += [claim_card(c, style=style), ""]
    return out[:-1]

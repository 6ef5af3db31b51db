"""The one piece every explorer shares: controls, a pure ``compute``, a table and a figure.
An explorer is ``compute(**values) -> dict`` (pure; the rows to show, notes, what ``draw`` needs; a
combination the paper's formulas do not cover raises ValueError naming the parameter and its range,
shown instead of a traceback), ``draw(fig, state)`` on a fresh matplotlib Figure, and a dict of
ipywidgets controls named after ``compute``'s keywords; :class:`Explorer` wires them (a change
recomputes and redraws on release; value cells carry ``data-key`` for browser tests; any other
exception is a bug, shown as "internal error" and kept in :attr:`Explorer.error`).  Why not
``ipywidgets.interact``: it gives no place for a range message, no machine-readable values, and
re-creates its output on every call, which flickers in Voila.
"""
from __future__ import annotations

import contextlib
import html
import io
import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional

import ipywidgets as W
from matplotlib.figure import Figure

# dp-accounting's RDP accountant logs a warning for every order it skips; in an app that
# recomputes on each slider move that is noise (the eps it returns already excludes them).
logging.getLogger("absl").setLevel(logging.ERROR)

# A control is a fixed-width label, the slider's track and its readout: at 470 px the track is about
# 200 px long (at 300 px with the label's natural width it was ~80 px, and one drag jumped eps from
# 60 to 0.14).  The grid gives each control a column of that width, at most ``columns`` to a row, fewer
# where the page is narrower (the book).
STYLE = {"description_width": "170px"}
CONTROL_WIDTH = 470
LAYOUT = W.Layout(width=f"{CONTROL_WIDTH}px")


@dataclass(frozen=True)
class Row:
    """One line of an explorer's table: a label, a machine key, a value and a note."""

    label: str
    key: str
    value: Any
    note: str = ""


def fmt(value: Any) -> str:
    """Short display form of a number (4 significant digits), or the value as text."""
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "--"}[value]
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "undefined"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == 0:
            return "0"
        return f"{value:.4g}" if 1e-3 <= abs(value) < 1e5 else f"{value:.4e}"
    return str(value)


def table_html(rows) -> str:
    """The rows as an HTML table; each value cell carries ``data-key`` for tests."""
    out = ['<table class="fldp-table" style="border-collapse:collapse;font-size:13px">']
    for r in rows:
        note = f'<td style="color:#555;padding-left:10px">{html.escape(r.note)}</td>' if r.note else "<td></td>"
        out.append(f'<tr><td style="padding-right:10px">{html.escape(r.label)}</td>'
                   f'<td class="fldp-value" data-key="{html.escape(r.key)}" style="font-family:monospace;'
                   f'text-align:right">{html.escape(fmt(r.value))}</td>{note}</tr>')
    out.append("</table>")
    return "".join(out)


def lean_log_axes(*axes) -> None:
    """Drop the minor ticks (half of the drawing time) of log axes spanning two decades or more."""
    from matplotlib.ticker import NullLocator

    for ax in axes:
        for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            if axis.get_scale() == "log" and hi >= 100 * lo:
                axis.set_minor_locator(NullLocator())


def figure_png(draw: Callable[[Figure, dict], None], state: dict, figsize=(9.0, 3.6), dpi: int = 90) -> bytes:
    """Render ``draw(fig, state)`` to PNG bytes without pyplot (no backend, no global state)."""
    fig = Figure(figsize=figsize, layout="constrained")
    draw(fig, state)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


# ----------------------------------------------------------------- control factories
def _common(description: str, key: Optional[str]) -> dict:
    return dict(description=description, continuous_update=False, style=STYLE, layout=LAYOUT)


def log_slider(description: str, value: float, lo: float, hi: float, step: float = 0.05) -> W.FloatLogSlider:
    """A base-10 log slider over [lo, hi] (both > 0)."""
    return W.FloatLogSlider(value=value, base=10, min=math.log10(lo), max=math.log10(hi), step=step,
                            readout_format=".3g", **_common(description, None))


def int_slider(description: str, value: int, lo: int, hi: int, step: int = 1) -> W.IntSlider:
    return W.IntSlider(value=value, min=lo, max=hi, step=step, **_common(description, None))


def float_slider(description: str, value: float, lo: float, hi: float, step: float) -> W.FloatSlider:
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, readout_format=".3g",
                         **_common(description, None))


def dropdown(description: str, options, value) -> W.Dropdown:
    return W.Dropdown(options=options, value=value, description=description, style=STYLE, layout=LAYOUT)


class Explorer:
    """Controls + ``compute`` + ``draw`` as one widget (see the module docstring).

    ``name`` becomes the CSS class ``fldp-<name>`` of the whole box, and each control gets
    ``fldp-<name>-<control>``, so a browser test finds them.  :meth:`update` is the
    callback: call it with overrides (``ex.update(eps=10)``) to drive the explorer in plain
    Python; it returns the state (``{"error": message}`` when the inputs are out of range).
    """

    def __init__(self, name: str, title: str, controls: Mapping[str, W.ValueWidget],
                 compute: Callable[..., dict], draw: Optional[Callable[[Figure, dict], None]] = None,
                 *, intro: str = "", figsize=(9.0, 3.6), columns: int = 2):
        self.name, self.compute, self.draw, self.figsize = name, compute, draw, figsize
        self.controls: Dict[str, W.ValueWidget] = dict(controls)
        self.state: dict = {}
        self.error: Optional[str] = None  #: an internal error (a bug), not a range message
        self._quiet = 0  # > 0 inside quiet(): control changes do not recompute
        self.seconds = 0.0  # wall time of the last update (compute + draw)
        self.table = W.HTML(layout=W.Layout(min_width="360px"))
        self.message = W.HTML()
        self.image = W.Image(format="png", layout=W.Layout(max_width="100%"))
        for key, w in self.controls.items():
            w.add_class(f"fldp-{name}-{key}")
            w.observe(self._changed, names="value")
        self.table.add_class(f"fldp-{name}-table")
        self.message.add_class(f"fldp-{name}-message")
        self.image.add_class(f"fldp-{name}-plot")
        grid = W.GridBox(list(self.controls.values()),
                         layout=W.Layout(grid_template_columns=f"repeat(auto-fill, {CONTROL_WIDTH + 10}px)",
                                         max_width=f"{columns * (CONTROL_WIDTH + 10)}px"))
        head = W.HTML(f"<h3 style='margin:4px 0'>{html.escape(title)}</h3>"
                      + (f"<div style='max-width:900px'>{intro}</div>" if intro else ""))
        self.widget = W.VBox([head, grid, self.message, W.HBox([self.table]), self.image])
        self.widget.add_class(f"fldp-{name}")
        self.update()

    def values(self) -> dict:
        return {k: w.value for k, w in self.controls.items()}

    def _changed(self, _change) -> None:
        if not self._quiet:
            self.update()

    @contextlib.contextmanager
    def quiet(self):
        """Change several controls (their values, or options as an explorer's own handlers do)
        without a recomputation at each step; nests."""
        self._quiet += 1
        try:
            yield self
        finally:
            self._quiet -= 1

    def set(self, **values) -> dict:
        """Move the controls (as a user would) and return the resulting state."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise KeyError(f"{self.name} has no control {sorted(unknown)}; it has {sorted(self.controls)}")
        with self.quiet():  # one update at the end, not one per control
            for k, v in values.items():
                self.controls[k].value = v
        return self.update()

    def update(self, **overrides) -> dict:
        """Recompute from the controls (plus ``overrides``), redraw, and return the state."""
        t0 = time.perf_counter()
        values = {**self.values(), **overrides}
        self.error = None
        try:
            state = self.compute(**values)
        except ValueError as exc:  # out of the formulas' range: say so, keep the last figure
            state = {"error": str(exc)}
        except Exception as exc:  # a bug: show it, and keep it for the tests
            self.error = f"{type(exc).__name__}: {exc}"
            state = {"error": f"internal error ({self.error})"}
        self.state = state
        notes = state.get("notes", [])
        if "error" in state:
            self.message.value = (f"<div style='color:#a40000;font-weight:bold'>&#9888; "
                                  f"{html.escape(state['error'])}</div>")
        else:
            self.message.value = "".join(f"<div style='color:#8a5a00'>{html.escape(n)}</div>" for n in notes)
            self.table.value = table_html(state.get("rows", []))
            if self.draw is not None:
                try:
                    self.image.value = figure_png(self.draw, state, self.figsize)
                except Exception as exc:  # a drawing bug must not take the app down either
                    self.error = f"{type(exc).__name__} while drawing: {exc}"
                    self.message.value += f"<div style='color:#a40000'>internal error ({html.escape(self.error)})</div>"
        self.seconds = time.perf_counter() - t0
        return state

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)


def row_value(state: dict, key: str) -> Any:
    """The value of row ``key`` in a state (KeyError naming the keys if absent)."""
    for r in state.get("rows", []):
        if r.key == key:
            return r.value
    raise KeyError(f"no row {key!r}; rows: {[r.key for r in state.get('rows', [])]}")

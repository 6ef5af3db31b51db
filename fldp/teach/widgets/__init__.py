"""Interactive explorers for teaching (ipywidgets): "what happens if...?" answered at once.

One explorer per paper, each a thin layer over that paper's ``theory`` module (nothing
trains in a callback), plus a browser over the results ``make reproduce`` saved:

- :func:`wei2020_explorer` (Wei et al. 2020): sigma_U, sigma_D, sigma_A, the T > L sqrt(N) switch, the
  classic calibration's exact delta, the accountant's whole-run eps, the Theorem 2 / 3 bounds;
- :func:`zhou_explorer` (FedSGD-DPC): U(T, b) as a heat map with the closed-form and numerical optima;
- :func:`li2021_explorer` (secure FedAvg): eq. (9)'s noise, the amplified eps and the whole-run spend;
- :func:`adaptive_noise_explorer`: the aggregated noise, the chance that descent is preserved, the
  filter's resampling cost;
- :func:`results_browser`: overlay curves of any experiment under ``results/``.

Each returns an :class:`Explorer` (display it, or its ``.widget``); ``notebooks/explore.ipynb``
shows them all and ``make explore`` serves it with Voila.
"""
from fldp.teach.widgets._base import Explorer, Row, row_value
from fldp.teach.widgets.adaptive_noise import adaptive_noise as adaptive_noise_explorer
from fldp.teach.widgets.li2021 import li2021 as li2021_explorer
from fldp.teach.widgets.wei2020 import wei2020 as wei2020_explorer
from fldp.teach.widgets.results_browser import results_browser
from fldp.teach.widgets.zhou import zhou as zhou_explorer

# The factories are exported as *_explorer so that fldp.teach.widgets.<paper> stays the module
# (with its pure ``compute``), not the function.
__all__ = ["Explorer", "Row", "row_value", "wei2020_explorer", "zhou_explorer", "li2021_explorer",
           "adaptive_noise_explorer", "results_browser", "all_explorers"]


def all_explorers() -> dict:
    """Every explorer at its defaults, by tab title (what ``notebooks/explore.ipynb`` shows)."""
    return {"NbAFL": wei2020_explorer(), "FedSGD-DPC": zhou_explorer(), "Secure FedAvg": li2021_explorer(),
            "Adaptive noise": adaptive_noise_explorer(), "Results browser": results_browser()}

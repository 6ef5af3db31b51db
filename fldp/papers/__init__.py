"""One home per paper: its algorithm (a configuration of :mod:`fldp.engine`, a calibration
and at most a short hook) and its formulas (pure functions, keyword-only arguments, each
naming its equation).  The folders mirror ``notebooks/<paper>/`` so that each paper's
symbols (T, b, K, c, L, d mean different things in each) never collide.

* :mod:`fldp.papers.wei2020` -- Wei et al. 2020, NbAFL (IEEE TIFS 15)
* :mod:`fldp.papers.zhou` -- Zhou et al., FedSGD-DPC (optimal numbers of queries and replies)
* :mod:`fldp.papers.li2021` -- Li, Chang & Chi, secure FedAvg with DP (amplification by subsampling)
* :mod:`fldp.papers.adaptive_noise` -- the adaptive CLT noise perturbation scheme

Each paper's ``__init__`` declares, as plain data, what the shared tools need to know about
it: ``TITLE`` (its name in the claims register) and ``EXPERIMENTS`` (its stored run functions
for ``fldp sweep``).  Shared modules read these declarations by name (:func:`titles`,
:func:`experiments`) and never import a paper's code; ``tests/test_import_graph.py`` checks that
no shared module imports a paper's home and that no paper's home imports another's.
"""
from __future__ import annotations

import importlib

__all__ = ["PAPERS", "titles", "experiments"]

#: The papers, in the order the claims register and the book list them (``notebooks/<key>/``,
#: ``fldp/papers/<key>/``, ``results/<key>/``, ``figures/<key>/`` all use the same key).
PAPERS = ("wei2020", "zhou", "li2021", "adaptive_noise")


def _declared(paper: str):
    return importlib.import_module(f"{__name__}.{paper}")  # its __init__ only: declarations


def titles() -> dict:
    """``{paper: TITLE}`` in :data:`PAPERS` order."""
    return {p: _declared(p).TITLE for p in PAPERS}


def experiments() -> dict:
    """``{"<paper>.<name>": "module:function"}``: every paper's declared stored run functions."""
    return {f"{p}.{name}": target for p in PAPERS for name, target in _declared(p).EXPERIMENTS.items()}

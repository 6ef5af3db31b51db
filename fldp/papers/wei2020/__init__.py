"""Wei et al. 2020, "Federated Learning With Differential Privacy: Algorithms and
Performance Analysis" (NbAFL, IEEE TIFS 15): :mod:`.algorithm` (Algorithm 1 on the engine)
and :mod:`.theory` (every equation the notebooks under ``notebooks/wei2020/`` use), :mod:`.errata` (what else in its mathematics does not hold) and the figures of the chapters (:mod:`.figures`, :mod:`.simulation_figures`)."""

__all__ = ["TITLE", "EXPERIMENTS"]

#: The paper's name in the claims register, the README and the book.
TITLE = "Wei et al. 2020 (NbAFL)"
#: Its stored run functions by short name (``fldp sweep --fn wei2020.<name>``), as "module:function".
EXPERIMENTS = {
    "nbafl": "fldp.papers.wei2020.simulations:nbafl_run",
}

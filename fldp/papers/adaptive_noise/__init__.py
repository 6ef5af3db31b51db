"""The adaptive CLT noise perturbation scheme (journal article, "adaptive noise"):
:mod:`.theory` (Theorem 1, the c <= K rule and its Theorem-1 alternative, the angle filter's
threshold and cost) and :mod:`.algorithm` (Algorithm 1 and the paper's DP baseline on the
engine, what the baseline really spends), :mod:`.errata` (what else in its mathematics and tables does not
hold) and :mod:`.figures` (the chapters' larger figures)."""

__all__ = ["TITLE", "EXPERIMENTS"]

#: The paper's name in the claims register, the README and the book.
TITLE = "Adaptive CLT noise perturbation"
#: Its stored run functions by short name (``fldp sweep --fn adaptive_noise.<name>``), as "module:function".
EXPERIMENTS = {
    "utility": "fldp.papers.adaptive_noise.experiments:utility_run",
    "privacy": "fldp.papers.adaptive_noise.experiments:privacy_run",
}

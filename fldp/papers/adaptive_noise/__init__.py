"""The adaptive CLT noise perturbation scheme (journal article, "adaptive noise"):
:mod:`.theory` (Theorem 1, the c <= K rule and its Theorem-1 alternative, the angle filter's
threshold and cost) and :mod:`.algorithm` (Algorithm 1 and the paper's DP baseline on the
engine, what the baseline really spends)."""

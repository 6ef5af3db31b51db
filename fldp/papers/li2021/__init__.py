"""Li, Chang & Chi, "Secure Federated Averaging Algorithm with Differential Privacy"
(MLSP 2020): :mod:`.theory` (step sizes, Lemma 1, amplification by subsampling, eq. (9),
Theorem 1 and Remark 1), :mod:`.algorithm` (Algorithm 1 on the engine, its calibration and
what it spends), :mod:`.estimate` (Theorem 1's constants from the data), :mod:`.errata` (what else in its mathematics does
not hold) and :mod:`.figures` (the chapters' larger figures)."""

__all__ = ["TITLE", "EXPERIMENTS"]

#: The paper's name in the claims register, the README and the book.
TITLE = "Li, Chang & Chi (Secure FedAvg)"
#: Its stored run functions by short name (``fldp sweep --fn li2021.<name>``), as "module:function".
EXPERIMENTS = {
    "secure_fedavg": "fldp.papers.li2021.experiments:secure_fedavg_run",
}

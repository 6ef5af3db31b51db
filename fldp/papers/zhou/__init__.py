"""Zhou et al., "Optimizing the Numbers of Queries and Replies in Federated Learning with
Differential Privacy" (FedSGD-DPC): :mod:`.theory` (Theorems 1-4, Propositions 1-2, Lemmas
1-4, eq. (6), b*, the biconvex U(T, b), its K.K.T. solutions, ACS, Table I),
:mod:`.algorithm` (Algorithm 1 on the engine, with its calibration), :mod:`.estimate`
(the problem constants from the data) and :mod:`.errata` (what else in its mathematics does not hold)."""

__all__ = ["TITLE", "EXPERIMENTS"]

#: The paper's name in the claims register, the README and the book.
TITLE = "Zhou et al. (FedSGD-DPC)"
#: Its stored run functions by short name (``fldp sweep --fn zhou.<name>``), as "module:function".
EXPERIMENTS = {
    "fedsgd_dpc": "fldp.papers.zhou.experiments:fedsgd_dpc_run",
}

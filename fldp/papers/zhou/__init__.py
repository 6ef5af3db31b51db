"""Zhou et al., "Optimizing the Numbers of Queries and Replies in Federated Learning with
Differential Privacy" (FedSGD-DPC): :mod:`.theory` (noise calibrations of Theorems 1-2)."""

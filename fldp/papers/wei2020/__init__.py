"""Wei et al. 2020, "Federated Learning With Differential Privacy: Algorithms and
Performance Analysis" (NbAFL, IEEE TIFS 15): :mod:`.algorithm` (Algorithm 1 on the engine)
and :mod:`.theory` (every equation the notebooks under ``notebooks/wei2020/`` use)."""

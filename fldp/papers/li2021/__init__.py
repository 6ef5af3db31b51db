"""Li, Chang & Chi, "Secure Federated Averaging Algorithm with Differential Privacy"
(MLSP 2020): :mod:`.theory` (step sizes, Lemma 1, amplification by subsampling, eq. (9),
Theorem 1 and Remark 1), :mod:`.algorithm` (Algorithm 1 on the engine, its calibration and
what it spends) and :mod:`.estimate` (Theorem 1's constants from the data)."""

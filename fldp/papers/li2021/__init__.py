"""Li, Chang & Chi, "Secure Federated Averaging Algorithm with Differential Privacy"
(MLSP 2020): :mod:`.theory` (amplification by subsampling and the noise of eq. (9))."""

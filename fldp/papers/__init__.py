"""One home per paper: its algorithm (a configuration of :mod:`fldp.engine`, a calibration
and at most a short hook) and its formulas (pure functions, keyword-only arguments, each
naming its equation).  The folders mirror ``notebooks/<paper>/`` so that each paper's
symbols (T, b, K, c, L, d mean different things in each) never collide.

* :mod:`fldp.papers.wei2020` -- Wei et al. 2020, NbAFL (IEEE TIFS 15)
* :mod:`fldp.papers.zhou` -- Zhou et al., FedSGD-DPC (optimal numbers of queries and replies)
* :mod:`fldp.papers.li2021` -- Li, Chang & Chi, secure FedAvg with DP (amplification by subsampling)
"""

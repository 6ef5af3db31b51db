"""The reproduction toolkit: everything that runs the science and publishes it, none of the science.

* :mod:`.paths`: where outputs go in each mode, atomic writes, results as JSON values;
* :mod:`.results`: a notebook's record (:class:`~fldp.repro.results.Recorder`) and other notebooks' results;
* :mod:`.store`: the run store, one file per finished run keyed by its content;
* :mod:`.sweep`: runs over grids and seeds through the store, in process, in processes or on Dask;
* :mod:`.cost`: the cost model that predicts a reproduction's time;
* :mod:`.pipeline`: ``fldp reproduce`` (finding the chapters, executing them, ordering, the plan);
* :mod:`.report`: the claims register (REPORT.md) and the run's report;
* :mod:`.book`: the static book;
* :mod:`.cli`: the ``fldp`` command.

The science (:mod:`fldp`) never imports this package; the papers' experiment layer (their
``experiments`` modules, ``fldp.papers.wei2020.simulations``, ``fldp.baseline``, ``fldp.equal_privacy``)
may use the store and sweeps.
"""

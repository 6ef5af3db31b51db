"""fldp: a reproducible companion to papers on differential privacy in federated learning.

The notebooks under ``notebooks/`` are the paper companions; this package holds the code they
share, in three wings: the science (``fldp.*``: mechanisms, accounting, models, data, the engine,
audit and attacks, verdicts, ``fldp.papers``), the reproduction toolkit (``fldp.repro``: paths,
results, run store, sweeps, cost, pipeline, report, book, command line) and the teaching code
(``fldp.teach``: widgets, exercises).  The science never imports the other two (the papers'
experiment layer may use the run store and sweeps).  Nothing heavy is imported here.
"""

from pathlib import Path

__all__ = ["__version__", "PROJECT_ROOT"]

__version__ = "0.2.0"

#: The checkout this package runs from (its ``data/``, ``results/``, ``notebooks/``, ``build/``).
PROJECT_ROOT = Path(__file__).resolve().parent.parent

"""fldp: a reproducible companion to papers on differential privacy in federated learning.

The notebooks under ``notebooks/`` are the paper companions; this package holds the code
they share.  ``fldp reproduce`` (or ``make reproduce``) re-runs every notebook headlessly.
Nothing heavy is imported here, so ``import fldp`` stays cheap.
"""

__all__ = ["__version__"]

__version__ = "0.2.0"

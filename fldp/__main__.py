"""``python -m fldp`` is the same as the ``fldp`` command."""
from fldp.repro.cli import main

raise SystemExit(main())

"""``python -m fldp`` is the same as the ``fldp`` command."""
from fldp.cli import main

raise SystemExit(main())

"""``python -m semrel``: the same as the ``semrel`` command."""

from semrel.cli import main

raise SystemExit(main())

"""``python -m trainers`` (see :mod:`trainers.cli`)."""

import sys

from .cli import main

sys.exit(main())

"""Paths every test shares: the repository and the mirror of the real upstream files."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("SEMREL_MIRROR") or REPO.parent / "shared" / "upstream")
FIXTURES = REPO / "tests" / "fixtures"

"""Paths every test shares: the repository, the mirror of the real upstream files and the fixtures."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("SEMREL_MIRROR") or REPO.parent / "shared" / "upstream")
HAS_MIRROR = (MIRROR / "str-2021").is_dir()
NEEDS_MIRROR = "needs the upstream mirror (../shared/upstream or $SEMREL_MIRROR)"
# small files of every upstream format in the mirror layout, each dataset folder with its own
# SHA256SUMS (see tests/fixtures/README.md)
FIXTURES = REPO / "tests" / "fixtures"


def needs_mirror(test):
    """Skip ``test`` without the real mirror: it asserts figures of the real data."""
    import pytest

    return pytest.mark.skipif(not HAS_MIRROR, reason=NEEDS_MIRROR)(test)

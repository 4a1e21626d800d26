"""Parquet data files of a Hub-layout dataset folder, named by their content.

A file is ``<config>/<split>-00000-of-00001-<fingerprint>.parquet`` (:func:`data_file_name`): the
Hub's shard name and the first :data:`FINGERPRINT_LENGTH` hex digits of the sha256 of its bytes.
``datasets`` caches a local folder that declares ``configs:`` under a key made of that YAML and
the folder's name, not of the files' content; with the fingerprint in the name the YAML changes
whenever the rows do, so a rewritten folder is never served rows cached from an earlier one.
``semrel build`` (:mod:`semrel.publishing.export`) and ``semrel augment``
(:mod:`semrel.trainers.neighbour_pairs`) write their folders with :func:`write_parquet`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from .sources import sha256_of

if TYPE_CHECKING:
    import datasets

FINGERPRINT_LENGTH = 16  # hex digits of the sha256 in a data file's name
DATA_FILE = re.compile(r"(?P<split>[^-/]+)-00000-of-00001-(?P<fingerprint>[0-9a-f]{16})\.parquet")


def data_file_name(split: str, fingerprint: str) -> str:
    """``<split>-00000-of-00001-<fingerprint>.parquet``: the Hub's shard name and the first
    :data:`FINGERPRINT_LENGTH` hex digits of the sha256 of the file's bytes.

    >>> data_file_name("train", "0123456789abcdef0123")
    'train-00000-of-00001-0123456789abcdef.parquet'
    """
    return f"{split}-00000-of-00001-{fingerprint[:FINGERPRINT_LENGTH]}.parquet"


def write_parquet(ds: datasets.Dataset, folder: Path, config: str, split: str) -> str:
    """Write ``ds`` under ``folder`` as ``<config>/``:func:`data_file_name`; returns that path,
    relative to ``folder`` (as the card names it)."""
    path = Path(folder) / config / f"{split}.parquet.partial"
    path.parent.mkdir(parents=True, exist_ok=True)
    ds.to_parquet(str(path))
    name = f"{config}/{data_file_name(split, sha256_of(path))}"
    path.rename(Path(folder) / name)
    return name

"""What a run saw: the pairs it trained on and those that chose its checkpoint, as hashes
(``seen_pairs.json``), so that nobody scores a model on pairs it learnt from
(``semrel benchmark`` marks such cells).

A pair's hash is the first 16 hex digits of the sha256 of its texts with white space collapsed
and the two sentences in sorted order (a pair and its swap are one pair; SemRel-2024's English
train, which is STR-2021, hashes as STR-2021 does), and its condition where it has one.
Standard library only.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .files import read_seen, write_seen

PAIR_HASH = "sha256(json([sorted(s1, s2) whitespace-collapsed] + [condition])) [:16]"


def collapsed(text: str) -> str:
    """White space collapsed to single spaces, none at either end."""
    return " ".join(text.split())


def pair_hashes(sentence1, sentence2, condition=None) -> list[str]:
    """One hash per pair (see module docstring)."""
    conditions = [None] * len(sentence1) if condition is None else list(condition)
    hashes = []
    for a, b, c in zip(sentence1, sentence2, conditions, strict=True):
        parts = sorted((collapsed(a), collapsed(b))) + ([] if c is None else [collapsed(c)])
        hashes.append(hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:16])
    return hashes


def seen_part(role: str, data: str, split: str, rows) -> dict:
    """One entry of ``seen_pairs.json``: ``role`` (train | selection), the data's name, split
    and the hashes of its rows (a ``datasets.Dataset`` with sentence1, sentence2[, condition])."""
    condition = rows["condition"] if "condition" in rows.column_names else None
    return {"role": role, "data": data, "split": split,
            "pairs": pair_hashes(rows["sentence1"], rows["sentence2"], condition)}


def write_seen_pairs(folder: Path, parts: list[dict]) -> Path:
    return write_seen(folder, {"hash": PAIR_HASH, "parts": parts})


def seen_pairs(folder: Path, parameter: str = "model") -> list[dict] | None:
    """The parts of a run's ``seen_pairs.json``; None where it has none."""
    record = read_seen(folder, parameter)
    return None if record is None else record["parts"]

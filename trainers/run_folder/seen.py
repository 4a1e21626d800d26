"""What a run saw: the pairs it trained on and those that chose its checkpoint, as hashes
(``seen_pairs.json``), so that nobody scores a model on pairs it learnt from
(``semrel benchmark`` marks such cells).

A pair's hash is the first 16 hex digits of the sha256 of its texts as one key
(:func:`normalised`: Unicode NFKC, case-folded, format characters such as U+200B dropped, white
space collapsed) with the two sentences in sorted order (a pair and its swap are one pair;
SemRel-2024's English train, which is STR-2021, hashes as STR-2021 does), and its condition
where it has one. The key is what an uncased tokenizer sees alike, so a cased model is also
refused pairs that differ only in case: the safe side. The file names its key
(:data:`PAIR_HASH`); files written with the earlier key (:data:`PAIR_HASH_V1`, white space
collapsed only) are compared in their own key. A run started from another run carries that
run's record into its own (:func:`start_seen`), in that record's key. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path

from semrel.metrics.errors import ParameterError

from .files import SEEN, read_seen, run_data, write_seen

PAIR_HASH = ("sha256(json([sorted(s1, s2) NFKC case-folded format-characters-dropped whitespace-collapsed]"
             " + [condition])) [:16]")
PAIR_HASH_V1 = "sha256(json([sorted(s1, s2) whitespace-collapsed] + [condition])) [:16]"


def collapsed(text: str) -> str:
    """White space collapsed to single spaces, none at either end."""
    return " ".join(text.split())


def normalised(text: str) -> str:
    """``text`` as a pair key: NFKC, case-folded (NFKC again after folding), format characters
    (Unicode category Cf: zero-width space and joiners, soft hyphen, bidi marks) dropped, white
    space collapsed."""
    if text.isascii():  # NFKC leaves ASCII as it is and it holds no format character
        return collapsed(text.lower())
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return collapsed("".join(c for c in folded if unicodedata.category(c) != "Cf"))


KEYS = {PAIR_HASH: normalised, PAIR_HASH_V1: collapsed}  # a file's ``hash`` -> its text key


def pair_hashes(sentence1, sentence2, condition=None, hashing: str = PAIR_HASH) -> list[str]:
    """One hash per pair, in the key ``hashing`` names (a key of :data:`KEYS`; see module
    docstring)."""
    key = KEYS[hashing]
    conditions = [None] * len(sentence1) if condition is None else list(condition)
    hashes = []
    for a, b, c in zip(sentence1, sentence2, conditions, strict=True):
        parts = sorted((key(a), key(b))) + ([] if c is None else [key(c)])
        hashes.append(hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:16])
    return hashes


def seen_part(role: str, data: str, split: str, rows, hashing: str = PAIR_HASH) -> dict:
    """One entry of ``seen_pairs.json``: ``role`` (train | selection), the data's name, split
    and the hashes of its rows (a ``datasets.Dataset`` with sentence1, sentence2[, condition])
    in the key ``hashing`` names."""
    condition = rows["condition"] if "condition" in rows.column_names else None
    return {"role": role, "data": data, "split": split,
            "pairs": pair_hashes(rows["sentence1"], rows["sentence2"], condition, hashing)}


def write_seen_pairs(folder: Path, parts: list[dict], hashing: str = PAIR_HASH) -> Path:
    return write_seen(folder, {"hash": hashing, "parts": parts})


def _known_key(record: dict, folder, parameter: str) -> dict:
    if record["hash"] not in KEYS:
        raise ParameterError(parameter, str(folder), f"{SEEN} hashes its pairs as {record['hash']!r}, "
                             f"which semrel does not compute (known: {' | '.join(KEYS)})")
    return record


def start_seen(folder: Path, parameter: str = "model_path", value=None) -> tuple[str, list[dict]]:
    """``(key, parts)``: what a run started from the model in ``folder`` saw before it, to go
    into its own ``seen_pairs.json`` in that key: the parts of the folder's record, none where
    the folder records no run. A run that names its data but not its pairs (written before
    ``seen_pairs.json``) is a ParameterError: a run started from it could not say what it saw."""
    record = read_seen(folder, parameter, value)
    if record is None:
        if (data := run_data(Path(folder))) is not None:
            raise ParameterError(parameter, str(folder) if value is None else value,
                                 f"was trained on {data} but records no {SEEN} (written before semrel "
                                 "recorded a run's pairs): a run started from it could not say which pairs it "
                                 "saw; start from the model it was trained from")
        return PAIR_HASH, []
    return _known_key(record, folder, parameter)["hash"], record["parts"]


def seen_pairs(folder: Path, parameter: str = "model") -> list[dict] | None:
    """The parts of a run's ``seen_pairs.json``, each with the file's ``hash`` (the key its pairs
    were hashed in: :func:`pair_hashes`' ``hashing``); None where it has none. A key semrel does
    not compute is a ParameterError naming the file."""
    record = read_seen(folder, parameter)
    if record is None:
        return None
    return [{**part, "hash": record["hash"]} for part in _known_key(record, folder, parameter)["parts"]]

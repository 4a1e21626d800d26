"""Reading the 14 MTurk result files of crowd-sts into one tidy annotation table.

One row per annotation (an MTurk assignment) with the columns every crowd-sts function relies on:
``pair_id`` (the HITId), ``worker_id`` (keyed pseudonym, see :func:`pseudonymise`), ``label``
(int 1–5, the first character of the label string), ``seconds`` (WorkTimeInSeconds), ``source``,
``is_random`` (from the file name), ``sentence1``/``sentence2`` (mojibake repaired with
``ftfy.fix_encoding``) and ``sentence1_raw``/``sentence2_raw`` (the text as published).
Raw MTurk WorkerIds never leave this module.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataValidationError
from ..textio import csv_rows, decode_utf8

KEY_ENV = "SEMREL_CROWD_STS_KEY"
# Public on purpose: builds are reproducible, but pseudonyms made with it are linkable across
# releases and by anyone holding a raw WorkerId. Pass a private key to prevent that.
DEFAULT_KEY = "semrel/crowd-sts/public-pseudonym-key/v1"

COLUMNS = {  # upstream column -> tidy column
    "HITId": "pair_id",
    "WorkerId": "worker_id",
    "Answer.semantic-similarity.label": "label",
    "WorkTimeInSeconds": "seconds",
    "Input.text1": "sentence1_raw",
    "Input.text2": "sentence2_raw",
}
LABEL = re.compile(r"([1-5])(?: - .+)?")  # "1 - Not Similar At All", "2", ..., "5 - Highly Similar"
SECONDS = re.compile(r"[0-9]+")  # ASCII digits only ("٣" is no number of seconds)


def file_source(file_name: str) -> tuple[str, bool]:
    """``("GYAFC_formal", True)`` for ``GYAFC_formal_random_human.csv`` (also ``Yelp_Random_...``)."""
    stem = Path(file_name).name.removesuffix(".csv").removesuffix("_human")
    is_random = stem.lower().endswith("_random")
    return (stem[: -len("_random")] if is_random else stem), is_random


def resolve_key(key: str | None = None) -> str:
    """The pseudonym key: the argument, else ``$SEMREL_CROWD_STS_KEY``, else :data:`DEFAULT_KEY`."""
    key = key if key is not None else os.environ.get(KEY_ENV) or DEFAULT_KEY
    if not key:
        raise ValueError("pseudonym key must not be empty")
    return key


def pseudonymise(worker_ids: Iterable[str], key: str | None = None) -> list[str]:
    """``"w" + HMAC-SHA256(key, WorkerId)[:12 hex]`` for each id: stable for one key, not invertible
    without it. With the public default key anyone holding a raw WorkerId can recompute its pseudonym.
    """
    secret = resolve_key(key).encode("utf-8")
    return ["w" + hmac.new(secret, w.encode("utf-8"), hashlib.sha256).hexdigest()[:12]
            for w in worker_ids]


def _first_bad(path, mask: np.ndarray, rule: str, detail) -> None:
    """Raise for the first row where ``mask`` is True; ``detail(i)`` describes row index ``i``."""
    bad = np.flatnonzero(mask)
    if len(bad):
        i = int(bad[0])
        raise DataValidationError(path, i + 1, rule, f"{detail(i)}; {len(bad)} such row(s)")


def _first_row(pair_ids: pd.Series, i: int) -> int:
    return int(np.flatnonzero(pair_ids.to_numpy() == pair_ids.iat[i])[0]) + 1


def read_annotation_file(path: str | os.PathLike, file_name: str | None = None) -> pd.DataFrame:
    """Parse and validate one MTurk batch file; WorkerIds are still raw here (``worker_id``).

    Rules (each raises :class:`DataValidationError` naming file and 1-based data row): those of
    :func:`dataset_scripts.textio.csv_rows` (UTF-8, the header's field count in every row, at
    least one row); required columns present; WorkerId and HITId non-empty; label matches ``1``–``5``
    optionally followed by `` - <text>``; WorkTimeInSeconds a non-negative integer; both texts
    non-empty; every assignment of a HIT shows the same two texts; a worker labels a HIT at most once.
    """
    name = file_name or Path(path).name
    source, is_random = file_source(name)
    rows = [row for _, row in csv_rows(str(path), Path(path).read_bytes(), tuple(COLUMNS))]
    df = pd.DataFrame({tidy: [row[column] for row in rows] for column, tidy in COLUMNS.items()},
                      dtype=str)
    for column, rule in (("pair_id", "missing HITId"), ("worker_id", "missing WorkerId")):
        _first_bad(path, (df[column].str.strip() == "").to_numpy(), rule, lambda i: "empty cell")
    label = df["label"].str.fullmatch(LABEL.pattern).to_numpy()
    _first_bad(path, ~label, "unparseable label (expected 1-5, optionally '<n> - <text>')",
               lambda i: f"label {df['label'].iat[i]!r} of HIT {df['pair_id'].iat[i]}")
    seconds = df["seconds"].str.fullmatch(SECONDS.pattern).to_numpy()
    _first_bad(path, ~seconds, "WorkTimeInSeconds must be a non-negative integer",
               lambda i: repr(df["seconds"].iat[i]))
    for column in ("sentence1_raw", "sentence2_raw"):
        upstream = "Input.text1" if column == "sentence1_raw" else "Input.text2"
        _first_bad(path, (df[column].str.strip() == "").to_numpy(), f"empty {upstream}",
                   lambda i: f"HIT {df['pair_id'].iat[i]}")
    for column, upstream in (("sentence1_raw", "Input.text1"), ("sentence2_raw", "Input.text2")):
        first = df.groupby("pair_id", sort=False)[column].transform("first")
        _first_bad(path, (df[column] != first).to_numpy(),
                   f"HIT texts differ between assignments ({upstream})",
                   lambda i, column=column, first=first: f"HIT {df['pair_id'].iat[i]}: {df[column].iat[i]!r} "
                   f"here but {first.iat[i]!r} at row {_first_row(df['pair_id'], i)}")
    dup = df.duplicated(["pair_id", "worker_id"]).to_numpy()
    _first_bad(path, dup, "a worker labelled the same HIT twice",
               lambda i: f"HIT {df['pair_id'].iat[i]}")
    df["label"] = df["label"].str[0].astype(np.int8)
    df["seconds"] = df["seconds"].astype(np.int32)
    df["source"] = source
    df["is_random"] = is_random
    df["file"] = name
    df["row"] = np.arange(1, len(df) + 1)
    return df


def read_annotations(paths: Mapping[str, str | os.PathLike], key: str | None = None) -> pd.DataFrame:
    """All files (``{file name: local path}``) as one tidy table with pseudonymised ``worker_id``.

    A HIT found in two files is an error; text repair is ``ftfy.fix_encoding`` (mojibake only:
    curly quotes and other characters are left as published).
    """
    import ftfy

    frames = [read_annotation_file(path, name) for name, path in paths.items()]
    df = pd.concat(frames, ignore_index=True)
    files_per_hit = df.groupby("pair_id")["file"].nunique()
    if (files_per_hit > 1).any():
        hit = files_per_hit[files_per_hit > 1].index[0]
        rows = df[df["pair_id"] == hit]
        second = rows[rows["file"] != rows["file"].iat[0]].iloc[0]
        raise DataValidationError(paths[second["file"]], int(second["row"]),
                                  "HIT appears in two files", f"HIT {hit} also in {rows['file'].iat[0]}")
    raw_ids = df["worker_id"].unique()
    pseudonyms = pseudonymise(raw_ids, key)
    if len(set(pseudonyms)) != len(raw_ids):
        raise ValueError("pseudonym collision: use another key")
    df["worker_id"] = df["worker_id"].map(dict(zip(raw_ids, pseudonyms, strict=True)))
    for column in ("sentence1", "sentence2"):
        raw = df[column + "_raw"]
        fixed = {text: ftfy.fix_encoding(text) for text in raw.unique()}
        df[column] = raw.map(fixed)
    return df.drop(columns=["file", "row"])


def read_worker_list(path: str | os.PathLike, key: str | None = None) -> frozenset[str]:
    """The authors' flagged-worker list (one WorkerId a line), pseudonymised with ``key``."""
    ids = [line.strip() for line in decode_utf8(str(path), Path(path).read_bytes()).splitlines()]
    if any(not i for i in ids):
        raise DataValidationError(path, ids.index("") + 1, "empty line in worker list")
    return frozenset(pseudonymise(ids, key))

"""What a model was trained or selected on, and whether a benchmark set holds any of it.

A semrel run records the pairs it trained and chose its checkpoint on (``seen_pairs.json``,
:mod:`~trainers.run_folder.seen`); an ensemble is its members' runs, and a learned stack also
refuses the rows it was fit on (:meth:`~trainers.stacking.LearnedStack.check_scored`). The record
belongs to the folder, not to the kind it is read as: a run read with a forced ``--model-kind``
is refused the same pairs. A run written before that record says only its data
(``metrics.json``): a set of the same dataset is refused, and so is a set of any other dataset
that holds pairs of that data (compared by content: SemRel-2024's English train is STR-2021),
since which pairs it saw cannot be told. Models semrel did not train record nothing; their
cells are scored, with ``known`` False.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from semrel.dataset_scripts.benchmark_sets import BenchmarkSet
from semrel.dataset_scripts.registry import registered_id
from semrel.metrics.errors import DataValidationError, ParameterError

from ..kinds import get
from ..run_folder import pair_hashes, run_data, seen_pairs


@dataclass(frozen=True)
class Seen:
    """``pairs``: per key a file hashed its pairs in (``seen_pairs.json``'s ``hash``), pair hash
    -> where it was seen (``train semrel-2024/eng/train``); ``unrecorded``: the data of runs
    that recorded no pairs; ``ensemble``: a loaded ensemble whose learned stack refuses its fit
    rows; ``known``: whether the model's training is on record (a run, whatever kind reads it)."""

    pairs: dict[str, dict[str, str]] = field(default_factory=dict)
    unrecorded: tuple[str, ...] = ()
    ensemble: object = None
    known: bool = False


def seen_by(scorer) -> Seen:
    """What the model behind ``scorer`` saw, in the folders its kind names
    (:meth:`~trainers.kinds.base.ModelKind.seen_folders`: an ensemble's members; see module
    docstring)."""
    kind = get(scorer.kind)
    folders, ensemble = kind.seen_folders(scorer), getattr(scorer, "ensemble", None)
    pairs, unrecorded, known = {}, [], kind.records_training
    for folder in folders:
        parts = seen_pairs(Path(folder))
        if parts is None:
            data = run_data(Path(folder))
            if data is not None or kind.records_training:
                unrecorded.append(data or str(folder))
                known = True
            continue
        known = True
        for part in parts:
            where = f"{part['role']} {part['data']}/{part['split']}"
            pairs.setdefault(part["hash"], {}).update(dict.fromkeys(part["pairs"], where))
    return Seen(pairs, tuple(unrecorded), ensemble, known)


def overlap(seen: Seen, bset: BenchmarkSet, rows) -> str | None:
    """Why ``rows`` (the set's pairs) may not be scored with this model, or None."""
    return seen_in(seen, f"{bset.dataset}/{bset.config}", bset.split, rows,
                   tuple((k, v) for k, v in bset.load_options if k in ("mirror", "cache_dir")))


def seen_in(seen: Seen, data: str, split: str, rows, options: tuple = ()) -> str | None:
    """Whether the model :func:`seen_by` describes saw ``rows``, the pairs of ``split`` of
    ``data`` (``"<id>/<config>"``): why it did, or None. Seen: any of the pairs, trained or
    chosen on; for a run that recorded no pairs, any of the dataset it trained on, or any pair
    of that data (loaded with ``options``, ``mirror`` and ``cache_dir``); for a learned stack,
    the rows it was fit on."""
    condition = rows["condition"] if "condition" in rows.column_names else None
    found = [None] * len(rows)  # per row: where it was seen
    for hashing, places in seen.pairs.items():  # each key a record hashed its pairs in
        hashes = pair_hashes(rows["sentence1"], rows["sentence2"], condition, hashing)
        found = [f or places.get(h) for f, h in zip(found, hashes, strict=True)]
    hits = Counter(f for f in found if f)
    if hits:
        where = "; ".join(f"{n} in {w}" for w, n in hits.most_common())
        return f"trained on these pairs: {sum(hits.values())} of {len(rows)} ({where})"
    dataset = registered_id(data)
    for trained in seen.unrecorded:
        same = trained == data or (dataset is not None and registered_id(trained) == dataset)
        theirs = None if same else trained_pairs(trained, options)
        shared = 0 if not theirs else sum(h in theirs for h in pair_hashes(
            rows["sentence1"], rows["sentence2"], condition))
        if same or shared:
            held = "" if same else f", and {shared} of these {len(rows)} pairs are pairs of it"
            return (f"trained on {trained}, whose pairs the run did not record (written before "
                    f"seen_pairs.json){held}: which of these it saw cannot be told")
    if seen.ensemble is not None:
        ids = [i for c in ("pair_id", "str_2021_pair_id") if c in rows.column_names for i in rows[c]]
        try:
            seen.ensemble.check_scored(data, split, ids)
        except ParameterError as exc:
            return exc.rule.replace("{", "").replace("}", "")
    return None


@lru_cache(maxsize=16)
def trained_pairs(trained: str, options: tuple = ()) -> frozenset[str] | None:
    """The hashes of every pair of every split of ``trained`` (a run's recorded data: a registry
    ``"<id>/<config>"`` loaded with ``options``, or a Hub-layout folder's ``"<folder>/<config>"``);
    None where it cannot be loaded here (a Hub dataset, data no longer on disk, user-supplied
    data): then only the dataset's name tells what the run saw."""
    from semrel.dataset_scripts.pairs import load_pairs

    dataset, _, config = trained.partition("/")
    folder = Path(trained).parent
    try:
        if registered_id(trained) is not None:
            data = load_pairs(dataset, config or "default", **dict(options))
        elif folder != Path(".") and folder.is_dir() and not Path(trained).is_dir():
            data = load_pairs(str(folder), Path(trained).name)
        else:
            return None
    except (ParameterError, DataValidationError, OSError, ValueError):
        return None
    hashes = set()
    for rows in data.splits.values():
        condition = rows["condition"] if "condition" in rows.column_names else None
        hashes.update(pair_hashes(rows["sentence1"], rows["sentence2"], condition))
    return frozenset(hashes)

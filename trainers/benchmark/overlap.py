"""What a model was trained or selected on, and whether a benchmark set holds any of it.

A semrel run records the pairs it trained and chose its checkpoint on (``seen_pairs.json``,
:mod:`~trainers.run_folder.seen`); an ensemble is its members' runs, and a learned stack also
refuses the rows it was fit on (:meth:`~trainers.stacking.LearnedStack.check_scored`). A run
written before that record says only its data (``metrics.json``): a set of the same dataset is
refused, since which pairs it saw cannot be told. Models semrel did not train record nothing;
their cells are scored, with ``known`` False.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from semrel.dataset_scripts.benchmark_sets import BenchmarkSet
from semrel.dataset_scripts.registry import registered_id
from semrel.metrics.errors import ParameterError

from ..run_folder import pair_hashes, run_data, seen_pairs


@dataclass(frozen=True)
class Seen:
    """``pairs``: pair hash -> where it was seen (``train semrel-2024/eng/train``);
    ``unrecorded``: the data of runs that recorded no pairs; ``ensemble``: a loaded ensemble
    whose learned stack refuses its fit rows; ``known``: whether the model is semrel's (its
    training is on record)."""

    pairs: dict[str, str] = field(default_factory=dict)
    unrecorded: tuple[str, ...] = ()
    ensemble: object = None
    known: bool = False


def seen_by(scorer) -> Seen:
    """What the model behind ``scorer`` saw (see module docstring)."""
    if scorer.kind == "ensemble":
        folders, ensemble = [m.path for m in scorer.members], scorer.ensemble
    elif scorer.kind == "semrel":
        folders, ensemble = [scorer.path], None
    else:
        return Seen()
    pairs, unrecorded = {}, []
    for folder in folders:
        parts = seen_pairs(Path(folder))
        if parts is None:
            unrecorded.append(run_data(Path(folder)) or str(folder))
            continue
        for part in parts:
            where = f"{part['role']} {part['data']}/{part['split']}"
            pairs.update(dict.fromkeys(part["pairs"], where))
    return Seen(pairs, tuple(unrecorded), ensemble, True)


def overlap(seen: Seen, bset: BenchmarkSet, rows) -> str | None:
    """Why ``rows`` (the set's pairs) may not be scored with this model, or None."""
    return seen_in(seen, f"{bset.dataset}/{bset.config}", bset.split, rows)


def seen_in(seen: Seen, data: str, split: str, rows) -> str | None:
    """Whether the model :func:`seen_by` describes saw ``rows``, the pairs of ``split`` of
    ``data`` (``"<id>/<config>"``): why it did, or None. Seen: any of the pairs, trained or
    chosen on; for a run that recorded no pairs, any of the dataset it trained on; for a learned
    stack, the rows it was fit on."""
    condition = rows["condition"] if "condition" in rows.column_names else None
    hashes = pair_hashes(rows["sentence1"], rows["sentence2"], condition) if seen.pairs else ()
    hits = Counter(seen.pairs[h] for h in hashes if h in seen.pairs)
    if hits:
        where = "; ".join(f"{n} in {w}" for w, n in hits.most_common())
        return f"trained on these pairs: {sum(hits.values())} of {len(rows)} ({where})"
    dataset = registered_id(data)
    for trained in seen.unrecorded:
        if trained == data or (dataset is not None and registered_id(trained) == dataset):
            return (f"trained on {trained}, whose pairs the run did not record (written before "
                    f"seen_pairs.json): which of these it saw cannot be told")
    if seen.ensemble is not None:
        ids = [i for c in ("pair_id", "str_2021_pair_id") if c in rows.column_names for i in rows[c]]
        try:
            seen.ensemble.check_scored(data, split, ids)
        except ParameterError as exc:
            return exc.rule.replace("{", "").replace("}", "")
    return None

"""A trained candidate's predictions as files: its kept model's dev and validation scores,
``{dev,validation}.json`` (C-STS's ``{"0": score, ...}`` by row, on the 1–5 scale, as ``semrel
predict`` writes them) beside its run, published
(``--publish``) as ``predictions/c-sts/member-<candidate>/`` with its study record in the
validation file's entry. With ``--reuse-published`` the published pair stands for the run on a
machine without it: the study's ensembles are made from these files alone, so a study spans
fresh machines, a candidate at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semrel.publishing.prediction_files import Prediction, published, read_row_scores, same_ids
from semrel.publishing.prediction_files import publish_or_exit as publish_files

from .candidates import CONFIG, DATASET, SCORED, canonical

SPLITS = ("dev", SCORED)  # the kept model's choice rows, then the scored ones


def recipe(candidate: str) -> str:
    """The candidate's folder under ``predictions/c-sts/``: ``bi@mpnet,epochs=4`` is
    ``member-bi-mpnet-epochs4``."""
    text = canonical(candidate).lower()
    for old, new in (("@", "-"), (",", "-"), ("_", "-"), ("=", "")):
        text = text.replace(old, new)
    return f"member-{text}"


def write_member_files(folder: Path, score_range: tuple[float, float]) -> dict[str, str]:
    """``folder/dev.json`` and ``folder/validation.json`` from a finished ``semrel fit`` run's
    selection and evaluation predictions (each split's rows in order, mapped from the label scale
    [0, 1] to ``score_range``); their paths by split."""
    from semrel.trainers.data import unscale
    from semrel.trainers.prediction import write_submission
    from semrel.trainers.run_folder import PREDICTIONS, SELECTION, load_run

    files = {}
    for split, name in zip(SPLITS, (SELECTION, PREDICTIONS), strict=True):
        run = load_run(folder, name)
        if run.split != split or list(run.ids) != list(range(len(run.ids))):
            raise SystemExit(f"{folder / name}: predicts {run.split} rows {run.ids[:3]}..., "
                             f"not {split}'s rows in order")
        files[split] = str(write_submission(unscale(run.predictions, score_range), folder / f"{split}.json"))
    return files


def columns(record: dict, score_range: tuple[float, float], rows: dict[str, int]) -> dict[str, np.ndarray]:
    """A trained candidate's scores by split, read from its files (``record["files"]``), each
    holding every one of the split's ``rows[split]`` keys once (else the file, the row and the
    rule), on the label scale [0, 1] its run scored them on (``(s − lo) / (hi − lo)``)."""
    lo, hi = score_range
    scores = {}
    for split in SPLITS:
        found = read_row_scores(record["files"][split])
        same_ids(found, [str(i) for i in range(rows[split])], f"{DATASET}/{CONFIG}/{split}", "key")
        by_row = dict(zip(found.ids, found.scores, strict=True))
        scores[split] = (np.array([by_row[str(i)] for i in range(rows[split])], dtype=np.float64) - lo) / (hi - lo)
    return scores


def publish_member(record: dict, command: str, machine: str, into: Path) -> None:
    """The candidate's two files copied to ``into/predictions/c-sts/member-<candidate>/``; the
    validation file's figure holds the record that :func:`standing` gives back."""
    kept = {k: v for k, v in record.items() if k not in ("folder", "files")}
    rho = {split: record[SCORED]["spearman"] if split == SCORED else record["dev"] for split in SPLITS}
    files = [Prediction(Path(record["files"][split]), DATASET, CONFIG, split, recipe(record["candidate"]),
                        {"spearman": rho[split] and round(rho[split], 4), **({"record": kept} if split == SCORED
                                                                               else {})})
             for split in SPLITS]
    for path in publish_files(files, command=command, machine=machine, into=into):
        print(f"published: {path}", flush=True)


def standing(candidate: str, key: str, into: Path) -> dict | None:
    """The record of ``candidate`` rebuilt from its published files (their paths as its
    ``files``), None when they are not published; a file missing or changed, or published for
    another run of the candidate (another key: precision, steps, model), ends the study naming it."""
    import json

    found = {}
    for split in SPLITS:
        relative = f"predictions/{DATASET}/{recipe(candidate)}/{split}.json"
        try:
            found[split] = published(relative, into)
        except ValueError as exc:
            raise SystemExit(f"--reuse-published: {exc}") from None
    if None in found.values():
        return None
    entries = json.loads((Path(into) / "results.json").read_text(encoding="utf-8"))["prediction_files"]
    record = entries[f"predictions/{DATASET}/{recipe(candidate)}/{SCORED}.json"]["figure"]["record"]
    if record["key"] != key:
        raise SystemExit(f"--reuse-published: {found[SCORED]} holds the run {record['key']!r}, "
                         f"not this study's {key!r}: drop --reuse-published to train it")
    return {**record, "folder": None, "files": {split: str(path) for split, path in found.items()}}

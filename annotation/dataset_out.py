"""Scored pairs as a dataset folder: BWS annotations of pair ids in, a Hub-layout folder out.

:func:`write_dataset` scores the annotations by counting (score = (#best - #worst) / #appearances,
mapped to [0, 1] as STR-2021 publishes it: (score + 1) / 2), computes their split-half reliability
and human ceiling (:func:`semrel.metrics.ceiling.bws_ceiling`: the annotations of each tuple split at
random into halves, the Spearman correlation of the halves' counting scores averaged over
``trials`` splits = SHR; R = its Spearman–Brown step; ceiling √R; the 95 % interval a bootstrap
over pairs, the SHR's interval mapped back from the ceiling's through the same monotone formula),
and writes ``default/train-…parquet`` (:func:`semrel.dataset_scripts.parquet_files.write_parquet`)
with one row per pair -- ``pair_id, sentence1, sentence2, score, source, appearances`` (the
annotations whose tuple held the pair; not ``annotations``, which the suite's readers take for a list
of a pair's ratings) -- and ``README.md``, a dataset card whose YAML gives the
licence, languages, ``score_range: [0, 1]``, ``configs:`` and ``semrel_reliability`` (SHR, its
interval, R, the ceiling, trials, annotations, annotators, tuples) that
:func:`semrel.dataset_scripts.ceilings.human_ceiling` reads for the folder.

Every annotated item must be a pair id of the pairs file, and every pair of the pairs file must be
annotated (an error naming the first that is not and how many); the folder is swapped in whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.languages import language_problem
from semrel.metrics.errors import DataValidationError, ParameterError

LICENCES = ("cc0-1.0", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0", "apache-2.0", "mit")
RELIABILITY_KEY = "semrel_reliability"
SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


@dataclass(frozen=True)
class Written:
    """What :func:`write_dataset` wrote: the folder, its data file, and the reliability figures."""

    folder: Path
    data_file: str
    n_pairs: int
    reliability: dict


def read_annotations(paths):
    """One :class:`~semrel.metrics.bws.counting.Annotations` of the BWS files ``paths`` (NRC layout;
    items are pair ids), and the number of distinct annotators where the files name them."""
    from semrel.metrics.bws.counting import encode_annotations
    from semrel.metrics.bws.readers import read_nrc, read_table

    tuples, best, worst, annotators = [], [], [], set()
    for path in paths:
        ann = read_nrc(path)
        tuples.append(ann.items[ann.tuples])
        best.append(ann.items[ann.best])
        worst.append(ann.items[ann.worst])
        columns, table = read_table(path)
        if "annotator" in columns:
            annotators |= {(str(path), a) for a in table[:, columns.index("annotator")]}
    if len({t.shape[1] for t in tuples}) > 1:
        raise DataValidationError(str(paths[0]), None, "annotation files with different tuple sizes",
                                  ", ".join(f"{p}: k={t.shape[1]}" for p, t in zip(paths, tuples, strict=True)))
    ann = encode_annotations(np.concatenate(tuples), np.concatenate(best), np.concatenate(worst),
                             source=", ".join(map(str, paths)))
    return ann, len({a for _, a in annotators}) or None


def check_card_values(license: str, languages) -> list[str]:
    """The languages, after checking ``license`` against the Hub's vocabulary and each language as an
    ISO 639 code (:func:`~semrel.dataset_scripts.languages.language_problem`)."""
    if license not in LICENCES:
        raise ParameterError("license", license, f"must be one of {', '.join(LICENCES)}")
    if not languages:
        raise ParameterError("language", None, "must be given: the language(s) of the sentences (e.g. en)")
    for language in languages:
        if problem := language_problem(language):
            raise ParameterError("language", language, problem)
    return list(dict.fromkeys(languages))


def write_dataset(annotation_files, pairs, output, *, license: str, languages, name: str | None = None,
                  trials: int = 1000, seed: int = 0) -> Written:
    """Score ``annotation_files`` (BWS files of pair ids) against ``pairs`` (a
    :class:`~semrel.metrics.bws.pairs_file.PairsFile`) and write the dataset folder ``output``
    (module docstring)."""
    import datasets

    from semrel.dataset_scripts.folders import replaced_whole
    from semrel.dataset_scripts.parquet_files import write_parquet
    from semrel.metrics.bws.scoring import bws_scores
    from semrel.metrics.ceiling import bws_ceiling

    languages = check_card_values(license, languages)
    ann, n_annotators = read_annotations([Path(p) for p in annotation_files])
    rows = pairs.by_id()
    unknown = [item for item in ann.items.tolist() if item not in rows]
    if unknown:
        raise DataValidationError(str(annotation_files[0]), None, "an annotated item is no pair id of the pairs file",
                                  f"{unknown[0]!r} not in {pairs.path} ({len(unknown)} such items)")
    missing = [pair_id for pair_id in pairs.ids if pair_id not in set(ann.items.tolist())]
    if missing:
        raise DataValidationError(str(pairs.path), None, "pairs without any annotation cannot be scored",
                                  f"{len(missing)} of {len(pairs.ids)}, first {missing[0]!r}; annotate them, "
                                  "or write a pairs file of the annotated pairs")
    scores = bws_scores(ann)
    ceiling = bws_ceiling(ann, trials=trials, seed=seed).spearman
    reliability = _reliability(ceiling, ann, n_annotators, trials)
    order = pairs.ids
    at = {item: i for i, item in enumerate(scores.items.tolist())}
    index = np.array([at[pair_id] for pair_id in order])
    table = datasets.Dataset.from_dict({
        "pair_id": order,
        "sentence1": [rows[p]["sentence1"] for p in order],
        "sentence2": [rows[p]["sentence2"] for p in order],
        "score": scores.score_01[index].astype(np.float32),
        "source": [rows[p].get("source", "") for p in order],
        "appearances": scores.appearances[index].astype(np.int32),
    }, features=datasets.Features({
        "pair_id": datasets.Value("string"), "sentence1": datasets.Value("string"),
        "sentence2": datasets.Value("string"), "score": datasets.Value("float32"),
        "source": datasets.Value("string"), "appearances": datasets.Value("int32")}))
    output = Path(output)
    with replaced_whole(output) as folder:
        data_file = write_parquet(table, folder, "default", "train")
        card = _card(name or output.name, license, languages, len(order), data_file, reliability)
        (folder / "README.md").write_text(card, encoding="utf-8")
    return Written(output, data_file, len(order), reliability)


def _reliability(ceiling, ann, n_annotators, trials: int) -> dict:
    """The card's reliability figures: SHR r, its interval, R, the ceiling √R and its interval, counts."""
    n = ceiling.factor

    def r_of(c: float) -> float:  # the inverse of c = √(n r / (1 + (n - 1) r)); c = 0 for R <= 0
        big_r = c * c
        return float(big_r / (n - (n - 1) * big_r)) if c > 0 else 0.0

    low, high = (ceiling.interval.low, ceiling.interval.high) if ceiling.interval else (None, None)
    return {"split_half": round(ceiling.split_half, 4),
            "split_half_interval": None if low is None else [round(r_of(low), 4), round(r_of(high), 4)],
            "reliability": round(ceiling.reliability, 4), "ceiling": round(ceiling.value, 4),
            "ceiling_interval": None if low is None else [round(low, 4), round(high, 4)],
            "trials": trials, "annotations": int(len(ann.best)), "tuples": int(len(np.unique(ann.tuples, axis=0))),
            "annotators": n_annotators}


def _card(name: str, license: str, languages: list[str], n: int, data_file: str, rel: dict) -> str:
    from huggingface_hub import DatasetCardData

    data = DatasetCardData(
        pretty_name=name, license=license, language=languages,
        multilinguality="monolingual" if len(languages) == 1 else "multilingual",
        size_categories=[next(label for limit, label in SIZES if n < limit) if n < SIZES[-1][0] else "1M<n<10M"],
        task_categories=["sentence-similarity", "text-classification"],
        task_ids=["semantic-similarity-scoring", "text-scoring"], source_datasets=["original"],
        tags=["semantic-textual-similarity", "semrel", "best-worst-scaling"], score_range=[0.0, 1.0],
        configs=[{"config_name": "default", "data_files": [{"split": "train", "path": data_file}], "default": True}],
        **{RELIABILITY_KEY: rel})
    interval = (f" (95 % interval {rel['split_half_interval'][0]:.4f}–{rel['split_half_interval'][1]:.4f})"
                if rel["split_half_interval"] else "")
    annotators = f"{rel['annotators']} annotators, " if rel["annotators"] else ""
    body = f"""# {name}

{n} sentence pairs scored for semantic relatedness by best-worst scaling: {annotators}{rel['annotations']}
annotations of {rel['tuples']} distinct 4-tuples. Each pair's `score` is its counting score
((#best − #worst) / #appearances) mapped to [0, 1]; `appearances` is the number of annotations whose
tuple held it; `source` is the corpus part the pair was drawn from.

## Reliability

Split-half reliability (SHR, the Spearman correlation of the scores of two random halves of each tuple's
annotations, mean of {rel['trials']} splits): **{rel['split_half']:.4f}**{interval}. The whole panel's
reliability (Spearman–Brown) is {rel['reliability']:.4f}, so a perfect system can expect a Spearman
correlation of about {rel['ceiling']:.4f} with these scores (the human ceiling `semrel benchmark` shows).

## Use

```python
from datasets import load_dataset
pairs = load_dataset("path/to/this/folder")["train"]
```

Made with semrel: `semrel pairs` → `semrel bws design --pairs` → an annotation tool → `semrel annotate dataset`.
"""
    return f"---\n{data.to_yaml()}\n---\n\n{body}"


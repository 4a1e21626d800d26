"""The open re-annotation of C-STS (Zhang, Zhou & Bollegala, EMNLP 2025, arXiv 2509.14399),
CC-BY-4.0, and its join with the encrypted original.

``dataset.zip`` (``docs/dataset.zip`` of LivNLP/CSTS-reannotation; the same files are the Hub
dataset LivNLP/C-STS-Reannotated) holds ``dataset/csts_train_reannotated.csv`` and
``dataset/csts_validation_reannotated.csv`` (``sentence1,sentence2,condition,label``, every
sentence pair twice, under two conditions) and macOS resource forks under ``__MACOSX/``, which are
no data and skipped by rule. Any other member is an error.

- train: conditions rewritten and similarity re-annotated with GPT-4o and Claude 3.7 Sonnet,
  combined with the original human labels; labels written ``1.0`` ... ``5.0``.
- validation: the human re-annotation of C-STS's validation set by Tu et al. (2024, "Linguistically
  Conditioned Semantic Textual Similarity", ACL 2024): labels written ``1`` ... ``5``, CRLF line
  ends, and **-1 where the annotators found the condition could not be judged on the sentences**
  (an invalid item; Tu et al. removed these 214 items, keeping 2,620). The release does not say
  so; the count, the integer labels and their spread are the evidence (the c-sts card).

The -1 rule (:func:`split_invalid`): an invalid row is never scored and never dropped. It goes to
the split ``validation_invalid`` with a null score; ``validation`` holds the labelled rows. In
the pair layout a sentence pair with -1 on either condition goes to ``validation_invalid`` whole,
the -1 side null and the other side keeping its label. -1 anywhere else (train) is an error.

Choosing epochs and settings needs labelled rows that neither train nor validation are:
:func:`carve_dev` sets a tenth of train's sentence pairs apart as ``dev``, both conditions of a
pair on the same side (config ``reannotated-dev``).

Where the user also has the encrypted original, :func:`join_original` puts the original label
beside the re-annotated one, matching rows on (sentence1, sentence2, condition).
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np

from semrel.metrics.correlation_intervals import Estimate, correlation_intervals

from ..errors import DataValidationError
from ..schema import sentence_pair_groups
from ..sources import Source
from ..splits import stratified_folds

INVALID_SPLIT = "validation_invalid"
MEMBERS = {"train": "dataset/csts_train_reannotated.csv",
           "validation": "dataset/csts_validation_reannotated.csv"}
IGNORED_FOLDER = "__MACOSX"  # macOS resource forks a Finder zip adds: no data
INVALID_MEANING = "invalid: the condition cannot be judged on these sentences"
HUB_ID = "LivNLP/C-STS-Reannotated"
DEV_SPLIT = "dev"
DEV_FOLDS = 10  # dev: one fold of ten of train's sentence pairs
DEV_SALT = "c-sts-reannotated-dev"  # the carve's seed: another salt deals other pairs to dev

SOURCE = Source(
    dataset_id="c-sts",
    file_name="dataset.zip",
    url="https://raw.githubusercontent.com/LivNLP/CSTS-reannotation/"
        "741e69838e313fd863d9398fb4a96c7d59230795/docs/dataset.zip",
    sha256="43656b1a2681cc12a80a421997dba2a52eec5b224312547580aac811be6c35cf",
    licence="CC-BY-4.0 (the re-annotation's Hub card, huggingface.co/datasets/LivNLP/C-STS-Reannotated): "
    "reuse and redistribution allowed with attribution to Zhang, Zhou & Bollegala (EMNLP 2025) and "
    "to C-STS (Deshpande et al., EMNLP 2023), naming the licence and any changes.",
    licence_url=f"https://huggingface.co/datasets/{HUB_ID}",
    redistributable=True,
)

CITATION = """\
@inproceedings{zhang-etal-2025-annotating,
  title = {Annotating Training Data for Conditional Semantic Textual Similarity Measurement using
           Large Language Models},
  author = {Zhang, Gaifan and Zhou, Yi and Bollegala, Danushka},
  booktitle = {Proceedings of the 2025 Conference on Empirical Methods in Natural Language Processing},
  year = {2025},
  url = {https://arxiv.org/abs/2509.14399}
}
@inproceedings{tu-etal-2024-linguistically,
  title = {Linguistically Conditioned Semantic Textual Similarity},
  author = {Tu, Jingxuan and Xu, Keer and Yue, Liulu and Ye, Bingyang and Rim, Kyeongmin and
            Pustejovsky, James},
  booktitle = {Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics},
  year = {2024},
  url = {https://arxiv.org/abs/2406.03673}
}"""


def read_members(path: str) -> dict[str, tuple[str, bytes]]:
    """split -> (name for messages, CSV bytes) of ``dataset.zip`` at ``path``.

    Rules: a zip archive; folder entries and everything under ``__MACOSX/`` skipped; each of
    :data:`MEMBERS` present exactly once; no other member.
    """
    wanted = {member: split for split, member in MEMBERS.items()}
    found: dict[str, tuple[str, bytes]] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                parts = PurePosixPath(info.filename).parts
                if info.is_dir() or (parts and parts[0] == IGNORED_FOLDER):
                    continue
                split = wanted.get(info.filename)
                if split is None:
                    raise DataValidationError(path, None, "an unexpected member (the archive holds "
                                              f"{', '.join(MEMBERS.values())} and {IGNORED_FOLDER}/)",
                                              repr(info.filename))
                if split in found:
                    raise DataValidationError(path, None, f"the archive holds {info.filename} twice")
                found[split] = (f"{path}:{info.filename}", archive.read(info))
    except (zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        raise DataValidationError(path, None, "not a readable zip archive", str(exc)) from None
    missing = [member for member, split in wanted.items() if split not in found]
    if missing:
        raise DataValidationError(path, None, "the archive lacks " + ", ".join(missing))
    return found


def split_invalid(rows: list[dict], columns=("score",)) -> tuple[list[dict], list[dict]]:
    """(labelled rows, invalid rows): a row is invalid when any of ``columns`` is None (a -1
    label); order is kept in both."""
    invalid = [any(row[c] is None for c in columns) for row in rows]
    return ([r for r, bad in zip(rows, invalid, strict=True) if not bad],
            [r for r, bad in zip(rows, invalid, strict=True) if bad])


def carve_dev(name: str, rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(train rows, dev rows) of a train split in row layout: the sentence pairs in fold 0 of
    :func:`~semrel.dataset_scripts.splits.stratified_folds` (``k`` = :data:`DEV_FOLDS`, salt
    :data:`DEV_SALT`) go to dev with both of their conditions, the rest stay in train; row order
    is kept on each side.

    A pair's id is its two sentences, so the carve depends on neither row order nor machine;
    pairs are stratified by their two labels (low-high, e.g. ``1-5``; ties such as ``3-3`` a
    stratum of their own), so dev's labels and tied pairs follow train's. Every sentence pair
    must hold exactly two rows (:func:`~semrel.dataset_scripts.schema.sentence_pair_groups`).

    >>> rows = [{"sentence1": f"s{i // 2}", "sentence2": "t", "score": float(1 + i % 2)}
    ...         for i in range(40)]
    >>> train, dev = carve_dev("toy", rows)
    >>> len(train), len(dev), sorted({r["sentence1"] for r in dev})
    (36, 4, ['s1', 's3'])
    """
    groups = sentence_pair_groups(name, [r["sentence1"] for r in rows], [r["sentence2"] for r in rows])
    ids = [json.dumps([rows[a]["sentence1"], rows[a]["sentence2"]]) for a, _ in groups]
    strata = [f"{min(rows[a]['score'], rows[b]['score']):g}-{max(rows[a]['score'], rows[b]['score']):g}"
              for a, b in groups]
    folds = stratified_folds(ids, strata, DEV_FOLDS, salt=DEV_SALT)
    in_dev = [False] * len(rows)
    for (a, b), fold in zip(groups, folds, strict=True):
        in_dev[a] = in_dev[b] = bool(fold == 0)
    return ([r for r, dev in zip(rows, in_dev, strict=True) if not dev],
            [r for r, dev in zip(rows, in_dev, strict=True) if dev])


def join_original(rows: list[dict], original: list[dict]) -> tuple[list[dict], Counter]:
    """``rows`` (re-annotated) with ``original_score``: the label of the original row with the
    same (sentence1, sentence2, condition), or None where there is none (a rewritten condition,
    a pair from another split) or more than one on either side (a key held twice is ambiguous).

    Returns the rows and the counts ``matched``, ``unmatched``, ``ambiguous``.
    """
    def key(row):
        return row["sentence1"], row["sentence2"], row["condition"]

    ours, theirs = Counter(map(key, rows)), Counter(map(key, original))
    score = {key(r): r["score"] for r in original}
    counts: Counter = Counter(matched=0, unmatched=0, ambiguous=0)
    out = []
    for row in rows:
        k = key(row)
        outcome = ("unmatched" if k not in theirs else
                   "ambiguous" if ours[k] > 1 or theirs[k] > 1 else "matched")
        counts[outcome] += 1
        out.append({**row, "original_score": score[k] if outcome == "matched" else None})
    return out, counts


@dataclass(frozen=True)
class LabelAgreement:
    """How the original and the re-annotated labels of one split agree: Spearman's rho (paired
    bootstrap interval) and Pearson's r (Fisher z) over the ``n`` rows with both labels;
    ``without_original``: rows left out for want of an original label (null ``original_score``),
    ``invalid``: rows left out for a -1 re-annotation (null ``score``)."""

    spearman: Estimate
    pearson: Estimate
    n: int
    without_original: int
    invalid: int


def label_agreement(rows, *, confidence: float = 0.95, n_resamples: int = 1000,
                    seed: int = 0) -> LabelAgreement:
    """:class:`LabelAgreement` of a split of ``reannotated-original`` (any table with ``score`` and
    ``original_score`` columns): :func:`semrel.metrics.correlation_intervals.correlation_intervals`
    of the two labels over the rows holding both. Tu et al. (2024) report Spearman 0.4922 between
    their validation labels and the original ones.
    """
    ours = np.array([np.nan if s is None else s for s in rows["score"]], dtype=np.float64)
    theirs = np.array([np.nan if s is None else s for s in rows["original_score"]], dtype=np.float64)
    both = ~np.isnan(ours) & ~np.isnan(theirs)
    found = correlation_intervals(theirs[both], ours[both], confidence, n_resamples=n_resamples,
                                  seed=seed, names=("original_score", "score"))
    return LabelAgreement(found.spearman, found.pearson, int(both.sum()),
                          without_original=int((np.isnan(theirs) & ~np.isnan(ours)).sum()),
                          invalid=int(np.isnan(ours).sum()))

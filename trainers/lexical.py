"""The character n-gram ridge: a supervised lexical scorer of sentence pairs, the cheap baseline
beside the task's Dice (:func:`semrel.metrics.overlap.dice`) and a feature of learned stacks
(:mod:`~trainers.stacking`, ``--features char-ridge``).

    u, v = tfidf(s1), tfidf(s2)       character 2-4-grams within word boundaries, sublinear tf,
                                      vocabulary (n-grams seen twice or more) and idf fit on the
                                      training sentences, rows L2-normalised
    ŝ = b + w · [u∘v, |u − v|, cos(u, v), dice(s1, s2)]     ridge regression, alpha 1 (not tuned)

Fit on one language's train split it scores that language well above Dice (benchmarks/results/baselines.md,
"SemRel-2024 baselines"). The fitted model is plain numbers (:meth:`CharNgramRidge.to_json`), so a
stack folder stores it whole. Needs scikit-learn (the ``train`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semrel.metrics.overlap import dice

NGRAMS = {"analyzer": "char_wb", "ngram_range": (2, 4), "sublinear_tf": True}
MIN_DF = 2  # an n-gram seen once in the training sentences carries no weight anyone can learn
ALPHA = 1.0


def cosine(u, v) -> np.ndarray:
    """Row-wise cosine of two L2-normalised matrices (dense or ``scipy.sparse``)."""
    product = u.multiply(v).sum(axis=1) if hasattr(u, "multiply") else (u * v).sum(axis=1)
    return np.asarray(product, dtype=np.float64).reshape(-1)


def _vectorizer(vocabulary=None, idf=None):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(**NGRAMS, min_df=MIN_DF, vocabulary=vocabulary)
    if idf is not None:
        vectorizer.idf_ = np.asarray(idf, dtype=np.float64)
    return vectorizer


@dataclass(frozen=True)
class CharNgramRidge:
    """A fitted character n-gram ridge (module docstring): the vectorizer and the ridge weights."""

    vectorizer: object  # sklearn TfidfVectorizer, fitted
    coef: np.ndarray
    intercept: float

    @classmethod
    def fit(cls, sentence1, sentence2, scores) -> CharNgramRidge:
        """Fit on training pairs and their gold ``scores`` (any scale: predictions come on it)."""
        from sklearn.linear_model import Ridge

        sentence1, sentence2 = list(sentence1), list(sentence2)
        y = np.asarray(scores, dtype=np.float64).reshape(-1)
        if not len(sentence1) == len(sentence2) == len(y) or len(y) < 2 or not np.all(np.isfinite(y)):
            raise ValueError(f"the char n-gram ridge needs >= 2 pairs with a finite score each, got "
                             f"{len(sentence1)} / {len(sentence2)} sentences and {len(y)} scores")
        vectorizer = _vectorizer().fit(sentence1 + sentence2)
        model = Ridge(alpha=ALPHA).fit(_pair_features(vectorizer, sentence1, sentence2), y)
        return cls(vectorizer, np.asarray(model.coef_, dtype=np.float64), float(model.intercept_))

    def predict(self, sentence1, sentence2) -> np.ndarray:
        """ŝ per pair, on the scale of the scores it was fit on (never clipped)."""
        return self.intercept + _pair_features(self.vectorizer, list(sentence1), list(sentence2)) @ self.coef

    def to_json(self) -> dict:
        """The fitted numbers: n-grams in column order, their idf, the ridge weights."""
        vocabulary = sorted(self.vectorizer.vocabulary_, key=self.vectorizer.vocabulary_.get)
        return {"ngrams": vocabulary, "idf": self.vectorizer.idf_.tolist(), "coef": self.coef.tolist(),
                "intercept": self.intercept}

    @classmethod
    def from_json(cls, raw: dict) -> CharNgramRidge:
        vectorizer = _vectorizer({g: i for i, g in enumerate(raw["ngrams"])}, raw["idf"])
        return cls(vectorizer, np.asarray(raw["coef"], dtype=np.float64), float(raw["intercept"]))


def _pair_features(vectorizer, sentence1: list[str], sentence2: list[str]):
    import scipy.sparse as sp

    u, v = vectorizer.transform(sentence1), vectorizer.transform(sentence2)
    extra = np.c_[cosine(u, v), dice(sentence1, sentence2)]
    return sp.hstack([u.multiply(v), abs(u - v), sp.csr_matrix(extra)]).tocsr()

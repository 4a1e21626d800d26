"""Correlation with humans that says which humans and how they were combined.

``references`` holds one gold score per item, or every annotation of each item (a ragged list),
combined by an explicit ``aggregation``:

- ``"mean"`` / ``"median"``: the item's gold is the mean / median of its annotations;
- ``"average_annotator"`` (Sido et al. 2021, "Czech News Dataset for Semantic Textual Similarity",
  §5, Table 1): the gold is the item mean, and the result adds the human figure a model is compared
  with: each annotation against the mean of the item's *other* annotations, (Σ − x)/(m − 1),
  pooled over the dataset (Pearson, Spearman), with a percentile interval from a bootstrap that
  resamples items (an item's annotations stay together). The paper's model (0.92) beat this
  average annotator (0.86 Pearson; its annotation is compared with the stack mean including itself,
  semrel's ``annotator_agreement`` ``inter``).

Each coefficient comes with its interval (:mod:`.correlation_intervals`); with ``groups`` (a label
per item: source, language, ...) also per group. ``on_invalid="omit"`` leaves out items with a
non-finite prediction or annotation (and groups with too few items), counting them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .correlation import correlate, unit_exponent, unit_scaled
from .correlation_intervals import (
    MIN_BOOTSTRAP_ITEMS,
    CorrelationIntervals,
    Estimate,
    Interval,
    check_labels,
    check_options,
    check_scores,
    correlation_intervals,
    dense_ids,
    rank_correlation,
    resampled_ranks,
)
from .errors import check_on_invalid

AGGREGATIONS = ("mean", "median", "average_annotator")


@dataclass(frozen=True)
class HumanCorrelation:
    overall: CorrelationIntervals
    aggregation: str  # "as given" (one score per item), "mean", "median" or "average_annotator"
    n_items: int  # items used
    n_omitted: int  # items left out for a non-finite value (on_invalid="omit")
    n_annotations: int  # annotations behind the gold of the items used (= n_items when as given)
    groups: dict = field(default_factory=dict)  # label -> CorrelationIntervals
    omitted_groups: dict = field(default_factory=dict)  # label -> items (too few for an interval)
    average_annotator: dict | None = None  # {"pearson": Estimate, "spearman": Estimate}

    def as_dict(self) -> dict:
        """JSON-ready: coefficients, ``<name>_ci`` [low, high], counts, per-group results."""
        out = {**intervals_dict(self.overall), "aggregation": self.aggregation, "n_items": self.n_items,
               "n_omitted": self.n_omitted, "n_annotations": self.n_annotations}
        if self.average_annotator is not None:
            out["average_annotator"] = {k: v for name, e in self.average_annotator.items()
                                        for k, v in estimate_dict(name, e).items()}
        if self.groups or self.omitted_groups:
            out["groups"] = {str(label): intervals_dict(r) for label, r in self.groups.items()}
            out["omitted_groups"] = {str(label): n for label, n in self.omitted_groups.items()}
        return out


def estimate_dict(name: str, e: Estimate) -> dict:
    return {name: e.value, f"{name}_ci": [e.interval.low, e.interval.high], f"{name}_ci_method": e.interval.method}


def intervals_dict(r: CorrelationIntervals) -> dict:
    out = {}
    for name in ("pearson", "spearman", "kendall"):
        out.update(estimate_dict(name, getattr(r, name)))
    return {**out, "n": r.n, "confidence": r.pearson.interval.confidence}


def _is_list(value) -> bool:
    return isinstance(value, (list, tuple, np.ndarray))


def _missing_label(label) -> bool:
    return label is None or (isinstance(label, float) and math.isnan(label)) or (isinstance(label, str)
                                                                                  and not label.strip())


def annotations_of(references: Sequence) -> list[np.ndarray] | None:
    """Per-item annotation arrays when ``references`` is ragged (a list per item); None when flat."""
    nested = [_is_list(r) for r in references]
    if not any(nested):
        return None
    if not all(nested):
        item = nested.index(False)
        raise ValueError(f"references[{item}] is a single number while other items hold lists of annotations; "
                         "give one score per item or a list of annotations for every item")
    arrays = []
    for i, r in enumerate(references):
        try:
            arrays.append(np.asarray(r, dtype=np.float64))
        except (TypeError, ValueError) as err:
            raise ValueError(f"references[{i}]: not a list of numbers ({err})") from None
    return arrays


def _valid_items(predictions: np.ndarray, annotations, flat, on_invalid: str) -> np.ndarray:
    """Mask of items with finite values; with on_invalid="raise" the first bad one is an error."""
    ok = np.isfinite(predictions)
    if annotations is None:
        ok &= np.isfinite(flat)
    else:
        ok &= np.fromiter((a.size > 0 and bool(np.isfinite(a).all()) for a in annotations), bool, len(annotations))
    if on_invalid == "raise" and not ok.all():
        i = int(np.argmin(ok))
        if not np.isfinite(predictions[i]):
            what = f"predictions[{i}] is {predictions[i]}"
        elif annotations is None:
            what = f"references[{i}] is {flat[i]}"
        elif annotations[i].size == 0:
            what = f"references[{i}] has no annotations"
        else:
            j = int(np.argmin(np.isfinite(annotations[i])))
            what = f"references[{i}][{j}] is {annotations[i][j]}"
        raise ValueError(f"{what}; values must be finite numbers ({int((~ok).sum())} such items; "
                         "on_invalid='omit' leaves them out and counts them)")
    return ok


def average_annotator(annotations: list[np.ndarray], confidence: float = 0.95, *, n_resamples: int = 1000,
                      seed: int | None = 0, include_self: bool = False) -> dict[str, Estimate]:
    """Each annotation against the mean of its item's other annotations, pooled: Pearson and Spearman,
    with percentile intervals from a bootstrap over items (Sido et al. 2021's average annotator).
    ``include_self=True``: against the mean of all the item's annotations, itself included (the
    paper's Table 1 "inter" row as semrel's ``annotator_agreement`` computes it).

    >>> items = [[1, 2], [2, 3], [4, 4], [5, 6], [0, 1], [3, 2], [6, 5], [1, 1]]
    >>> e = average_annotator([np.array(a, float) for a in items])
    >>> round(e["pearson"].value, 4)
    0.8924
    """
    m = np.fromiter((a.size for a in annotations), np.int64, len(annotations))
    check_options(confidence=confidence, n_resamples=n_resamples, seed=seed)
    if (m < 2).any():
        i = int(np.argmin(m >= 2))
        raise ValueError(f"references[{i}] has {m[i]} annotation(s); the average annotator needs >= 2 per item")
    if m.size < MIN_BOOTSTRAP_ITEMS:
        raise ValueError(f"{m.size} items; the average annotator's bootstrap interval needs >= {MIN_BOOTSTRAP_ITEMS}")
    values = unit_scaled(np.concatenate(annotations))  # exact: no overflow in sums of squares near 1e308
    item_of = np.repeat(np.arange(m.size), m)
    sums = np.bincount(item_of, values)[item_of]
    others = sums / m[item_of] if include_self else (sums - values) / (m[item_of] - 1)
    check_scores({"annotations": values, "the other annotations' means": others}, min_items=2)
    starts = np.cumsum(m) - m

    (ids_x, distinct_x), (ids_y, distinct_y) = dense_ids(values), dense_ids(others)

    def statistic(items):  # the annotations of the resampled items, each item's rows kept together
        sizes = m[items]
        offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        rows = np.repeat(starts[items], sizes) + offsets
        x, y = values[rows] - values[rows].mean(), others[rows] - others[rows].mean()
        dot = lambda a, b: np.einsum("i,i->", a, b)  # noqa: E731 (not BLAS: no thread start-up per call)
        pearson = dot(x, y) / np.sqrt(dot(x, x) * dot(y, y))
        spearman = rank_correlation(resampled_ranks(ids_x[rows][None], distinct_x),
                                    resampled_ranks(ids_y[rows][None], distinct_y))[0]
        return np.array([pearson, spearman])

    with np.errstate(invalid="ignore", divide="ignore"):
        result = stats.bootstrap((np.arange(m.size),), statistic, vectorized=False, n_resamples=n_resamples,
                                 confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))
    if np.isnan(result.bootstrap_distribution).any():
        raise ValueError("the average annotator is undefined in some bootstrap resamples (all their annotations "
                         "equal); too few items or distinct annotations for an interval")
    point = correlate(values, others)
    low, high = result.confidence_interval
    return {name: Estimate(value, Interval(float(low[k]), float(high[k]), confidence, "bootstrap-percentile-items"),
                           int(values.size))
            for k, (name, value) in enumerate((("pearson", point.pearson), ("spearman", point.spearman)))}


def correlation_with_humans(predictions: Sequence[float], references: Sequence, *, groups: Sequence | None = None,
                            aggregation: str | None = None, confidence: float = 0.95, n_resamples: int = 1000,
                            method: str = "auto", seed: int | None = 0,
                            on_invalid: str = "raise") -> HumanCorrelation:
    """Pearson, Spearman and Kendall of predictions with human scores, with intervals (see module docstring).

    ``aggregation`` is required when ``references`` holds several annotations per item and must be
    left out (None) when it holds one score per item.

    >>> r = correlation_with_humans([0.1, 0.4, 0.2, 0.8, 0.5, 0.9, 0.3, 0.7],
    ...                             [[0, 1], [2, 2], [1, 0], [4, 5], [3, 2], [5, 5], [1, 2], [4, 3]],
    ...                             aggregation="median")
    >>> round(r.overall.spearman.value, 4), r.aggregation, r.n_annotations
    (0.994, 'median', 16)
    """
    check_on_invalid(on_invalid)
    if aggregation is not None and aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {aggregation!r}")
    references = list(references)
    try:
        predictions = np.asarray(predictions, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"predictions: not a list of numbers ({err})") from None
    if predictions.ndim != 1 or predictions.size != len(references):
        raise ValueError(f"unequal lengths: predictions has {predictions.size}, references has {len(references)}; "
                         "every input needs one value per item")
    check_options(confidence=confidence, n_resamples=n_resamples, seed=seed)
    if groups is not None:
        if isinstance(groups, (str, bytes, dict)) or not hasattr(groups, "__len__"):
            raise ValueError(f"groups must be a list with a label per item, got {type(groups).__name__}")
        groups = list(groups)
        if len(groups) != predictions.size:
            raise ValueError(f"unequal lengths: groups has {len(groups)}, predictions has {predictions.size}; "
                             "every item needs a group label")
        check_labels("groups", groups, "a group label")
        missing = [i for i, g in enumerate(groups) if _missing_label(g)]
        if missing:
            raise ValueError(f"groups[{missing[0]}] is missing ({groups[missing[0]]!r}); every item needs a group "
                             f"label ({len(missing)} without one)")
    annotations = annotations_of(references)
    if annotations is None:
        if aggregation is not None:
            raise ValueError(f"aggregation={aggregation!r} combines several annotations per item, but references "
                             "hold one score per item (leave aggregation out)")
        try:
            flat = np.asarray(references, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"references: not a list of numbers ({err})") from None
    elif aggregation is None:
        raise ValueError("references hold several annotations per item: say how to combine them with "
                         f"aggregation= one of {', '.join(AGGREGATIONS)}")
    else:
        flat = None
    ok = _valid_items(predictions, annotations, flat, on_invalid)
    keep = np.flatnonzero(ok)
    predictions = predictions[keep]
    if annotations is not None:
        annotations = [annotations[i] for i in keep]
        combine = np.median if aggregation == "median" else np.mean
        # every gold in units of one power of two (exact; correlations are the same): no overflow near 1e308
        e = max((unit_exponent(a) for a in annotations), default=0)
        gold = np.fromiter((combine(np.ldexp(a, -e)) for a in annotations), np.float64, len(annotations))
        n_annotations = int(sum(a.size for a in annotations))
    else:
        gold, n_annotations = flat[keep], int(keep.size)
    options = dict(confidence=confidence, n_resamples=n_resamples, method=method, seed=seed)
    overall = correlation_intervals(predictions, gold, **options)
    per_group, omitted_groups = {}, {}
    if groups is not None:
        labels = [groups[i] for i in keep]
        for label in dict.fromkeys(labels):
            rows = np.array([i for i, g in enumerate(labels) if g == label])
            if rows.size < MIN_BOOTSTRAP_ITEMS and on_invalid == "omit":
                omitted_groups[label] = int(rows.size)
                continue
            try:
                per_group[label] = correlation_intervals(predictions[rows], gold[rows], **options)
            except ValueError as err:
                raise ValueError(f"group {label!r}: {err}") from None
    human = None
    if aggregation == "average_annotator":
        human = average_annotator(annotations, confidence, n_resamples=n_resamples, seed=seed)
    return HumanCorrelation(overall, aggregation or "as given", int(keep.size), int((~ok).sum()), n_annotations,
                            per_group, omitted_groups, human)

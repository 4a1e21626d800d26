"""The paper's study (002 §5.2): how filtering annotators moves measure–human correlations.

For a set of dropped workers, each pair's human score is the mean label of the remaining
annotations (pairs left without a label drop out); the statistic is Pearson's r between that
score and an automated measure over the pairs, and the change is 100 · (r_filtered − r_base) /
r_base, as in the authors' code. Table 2 restricts the labels to one annotator class.

Is a change more than noise? r_filtered and r_base share the measure and are computed on the same
pairs, so they are dependent correlations: :func:`difference_interval` gives Zou's (2007) interval
for r_filtered − r_base (semrel.metrics.compare.zou_interval), on the pairs the filtered score
keeps; a change whose interval excludes 0 is larger than its sampling noise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np
import pandas as pd

from semrel.metrics.compare import zou_interval

from . import measures as m
from .filters import PAPER_NUMBER, drop_workers


def pair_measures(pairs: pd.DataFrame, *, minilm: bool | None = None) -> pd.DataFrame:
    """Automated measures of each pair (index ``pair_id``); MiniLM cosine when ``minilm`` is True,
    or when it is None and the model package is installed. Computed once per process per texts."""
    use_minilm = bool(minilm or (minilm is None and m.minilm_model_path() is not None))
    values = _measures(tuple(pairs["sentence1"]), tuple(pairs["sentence2"]), use_minilm)
    return pd.DataFrame(values, index=pd.Index(pairs["pair_id"], name="pair_id"))


@lru_cache(maxsize=4)
def _measures(s1: tuple[str, ...], s2: tuple[str, ...], minilm: bool) -> dict[str, np.ndarray]:
    b4, b1 = m.bleu_and_bleu1(s1, s2)
    out = {"word_overlap": m.word_overlap(s1, s2), "bleu": b4, "bleu1": b1,
           "chrf": m.chrf(s1, s2), **m.rouge(s1, s2)}
    if minilm:
        out["minilm_cosine"] = m.minilm_cosine(s1, s2)
    for values in out.values():
        values.setflags(write=False)
    return out


def correlations(annotations: pd.DataFrame, measures: pd.DataFrame,
                 dropped: Iterable[str] = ()) -> pd.Series:
    """Pearson r of every measure with the pair mean label after dropping ``dropped`` workers."""
    score = drop_workers(annotations, dropped).groupby("pair_id")["label"].mean()
    table = measures.loc[measures.index.intersection(score.index)]
    return table.corrwith(score.reindex(table.index), method="pearson").rename("r")


def percent_change(r: pd.Series, base: pd.Series) -> pd.Series:
    return 100.0 * (r - base) / base


def combinations_of(names: Sequence[str]) -> list[tuple[str, ...]]:
    """Every non-empty combination, ordered like the paper's Table 3 (size, then filter number)."""
    ordered = sorted(names, key=PAPER_NUMBER.get)
    return [c for k in range(1, len(ordered) + 1) for c in combinations(ordered, k)]


def paper_key(names: Iterable[str]) -> tuple[int, ...]:
    return tuple(sorted(PAPER_NUMBER[n] for n in names))


@dataclass(frozen=True)
class FilterStudy:
    """``r``: rows = "baseline" and each combination label such as "[2, 3]", columns = measures;
    ``change``: % change against the baseline; ``n_pairs``/``n_workers_dropped`` per row;
    ``low``/``high``: the 95 % interval of r_filtered − r_base (:func:`difference_interval`; the
    baseline row 0), so ``significant`` marks the changes whose interval excludes 0."""

    r: pd.DataFrame
    change: pd.DataFrame
    n_pairs: pd.Series
    n_workers_dropped: pd.Series
    low: pd.DataFrame | None = None
    high: pd.DataFrame | None = None

    @property
    def significant(self) -> pd.DataFrame:
        return (self.low > 0) | (self.high < 0)


def difference_interval(annotations: pd.DataFrame, measures: pd.DataFrame, dropped: Iterable[str],
                        confidence: float = 0.95) -> tuple[pd.Series, pd.Series]:
    """Zou's (2007) interval of r(measure, filtered score) − r(measure, base score) per measure, on
    the pairs the filtered score keeps (the base score averages all their labels); NaN where fewer
    than 4 pairs remain."""
    base = annotations.groupby("pair_id")["label"].mean()
    filtered = drop_workers(annotations, dropped).groupby("pair_id")["label"].mean()
    pairs = measures.index.intersection(filtered.index)
    base, filtered, table = base.reindex(pairs), filtered.reindex(pairs), measures.loc[pairs]
    low, high = {}, {}
    for name in table.columns:
        if len(pairs) < 4:
            low[name] = high[name] = np.nan
            continue
        r_filtered, r_base = table[name].corr(filtered), table[name].corr(base)
        interval = zou_interval(r_filtered, r_base, base.corr(filtered), len(pairs), confidence)
        low[name], high[name] = interval.low, interval.high
    return pd.Series(low), pd.Series(high)


def filter_study(annotations: pd.DataFrame, measures: pd.DataFrame,
                 flagged: Mapping[str, frozenset[str]]) -> FilterStudy:
    """Baseline and every combination of the filters in ``flagged`` (filter name -> flagged
    workers; paper Tables 3 and 4). A combination drops the union of its filters' workers."""
    rows, n_pairs, n_dropped, low, high = {}, {}, {}, {}, {}
    for combo in [()] + combinations_of(list(flagged)):
        label = "baseline" if not combo else str(list(paper_key(combo)))
        dropped = frozenset().union(*(flagged[name] for name in combo))
        rows[label] = correlations(annotations, measures, dropped)
        n_pairs[label] = drop_workers(annotations, dropped)["pair_id"].nunique()
        n_dropped[label] = len(dropped)
        low[label], high[label] = difference_interval(annotations, measures, dropped)
    r = pd.DataFrame(rows).T
    return FilterStudy(r, percent_change(r, r.loc["baseline"]), pd.Series(n_pairs),
                       pd.Series(n_dropped), pd.DataFrame(low).T[r.columns], pd.DataFrame(high).T[r.columns])


def class_study(annotations: pd.DataFrame, measures: pd.DataFrame, annotators: pd.DataFrame,
                dropped: Iterable[str]) -> pd.DataFrame:
    """Paper Table 2: r with the mean label of radical (resp. centrist) annotators only, before
    and after dropping ``dropped`` workers. Columns ``<class>`` and ``<class>_filtered`` per class,
    rows = measures (plus ``n_pairs``)."""
    dropped = frozenset(dropped)
    out = {}
    for label_class in ("radical", "centrist"):
        members = set(annotators.loc[annotators["label_class"] == label_class, "worker_id"])
        theirs = annotations[annotations["worker_id"].isin(members)]
        for suffix, drop in (("", ()), ("_filtered", dropped)):
            r = correlations(theirs, measures, drop)
            r["n_pairs"] = drop_workers(theirs, drop)["pair_id"].nunique()
            out[label_class + suffix] = r
    return pd.DataFrame(out)


def worker_count_table(annotators: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """Flagged workers per filter and their overlap with the authors' published list."""
    rows = {}
    for name in [*names, "any"]:
        flag = annotators[f"flagged_{name}"].to_numpy()
        rows[name] = {"flagged": int(flag.sum()),
                      "also in authors' list": int((flag & annotators["in_authors_list"]).sum()),
                      "share of labels": float(annotators.loc[flag, "n_annotations"].sum()
                                               / annotators["n_annotations"].sum())}
    return pd.DataFrame.from_dict(rows, orient="index")  # counts stay integers (not 37.000)


def flagged_sets(annotators: pd.DataFrame, names: Sequence[str]) -> dict[str, frozenset[str]]:
    """Filter name -> flagged workers, read from the ``flagged_<name>`` columns of the
    ``annotators`` config."""
    return {n: frozenset(annotators.loc[annotators[f"flagged_{n}"], "worker_id"]) for n in names}

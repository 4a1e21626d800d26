"""Derived tables of crowd-sts: pairs (mean label), annotators, radical/centrist class, split.

All functions read the tidy annotation table of :mod:`.reading` (one row per annotation).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..splits import stratified_folds
from .filters import FilterResult

N_FOLDS = 5  # test = fold 0 of 5: about 20 % of the pairs
SPLIT_SALT = "crowd-sts/split"


def aggregate_pairs(annotations: pd.DataFrame) -> pd.DataFrame:
    """One row per ``pair_id`` (sorted): texts, source, is_random and

    score = mean label (float32), n_annotations, label_std = sample std (ddof 1; NaN for 1 label).
    """
    by_pair = annotations.groupby("pair_id", sort=True)
    pairs = by_pair[["source", "is_random", "sentence1", "sentence2"]].first()
    pairs["score"] = by_pair["label"].mean().astype(np.float32)
    pairs["n_annotations"] = by_pair.size().astype(np.int32)
    pairs["label_std"] = by_pair["label"].std(ddof=1).astype(np.float32)
    return pairs.reset_index()


def split_groups(pairs: pd.DataFrame) -> pd.Series:
    """Leak-free groups: connected components of pairs that share a sentence (after whitespace
    normalisation and lower-casing), so no sentence is in both train and test. Random pairs reuse
    the sentences of real pairs, and 4 text pairs occur in two HITs. Group id = smallest pair_id.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    norm = lambda s: s.str.split().str.join(" ").str.lower()  # noqa: E731
    codes, _ = pd.factorize(pd.concat([norm(pairs["sentence1"]), norm(pairs["sentence2"])]))
    n = len(pairs)
    graph = coo_matrix((np.ones(n), (codes[:n], codes[n:])), shape=(codes.max() + 1,) * 2)
    _, component = connected_components(graph, directed=False)
    component = pd.Series(component[codes[:n]], index=pairs.index)
    return pairs["pair_id"].groupby(component).transform("min").rename("split_group")


def holdout_mask(groups: pd.Series) -> np.ndarray:
    """True for pairs whose group falls in fold 0 of ``stratified_folds`` over the group ids,
    stratified by group size class (⌊log2 size⌋) so that each fold gets a fair share of pairs.
    """
    sizes = groups.value_counts()
    folds = stratified_folds(sizes.index.tolist(),
                             [str(int(np.log2(n))) for n in sizes.to_numpy()], N_FOLDS,
                             salt=SPLIT_SALT)
    test_groups = set(sizes.index[folds == 0])
    return groups.isin(test_groups).to_numpy()


def label_classes(annotations: pd.DataFrame, *, min_variance: float = 1.0,
                  min_share: float = 0.5) -> pd.DataFrame:
    """Radical / centrist annotators (paper §5.2).

    share_extreme = #labels in {1, 5} / #labels ≠ 3. Among workers whose label variance
    (ddof 1) exceeds ``min_variance``: radical if share_extreme > ``min_share``, centrist if the
    {2, 4} share (1 − share_extreme) > ``min_share``; everyone else is "unclassified".
    """
    labels = annotations["label"]
    per = pd.DataFrame({"worker_id": annotations["worker_id"],
                        "extreme": labels.isin((1, 5)), "middle": labels.isin((2, 4))})
    per = per.groupby("worker_id")[["extreme", "middle"]].sum()
    share = per["extreme"] / (per["extreme"] + per["middle"]).where(lambda n: n > 0)
    variance = annotations.groupby("worker_id")["label"].var(ddof=1).reindex(per.index)
    judged = variance > min_variance
    label_class = np.select([judged & (share > min_share), judged & (1 - share > min_share)],
                            ["radical", "centrist"], "unclassified")
    return pd.DataFrame({"share_extreme": share, "label_class": label_class}, index=per.index)


def annotator_table(annotations: pd.DataFrame, results: Mapping[str, FilterResult],
                    authors_flagged: frozenset[str] = frozenset()) -> pd.DataFrame:
    """One row per worker (sorted): counts, label mean/std, mean seconds, means on random vs
    non-random pairs, radical/centrist class, every filter's statistic and ``flagged_<name>``,
    ``flagged_any`` and ``in_authors_list`` (flagged in the authors' published list).
    """
    by_worker = annotations.groupby("worker_id", sort=True)
    table = pd.DataFrame({
        "n_annotations": by_worker.size(),
        "n_random": by_worker["is_random"].sum(),
        "label_mean": by_worker["label"].mean(),
        "label_std": by_worker["label"].std(ddof=1),
        "seconds_mean": by_worker["seconds"].mean(),
        "seconds_median": by_worker["seconds"].median(),
    })
    table = table.join(label_classes(annotations))
    for result in results.values():
        table = table.join(result.stats[[c for c in result.stats if c not in table]])
    for name, result in results.items():
        table[f"flagged_{name}"] = table.index.isin(result.flagged)
    table["flagged_any"] = table[[f"flagged_{n}" for n in results]].any(axis=1)
    table["in_authors_list"] = table.index.isin(authors_flagged)
    return table.reset_index()

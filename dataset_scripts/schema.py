"""The shared pair schema every pair-level config follows, its one grouping rule and the rule of
a score range.

Columns: ``sentence1``, ``sentence2`` (strings), ``score`` (the dataset's native scale, a range
``(lo, hi)``: :func:`check_score_range`) and, for conditional data (C-STS), ``condition``.
Builders and trainers both take these rules from here, so neither knows the other.
"""

from __future__ import annotations

import math

from semrel.metrics.errors import ParameterError

from .errors import DataValidationError

PAIR_COLUMNS = ("sentence1", "sentence2")


def sentence_pair_groups(where: str, sentence1: list[str],
                         sentence2: list[str]) -> list[list[int]]:
    """0-based row indices of each (sentence1, sentence2) pair, in order of first appearance.

    Conditional similarity (C-STS, Deshpande et al. 2023 §2) gives every sentence pair a high-
    and a low-similarity condition, so each group must hold exactly 2 rows; otherwise the error
    names the first bad group's rows (1-based) and counts the bad groups.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(zip(sentence1, sentence2, strict=True)):
        groups.setdefault(key, []).append(i)
    bad = [members for members in groups.values() if len(members) != 2]
    if bad:
        members = bad[0]
        raise DataValidationError(
            where, members[0] + 1,
            "a condition group (rows with the same sentence1 and sentence2) must hold exactly "
            "2 rows: a high- and a low-similarity condition",
            f"rows {[m + 1 for m in members]} form a group of {len(members)}; "
            f"{len(bad)} such group(s) in all")
    return list(groups.values())


def check_score_range(score_range) -> tuple[float, float]:
    """``(lo, hi)``: two finite numbers with ``lo < hi``, else a ParameterError.

    >>> check_score_range([0, 5])
    (0.0, 5.0)
    """
    try:
        lo, hi = (float(x) for x in score_range)
    except (TypeError, ValueError):
        raise ParameterError("score_range", score_range, "must be two numbers (lo, hi)") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ParameterError("score_range", (lo, hi), "must be two finite numbers lo < hi")
    return lo, hi

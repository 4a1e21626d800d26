"""Reproduce Czech News STS annotator agreement (paper Table 1, inter row) and the MSE lower bound (§6).

On the public context-free test (1,200 pairs x 9 annotations) this prints the paper's numbers beside
ours: inter-annotator agreement pooled over every rating against its pair's mean (the paper's
measure) and its leave-one-out variant, Krippendorff's alpha, and the MSE lower bound under the
Student-t model (the paper's) and the normal model. With the user-supplied context-dependent test
(``--data-dir`` holding ``dep-test.tsv``) it also prints the same for ``dep`` and free+dep.

    python scripts/reproduce_czech_news.py [--mirror DIR] [--data-dir DIR] [--cache-dir DIR]
"""

from __future__ import annotations

import argparse

import numpy as np

from semrel.dataset_scripts import load
from semrel.dataset_scripts.czech_news_sts.paper import (
    PAPER_BOUND,
    PAPER_INTER,
    PAPER_TABLE2_FREE,
    agreement_intervals,
    agreement_of,
)
from semrel.metrics.lower_bound import mse_lower_bound

EXPLANATION = """\
Why the numbers differ
- Inter-annotator agreement: the paper's four values lie between our pooled measure (each rating
  against a mean that includes it: optimistic) and our leave-one-out measure (the mean of the 8
  others: pessimistic) for every statistic. The released file holds exactly 9 annotations per pair,
  after the authors removed unreliable annotations (§1); the paper does not say on which version
  of the annotations (or with which annotator identities) Table 1 was computed, and the public
  file has no annotator ids, so the exact row cannot be recomputed. Including the R1 score as a
  10th rating does not reproduce it either (Pearson 0.877).
- MSE lower bound: on this file (s^2/n)(n-1)/(n-3) averages to {t:.4f}, not 0.1731; the simple
  variants (population variance: {t0:.4f}; normal model: {normal:.4f}) do not give 0.1731 either.
  The bound grows with fewer annotations per pair (factor (n-1)/(n-3) and s^2/n), and the
  context-dependent test has fewer (6% fewer annotations, 21 pairs with < 7, §6), so a bound
  computed over dep or over free+dep would be larger; run with --data-dir to check on the real
  dep file. The per-pair formula itself is the paper's, and is verified in tests.
- Table 2's "variance" of the test free scores (1.78) is their standard deviation ({std:.3f};
  variance {var:.3f})."""


def _interval(estimate) -> str:
    return f"[{estimate.interval.low:.3f}, {estimate.interval.high:.3f}]"


def report(name: str, annotations: list[list[int]]) -> None:
    agreement = agreement_of(annotations)
    t, normal = mse_lower_bound(annotations), mse_lower_bound(annotations, model="normal")
    print(f"\n{name}: {len(annotations):,} pairs, {sum(map(len, annotations)):,} annotations")
    try:  # 95 % intervals of the correlations: a bootstrap over pairs (seed 0)
        intervals, why = agreement_intervals(annotations), ""
    except ValueError as exc:
        intervals, why = None, str(exc)
    print(f"  {'Table 1 inter':<24} {'paper':>7} {'pooled':>7} {'diff':>7} {'LOO':>7}"
          f"  {'pooled 95% CI':>16} {'LOO 95% CI':>16}")
    for stat, paper in PAPER_INTER.items():
        pooled, loo = getattr(agreement.inter, stat), getattr(agreement.inter_loo, stat)
        ci = "".join(f"  {_interval(intervals[k][stat]):>16}" for k in ("pooled", "loo")) \
            if intervals and stat in intervals["pooled"] else ""
        print(f"  {stat:<24} {paper:>7.3f} {pooled:>7.3f} {pooled - paper:>+7.3f} {loo:>7.3f}{ci}")
    if intervals is None:
        print(f"  (no intervals: {why})")
    else:
        outside = [f"{stat} {paper:.3f}" for stat, paper in PAPER_INTER.items() if stat in intervals["pooled"]
                   and all(not e.interval.low <= paper <= e.interval.high
                           for e in (intervals["pooled"][stat], intervals["loo"][stat]))]
        if outside:
            print(f"  the paper's {', '.join(outside)} lie outside both intervals: the measure differs, "
                  "not the sample of pairs")
    print(f"  {'Krippendorff alpha':<24} {'-':>7} {agreement.alpha:>7.3f}")
    print(f"  {'MSE lower bound (t)':<24} {PAPER_BOUND:>7.4f} {t.bound:>7.4f} "
          f"{t.bound - PAPER_BOUND:>+7.4f}   RMSE {t.rmse_bound:.4f}, {t.n_items} pairs used")
    print(f"  {'MSE lower bound (normal)':<24} {'-':>7} {normal.bound:>7.4f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror")
    ap.add_argument("--data-dir", help="directory with dep-test.tsv (optional)")
    ap.add_argument("--cache-dir")
    args = ap.parse_args(argv)
    free = load("czech-news-sts", "free", mirror=args.mirror, cache_dir=args.cache_dir)["test"]
    annotations = [list(a) for a in free["annotations"]]
    print("Czech News STS (Sido et al. 2021): annotator agreement and MSE lower bound")
    report("free test", annotations)
    scores = np.asarray(free["score"], dtype=float)
    print(f"  Table 2 test free: mean paper {PAPER_TABLE2_FREE[0]:.2f} ours {scores.mean():.3f}; "
          f"'variance' paper {PAPER_TABLE2_FREE[1]:.2f} ours std {scores.std(ddof=1):.3f} "
          f"(variance {scores.var(ddof=1):.3f})")
    if args.data_dir:
        dep = load("czech-news-sts", "dep", mirror=args.mirror, data_dir=args.data_dir,
                   cache_dir=args.cache_dir)["test"]
        dep_annotations = [list(a) for a in dep["annotations"]]
        report("dep test (user-supplied)", dep_annotations)
        report("free + dep", annotations + dep_annotations)
    matrix = np.asarray(annotations, dtype=float)
    print()
    print(EXPLANATION.format(
        t=mse_lower_bound(annotations).bound,
        t0=float(np.mean(matrix.var(axis=1) / 9 * 8 / 6)),
        normal=mse_lower_bound(annotations, model="normal").bound,
        std=scores.std(ddof=1), var=scores.var(ddof=1)))


if __name__ == "__main__":
    main()

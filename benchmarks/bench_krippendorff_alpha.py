"""Krippendorff's alpha (interval): our linear-memory formula vs the `krippendorff` package.

Prints time and peak traced memory (tracemalloc, numpy allocations included) for
- discrete ratings 0–6 (the package's home ground): both, growing number of ratings;
- continuous ratings: the package allocates a units × values × values array (the square
  of the number of distinct values), ours stays linear (the package is run only where it fits).

    python benchmarks/bench_krippendorff_alpha.py [--seed 0]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import krippendorff
import numpy as np

from semrel.metrics.agreement import krippendorff_alpha_interval


def measure(fn):
    tracemalloc.start()
    start = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return value, seconds, peak / 2**20


def data(rng, n_items: int, n_coders: int, continuous: bool) -> np.ndarray:
    truth = rng.uniform(0, 6, n_items)
    matrix = truth + rng.normal(0, 1, (n_coders, n_items))
    return matrix if continuous else np.clip(np.rint(matrix), 0, 6)


def row(label, matrix, run_package: bool) -> None:
    coder, item = np.nonzero(~np.isnan(matrix))
    ours, t_ours, m_ours = measure(lambda: krippendorff_alpha_interval(item, matrix[coder, item]))
    line = f"{label:<34} {matrix.size:>9,} {t_ours * 1e3:>9.1f} {m_ours:>9.1f}"
    if run_package:
        ref, t_ref, m_ref = measure(lambda: krippendorff.alpha(reliability_data=matrix,
                                                               level_of_measurement="interval"))
        line += (f" {t_ref * 1e3:>9.1f} {m_ref:>9.1f} {t_ref / t_ours:>7.1f}x {m_ref / m_ours:>7.1f}x"
                 f"  |alpha diff| {abs(ours - ref):.1e}")
    else:
        n_values = len(np.unique(matrix))  # the package allocates units x values x values floats
        line += (f"   (package skipped: needs {matrix.shape[1] * n_values**2 * 8 / 2**30:,.0f} GiB "
                 f"for {matrix.shape[1]:,} x {n_values:,}² coincidences)")
    print(line)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"{'data':<34} {'ratings':>9} {'ours ms':>9} {'ours MiB':>9} {'pkg ms':>9} "
          f"{'pkg MiB':>9} {'time':>8} {'memory':>8}")
    for n_items in (1_200, 12_000, 120_000):
        row(f"discrete 0-6, 9 coders x {n_items:,}", data(rng, n_items, 9, False), True)
    row("continuous, 5 coders x 100", data(rng, 100, 5, True), True)
    for n_items in (1_000, 200_000, 2_000_000):
        row(f"continuous, 5 coders x {n_items:,}", data(rng, n_items, 5, True), False)


if __name__ == "__main__":
    main()

"""Correlation intervals: time of the Spearman bootstrap interval (1,000 resamples) and of the Pearson
Fisher-z interval, on simulated bivariate normal scores (rho = 0.7), and of the paired comparison.

- Spearman at 100k items, percentile (BCa's jackknife is O(n²): above
  ``semrel.metrics.correlation_intervals.BCA_MAX_N`` = 5,000 items the percentile interval is used);
  at 5,000 items both BCa and percentile, to show what the switch saves;
- Pearson (Fisher z) at 1M items;
- the comparison of two systems (Williams + the bootstrap of the Spearman difference) at 100k items.

``--str-2021``: the same on real data instead: the Dice baseline and zero-shot all-MiniLM-L6-v2
cosine on the 5,500 STR-2021 pairs, each with its intervals, per source (``groups``), and the two
compared (is MiniLM's lead more than noise, overall and per source?).

    python benchmarks/bench_correlation_intervals.py [--repeats 3] [--json]
    python benchmarks/bench_correlation_intervals.py --str-2021 [--mirror DIR]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from semrel.metrics.compare import compare_correlations
from semrel.metrics.correlation_intervals import pearson_interval, spearman_interval


def scores(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, 0.7 * x + np.sqrt(1 - 0.49) * rng.normal(size=n)


def best_of(repeats: int, fn) -> tuple[float, float, object]:
    """Best wall and best CPU seconds of ``repeats`` runs (CPU time: the figure a shared, loaded
    machine disturbs least; numpy runs these single-threaded), and the last value."""
    walls, cpus, value = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), value


def str_2021(mirror: str | None) -> None:
    """Dice vs zero-shot MiniLM cosine on STR-2021 (5,500 pairs): intervals overall and per source."""
    from semrel.dataset_scripts import load
    from semrel.dataset_scripts.crowd_sts.measures import minilm_cosine
    from semrel.metrics.human_correlation import correlation_with_humans
    from semrel.metrics.overlap import dice

    pairs = load("str-2021", "default", mirror=mirror)["train"]
    gold, sources = np.asarray(pairs["score"], dtype=np.float64), pairs["source"]
    systems = {"dice": dice(pairs["sentence1"], pairs["sentence2"]),
               "minilm": minilm_cosine(pairs["sentence1"], pairs["sentence2"])}
    results = {name: correlation_with_humans(p, gold, groups=sources) for name, p in systems.items()}
    print(f"STR-2021, {len(gold):,} pairs: Spearman [95% CI] of each system; MiniLM - Dice [95% CI], p")
    print(f"{'source':<12} {'n':>5} {'Dice':>22} {'MiniLM':>22} {'MiniLM - Dice':>24} {'p':>7}")
    for group in [None, *results["dice"].groups]:
        rows = np.ones(len(gold), bool) if group is None else np.asarray(sources) == group
        cells = []
        for name in systems:
            e = (results[name].overall if group is None else results[name].groups[group]).spearman
            cells.append(f"{e.value:.3f} [{e.interval.low:.3f}, {e.interval.high:.3f}]")
        c = compare_correlations(systems["minilm"][rows], systems["dice"][rows], gold[rows])
        d = c.spearman_difference
        print(f"{group or 'all':<12} {int(rows.sum()):>5} {cells[0]:>22} {cells[1]:>22} "
              f"{d.value:+.3f} [{d.interval.low:+.3f}, {d.interval.high:+.3f}] {c.spearman_p_value:>7.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--str-2021", action="store_true", help="real data: Dice vs MiniLM on STR-2021")
    parser.add_argument("--mirror", help="mirror directory (default: $SEMREL_MIRROR or ../shared/upstream)")
    args = parser.parse_args()
    if args.str_2021:
        str_2021(args.mirror)
        return
    figures = {}
    cases = [
        ("spearman_100k_1000_resamples", 100_000, lambda x, y: spearman_interval(x, y, n_resamples=1000)),
        ("spearman_5k_bca", 5_000, lambda x, y: spearman_interval(x, y, n_resamples=1000, method="BCa")),
        ("spearman_5k_percentile", 5_000,
         lambda x, y: spearman_interval(x, y, n_resamples=1000, method="percentile")),
        ("pearson_1m", 1_000_000, pearson_interval),
        ("compare_100k_1000_resamples", 100_000,
         lambda x, y: compare_correlations(x, x + np.random.default_rng(1).normal(size=x.size), y)),
    ]
    print(f"{'case':<34} {'items':>9} {'wall s':>8} {'CPU s':>8}  result")
    for name, n, fn in cases:
        x, y = scores(n)
        seconds, cpu, value = best_of(args.repeats, lambda fn=fn, x=x, y=y: fn(x, y))
        figures[name] = {"wall_s": round(seconds, 3), "cpu_s": round(cpu, 3)}
        if hasattr(value, "interval"):
            what = f"{value.value:.4f} [{value.interval.low:.4f}, {value.interval.high:.4f}] {value.interval.method}"
        else:
            d = value.spearman_difference
            what = (f"Δrho {d.value:.4f} [{d.interval.low:.4f}, {d.interval.high:.4f}] {d.interval.method}, "
                    f"Williams t {value.williams.t:.1f}")
        print(f"{name:<34} {n:>9,} {seconds:>8.3f} {cpu:>8.3f}  {what}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()

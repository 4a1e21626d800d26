"""Which BWS scoring gives the more reliable scores: counting, Bradley–Terry or Hollis' Value.

On the real raw BWS files of SemEval-2024 Task 1 (arq, arb: ../shared/upstream/semrel-2024/
BWS_annotations/), the split-half reliability (SHR, Spearman-Brown corrected Spearman, seeded) of
each method with all annotations and with random subsets of 25 / 50 / 75 % of the distinct
tuples (all annotations of a kept tuple kept), mean and sd over --seeds subsets. STR-2021's raw
tuples are not public and its mirror holds the final scores only (no best/worst counts), so it
has no row. Then the time of each method on simulated annotations (benchmarks/bench_bws.py's
design: 5,500 items, 11,000 4-tuples, 8 annotations each = 88,000; and 57x that, 5,016,000), and
choix's own Bradley–Terry fit against ours on a tenth of the 88k set.

    .venv/bin/python benchmarks/bench_bws_methods.py            # everything (about 10 min, 2 cores)
    .venv/bin/python benchmarks/bench_bws_methods.py --no-timing
    .venv/bin/python benchmarks/bench_bws_methods.py --write    # also store the figures in results.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_bws  # noqa: E402
from bench_bws import simulate  # noqa: E402

from semrel.metrics.bws.counting import encode_annotations  # noqa: E402
from semrel.metrics.bws.readers import read_semeval_2024  # noqa: E402
from semrel.metrics.bws.scoring import bws_scores, implied_pairs  # noqa: E402
from semrel.metrics.split_half.split_half import split_half_bws, tuple_groups  # noqa: E402

METHODS = {  # row name -> bws_scores / split_half_bws options
    "counting": {"method": "counting"},
    "bradley_terry": {"method": "bradley_terry"},
    "bradley_terry alpha=0.01": {"method": "bradley_terry", "alpha": 0.01},
    "value": {"method": "value"},
}
FRACTIONS = (0.25, 0.5, 0.75)
KEY = "bws_methods"


def subset(ann, fraction: float, seed: int):
    """Annotations of a random ``fraction`` of the distinct tuples (item sets), re-coded."""
    group = tuple_groups(ann.tuples, len(ann.items))
    n_groups = group.max() + 1
    kept = np.random.default_rng(seed).choice(n_groups, size=round(fraction * n_groups), replace=False)
    rows = np.isin(group, kept)
    return encode_annotations(ann.items[ann.tuples[rows]], ann.items[ann.best[rows]], ann.items[ann.worst[rows]])


def shr(ann, options: dict, trials: int) -> dict:
    r = split_half_bws(ann, trials=trials, seed=0, spearman_brown=True, **options)
    return {"shr_spearman": round(r.spearman, 4), "shr_spearman_sb": round(r.corrected_spearman, 4),
            "shr_pearson_sb": round(r.corrected_pearson, 4), "items": r.n_items}


def study(mirror: Path, trials: int, subset_trials: int, seeds: int) -> dict:
    out = {}
    for name in ("arq", "arb"):
        path = mirror / "semrel-2024" / "BWS_annotations" / f"{name}_bws.csv"
        ann = read_semeval_2024(path, on_invalid="omit")
        out[name] = {"annotations": len(ann.best), "items": len(ann.items)}
        for method, options in METHODS.items():
            start = time.perf_counter()
            row = {"all": shr(ann, options, trials)}
            for fraction in FRACTIONS:
                values = [shr(subset(ann, fraction, seed), options, subset_trials)["shr_spearman_sb"]
                          for seed in range(seeds)]
                row[f"{fraction:.2f}"] = {"mean": round(float(np.mean(values)), 4),
                                          "sd": round(float(np.std(values, ddof=1)), 4)}
            out[name][method] = row
            print(f"  {name} {method}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return out


def timed(fn, repeats: int) -> tuple[float, float]:
    """(median wall s, median CPU s of this process) of ``repeats`` calls, rounded."""
    wall, cpu, _ = bench_bws.timed(fn, repeats, memory=False)
    return round(wall, 3), round(cpu, 3)


def timing(value_passes_5m: int) -> dict:
    out = {}
    for label, scale, repeats in (("88k", 1, 5), ("5M", 57, 1)):
        tuples, best, worst = simulate(5500 * scale, 8)
        row = {"annotations": len(tuples)}
        for method in ("counting", "bradley_terry"):
            wall, cpu = timed(lambda m=method: bws_scores(tuples, best, worst, choice="position", method=m), repeats)
            row[method] = {"wall_s": wall, "cpu_s": cpu}
        passes = 100 if scale == 1 else value_passes_5m
        wall, cpu = timed(lambda p=passes: bws_scores(tuples, best, worst, choice="position", method="value",
                                                      passes=p), 1)
        row["value"] = {"wall_s": round(wall * 100 / passes, 1), "cpu_s": round(cpu * 100 / passes, 1),
                        "measured_passes": passes}
        row["bradley_terry_over_counting_cpu"] = round(row["bradley_terry"]["cpu_s"] / row["counting"]["cpu_s"], 1)
        out[label] = row
        print(f"  timing {label} done", file=sys.stderr, flush=True)
    return out


def choix_timing() -> dict:
    """choix.opt_pairwise (its default) against ours, on 550 items / 8,800 annotations (a tenth)."""
    import choix

    tuples, best, worst = simulate(550, 8)
    ann = encode_annotations(tuples, best, worst, choice="position")
    winners, losers = implied_pairs(ann.tuples, ann.best, ann.worst)
    pairs = list(zip(winners.tolist(), losers.tolist(), strict=True))
    ours = timed(lambda: bws_scores(ann, method="bradley_terry"), 3)
    theirs = timed(lambda: choix.opt_pairwise(len(ann.items), pairs, alpha=0.5), 1)
    diff = np.abs(bws_scores(ann, method="bradley_terry").strength - choix.opt_pairwise(len(ann.items), pairs,
                                                                                       alpha=0.5)).max()
    return {"annotations": len(ann.best), "pairs": len(pairs), "ours_cpu_s": ours[1], "choix_cpu_s": theirs[1],
            "max_abs_difference": float(f"{diff:.1e}")}


def print_tables(results: dict) -> None:
    if "shr" in results:
        print("SHR: Spearman-Brown corrected split-half Spearman (all annotations, "
              f"{results['trials']} trials; subsets of the tuples: mean ± sd over {results['seeds']} subsets, "
              f"{results['subset_trials']} trials each)")
        print(f"{'file':<5} {'method':<26} {'all':>7} {'raw rho':>8} " + " ".join(
            f"{f'{f:.0%} of tuples':>16}" for f in FRACTIONS))
        for name, rows in results["shr"].items():
            for method in METHODS:
                row = rows[method]
                cells = " ".join(f"{row[f'{f:.2f}']['mean']:>9.4f} ± {row[f'{f:.2f}']['sd']:.3f}" for f in FRACTIONS)
                print(f"{name:<5} {method:<26} {row['all']['shr_spearman_sb']:>7.4f} "
                      f"{row['all']['shr_spearman']:>8.4f} {cells}")
    if "time" in results:
        print("time per call (wall / CPU s; value at 5M extrapolated from the measured passes x 100 / passes)")
        for label, row in results["time"].items():
            print(f"{label:<4} {row['annotations']:>9,}  " + "  ".join(
                f"{m} {row[m]['wall_s']} / {row[m]['cpu_s']}" for m in ("counting", "bradley_terry", "value"))
                + f"  (BT/counting CPU {row['bradley_terry_over_counting_cpu']}x)")
    if "choix" in results:
        c = results["choix"]
        print(f"choix.opt_pairwise vs ours on {c['annotations']:,} annotations ({c['pairs']:,} pairs): "
              f"{c['choix_cpu_s']} s vs {c['ours_cpu_s']} s CPU, max |theta difference| {c['max_abs_difference']}")


def markdown_rows(results: dict) -> list[str]:
    """The rows of benchmarks/results/data.md's two tables (tests/metrics/test_bws_methods.py checks them)."""
    rows = []
    for name, per_method in results["shr"].items():
        for method in METHODS:
            row = per_method[method]
            rows.append(f"| {name} | {method} | {row['all']['shr_spearman_sb']:.4f} | "
                        + " | ".join(f"{row[f'{f:.2f}']['mean']:.4f} ± {row[f'{f:.2f}']['sd']:.4f}"
                                     for f in reversed(FRACTIONS)) + " |")
    for row in results["time"].values():
        rows.append(f"| {row['annotations']:,} | " + " | ".join(
            f"{row[m]['wall_s']} s / {row[m]['cpu_s']} s" for m in ("counting", "bradley_terry", "value"))
            + f" | {row['bradley_terry_over_counting_cpu']}× |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("SEMREL_MIRROR", REPO.parent / "shared"
                                                                            / "upstream")))
    parser.add_argument("--trials", type=int, default=100, help="SHR trials with all annotations")
    parser.add_argument("--subset-trials", type=int, default=30, help="SHR trials per subset")
    parser.add_argument("--seeds", type=int, default=3, help="random subsets per fraction")
    parser.add_argument("--value-passes-5m", type=int, default=1, help="Value passes measured at 5M (x 100 / it)")
    parser.add_argument("--no-study", action="store_true")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--write", action="store_true", help=f"store the figures under {KEY!r} in results.json")
    args = parser.parse_args()
    results = {"machine": "2-core CPU", "trials": args.trials, "subset_trials": args.subset_trials,
               "seeds": args.seeds, "command": "python benchmarks/bench_bws_methods.py"}
    if not args.no_study:
        results["shr"] = study(args.mirror, args.trials, args.subset_trials, args.seeds)
    if not args.no_timing:
        results["time"] = timing(args.value_passes_5m)
        results["choix"] = choix_timing()
    print(f"cpus={os.cpu_count()} load average={os.getloadavg()[0]:.1f}")
    print_tables(results)
    if "shr" in results and "time" in results:
        print("\n".join(markdown_rows(results)))
    if args.write:
        from semrel.publishing.results import update

        update(KEY, results)


if __name__ == "__main__":
    main()

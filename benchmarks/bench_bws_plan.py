"""Know when to stop annotating, BWS side: plan from part of a raw BWS file, compare with the whole; and speed.

Held out (``--part held-out``): SemEval-2024 Task 1's raw BWS files (arb 2,710 annotations of
1,659 tuples, arq 7,358 of 4,133; 1–2 annotations per tuple). Each of ``--draws`` draws keeps a
part, ``semrel.metrics.bws.plan`` plans from it (SHR over 300 splits, the resampled curve over 20
orders), and both projections predict the SHR of the whole file at its annotation count;
observed: the whole file's SHR (1,000 splits; interval: 2.5–97.5 percentiles of the per-split
Spearman). Parts: "half per tuple" (of each tuple's annotations a random half, the odd one to a
random side: one annotation per tuple where there are two) and "half the tuples" (every annotation
of a random half of the distinct tuples).

Speed (``--part speed``): Bradley–Terry against counting in-process on bench_bws.py's 88,000
simulated annotations (CPU seconds, median of ``--repeats`` runs of each, interleaved so that both
see the same load), and per-item intervals (bootstrap,
1,000 replicates; likelihood) over 100,000 items (200,000 annotations).

    python benchmarks/bench_bws_plan.py [--part held-out|speed|all] [--draws 5] [--write]
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

from bench_bws import simulate  # noqa: E402

from semrel.metrics.bws.counting import encode_annotations  # noqa: E402
from semrel.metrics.bws.intervals import bootstrap_intervals, likelihood_intervals  # noqa: E402
from semrel.metrics.bws.plan import project_curve, project_sb, resampled_curve, shr_now, subset, trust  # noqa: E402
from semrel.metrics.bws.readers import read_semeval_2024  # noqa: E402
from semrel.metrics.bws.scoring import bws_scores  # noqa: E402
from semrel.metrics.split_half.split_half import tuple_groups  # noqa: E402

KEY = "bws_plan"
MODES = ("half per tuple", "half the tuples")


def part(ann, mode: str, seed: int) -> np.ndarray:
    """Rows of the kept part (sorted)."""
    rng = np.random.default_rng(seed)
    group = tuple_groups(ann.tuples, len(ann.items))
    sizes = np.bincount(group)
    if mode == "half the tuples":
        return np.flatnonzero(np.isin(group, rng.permutation(len(sizes))[:len(sizes) // 2]))
    order = np.lexsort((rng.random(len(group)), group))  # rows by tuple, shuffled within
    rank = np.empty(len(group), dtype=np.int64)
    rank[order] = np.arange(len(group)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    keep = sizes // 2 + ((sizes % 2 == 1) & (rng.random(len(sizes)) < 0.5))
    return np.flatnonzero(rank < keep[group])


def held_out(mirror: Path, draws: int) -> dict:
    out = {}
    for name in ("arb", "arq"):
        ann = read_semeval_2024(mirror / "semrel-2024" / "BWS_annotations" / f"{name}_bws.csv", on_invalid="omit")
        whole = shr_now(ann, trials=1000, seed=0)
        out[name] = {"annotations": whole.annotations, "tuples": whole.tuples,
                     "observed": [round(whole.shr, 4), round(whole.low, 4), round(whole.high, 4)]}
        for mode in MODES:
            rows = []
            for seed in range(draws):
                piece = subset(ann, part(ann, mode, seed))
                now = shr_now(piece, trials=300, seed=seed)
                curve = resampled_curve(piece, repeats=20, trials=50, seed=seed)
                per_tuple = whole.annotations / now.tuples  # the whole file's annotation count
                sb, rs = project_sb(now, per_tuple), project_curve(now, curve, per_tuple)
                rows.append({"part_annotations": now.annotations, "part_shr": round(now.shr, 4),
                             "slope": round(float(np.median(curve.slope)), 3),
                             "spearman_brown": [round(sb.shr, 4), round(sb.low, 4), round(sb.high, 4)],
                             "resampling": [round(rs.shr, 4), round(rs.low, 4), round(rs.high, 4)],
                             "trusted": "resampling" if "read resampling" in trust(sb, rs) else
                             "either" if "read either" in trust(sb, rs) else "spearman_brown"})
                print(f"  {name} {mode} draw {seed}: {rows[-1]}", file=sys.stderr, flush=True)
            out[name][mode] = rows
    return out


def cpu(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return float(np.median(times))


def speed(repeats: int) -> dict:
    tuples, best, worst = simulate(5500, 8)
    times = np.array([[cpu(lambda m=method: bws_scores(tuples, best, worst, choice="position", method=m), 1)
                       for method in ("counting", "bradley_terry")] for _ in range(repeats)])  # interleaved
    counting, bt = (float(t) for t in np.median(times, axis=0))
    out = {"88k": {"annotations": len(tuples), "counting_cpu_s": round(counting, 4),
                   "bradley_terry_cpu_s": round(bt, 4), "ratio": round(bt / counting, 1)}}
    tuples, best, worst = simulate(100_000, 2)
    ann = encode_annotations(tuples, best, worst, choice="position")
    wall = time.perf_counter()
    bootstrap_intervals(ann, resamples=1000, seed=0)
    boot = time.perf_counter() - wall
    wall = time.perf_counter()
    likelihood_intervals(ann)
    likelihood = time.perf_counter() - wall
    out["100k_items"] = {"annotations": len(ann.best), "items": len(ann.items),
                         "bootstrap_1000_wall_s": round(boot, 1), "likelihood_wall_s": round(likelihood, 1)}
    return out


def summary(results: dict) -> list[str]:
    """The table rows of benchmarks/results/making-a-dataset.md ("Know when to stop annotating: held out")."""
    lines = []
    for name in ("arb", "arq"):
        file = results["held_out"][name]
        observed = file["observed"]
        for mode in MODES:
            rows = file[mode]
            cells = []
            for key in ("spearman_brown", "resampling"):
                pred = np.array([r[key] for r in rows])
                err = pred[:, 0] - observed[0]
                cover = int(((pred[:, 1] <= observed[0]) & (observed[0] <= pred[:, 2])).sum())
                cells += [f"{pred[:, 0].mean():.3f} [{pred[:, 1].mean():.3f}, {pred[:, 2].mean():.3f}], "
                          f"{cover}/{len(rows)} cover",
                          f"{signed(err.mean())} ({signed(err.min())} to {signed(err.max())})"]
            trusted = max({r["trusted"] for r in rows}, key=[r["trusted"] for r in rows].count)
            names = {"resampling": "resampling", "spearman_brown": "Spearman–Brown", "either": "either"}
            lines.append(f"| SemRel-2024 {name} BWS, SHR: {mode} → all ({file['annotations']:,} annotations) | "
                         f"{observed[0]:.3f} [{observed[1]:.3f}, {observed[2]:.3f}] | " + " | ".join(cells)
                         + f" | {names[trusted]} |")
    return lines


def signed(x: float) -> str:
    return f"{x:+.3f}".replace("-", "−")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("SEMREL_MIRROR", REPO.parent / "shared"
                                                                            / "upstream")))
    parser.add_argument("--part", choices=("held-out", "speed", "all"), default="all")
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=9, help="timing repeats (median)")
    parser.add_argument("--write", action="store_true", help=f"store the figures under {KEY!r} in results.json")
    args = parser.parse_args()
    results = {"command": "python benchmarks/bench_bws_plan.py --write", "draws": args.draws,
               "machine": "2-core CPU, shared"}
    if args.part in ("held-out", "all"):
        results["held_out"] = held_out(args.mirror, args.draws)
        print("\n".join(summary(results)))
    if args.part in ("speed", "all"):
        results["speed"] = speed(args.repeats)
        print(results["speed"])
    if args.write:  # one part refreshes its figures and keeps the other's
        from semrel.publishing.results import update

        update(KEY, results)


if __name__ == "__main__":
    main()

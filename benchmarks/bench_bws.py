"""Speed and memory of BWS counting scores and split-half reliability on simulated annotations.

STR-2021 scale: 5,500 items, 11,000 4-tuples (factor 2), 2 and 8 annotations per tuple; and 10x
that. Annotators pick best/worst of latent score + N(0, 1) noise. Prints wall time (median of
--repeats runs) and peak traced memory (tracemalloc, a separate run) of scoring and of SHR with
--trials trials, and the same procedures written per annotation in plain Python, as the NRC Perl
scripts do it (SHR on a few trials, extrapolated), for the speed-up.

    .venv/bin/python benchmarks/bench_bws.py                 # both scales, 1,000 trials
    .venv/bin/python benchmarks/bench_bws.py --scales 1 --repeats 5
    .venv/bin/python benchmarks/bench_bws.py --command       # `semrel bws score` vs Perl
    .venv/bin/python benchmarks/bench_bws.py --scaling       # 88k vs 5M annotations; evaluate's memory
    .venv/bin/python benchmarks/bench_bws.py --memory        # evaluate.load(...).compute vs the function, 5M
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from semrel.metrics.bws.counting import bws_counting_scores, encode_annotations
from semrel.metrics.bws.design import generate_tuples
from semrel.metrics.split_half.split_half import split_half_bws, split_half_ratings


def simulate(n_items: int, per_tuple: int, seed: int = 0):
    """(tuples, best, worst) as 1-based positions, one row per annotation."""
    rng = np.random.default_rng(seed)
    tuples = generate_tuples(n_items, k=4, factor=2, n_designs=1, seed=seed).tuples.repeat(per_tuple, axis=0)
    noisy = rng.normal(size=n_items)[tuples] + rng.normal(size=tuples.shape)
    return tuples, noisy.argmax(axis=1) + 1, noisy.argmin(axis=1) + 1


def timed(fn, repeats: int, memory: bool = True) -> tuple[float, float, float | None]:
    """(median wall seconds, median CPU seconds of this process, peak traced MiB: one more call
    under tracemalloc, or None without ``memory``)."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    if not memory:
        return float(np.median(walls)), float(np.median(cpus)), None
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return float(np.median(walls)), float(np.median(cpus)), peak


def reference_scores(tuples, best, worst):
    """get-scores-from-BWS-annotations-counting.pl, one dict update per cell."""
    seen, net = {}, {}
    for row, b, w in zip(tuples, best, worst, strict=True):
        for item in row:
            seen[item] = seen.get(item, 0) + 1
        net[row[b - 1]] = net.get(row[b - 1], 0) + 1
        net[row[w - 1]] = net.get(row[w - 1], 0) - 1
    return {item: net.get(item, 0) / n for item, n in seen.items()}


def reference_shr_trial(groups, rng):
    """One SHR-BWS.pl trial: shuffle each tuple's annotations, split, score both halves, correlate."""
    from scipy.stats import spearmanr

    halves = ([], [], []), ([], [], [])
    for rows in groups.values():
        order = rng.permutation(len(rows))
        cut = len(rows) // 2 + (len(rows) % 2 and rng.random() < 0.5)
        for j, i in enumerate(order):
            half = halves[j >= cut]
            for column, value in zip(half, rows[i], strict=True):
                column.append(value)
    a, b = reference_scores(*halves[0]), reference_scores(*halves[1])
    items = [i for i in a if i in b]
    return spearmanr([a[i] for i in items], [b[i] for i in items])[0]


PERL_COUNTING_S = 0.40  # get-scores-from-BWS-annotations-counting.pl on 88,000 annotations, this machine
REPO = Path(__file__).resolve().parents[1]


def write_nrc(path: Path, tuples, best, worst) -> None:
    """An NRC-layout CSV (Item1..Item4,BestItem,WorstItem) with item ids "item<N>"."""
    rows = tuples.astype(str).astype(object)
    rows = "item" + rows
    picked = rows[np.arange(len(rows)), best - 1], rows[np.arange(len(rows)), worst - 1]
    lines = [",".join(r) for r in np.column_stack([rows, *picked]).tolist()]
    path.write_text("Item1,Item2,Item3,Item4,BestItem,WorstItem\n" + "\n".join(lines) + "\n", encoding="utf-8")


def bench_command(repeats: int) -> None:
    """Whole-process wall time of `semrel bws score` on 88,000 annotations."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "annotations.csv"
        write_nrc(path, *simulate(5500, 8))
        env = dict(os.environ, PYTHONPATH=str(REPO))
        command = [sys.executable, "-m", "semrel", "bws", "score", str(path)]
        walls, cpus = [], []
        for _ in range(repeats):
            start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(command, env=env, check=True, capture_output=True)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - cpu.ru_utime + after.ru_stime - cpu.ru_stime)
    print(f"semrel bws score (88,000 annotations, whole process): wall median {np.median(walls):.3f} s, "
          f"min {min(walls):.3f} s; CPU median {np.median(cpus):.3f} s ({repeats} runs, load average "
          f"{os.getloadavg()[0]:.1f}); NRC Perl counting script: {PERL_COUNTING_S:.2f} s")


PEAK_PREFIX = """
import ctypes, gc, json, numpy as np
def status(key):
    return next(int(line.split()[1]) / 1024 for line in open("/proc/self/status") if line.startswith(key + ":"))
def reset():  # free what the set-up left, then restart the peak (VmHWM) from the current RSS
    gc.collect(); ctypes.CDLL("libc.so.6").malloc_trim(0)
    open("/proc/self/clear_refs", "w").write("5")
    return status("VmRSS")
rng = np.random.default_rng(0)
"""

MEMORY_N = 4_999_968  # about 5M, a multiple of 144

# inputs as a user has them (Python lists), then the call; n is a multiple of 144 (9 ratings per
# item, 8 per SHR item, 16 annotations per BWS item)
MEMORY_CASES = {
    "bws_scores": (
        "t, b, w = simulate(n // 16, 8); tuples = ('item' + t.astype(str).astype(object)).tolist()\n"
        "best, worst = b.tolist(), w.tolist()",
        "semrel.metrics.bws.counting:bws_counting_scores", "metrics/bws_scores", None,
        "tuples=tuples, best=best, worst=worst, choice='position'"),
    "split_half_reliability bws": (
        "t, b, w = simulate(n // 16, 8); tuples = ('item' + t.astype(str).astype(object)).tolist()\n"
        "best, worst = b.tolist(), w.tolist()",
        "semrel.metrics.split_half.split_half:split_half_bws", "metrics/split_half_reliability", "bws",
        "tuples=tuples, best=best, worst=worst, choice='position', trials=20"),
    "split_half_reliability ratings": (
        "items = (np.arange(n) // 8).astype(str).tolist(); ratings = (rng.integers(0, 6, n) + 0.5).tolist()",
        "semrel.metrics.split_half.split_half:split_half_ratings", "metrics/split_half_reliability", "ratings",
        "items=items, ratings=ratings, trials=20"),
    "annotator_agreement": (
        "items = (np.arange(n) // 9).astype(str).tolist()\n"
        "annotators = rng.integers(0, 500, n).astype(str).tolist()\n"
        "ratings = rng.integers(0, 6, n).astype(float).tolist()",
        "semrel.metrics.agreement:annotator_agreement", "metrics/annotator_agreement", None,
        "items=items, annotators=annotators, ratings=ratings"),
}


def peak_mib(data: str, call: str, n: int) -> tuple[float, float]:
    """(peak RSS in MiB above the inputs, seconds) of ``call`` in a fresh interpreter."""
    code = (PEAK_PREFIX + f"n = {n}\nfrom benchmarks.bench_bws import simulate\n" + data + "\n" + call
            + "\nbase = reset(); import time; start = time.perf_counter()\nrun()\n"
              "print(json.dumps([status('VmHWM') - base, time.perf_counter() - start]))")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO)),
                         check=True, capture_output=True, text=True).stdout
    return tuple(json.loads(out.strip().splitlines()[-1]))


def bench_evaluate_memory(n: int) -> None:
    """Each measurement on n annotations: the plain function vs evaluate.load(...).compute."""
    print(f"peak RSS above the inputs (Python lists), {n:,} annotations/ratings, each run in a fresh process:")
    print(f"{'':<32} {'function MiB':>12} {'s':>6} | {'evaluate MiB':>12} {'s':>6} | {'ratio':>5}")
    for name, (data, function, folder, config, kwargs) in MEMORY_CASES.items():
        module, attr = function.split(":")
        plain = peak_mib(data, f"from {module} import {attr} as f\n"
                               f"def run(): f(**dict({kwargs}))", n)
        load = f"evaluate.load({str(REPO / folder)!r}" + (f", {config!r})" if config else ")")
        through = peak_mib(data, f"import evaluate\nm = {load}\ndef run(): m.compute({kwargs})", n)
        print(f"{name:<32} {plain[0]:>12.0f} {plain[1]:>6.1f} | {through[0]:>12.0f} {through[1]:>6.1f} | "
              f"{through[0] / plain[0]:>4.2f}x")


def bench_scaling(trials: int) -> None:
    """Time per annotation and peak memory at 88,000 and ~5,000,000 annotations."""
    print(f"per annotation: median of 3 runs; SHR with {trials} trials; MiB = peak traced memory")
    rows = {}
    for scale in (1, 57):
        tuples, best, worst = simulate(5500 * scale, 8)
        ids = ("item" + tuples.astype(str).astype(object))
        ann = encode_annotations(tuples, best, worst, choice="position")
        items = np.repeat(np.arange(len(tuples) // 8), 8)
        ratings = np.random.default_rng(0).integers(0, 6, len(items)) + items % 3
        cases = {
            "bws_scores, int ids": lambda: bws_counting_scores(tuples, best, worst, choice="position"),
            "bws_scores, str ids": lambda: bws_counting_scores(ids, best, worst, choice="position"),
            "SHR bws": lambda: split_half_bws(ann, trials=trials),
            "SHR ratings, int": lambda: split_half_ratings(items, ratings, trials=trials),
            "SHR ratings, float": lambda: split_half_ratings(items, ratings / 4.0, trials=trials),
        }
        for name, fn in cases.items():
            wall, _, mib = timed(fn, 3 if scale == 1 else 1)
            rows.setdefault(name, []).append((len(tuples), wall / len(tuples) * 1e6, mib))
    print(f"{'':<22} {'88k us/ann':>10} {'MiB':>7} | {'5M us/ann':>10} {'MiB':>7} | {'time ratio':>10}")
    for name, ((n1, t1, m1), (n2, t2, m2)) in rows.items():
        print(f"{name:<22} {t1:>10.3f} {m1:>7.1f} | {t2:>10.3f} {m2:>7.1f} | {t2 / t1:>9.2f}x   (n={n1:,} / {n2:,})")
    bench_evaluate_memory(MEMORY_N)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,10", help="multiples of STR-2021 (5,500 items)")
    parser.add_argument("--per-tuple", default="2,8", help="annotations per tuple")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference-trials", type=int, default=3, help="0 skips the plain-Python reference")
    parser.add_argument("--command", action="store_true", help="only the BWS command's whole-process time")
    parser.add_argument("--scaling", action="store_true", help="only the 88k vs 5M figures (and --memory)")
    parser.add_argument("--memory", action="store_true", help="only evaluate's memory against the functions at 5M")
    args = parser.parse_args()
    if args.command or args.scaling or args.memory:
        if args.command:
            bench_command(max(args.repeats, 5))
        if args.scaling:
            bench_scaling(min(args.trials, 100))
        elif args.memory:
            bench_evaluate_memory(MEMORY_N)
        return
    print(f"cpus={os.cpu_count()} load average={os.getloadavg()[0]:.2f} numpy={np.__version__}")
    print("wall = median seconds of --repeats runs, cpu = CPU seconds of this process (others' load"
          " inflates wall only), MiB = peak traced memory")
    print(f"{'items':>7} {'tuples':>7} {'per':>3} {'annotations':>11} | {'score s':>8} {'cpu':>6} {'MiB':>6} | "
          f"{'SHR s':>7} {'cpu':>6} {'MiB':>6} {'SHR rho':>7} | {'ref score s':>11} {'ref SHR s':>9}")
    for scale in map(int, args.scales.split(",")):
        for per_tuple in map(int, args.per_tuple.split(",")):
            n_items = 5500 * scale
            tuples, best, worst = simulate(n_items, per_tuple)
            score_s, score_cpu, score_mb = timed(
                lambda: bws_counting_scores(tuples, best, worst, choice="position"), args.repeats)
            ann = encode_annotations(tuples, best, worst, choice="position")
            result = split_half_bws(ann, trials=args.trials, seed=0)
            shr_s, shr_cpu, shr_mb = timed(lambda: split_half_bws(ann, trials=args.trials, seed=0), args.repeats)
            ref_score_s = ref_shr_s = float("nan")
            if args.reference_trials and scale == 1:
                rows = list(zip(tuples.tolist(), best.tolist(), worst.tolist(), strict=True))
                start = time.perf_counter()
                reference_scores(*zip(*rows, strict=True))
                ref_score_s = time.perf_counter() - start
                groups = {}
                for row in rows:
                    groups.setdefault(tuple(sorted(row[0])), []).append(row)
                rng, start = np.random.default_rng(0), time.perf_counter()
                for _ in range(args.reference_trials):
                    reference_shr_trial(groups, rng)
                ref_shr_s = (time.perf_counter() - start) / args.reference_trials * args.trials
            print(f"{n_items:>7} {len(tuples) // per_tuple:>7} {per_tuple:>3} {len(tuples):>11} | "
                  f"{score_s:>8.4f} {score_cpu:>6.3f} {score_mb:>6.1f} | {shr_s:>7.3f} {shr_cpu:>6.2f} {shr_mb:>6.1f} "
                  f"{result.spearman:>7.4f} | "
                  f"{ref_score_s:>11.3f} {ref_shr_s:>9.1f}")


if __name__ == "__main__":
    main()

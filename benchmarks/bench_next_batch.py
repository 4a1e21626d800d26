"""Next batch where it helps most? Uniform vs uncertainty-driven designs, simulated at equal budget.

Ratings: latent item scores T ~ N(0, 1); a rating is round(3 + 1.1 T + noise) clipped to 1–5,
the noise sd the item's ambiguity (``--scenario hetero``: lognormal over items; ``homo``: equal)
times the annotator's (0.7–1.3); 10% of the annotators answer uniformly at random. Every item
starts with 2 ratings; each round adds ``--round`` ratings, either uniformly
(:func:`~semrel.metrics.rating_plan.next_batch.uniform_assignment`) or to the items with the
widest intervals (:func:`~semrel.metrics.rating_plan.next_batch.widest_assignment`, recomputed
every round). BWS: 4-tuples, each annotated once, best = argmax(T + Gumbel), worst = argmin(T +
Gumbel) (15% random annotators); the start is a balanced design of N tuples, each round adds
N/2 tuples, uniform (:func:`~semrel.metrics.bws.design.generate_tuples`) or drawn ∝ each item's
bootstrap interval width (:func:`~semrel.metrics.bws.intervals.bootstrap_intervals`,
:func:`weighted_tuples`). Measured: Pearson (ratings) or
Spearman (BWS) of the scores with T after each round, over ``--seeds`` seeds: the mean, and the
paired difference adaptive − uniform with its 95% t-interval over seeds.

    python benchmarks/bench_next_batch.py [--seeds 20] [--write]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import stats

from semrel.metrics.bws.counting import encode_annotations
from semrel.metrics.bws.design import generate_tuples
from semrel.metrics.bws.intervals import bootstrap_intervals
from semrel.metrics.rating_plan.next_batch import shrunk_sd, uniform_assignment, widest_assignment

REPO = Path(__file__).resolve().parents[1]
KEY = "next_batch"


def rate(rng, truth, ambiguity, quality, is_random, item):
    """One rating per entry of ``item`` by a random annotator of the pool."""
    a = rng.integers(0, quality.size, item.size)
    x = np.clip(np.round(3 + 1.1 * truth[item] + rng.normal(size=item.size) * ambiguity[item] * quality[a]), 1, 5)
    return np.where(is_random[a], rng.integers(1, 6, item.size), x)


def ratings_run(seed: int, design: str, scenario: str, n_items: int, rounds: int, per_round: int) -> list[float]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_items)
    ambiguity = 0.8 * np.exp(0.6 * rng.normal(size=n_items)) if scenario == "hetero" else np.full(n_items, 0.9)
    quality = rng.uniform(0.7, 1.3, 60)
    is_random = rng.random(60) < 0.10
    item = np.repeat(np.arange(n_items), 2)
    score = rate(rng, truth, ambiguity, quality, is_random, item)
    out = []
    draw = np.random.default_rng([seed, 7])  # the design's own randomness: the same ratings otherwise
    for r in range(rounds + 1):
        counts = np.bincount(item, minlength=n_items)
        means = np.bincount(item, score, minlength=n_items) / counts
        out.append(float(stats.pearsonr(means, truth)[0]))
        if r == rounds:
            break
        if design == "uniform":
            extra = uniform_assignment(counts, per_round, draw)
        else:
            values = np.full((n_items, counts.max()), np.nan)
            order = np.argsort(item, kind="stable")
            column = np.arange(item.size) - np.repeat(np.cumsum(counts) - counts, counts)
            values[item[order], column] = score[order]
            extra = widest_assignment(shrunk_sd(values, counts), counts, per_round)
        new = np.repeat(np.arange(n_items), extra)
        item, score = np.concatenate([item, new]), np.concatenate([score, rate(rng, truth, ambiguity, quality,
                                                                                is_random, new)])
    return out


def weighted_tuples(weights: np.ndarray, n_tuples: int, k: int, rng: np.random.Generator,
                    floor: float = 0.25) -> np.ndarray:
    """(n_tuples, k) item codes, k distinct per tuple, items drawn ∝ max(weight, floor·mean): the
    Efraimidis–Spirakis keys u^(1/w) (weighted sampling without replacement); the floor keeps every
    item reachable."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size < k or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"weights must be {k} or more finite numbers >= 0, one per item")
    w = np.maximum(w, floor * w.mean()) if w.mean() > 0 else np.ones_like(w)
    out = np.empty((n_tuples, k), dtype=np.int64)
    rows = max(1, (1 << 22) // w.size)
    for start in range(0, n_tuples, rows):
        q = min(rows, n_tuples - start)
        keys = np.log(rng.random((q, w.size))) / w  # log u^(1/w): the k largest are the draw
        out[start:start + q] = np.argpartition(-keys, k - 1, axis=1)[:, :k]
    return out


def annotate(rng, truth, tuples, is_random):
    """(best, worst) item codes of one annotation per tuple."""
    n, k = tuples.shape
    z = truth[tuples]
    rand = is_random[rng.integers(0, is_random.size, n)]
    z = np.where(rand[:, None], 0.0, z)
    best = np.argmax(z + rng.gumbel(scale=0.5, size=(n, k)), axis=1)
    low = z - rng.gumbel(scale=0.5, size=(n, k))
    low[np.arange(n), best] = np.inf
    worst = np.argmin(low, axis=1)
    return tuples[np.arange(n), best], tuples[np.arange(n), worst]


def counting(n_items, tuples, best, worst):
    app = np.bincount(tuples.ravel(), minlength=n_items)
    return (np.bincount(best, minlength=n_items) - np.bincount(worst, minlength=n_items)) / np.maximum(app, 1)


def bws_run(seed: int, design: str, n_items: int, rounds: int) -> list[float]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_items)
    is_random = rng.random(40) < 0.15
    tuples = generate_tuples(n_items, k=4, factor=1, n_designs=10, seed=seed).tuples
    best, worst = annotate(rng, truth, tuples, is_random)
    draw = np.random.default_rng([seed, 7])
    out = []
    for r in range(rounds + 1):
        out.append(float(stats.spearmanr(counting(n_items, tuples, best, worst), truth)[0]))
        if r == rounds:
            break
        if design == "uniform":
            new = generate_tuples(n_items, k=4, factor=0.5, n_designs=10, seed=draw).tuples
        else:
            ann = encode_annotations(tuples, best, worst)
            iv = bootstrap_intervals(ann, resamples=200, seed=int(draw.integers(1 << 31)))
            width = np.zeros(n_items)
            width[np.asarray(ann.items, dtype=np.int64)] = np.nan_to_num(iv.high - iv.low, nan=2.0)
            new = weighted_tuples(width, n_items // 2, 4, draw)
        b, w = annotate(rng, truth, new, is_random)
        tuples, best, worst = np.concatenate([tuples, new]), np.concatenate([best, b]), np.concatenate([worst, w])
    return out


def reach(curve: np.ndarray, budgets: list[int], level: float) -> float:
    """Annotations at which the mean ``curve`` first reaches ``level`` (linear between budgets)."""
    above = np.flatnonzero(curve >= level)
    if not above.size:
        return float("nan")
    j = int(above[0])
    if j == 0:
        return float(budgets[0])
    share = (level - curve[j - 1]) / (curve[j] - curve[j - 1])
    return float(budgets[j - 1] + share * (budgets[j] - budgets[j - 1]))


def savings(uniform: np.ndarray, adaptive: np.ndarray, budgets: list[int]) -> dict:
    """Annotations each design needs to reach the uniform design's final mean correlation."""
    level = float(uniform[:, -1].mean())
    u, a = reach(uniform.mean(axis=0), budgets, level), reach(adaptive.mean(axis=0), budgets, level)
    if np.isnan(a):  # the adaptive design never reaches it within the budgets simulated
        return {"level": round(level, 4), "uniform": round(u), "adaptive": None, "saved": None}
    return {"level": round(level, 4), "uniform": round(u), "adaptive": round(a), "saved": round(1 - a / u, 3)}


def summary(uniform: np.ndarray, adaptive: np.ndarray, budgets: list[int]) -> list[dict]:
    rows = []
    for j, budget in enumerate(budgets):
        d = adaptive[:, j] - uniform[:, j]
        half = stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.nan
        rows.append({"annotations": budget, "uniform": round(float(uniform[:, j].mean()), 4),
                     "adaptive": round(float(adaptive[:, j].mean()), 4), "difference": round(float(d.mean()), 4),
                     "low": round(float(d.mean() - half), 4), "high": round(float(d.mean() + half), 4)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--write", action="store_true", help=f"store the figures under {KEY!r} in results.json")
    args = parser.parse_args()
    per_round = args.items // 2
    results = {"command": "python benchmarks/bench_next_batch.py --write", "seeds": args.seeds, "items": args.items}
    for scenario in ("hetero", "homo"):
        runs = {d: np.array([ratings_run(s, d, scenario, args.items, args.rounds, per_round)
                             for s in range(args.seeds)]) for d in ("uniform", "widest")}
        budgets = [2 * args.items + r * per_round for r in range(args.rounds + 1)]
        results[f"ratings_{scenario}"] = summary(runs["uniform"], runs["widest"], budgets)
        results[f"ratings_{scenario}_reach"] = savings(runs["uniform"], runs["widest"], budgets)
    bws_items = args.items // 2
    runs = {d: np.array([bws_run(s, d, bws_items, args.rounds) for s in range(args.seeds)])
            for d in ("uniform", "weighted")}
    budgets = [bws_items + r * (bws_items // 2) for r in range(args.rounds + 1)]
    results["bws"] = summary(runs["uniform"], runs["weighted"], budgets)
    results["bws_reach"] = savings(runs["uniform"], runs["weighted"], budgets)
    for name in ("ratings_hetero", "ratings_homo", "bws"):
        print(f"\n{name}: annotations, uniform, adaptive, adaptive - uniform [95% over {args.seeds} seeds]")
        for row in results[name]:
            print(f"  {row['annotations']:>6} {row['uniform']:.4f} {row['adaptive']:.4f} "
                  f"{row['difference']:+.4f} [{row['low']:+.4f}, {row['high']:+.4f}]")
        r = results[f"{name}_reach"]
        print(f"  to reach {r['level']:.4f}: uniform {r['uniform']}, adaptive "
              + (f"{r['adaptive']} annotations ({r['saved']:+.1%} saved)" if r["adaptive"] is not None
                 else "does not within the budgets simulated"))
    if args.write:
        from semrel.publishing.results import store

        store(KEY, results)


if __name__ == "__main__":
    main()

"""Know when to stop annotating, held out: plan from part of the raters, compare with the whole.

- Czech News STS free test (1,200 pairs x 9 ratings 0–6; the file has no annotator ids, so a
  pair's 9 ratings are its 9 raters): each of ``--draws`` draws keeps 3 random ratings of every
  pair, plans from them, and predicts the reliability of the 9-rating means; observed: the
  split-half (Spearman–Brown) reliability of all 9, with its bootstrap interval.
- crowd-sts (13,225 HITs x 3 ratings 1–5, 15 HITs with 2): from 2 random ratings per HIT, predict
  3. From 1 rating per HIT no split-half exists (every item rated once: the plan refuses, as
  ``semrel ratings plan`` does); what a team can do is give a second rating to a share of the
  items: from 1 rating everywhere plus a 2nd on ``--share`` of the HITs, predict 3.

Both projections (Spearman–Brown, resampled) are scored: prediction, its interval, and the error
against the observed value (mean over draws, and its range).

    python benchmarks/bench_ratings_plan.py [--mirror ../shared/upstream] [--draws 5] [--write]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.crowd_sts.reading import read_annotations
from semrel.metrics.errors import DataValidationError
from semrel.metrics.rating_plan.projection import project
from semrel.metrics.rating_plan.table import make_table, panel

sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[1]
KEY = "ratings_plan_held_out"


def czech_panel(mirror: Path) -> np.ndarray:
    """(1200, 9) ratings of the free test (quoting off: '"' occurs in Czech direct speech)."""
    with open(mirror / "czech-news-sts" / "free-test.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return np.array([[float(v) for v in row[3].split(",")] for row in rows])


def crowd_panel(mirror: Path) -> np.ndarray:
    """(HITs, 3) labels, NaN where a HIT has 2."""
    folder = mirror / "crowd-sts"
    paths = {p.name: p for p in sorted(folder.glob("*.csv"))}
    df = read_annotations(paths, key="bench")
    table = make_table(df["pair_id"], df["worker_id"], df["label"].astype(float), scale=(1, 5))
    return panel(table)[0]


def keep(values: np.ndarray, n: int, rng: np.random.Generator, share_second: float | None = None) -> np.ndarray:
    """``n`` random ratings of each item (all it has if fewer); ``share_second``: 1 rating, and a
    2nd on that share of the items."""
    keys = np.where(np.isnan(values), np.inf, rng.random(values.shape))
    order = np.argsort(keys, axis=1)
    drawn = np.take_along_axis(values, order, axis=1)[:, :n]
    if share_second is not None:
        drawn[rng.random(len(drawn)) >= share_second, 1] = np.nan
    return drawn


def plan_of(values: np.ndarray, raters: int, seed: int):
    counts = (~np.isnan(values)).sum(axis=1)
    return project(values, counts, raters=raters, seed=seed, n_resamples=400)


def row(name: str, observed, predictions: list) -> dict:
    out = {"case": name, "observed": _r(observed), "draws": len(predictions)}
    for method in ("spearman_brown", "resampled"):
        got = [getattr(p, method).reliability for p in predictions]
        errors = np.array([g.value - observed.value for g in got])
        out[method] = {"predicted": round(float(np.mean([g.value for g in got])), 4),
                       "interval": [round(float(np.mean([g.low for g in got])), 4),
                                    round(float(np.mean([g.high for g in got])), 4)],
                       "error": round(float(errors.mean()), 4),
                       "error_range": [round(float(errors.min()), 4), round(float(errors.max()), 4)],
                       "covered": int(sum(g.low <= observed.value <= g.high for g in got))}
    out["trusted"] = sorted({p.trusted for p in predictions})
    return out


def _r(x) -> dict:
    return {"value": round(x.value, 4), "low": round(x.low, 4), "high": round(x.high, 4)}


def speed(n_items: int = 100_000) -> dict:
    """Seconds for the item means with intervals and for the whole plan, ``n_items`` x 3 ratings 1–5."""
    import time

    from semrel.metrics.rating_plan.plan import plan_ratings
    from semrel.metrics.rating_plan.reliability import item_means

    rng = np.random.default_rng(0)
    x = np.clip(np.rint(3 + rng.normal(size=n_items)[:, None] + rng.normal(size=(n_items, 3))), 1, 5)
    table = make_table(np.repeat(np.arange(n_items), 3), np.tile(["a", "b", "c"], n_items), x.ravel(), scale=(1, 5))
    values, counts = panel(table)
    start = time.perf_counter()
    item_means(values, counts)
    means = time.perf_counter() - start
    start = time.perf_counter()
    plan_ratings(table, raters=6)
    return {"items": n_items, "ratings": 3 * n_items, "item_means_seconds": round(means, 3),
            "plan_seconds": round(time.perf_counter() - start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", type=Path, default=REPO.parent / "shared" / "upstream")
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--write", action="store_true", help=f"store the figures under {KEY!r} in results.json")
    parser.add_argument("--speed", action="store_true", help="time 100,000 items x 3 ratings instead")
    args = parser.parse_args()
    if args.speed:
        print(speed())
        return
    rows = []
    czech = czech_panel(args.mirror)
    observed = plan_of(czech, 9, 0).now
    rows.append(row("Czech News STS: 3 of 9 ratings -> 9", observed,
                    [plan_of(keep(czech, 3, np.random.default_rng(d)), 9, d) for d in range(args.draws)]))
    crowd = crowd_panel(args.mirror)
    observed = plan_of(crowd, 3, 0).now
    rows.append(row("crowd-sts: 2 of 3 ratings -> 3", observed,
                    [plan_of(keep(crowd, 2, np.random.default_rng(d)), 3, d) for d in range(args.draws)]))
    one_each = keep(crowd, 1, np.random.default_rng(0))[:, 0]
    try:  # the table check semrel ratings plan runs: 1 rating per HIT, each by a rater of its own
        make_table(np.arange(one_each.size), np.arange(one_each.size) % 463, one_each, scale=(1, 5))
        one = "planned"
    except DataValidationError as exc:
        one = str(exc)
    rows.append(row(f"crowd-sts: 1 rating + a 2nd on {args.share:.0%} of HITs -> 3", observed,
                    [plan_of(keep(crowd, 2, np.random.default_rng(d), args.share), 3, d)
                     for d in range(args.draws)]))
    print(f"crowd-sts from 1 rating per HIT: {one}")
    print("| case | observed [95%] | Spearman-Brown predicted [95%] | error (range) | "
          "resampled predicted [95%] | error (range) | trusted |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        o = r["observed"]
        cells = [f"{r['case']}", f"{o['value']:.3f} [{o['low']:.3f}, {o['high']:.3f}]"]
        for method in ("spearman_brown", "resampled"):
            m = r[method]
            cells += [f"{m['predicted']:.3f} [{m['interval'][0]:.3f}, {m['interval'][1]:.3f}] "
                      f"({m['covered']}/{r['draws']} cover)",
                      f"{m['error']:+.3f} ({m['error_range'][0]:+.3f} to {m['error_range'][1]:+.3f})"]
        cells.append(", ".join(r["trusted"]))
        print("| " + " | ".join(cells) + " |")
    if args.write:
        from semrel.publishing.results import store

        store(KEY, {"command": "python benchmarks/bench_ratings_plan.py --write", "draws": args.draws,
                     "rows": rows, "from_one_rating": one})


if __name__ == "__main__":
    main()

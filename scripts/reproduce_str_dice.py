"""Reproduce the STR-2021 lexical-overlap (Dice) baseline: paper Table 5 row 1 and Table 6 column 1.

Protocol (paper §6): Dice needs no training, but to compare with trained models it is evaluated on
each of the 5 CV test folds separately and the Spearman correlations are averaged; per source, the
correlation is taken over the fold's pairs of that source.

    python scripts/reproduce_str_dice.py [--mirror DIR] [--cache-dir DIR]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from dataset_scripts import load
from dataset_scripts.str_2021.builder import N_FOLDS
from metrics.lexical_overlap.overlap import dice

PAPER_OVERALL = 0.57  # Table 5, row 1
PAPER_PER_SOURCE = {  # Table 6, Dice CV column (paper names Wikipedia "Wiki")
    "STS": 0.60, "SNLI": 0.53, "Stance": 0.20, "Goodreads": 0.44, "Wikipedia": 0.48,
    "Formality": 0.69, "ParaNMT": 0.44,
}


def fold_correlations(mirror=None, cache_dir=None) -> tuple[list[float], dict[str, list[float]]]:
    overall, per_source = [], {s: [] for s in PAPER_PER_SOURCE}
    for fold in range(N_FOLDS):
        test = load("str-2021", f"cv-fold-{fold}", mirror=mirror, cache_dir=cache_dir)["test"]
        pred = dice(test["sentence1"], test["sentence2"])
        gold = np.asarray(test["score"], dtype=float)
        sources = np.asarray(test["source"])
        overall.append(stats.spearmanr(pred, gold).statistic)
        for source in per_source:
            mask = sources == source
            per_source[source].append(stats.spearmanr(pred[mask], gold[mask]).statistic)
    return overall, per_source


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mirror")
    ap.add_argument("--cache-dir")
    args = ap.parse_args(argv)
    overall, per_source = fold_correlations(args.mirror, args.cache_dir)
    print("STR-2021 lexical overlap (Dice), Spearman, mean over 5 CV test folds")
    print(f"{'':<12} {'paper':>6} {'ours':>6} {'diff':>6}   per fold")
    rows = [("overall", PAPER_OVERALL, overall)] + [(s, PAPER_PER_SOURCE[s], v) for s, v in per_source.items()]
    for name, paper, values in rows:
        mean = float(np.mean(values))
        print(f"{name:<12} {paper:>6.2f} {mean:>6.3f} {mean - paper:>+6.3f}   "
              + " ".join(f"{v:.3f}" for v in values))


if __name__ == "__main__":
    main()

"""Reproduce the STR-2021 lexical-overlap (Dice) baseline: paper Table 5 row 1 and Table 6 column 1
(computed by :mod:`dataset_scripts.str_2021.dice`; this script parses arguments and prints).

    python scripts/reproduce_str_dice.py [--mirror DIR] [--cache-dir DIR]
"""

from __future__ import annotations

import argparse

import numpy as np

from semrel.dataset_scripts.str_2021.dice import PAPER_OVERALL, PAPER_PER_SOURCE, fold_correlations


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

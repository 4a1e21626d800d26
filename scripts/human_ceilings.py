"""Print the human ceiling of each labelled dataset split as a Markdown table
(:func:`semrel.dataset_scripts.ceilings.human_ceiling`; the definition is
:mod:`semrel.metrics.ceiling`'s). Deterministic: 1,000 splits and 1,000 bootstrap resamples, seed 0.

    python scripts/human_ceilings.py [--mirror DIR] [--split test|train]

``--split`` picks crowd-sts's split (default test); the other datasets' splits are fixed.
"""

from __future__ import annotations

import argparse

from semrel.dataset_scripts.ceilings import human_ceiling
from semrel.dataset_scripts.crowd_sts.builder import FILTERED
from semrel.dataset_scripts.semrel_2024.files import BWS, LANGUAGES


def cells(crowd_split: str) -> list[tuple[str, str, str]]:
    """(dataset, config, split) of every row: the splits a model is scored on."""
    semrel = [("semrel-2024", lang, split) for lang in BWS for split in ("validation", "test")]
    crowd = [("crowd-sts", config, crowd_split) for config in ("pairs", *(f"pairs-filtered-{f}" for f in FILTERED))]
    return [("str-2021", "default", "train"), *semrel, ("semrel-2024", "eng", "test"), *crowd,
            ("czech-news-sts", "free", "test"), ("c-sts", "default", "validation")]


def _value(value, interval=None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")


def row(dataset: str, config: str, split: str, mirror) -> str:
    c = human_ceiling(dataset, config, split, mirror=mirror)
    if dataset == "semrel-2024" and config == "eng":
        config = ", ".join(lang for lang in LANGUAGES if lang not in BWS)
        split = "validation, test"
    if not c.available:
        return f"| {dataset} | {config} | {split} |{' — |' * 6} {c.note} |"
    single = (f"{_value(c.single_annotator, c.single_annotator_interval)} / "
              f"{_value(c.single_annotator_pearson, c.single_annotator_pearson_interval)}"
              if c.single_annotator is not None else "— (BWS)")
    counts = f"{c.n_items:,} / {c.n_annotations:,}"
    ceilings = f"{_value(c.value, c.interval)} | {_value(c.pearson, c.pearson_interval)}"
    return (f"| {dataset} | {config} | {split} | {ceilings} | {c.reliability:.3f} | {c.split_half:.3f} | {single} "
            f"| {counts} | {c.source} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", help="the upstream mirror (default: $SEMREL_MIRROR, else ../shared/upstream)")
    ap.add_argument("--split", choices=("test", "train"), default="test", help="crowd-sts's split")
    args = ap.parse_args(argv)
    print("| dataset | config | split | ceiling ρ [95% CI] | ceiling r [95% CI] | R (ρ) | split-half ρ "
          "| single annotator ρ / r | items / judgements | source |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for cell in cells(args.split):
        print(row(*cell, args.mirror))


if __name__ == "__main__":
    main()

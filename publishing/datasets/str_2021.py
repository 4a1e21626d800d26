"""STR-2021 card body (description, licence, configs, statistics, score histograms = Figure 1) and
its report section (score distributions, the Dice baseline per source, SHR).

Split-half reliability of the STR-2021 scores cannot be recomputed: the raw Best-Worst Scaling
annotations (``mturk_data/bws_annotations.csv``) are not public, so the paper's value (0.84,
§4) is quoted, and SHR is shown on the public raw BWS annotations of the SemEval-2024 Task 1
successor (``<mirror>/semrel-2024/BWS_annotations/*.csv``) with ``metrics/bws_scores`` (reader,
counting scores) and ``metrics/split_half_reliability`` (1,000 random half splits, seed 0).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semrel.dataset_scripts.sources import mirror_dirs
from semrel.dataset_scripts.str_2021.builder import CITATION, SOURCE
from semrel.dataset_scripts.str_2021.ceiling import PUBLISHED_SHR as PAPER_SHR
from semrel.dataset_scripts.str_2021.dice import PAPER_OVERALL, PAPER_PER_SOURCE, fold_correlations

from ..cards import build_recipe, grouped_bars, histograms, markdown_table, split_statistics

SEMEVAL_DIR = "semrel-2024/BWS_annotations"
SHR_TRIALS, SHR_SEED = 1000, 0


def card_body(built: dict, image_dir: Path) -> str:
    full = built["default"]["train"]
    sources = np.asarray(full["source"])
    scores = np.asarray(full["score"], dtype=float)
    groups = {"all": scores, **{s: scores[sources == s] for s in sorted(set(sources))}}
    histograms(groups, image_dir / "score_hist_by_source.png", xlabel="relatedness score",
               title="STR-2021 score distribution per source (paper Figure 1)",
               bins=20, value_range=(0, 1))
    subsets = np.asarray(full["subset"])
    subset_rows = [[s, (subsets == s).sum(), float(scores[subsets == s].mean())]
                   for s in sorted(set(subsets))]
    return f"""# STR-2021 — Semantic Textual Relatedness

5,500 English sentence pairs annotated for **semantic relatedness** (not only similarity) with
Best-Worst Scaling: annotators saw 4 pairs at a time and picked the most and least related; a
pair's score is ((#best − #worst) / #appearances + 1) / 2 in [0, 1] (`score`, rounded to the
published 3 decimals); `bws_score` = 2·score − 1 is the raw counting score in [−1, 1].
Split-half reliability of the scores: 0.84 (paper §4).

**Licence and redistribution.** {SOURCE.licence} This card is published without the data:
build the dataset yourself from the upstream file ({SOURCE.url}, sha256 `{SOURCE.sha256}`):

```bash
{build_recipe("str-2021")}
```

## Configs
- `default`: all 5,500 pairs (split `train`).
- `cv-fold-0` … `cv-fold-4`: 5-fold cross-validation stratified by subset (paper §6); fold
  membership is a function of a hash of `pair_id`, independent of row order.
- `lodo-<source>`: leave-one-source-out (paper Table 6 "LOOut"): test = that source.

Columns: `pair_id`, `source`, `subset`, `sentence1`, `sentence2`, `score` (float32), `bws_score`.

## Statistics
{split_statistics(built)}

Pairs per subset (`_pp` paraphrase pairs, `_r` random pairs with lexical overlap):

{markdown_table(["subset", "pairs", "mean score"], subset_rows)}

![score histograms](images/score_hist_by_source.png)

## Citation
```bibtex
{CITATION}
```
"""


def report_section(built, image_dir: Path, *, mirror=None, cache_dir=None) -> str:
    full = built["default"]["train"]
    sources = np.asarray(full["source"])
    scores = np.asarray(full["score"], dtype=float)
    names = sorted(set(sources))
    histograms({"all": scores, **{s: scores[sources == s] for s in names}},
               image_dir / "score_hist_by_source.png", xlabel="relatedness score",
               title="STR-2021 score distribution per source", bins=20, value_range=(0, 1))
    stats = [[s, int((sources == s).sum()), *_describe(scores[sources == s])] for s in names]
    stats.append(["all", len(scores), *_describe(scores)])

    overall, per_source = fold_correlations(mirror, cache_dir)
    dice = [[s, PAPER_PER_SOURCE[s], float(np.mean(v)), float(np.min(v)), float(np.max(v))]
            for s, v in per_source.items()]
    dice.append(["overall", PAPER_OVERALL, float(np.mean(overall)), float(np.min(overall)),
                 float(np.max(overall))])
    grouped_bars({row[0]: {"paper": row[1], "ours": row[2]} for row in dice},
                 image_dir / "dice_by_source.png", ylabel="Spearman ρ",
                 title="Lexical overlap (Dice) vs human scores, mean of 5 CV test folds")
    return f"""STR-2021: {len(scores):,} English sentence pairs, relatedness by Best-Worst Scaling
(Abdalla et al., EACL 2023). Card only on the Hub: the licence forbids redistribution.

### Score distributions

{markdown_table(["source", "pairs", "mean", "std", "median", "share > 0.5"], stats)}

![score histograms per source](images/score_hist_by_source.png)

### Lexical-overlap baseline (Dice), per source

Spearman correlation of the Dice coefficient of unique unigrams with the human scores on each of
the 5 cross-validation test folds (paper §6, Tables 5 and 6); `metrics/lexical_overlap`.

{markdown_table(["source", "paper", "ours (mean)", "fold min", "fold max"], dice)}

![Dice baseline per source](images/dice_by_source.png)

### Split-half reliability

Not recomputable: the raw BWS annotations of STR-2021 are not public. The paper reports
SHR = {PAPER_SHR:.2f} (§4).

{semeval_shr(mirror, image_dir)}
"""


def semeval_shr(mirror, image_dir: Path) -> str:
    """SHR and counting-score distributions of the SemEval-2024 BWS annotation files."""
    from semrel.metrics.bws.counting import bws_counting_scores
    from semrel.metrics.bws.readers import read_semeval_2024
    from semrel.metrics.split_half.split_half import split_half_bws

    folder = next((d / SEMEVAL_DIR for d in mirror_dirs(mirror) if (d / SEMEVAL_DIR).is_dir()), None)
    if folder is None:
        return f"SemEval-2024 BWS annotations not found (`<mirror>/{SEMEVAL_DIR}/`): no SHR shown."
    rows, scores = [], {}
    for path in sorted(folder.glob("*.csv")):
        ann = read_semeval_2024(path, on_invalid="omit")
        shr = split_half_bws(ann, trials=SHR_TRIALS, seed=SHR_SEED, spearman_brown=True)
        scores[path.stem] = bws_counting_scores(ann).score
        rows.append([path.name, f"{len(ann.best):,}", sum(ann.skipped.values()),
                     sum(ann.repaired.values()), f"{len(ann.items):,}",
                     f"{float(np.mean(shr.n_items_both)):,.0f}", shr.spearman, shr.spearman_std,
                     shr.pearson, shr.corrected_spearman])
    histograms(scores, image_dir / "semeval_bws_scores.png", xlabel="BWS counting score",
               title="SemEval-2024 Task 1 counting scores", bins=21, value_range=(-1, 1))
    table = markdown_table(["file", "annotations", "rows skipped", "cells repaired", "items",
                            "items in both halves", "SHR ρ", "sd", "SHR r",
                            "ρ Spearman-Brown"], rows)
    return f"""On the raw BWS annotations of SemEval-2024 Task 1 (successor of STR-2021, same
protocol), read with `metrics/bws_scores` (rows whose item cell is not a list literal skipped,
trailing junk after `]` repaired, both counted) and split {SHR_TRIALS:,} times at random (seed
{SHR_SEED}) with `metrics/split_half_reliability`; items annotated in only one half of a trial are
left out of that trial's correlation.

{table}

![SemEval-2024 counting scores](images/semeval_bws_scores.png)"""


def _describe(values: np.ndarray) -> list[float]:
    return [float(values.mean()), float(values.std(ddof=1)), float(np.median(values)),
            float((values > 0.5).mean())]


def overview(built, *, mirror=None, cache_dir=None):
    """Size; the paper's SHR; the Dice baseline (recomputed). The report adds the fine-tuned
    figure from benchmarks/results.json."""
    from ..report import Figure, Overview

    overall, _ = fold_correlations(mirror, cache_dir)
    return Overview(
        Figure(f"{len(built['default']['train']):,} pairs", "semrel build --only str-2021"),
        Figure(f"SHR {PAPER_SHR:.2f} (paper §4; raw annotations not public)"),
        Figure(f"Dice ρ {np.mean(overall):.3f} (paper {PAPER_OVERALL:.2f}), 5-fold mean",
               "python scripts/reproduce_str_dice.py"))

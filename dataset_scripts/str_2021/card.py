"""Card body of str-2021: description, licence, configs, statistics, score histograms (Figure 1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..cards import histograms, markdown_table, split_statistics
from .builder import CITATION, SOURCE

PAPER_DICE = {"overall": 0.57}


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
pip install semrel   # from a clone: pip install -e .
python upload.py build --only str-2021          # or: SEMREL_MIRROR=/path/to/mirror ...
python -c "from dataset_scripts import load; print(load('str-2021', 'cv-fold-0'))"
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

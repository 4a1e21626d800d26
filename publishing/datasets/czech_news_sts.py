"""Card body of czech-news-sts: description, licence decision, user layout, statistics, plots."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.czech_news_sts.builder import CITATION, FREE_ANNOTATIONS, SOURCE, USER_FILES
from semrel.dataset_scripts.czech_news_sts.paper import PAPER_INTER, agreement_intervals, agreement_of
from semrel.metrics.lower_bound import mse_lower_bound

from ..cards import build_recipe, figure, histograms, markdown_table, save, split_statistics
from ..rating_plan import plan_block


def spread_plot(annotations: np.ndarray, path: Path) -> Path:
    """Per-pair standard deviation of the annotations: histogram, and against the pair's mean."""
    mean, std = annotations.mean(axis=1), annotations.std(axis=1, ddof=1)
    fig = figure((8, 3))
    left, right = fig.subplots(1, 2)
    left.hist(std, bins=24, color="#4C72B0", edgecolor="white")
    left.set_xlabel(f"std of the {annotations.shape[1]} annotations of a pair", fontsize=8)
    left.set_ylabel("pairs", fontsize=8)
    right.scatter(mean, std, s=6, alpha=0.4, color="#4C72B0")
    right.set_xlabel("mean score", fontsize=8)
    right.set_ylabel("std of annotations", fontsize=8)
    fig.suptitle("Spread of the individual annotations (free test)", fontsize=10)
    return save(fig, path)


def free_statistics(free) -> str:
    annotations = np.asarray(free["annotations"], dtype=float)
    scores = annotations.mean(axis=1)
    texts = list(zip(free["sentence1"], free["sentence2"], strict=True))
    pairs = Counter(texts)
    agreement = agreement_of(annotations)
    intervals = {k: v["pearson"].interval for k, v in agreement_intervals(annotations).items()}
    rows = [
        ["pairs", f"{len(scores):,}"],
        ["annotations per pair", ", ".join(map(str, sorted(set(map(len, free["annotations"])))))],
        ["pairs with sentence1 == sentence2", sum(a == b for a, b in texts)],
        ["repeated (sentence1, sentence2) pairs", sum(n - 1 for n in pairs.values() if n > 1)],
        ["invalid R1 scores (kept, flagged)", sum(not v for v in free["r1_score_valid"])],
        ["mean score (paper Table 2: 2.66)", float(scores.mean())],
        ["std of the pair means (paper Table 2 'variance': 1.78)", float(scores.std(ddof=1))],
        ["inter-annotator Pearson, pooled (paper Table 1: 0.861)", agreement.inter.pearson],
        ["inter-annotator Pearson, leave-one-out", agreement.inter_loo.pearson],
        ["95 % intervals of the two (bootstrap over pairs, seed 0)",
         " / ".join(f"[{i.low:.3f}, {i.high:.3f}]" for i in (intervals["pooled"], intervals["loo"]))],
        ["Krippendorff's alpha (interval)", agreement.alpha],
        ["MSE lower bound, t model (paper §6: ≈0.1731)", mse_lower_bound(annotations).bound],
        ["MSE lower bound, normal model", mse_lower_bound(annotations, model="normal").bound],
    ]
    return markdown_table(["free test", "value"], rows)


def card_body(built: dict, image_dir: Path) -> str:
    free = built["free"]["test"]
    groups = {f"{config}/{split}": np.asarray(ds["score"], dtype=float)
              for config, splits in built.items() for split, ds in splits.items()}
    histograms(groups, image_dir / "score_hist.png", xlabel="similarity score (0–6)",
               title="Czech News STS score distribution", bins=np.linspace(0, 6, 31),
               value_range=(0, 6))
    ratings = np.asarray(free["annotations"], dtype=float)
    spread_plot(ratings, image_dir / "annotation_spread.png")
    plan = plan_block(np.repeat(free["pair_id"], ratings.shape[1]), np.tile([f"slot{j + 1}" for j in range(
        ratings.shape[1])], len(ratings)), ratings.ravel(), image_dir, scale=(0, 6), raters=18, prefix="plan")
    layout = "\n".join(f"    {file:<14} -> config `{config}`" for config, file in USER_FILES.items())
    return f"""# Czech News STS

Czech sentence pairs from news reports and their human-written summaries (Czech News Agency),
scored 0–6 for semantic textual similarity by journalism students (Sido et al. 2021). The test
pairs were each scored by {FREE_ANNOTATIONS} annotators, without (`free`) and with (`dep`) the
sentences' context; every individual annotation is kept, so annotator agreement and a lower bound
on the attainable MSE can be measured (`metrics/annotator_agreement`, `metrics/mse_lower_bound`).

**Licence and redistribution.** No data licence is stated. The paper makes the data "publicly
accessible for research purposes" and releases it only as a text export because its source, the
Czech News Agency's reports and summaries, is not public (§3, §8); the upstream repository's
CC-BY-4.0 covers its models, not this file. Without an explicit permission to redistribute we treat
it as research use only and **do not republish the rows**: this card is published without data.
Build it yourself from {SOURCE.url} (sha256 `{SOURCE.sha256}`):

```bash
{build_recipe("czech-news-sts")}
```

## Configs
- `free` (split `test`, public file): `pair_id` (`test-0001`… from the row, shared with `dep` and
  `sig`), `sentence1`, `sentence2`, `score` (float32, mean of the annotations, checked against the
  file's mean), `annotations` (the {FREE_ANNOTATIONS} ints 0–6), `r1_score` (the round-1 score,
  null when out of range), `r1_score_raw` (as written) and `r1_score_valid`. One pair has R1 = −4:
  it stays visible as `r1_score_raw = -4`, `r1_score_valid = false`, never clipped.
- `dep` (split `test`, user file): the context-dependent test; `sentence1`/`sentence2` are the key
  sentences, `context1`/`context2` the released context with the key marked `<sent>…</sent>`;
  rows are matched to `free` by their key sentences (k-th occurrence to k-th occurrence).
- `sig` (split `test`, computed from `free` + `dep`): pairs whose context-free and context-dependent
  means differ at the 0.95 level, two-sided Student t-test per pair (paper §5.1, 90 pairs in the
  paper's `test-sig`); `score` = context-dependent mean, `score_free`, both annotation lists,
  `t_statistic`, `p_value`.
- `train-raw`, `train-n2`, `train-n1` (split `train`, user files): two sentences and the single R1
  score (116,956 / 101,413 / 85,374 rows in the paper; N2/N1 keep pairs within 2/1 of their
  colour class's target score, §5.2).

User-supplied files (paper §8 formats, UTF-8, tab-separated, no header, no quoting) go into one
directory passed as `data_dir`:

{layout}

## Statistics
{split_statistics(built)}

{free_statistics(free)}

The paper's Table 2 labels the spread of the pair means "variance", but 1.78 matches their
standard deviation (variance 3.18). The pooled inter-annotator figures and the MSE bound differ
from the paper's; `scripts/reproduce_czech_news.py` prints them side by side and explains why.

![score histograms](images/score_hist.png)

![annotation spread](images/annotation_spread.png)

{plan}
The file has no annotator ids: a pair's {FREE_ANNOTATIONS} ratings count as its {FREE_ANNOTATIONS} raters.

## Citation
```bibtex
{CITATION}
```
"""


def overview(built, *, mirror=None, cache_dir=None):
    """Size; pooled inter-annotator Pearson and the MSE lower bound of the free test."""
    from ..report import Figure, Overview

    annotations = np.asarray(built["free"]["test"]["annotations"], dtype=float)
    n, k = annotations.shape
    agreement = agreement_of(annotations)
    return Overview(
        Figure(f"{n:,} test pairs × {k} annotations", "semrel build --only czech-news-sts"),
        Figure(f"inter-annotator r {agreement.inter.pearson:.3f} (paper {PAPER_INTER['pearson']}); MSE ≥ "
               f"{mse_lower_bound(annotations).bound:.3f}", "python scripts/reproduce_czech_news.py"),
        Figure("—"))

"""Card body and report section of c-sts: the two releases, their licences, configs, statistics,
the re-annotation's labels, the agreement of original and re-annotated labels, score histograms.

The original release's rows are decrypted with the user's password and never leave the local
``datasets`` cache: ``semrel build`` writes no data files for those configs (the spec's
``local_configs``); the open re-annotation (CC-BY-4.0) is exported as Parquet. On the Hub the
dataset is card-only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.c_sts import reannotated
from semrel.dataset_scripts.c_sts.builder import CITATION, ENCRYPTED_NAME, PASSWORD_ENV, SOURCE, SPLIT_FILES

from ..cards import build_recipe, histograms, markdown_table, split_statistics

CC_BY = "https://creativecommons.org/licenses/by/4.0/"
LABELS = (1.0, 2.0, 3.0, 4.0, 5.0)


def label_table(built: Mapping) -> str:
    """Labels of the re-annotation per split (-1: the ``validation_invalid`` rows), and what its
    sentence pairs look like: equal labels under both conditions, one condition written twice,
    -1 on one or both conditions. Empty when ``reannotated``/``reannotated-pairs`` are not built."""
    if "reannotated" not in built or "reannotated-pairs" not in built:
        return ""
    rows, pairs = built["reannotated"], built["reannotated-pairs"]
    table = []
    for split, ds in rows.items():
        counts = Counter(s for s in ds["score"] if s is not None)
        table.append([split, f"{len(ds):,}", *(f"{counts[v]:,}" for v in LABELS),
                      f"{sum(s is None for s in ds['score']):,}"])
    shape = []
    for split, ds in pairs.items():
        s1, s2 = ds["score1"], ds["score2"]
        equal = sum(a is not None and a == b for a, b in zip(s1, s2, strict=True))
        repeated = sum(a == b for a, b in zip(ds["condition1"], ds["condition2"], strict=True))
        minus_one = Counter((a is None) + (b is None) for a, b in zip(s1, s2, strict=True))
        shape.append([split, f"{len(ds):,}", f"{equal:,}", f"{repeated:,}", f"{minus_one[1]:,}",
                      f"{minus_one[2]:,}"])
    return (markdown_table(["split", "rows", *(f"label {v:g}" for v in LABELS), "label -1"], table)
            + "\n\n" + markdown_table(["split", "sentence pairs", "same label under both conditions",
                                       "one condition written twice", "-1 on one condition",
                                       "-1 on both"], shape))


def agreement_table(built: Mapping) -> str:
    """Original vs re-annotated labels per split of ``reannotated-original``
    (:func:`~semrel.dataset_scripts.c_sts.reannotated.label_agreement`); empty when not built."""
    if "reannotated-original" not in built:
        return ""
    rows = []
    for split, ds in built["reannotated-original"].items():
        if split == reannotated.INVALID_SPLIT:
            continue
        try:
            found = reannotated.label_agreement(ds)
        except ValueError as exc:  # too few matched rows for an interval
            rows.append([split, "–", f"not measured: {exc}", "–", "–"])
            continue
        rho, r = found.spearman, found.pearson
        rows.append([split, f"{found.n:,}",
                     f"{rho.value:.3f} [{rho.interval.low:.3f}, {rho.interval.high:.3f}]",
                     f"{r.value:.3f} [{r.interval.low:.3f}, {r.interval.high:.3f}]",
                     f"{found.without_original:,}"])
    return markdown_table(["split", "rows with both labels", "Spearman [95 % bootstrap]",
                           "Pearson [95 % Fisher z]", "no original row of that key"], rows)


def score_plot(built: Mapping, path: Path) -> str:
    """Histograms of the labelled splits of ``default`` and ``reannotated``; the image line."""
    groups = {f"{config}/{split}": np.asarray(ds["score"], dtype=float)
              for config in ("default", "reannotated") if config in built
              for split, ds in built[config].items()
              if split in ("train", "validation")}
    if not groups:
        return ""
    histograms(groups, path, xlabel="similarity (1-5)", title="C-STS labels per release and split",
               bins=np.arange(0.75, 5.5, 0.5))
    return f"![score histograms](images/{path.name})\n"


def card_body(built: dict, image_dir: Path) -> str:
    plot = score_plot(built, image_dir / "score_hist_by_split.png")
    labels, agreement = label_table(built), agreement_table(built)
    labels = labels and f"### Labels of the re-annotation\n\n{labels}\n"
    agreement = agreement and f"### Original vs re-annotated labels (your files)\n\n{agreement}\n"
    return f"""# C-STS — Conditional Semantic Textual Similarity

Sentence pairs judged for similarity **under a natural-language condition** (1–5 Likert). Every
sentence pair appears twice, under two conditions (the quadruplet loss of the paper relies on this
grouping). Two releases of the same sentences, two sets of configs:

- **the original** (Deshpande et al. 2023), encrypted: configs `default`, `pairs`; test labels
  hidden (−1 upstream, null here) and scored by the authors' server from a JSON file
  `{{"0": score, ..., "4731": score}}` (`semrel predict`);
- **the open re-annotation** (Zhang, Zhou & Bollegala 2025, EMNLP; `{reannotated.HUB_ID}` on the
  Hub), CC-BY-4.0: configs `reannotated`, `reannotated-pairs`, `reannotated-dev`, the original's
  train and validation sentence pairs (11,342 and 2,834 rows; no test split).

## The re-annotation's labels
- **train**: conditions rewritten to remove ambiguity, similarity re-annotated with GPT-4o and
  Claude 3.7 Sonnet and combined with the original human labels (written `1.0` … `5.0`).
- **validation**: the human re-annotation of C-STS's validation set by Tu et al. (2024,
  "Linguistically Conditioned Semantic Textual Similarity", ACL), written as integers `1` … `5`,
  and **−1 where the annotators found that the condition cannot be judged on the sentences** (an
  invalid item). The evidence: 214 rows carry −1, exactly the number of invalid items Tu et al.
  report removing (keeping 2,620); the labels are integers where train's are decimals; they
  pile up at 1 and 5 as Tu et al. describe for their labels (binary conditions allowed only 1, 3
  or 5); and Zhang et al. re-annotated training data only and report their models against
  human-labelled data. The release does not say it in words, so this is an inference, if a
  strong one.
- **The −1 rule**: a −1 row is never scored and never dropped. It is in the split
  `validation_invalid` with a null score; `validation` holds the labelled rows. In
  `reannotated-pairs` a sentence pair with −1 on either condition is in `validation_invalid`
  whole (null on the −1 side, the other keeping its label): a −1 on one condition does not
  imply one on the other. −1 in train is an error.

## Access and licences
**The original** (`default`, `pairs`, and `reannotated-original` which joins it): {SOURCE.licence}
It is the encrypted `{ENCRYPTED_NAME}` ({SOURCE.url}); decryption (compatible with
`openssl aes-256-cbc -a -salt -pbkdf2`) happens in memory, and these rows live only in your local
`datasets` cache.
This card's `license: other` metadata names these terms, the stricter of the two.

**The re-annotation** (`reannotated`, `reannotated-pairs`, `reannotated-dev`) is CC-BY-4.0
({CC_BY}), by its own card ({reannotated.SOURCE.licence_url}). Sharing or adapting it needs
attribution: cite Zhang, Zhou & Bollegala (2025) for the release, Tu et al. (2024) for the
validation labels and Deshpande et al. (2023) for the sentences and conditions (BibTeX below),
name the licence, and say what was changed. semrel changes nothing but the layout: the column
`label` is `score` (float32), the −1 rows are a split of their own, `reannotated-pairs` puts a
pair's two conditions side by side, and `reannotated-dev` sets a tenth of train's sentence pairs
apart as `dev`. This card is published without data: build it yourself (the re-annotation comes
from its URL with a sha256 check, no password):

```bash
{build_recipe("c-sts")}
```
```python
from semrel.dataset_scripts import load
load("c-sts", "reannotated")                    # the open re-annotation
load("c-sts", data_dir="DIR", password="...")   # DIR holds {ENCRYPTED_NAME}; or ${PASSWORD_ENV}
load("c-sts", data_dir="DIR")                   # DIR holds {', '.join(SPLIT_FILES.values())}
load("c-sts", "reannotated-original", data_dir="DIR", password="...")   # both label sets
```

## Configs
- `default`: the original train / validation / test rows: `sentence1`, `sentence2`, `condition`
  (an empty condition as released is kept as ""), `score` (float32, 1–5; null in test).
- `pairs`: the original, one row per sentence pair: `sentence1`, `sentence2`, `condition1`,
  `score1`, `condition2`, `score2` (file order).
- `reannotated`: train / validation / validation_invalid rows, the columns of `default`.
- `reannotated-pairs`: the re-annotation in the layout of `pairs`.
- `reannotated-dev`: `reannotated` with a `dev` split for choosing epochs and settings: the
  sentence pairs of fold 0 of ten (a stable hash of the two sentences, stratified by the pair's
  two labels), both conditions of a pair together; `train` keeps the rest.
- `reannotated-original`: the rows of `reannotated` with `original_score`, the original label of
  the row with the same (sentence1, sentence2, condition) in the same split, null where there is
  none (a rewritten condition) or where that key is held twice on either side; a load says how
  many. Tu et al. report Spearman 0.4922 between their validation labels and the original ones.

## Statistics
{split_statistics(built)}

{plot}
{labels}
{agreement}
## Citation
```bibtex
{CITATION}
{reannotated.CITATION}
```
"""


def report_section(built, image_dir: Path, *, mirror=None, cache_dir=None) -> str:
    """The configs built, the re-annotation's labels and the −1 rule, the agreement of original
    and re-annotated labels where the original was supplied, score histograms."""
    plot = score_plot(built, image_dir / "score_hist_by_split.png")
    agreement = agreement_table(built) or ("Original vs re-annotated labels: not measured (build "
                                           "with `--data-dir c-sts=DIR` holding the original "
                                           "release to join it).")
    return f"""C-STS (Deshpande et al. 2023): the encrypted original (`default`, `pairs`; rows stay in
the local cache) and the open CC-BY-4.0 re-annotation (Zhang, Zhou & Bollegala 2025:
`reannotated`, `reannotated-pairs`), whose validation labels are Tu et al. (2024)'s human
re-annotation; its 214 rows labelled −1 (invalid) form the split `validation_invalid`, never
scored. Card only on the Hub.

### Statistics

{split_statistics(built)}

{plot}
### The re-annotation's labels

{label_table(built)}

### Original vs re-annotated labels

{agreement}
"""

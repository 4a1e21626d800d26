"""Card body of c-sts: description, access and licence, configs, statistics, score histograms.

The rows are decrypted with the user's password and never leave the local ``datasets`` cache:
``semrel build`` writes this card alone (the spec's ``card_only``), no Parquet.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semrel.dataset_scripts.c_sts.builder import CITATION, ENCRYPTED_NAME, PASSWORD_ENV, SOURCE, SPLIT_FILES

from ..cards import build_recipe, histograms, split_statistics


def card_body(built: dict, image_dir: Path) -> str:
    default = built.get("default", {})
    groups = {split: np.asarray(ds["score"], dtype=float) for split, ds in default.items()
              if split != "test"}
    plot = ""
    if groups:
        histograms(groups, image_dir / "score_hist_by_split.png", xlabel="similarity (1-5)",
                   title="C-STS score distribution per split", bins=np.arange(0.75, 5.5, 0.5))
        plot = "![score histograms](images/score_hist_by_split.png)\n"
    return f"""# C-STS — Conditional Semantic Textual Similarity

Sentence pairs judged for similarity **under a natural-language condition** (1–5 Likert). Every
sentence pair appears twice: under a condition for which the sentences are similar and under one
for which they are not (the quadruplet loss of the paper relies on this grouping). Test labels are
hidden (−1 upstream, null here) and scored by the authors' server from a JSON file
`{{"0": score, ..., "4731": score}}` (`semrel predict`).

**Access and licence.** {SOURCE.licence} The release is the encrypted `{ENCRYPTED_NAME}`
({SOURCE.url}); this card is published without the data. Build it locally:

```bash
{build_recipe("c-sts")}
```
```python
from semrel.dataset_scripts import load
load("c-sts", data_dir="DIR", password="...")   # DIR holds {ENCRYPTED_NAME}; or ${PASSWORD_ENV}
load("c-sts", data_dir="DIR")                   # DIR holds {', '.join(SPLIT_FILES.values())}
```
Decryption (openssl `aes-256-cbc -a -salt -pbkdf2` compatible) happens in memory; the decrypted
rows live only in your local `datasets` cache.

## Configs
- `default`: train / validation / test rows: `sentence1`, `sentence2`, `condition` (an empty
  condition as released is kept as ""), `score` (float32, 1–5; null in test).
- `pairs`: one row per sentence pair: `sentence1`, `sentence2`, `condition1`, `score1`,
  `condition2`, `score2` (file order).

## Statistics
{split_statistics(built)}

{plot}
## Citation
```bibtex
{CITATION}
```
"""

"""Card body of crowd-sts: data statement, pseudonymisation, licence, filters, statistics, plots
(label distributions of random vs non-random pairs; annotator time and label-std distributions
with the filter thresholds) and the reproduced paper tables (offline measures, no MiniLM)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semrel.dataset_scripts.crowd_sts.builder import AUTHORS_LIST, CITATION, FILTERED, LICENCE, REPO
from semrel.dataset_scripts.crowd_sts.reading import DEFAULT_KEY, KEY_ENV
from semrel.dataset_scripts.crowd_sts.report import (
    frame,
    paper_study,
    significance_note,
    table1,
    table2,
    table3_rows,
)
from semrel.dataset_scripts.crowd_sts.study import worker_count_table

from ..cards import build_recipe, histograms, markdown_table, split_statistics
from ..rating_plan import plan_block

THRESHOLDS = {"slow": "mean WorkTimeInSeconds > 300",
              "low_variance": "std (ddof 1) of all own labels < 1",
              "high_random": "mean label on random pairs ≥ on non-random pairs (≥ 2 labels each)",
              "disagreeable": "contradicts a unanimous decision of the two others (reduced "
                              "labels −1/0/+1) in > 50 % of such cases",
              "sentiment": "label variance > 1 on pairs with BLEU-1 > 0.8 and sentiment gap ≥ 1.9 "
                           "(VADER compound by default)"}


def _plots(annotations, annotators, image_dir: Path) -> None:
    labels = annotations["label"].to_numpy()
    random = annotations["is_random"].to_numpy()
    histograms({"non-random pairs": labels[~random], "random pairs": labels[random]},
               image_dir / "label_distribution.png", xlabel="label (1–5)",
               title="Labels of random vs non-random pairs", bins=np.arange(0.5, 6.0),
               ncols=2)
    histograms({"all workers": np.log10(annotators["seconds_mean"].to_numpy())},
               image_dir / "annotator_seconds.png", xlabel="log10 mean WorkTimeInSeconds",
               title="Mean labelling time per annotator", bins=30,
               vlines={"slow > 300 s": np.log10(300)})
    histograms({"all workers": annotators["label_std"].to_numpy()},
               image_dir / "annotator_label_std.png", xlabel="std of own labels (ddof 1)",
               title="Label spread per annotator", bins=30,
               vlines={"low variance < 1": 1.0})


def paper_tables(annotations, annotators, pairs) -> str:
    """Tables 1-2 and the notes as text, Tables 3-4 as markdown tables (offline measures)."""
    r = paper_study(annotations, annotators, pairs, minilm=False)
    tables34 = "\n\n".join(f"**{title}**\n\n{markdown_table(header, rows)}"
                           for title, header, rows in table3_rows(r.study))
    return (f"```\n{r.head}\n\n{table1(r.study)}\n\n{table2(r.classes, annotators)}\n\n"
            f"{significance_note(r.study)}\n\n{r.note}\n```"
            f"\n\n{tables34}")


def card_body(built: dict, image_dir: Path) -> str:
    annotations, annotators = frame(built["annotations"]), frame(built["annotators"])
    pairs = frame(built["pairs"])
    _plots(annotations, annotators, image_dir)
    n_per_pair = annotations.groupby("pair_id").size()
    pair_configs = {c: d for c, d in built.items() if c.startswith("pairs")}
    dropped = [[f"pairs-filtered-{s}", " + ".join(names),
                int(annotators[[f"flagged_{n}" for n in names]].any(axis=1).sum()),
                f"{len(pairs) - sum(len(d) for d in built[f'pairs-filtered-{s}'].values()):,}"]
               for s, names in FILTERED.items() if f"pairs-filtered-{s}" in built]
    counts = worker_count_table(annotators, FILTERED["all"])
    filter_rows = [[n, THRESHOLDS[n], int(counts.at[n, "flagged"]),
                    int(counts.at[n, "also in authors' list"]),
                    f"{100 * counts.at[n, 'share of labels']:.1f} %"] for n in FILTERED["all"]]
    sources = pairs.groupby(["source", "is_random"]).size().unstack().fillna(0).astype(int)
    source_rows = [[s, sources.at[s, False], sources.at[s, True]] for s in sources.index]
    classes = annotators["label_class"].value_counts()
    return f"""# crowd-sts — crowd-sourced STS labels with annotator metadata

{len(annotations):,} semantic-similarity labels (1 = not similar at all … 5 = highly similar) of
{len(pairs):,} English sentence pairs by {len(annotators)} Amazon Mechanical Turk workers, with each
annotation's worker (pseudonymised) and working time — the data of Solomon et al. (2021),
"Rethinking Crowd Sourcing for Semantic Similarity", which shows that *which* annotators one keeps
moves metric–human correlations by up to ~10 points. Every pair has 3 annotations except
{int((n_per_pair == 2).sum())} Paralex HITs with 2 (grouped by HITId, never by row position).

## Data statement
- **Curation rationale.** Paraphrase and style-transfer corpora, each paired with a "random"
  twin in which a sentence is paired with a random other sentence of the same corpus (a baseline of
  pairs with no semantic overlap): Bible translations (Carlson et al. 2017), Paralex question
  paraphrases, PPDB-style Paraphrase fragments, GYAFC formal/informal/rewrites (Rao & Tetreault
  2018) and Yelp reviews with human sentiment-flipped rewrites (Tian et al. 2018).
- **Language.** English (en), edited (Bible, GYAFC formal) and informal web text (Yahoo Answers,
  Yelp, WikiAnswers).
- **Annotators.** MTurk workers, HITs submitted in November 2019; question "How similar
  is the meaning of these two pieces of text?". No demographics were collected. Work time is the
  MTurk WorkTimeInSeconds (1–14,079 s, median 12 s).
- **Pseudonymisation.** MTurk WorkerIds are persistent identifiers of people. `worker_id` is
  `"w" + HMAC-SHA256(key, WorkerId)[:12 hex]`; raw ids never leave the parser and appear in no
  config. The default key (`{DEFAULT_KEY}`) is **public** so builds are reproducible — which means
  pseudonyms are linkable across releases and by anyone who holds a raw WorkerId. Pass a private
  key (`load(..., pseudonym_key=...)` or `${KEY_ENV}`) to prevent that. Of the other MTurk
  identifiers only the HITId is kept, as `pair_id`: it names a task (one sentence pair), not a
  person, and is the key back to the upstream files. Those files are public and hold the raw
  WorkerIds themselves, so a pseudonym hides no one from whoever has them (the sentence texts
  would join the two as well); it keeps raw ids out of this dataset and what is built from it.
  AssignmentId, HITTypeId, approval rates and accept/submit times are dropped.
- **Text repair.** Bible texts hold mojibake (`вЂ”` for an em dash, cp1251); `sentence1`/`sentence2`
  are repaired with `ftfy.fix_encoding` (nothing else is changed), the published text is kept in
  `sentence1_raw`/`sentence2_raw` (config `annotations`). Kept as published: 60 pairs with
  identical texts, 4 text pairs that occur in two HITs.

**Licence and redistribution.** {LICENCE} This card is published without the data; build it
yourself from the upstream files ({REPO}, `data/raw_data/*.csv`, sha256-checked):

```bash
{build_recipe("crowd-sts")}
```

## Configs
- `pairs` (default): `pair_id` (HITId), `source`, `is_random`, `sentence1`, `sentence2`, `score` =
  mean label (float32, 1–5), `n_annotations`, `label_std` (ddof 1), `split_group`. Splits
  `train`/`test` (test ≈ 20 %): leak-free — pairs that share a sentence (random pairs reuse the
  sentences of real pairs) form one group, groups are dealt to folds by a hash of their id
  stratified by group size; no sentence is in both splits.
- `annotations`: one row per annotation: `pair_id`, `worker_id`, `label` (int 1–5), `seconds`,
  `source`, `is_random`, texts (repaired and raw).
- `annotators`: one row per worker: counts, label mean/std, mean/median seconds, mean label on
  random vs non-random pairs, `share_extreme` and `label_class` (radical: > 50 % of the non-3 labels
  in {{1, 5}}; centrist: > 50 % in {{2, 4}}; only workers with label variance > 1 — paper §5.2:
  {classes.get('radical', 0)} radical, {classes.get('centrist', 0)} centrist), each filter's
  statistic and `flagged_<filter>`, `flagged_any`, `in_authors_list`.
- `pairs-filtered-<filter>`: the labels of the flagged workers are dropped, then pairs are
  re-aggregated (same split membership as `pairs`; pairs left without a label disappear).

| config | drops workers flagged by | workers | pairs lost |
|---|---|---|---|
""" + "\n".join(f"| {c} | {f} | {w} | {p} |" for c, f, w, p in dropped) + f"""

## The five filters (paper §5.1; thresholds of the authors' code)
{markdown_table(["filter", "rule", "workers flagged", "also in authors' list", "labels"], filter_rows)}

`in_authors_list` marks the {int(annotators['in_authors_list'].sum())} workers of the authors'
published list ({AUTHORS_LIST.file_name}, from an earlier generation of their rules); union of our
five filters: {int(counts.at['any', 'flagged'])} workers, {int(counts.at['any', "also in authors' list"])}
of them in that list. The filters are functions in `dataset_scripts.crowd_sts.filters` with their
thresholds as arguments.

## Statistics
{split_statistics(pair_configs)}

Pairs per source:

{markdown_table(["source", "non-random", "random"], source_rows)}

![label distributions](images/label_distribution.png)
![annotator time](images/annotator_seconds.png)
![annotator label spread](images/annotator_label_std.png)

## Reproduction of the paper's study (offline measures)
Pearson r between measures and pair mean labels, ours beside the paper's
(`python scripts/reproduce_crowd_sts.py` adds MiniLM cosine):

{paper_tables(annotations, annotators, pairs)}

## Citation
```bibtex
{CITATION}
```
"""


def report_section(built, image_dir: Path, *, mirror=None, cache_dir=None) -> str:
    """Filters, plots and the paper's Tables 1-4 (Tables 3-4 as tables)."""
    annotations, annotators = frame(built["annotations"]), frame(built["annotators"])
    pairs = frame(built["pairs"])
    _plots(annotations, annotators, image_dir)
    counts = worker_count_table(annotators, FILTERED["all"])
    filter_rows = [[n, THRESHOLDS[n], int(counts.at[n, "flagged"]),
                    int(counts.at[n, "also in authors' list"])] for n in FILTERED["all"]]
    return f"""{len(annotations):,} annotations of {len(pairs):,} English sentence pairs by
{len(annotators)} MTurk workers (Solomon et al. 2021); card only on the Hub.

### The five filters
{markdown_table(["filter", "rule", "workers flagged", "also in authors' list"], filter_rows)}

![label distributions](images/label_distribution.png)
![annotator time](images/annotator_seconds.png)
![annotator label spread](images/annotator_label_std.png)

### Paper Tables 1-4 (offline measures; `python scripts/reproduce_crowd_sts.py`)
{paper_tables(annotations, annotators, pairs)}

{plan_block(annotations["pair_id"], annotations["worker_id"], annotations["label"].astype(float), image_dir,
            scale=(1, 5), raters=6, prefix="plan")}"""


def overview(built, *, mirror=None, cache_dir=None):
    """Size; inter-annotator agreement; the best offline measure's r with the pair means."""
    from semrel.dataset_scripts.crowd_sts.paper import MEASURE_NAMES
    from semrel.dataset_scripts.crowd_sts.study import pair_measures
    from semrel.metrics.agreement import annotator_agreement

    from ..report import Figure, Overview

    annotations, pairs = frame(built["annotations"]), frame(built["pairs"])
    agreement = annotator_agreement(annotations["pair_id"], annotations["worker_id"],
                                    annotations["label"].astype(float))
    measures = pair_measures(pairs, minilm=False)
    r = measures.corrwith(pairs.set_index("pair_id")["score"].astype(float))
    build = "semrel build --only crowd-sts"
    return Overview(
        Figure(f"{len(pairs):,} pairs, {len(annotations):,} annotations", build),
        Figure(f"inter-annotator r {agreement.inter.pearson:.3f}, α {agreement.alpha:.3f}", build),
        Figure(f"{MEASURE_NAMES[r.idxmax()]}: r {r.max():.3f} with the pair means",
               "python scripts/reproduce_crowd_sts.py --no-minilm"))

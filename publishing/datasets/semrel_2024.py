"""SemRel-2024 card body (languages and tracks, licence, the STR-2021 overlap, the held-back English
test, configs, counts per language and split, score histograms, the raw BWS re-scoring and SHR) and
its report section.

The re-scoring and SHR tables are computed from the raw ``BWS_annotations`` files (arb, arq) by
:mod:`semrel.dataset_scripts.semrel_2024.bws` (``python scripts/reproduce_semrel_2024_bws.py``
prints the same figures); where those files cannot be had the card says so instead.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semrel.dataset_scripts.errors import SourceError
from semrel.dataset_scripts.semrel_2024 import bws
from semrel.dataset_scripts.semrel_2024.builder import CITATION, SPLIT_NAMES, SemRel2024
from semrel.dataset_scripts.semrel_2024.files import (
    ENG_TEST_UNLABELLED,
    FILES,
    LANGUAGES,
    LICENCE,
    REPOSITORY,
    TRACK_A,
    TRACK_C,
)
from semrel.dataset_scripts.semrel_2024.str_link import ROUNDING
from semrel.dataset_scripts.str_2021.ceiling import PUBLISHED_SHR as STR_2021_SHR
from semrel.metrics.ceiling import spearman_brown

from ..bws_plan import heading, plan_block
from ..cards import build_recipe, histograms, markdown_table

BWS_LANGUAGES = ("arb", "arq")
HELD_BACK = FILES[("eng", "test")]
TRACK_B = TRACK_C  # Track B (unsupervised) and C (cross-lingual) cover the same 12 languages


def _all(built):
    return built["all"]


def counts_table(all_splits) -> str:
    """Pairs per language and split (``null`` marks a split whose scores were not published)."""
    frames = {split: ds.select_columns(["language", "score"]).to_pandas() for split, ds in all_splits.items()}
    rows = []
    for lang, (name, _) in LANGUAGES.items():
        cells = []
        for ours in SPLIT_NAMES.values():
            df = frames[ours][frames[ours]["language"] == lang] if ours in frames else None
            if df is None or not len(df):
                cells.append("–")
                continue
            null = df["score"].isna().sum()
            cells.append(f"{len(df):,}" + (" (scores null)" if null == len(df) else ""))
        tracks = "".join(t for t, langs in (("A", TRACK_A), ("B", TRACK_B), ("C", TRACK_C)) if lang in langs)
        rows.append([lang, name, tracks, *cells])
    totals = [f"{len(frames[s]):,}" if s in frames else "–" for s in SPLIT_NAMES.values()]
    rows.append(["all", "", "", *totals])
    return markdown_table(["code", "language", "tracks", "train", "validation", "test"], rows)


def english_test_status(all_splits) -> str:
    test = all_splits["test"].select_columns(["language", "score"]).to_pandas()
    eng = test[test["language"] == "eng"]
    if eng["score"].isna().all():
        return (f"**In this build the labelled English test file was not available**: "
                f"`{HELD_BACK.path}` (sha256 `{HELD_BACK.sha256}`) could not be read from the "
                f"mirror or downloaded, so English test holds the {len(eng):,} pairs of "
                f"`{ENG_TEST_UNLABELLED.path}` with **null scores** (no labels were invented). Build "
                f"on a machine that can download it, or put it into the mirror, to get the labels.")
    return (f"English test holds the {len(eng):,} labelled pairs of `{HELD_BACK.path}` "
            f"(sha256 `{HELD_BACK.sha256}`).")


def score_histograms(all_splits, path: Path) -> Path:
    frames = [ds.select_columns(["language", "score"]).to_pandas() for ds in all_splits.values()]
    groups = {}
    for lang in LANGUAGES:
        scores = np.concatenate([f.loc[f["language"] == lang, "score"].to_numpy(float) for f in frames])
        groups[lang] = scores[~np.isnan(scores)]
    return histograms(groups, path, xlabel="relatedness score", title="SemRel-2024 scores per "
                      "language (every published split)", bins=20, value_range=(0, 1), ncols=5)


def bws_tables(mirror=None) -> str:
    """The re-scoring and SHR tables of the raw BWS files (markdown)."""
    try:
        results = {lang: bws.rescore(lang, mirror) for lang in BWS_LANGUAGES}
        shr = {(lang, identity): bws.reliability(lang, identity, mirror=mirror)
               for lang in BWS_LANGUAGES for identity in (bws.POOLED, bws.READER)}
    except SourceError as exc:
        return f"The raw BWS files could not be read here ({exc}): not computed."
    rescoring = markdown_table(
        ["language", "annotations (rows skipped)", "items", "published pairs",
         "matched, words kept apart", "matched, whitespace removed (items pooled)",
         f"\\|Δ\\| ≤ {bws.ROUNDING}", "max \\|Δ\\|", "Spearman", "fit a·s + b"],
        [[lang, f"{r.n_annotations:,} ({sum(r.skipped.values())})", f"{r.n_items:,}",
          f"{r.n_published:,}", f"{r.n_exact:,}", f"{len(r.pair_ids):,} ({r.items_mapped:,})",
          f"{r.within_rounding:,}", float(np.abs(r.diff).max()), r.spearman,
          "{:.3f}·s + {:.3f}".format(*r.fit)] for lang, r in results.items()])
    largest = markdown_table(
        ["PairID", "split", "published", "re-scored", "appearances", "variants pooled",
         "net best−worst change implied"],
        [[d["pair_id"], d["split"], f"{d['published']:.2f}", d["rescored"], d["appearances"],
          d["variants"], f"{d['net_change']:+.1f}"]
         for lang in BWS_LANGUAGES for d in results[lang].largest(3)])
    reliability = markdown_table(
        ["data", "items", "SHR ρ", "sd", "Spearman–Brown"],
        [["STR-2021 (English; paper §4, raw annotations not public)", "5,500", f"{STR_2021_SHR:.2f}", "",
          spearman_brown(STR_2021_SHR)]]
        + [[f"{lang}, {'pooled items' if identity == bws.POOLED else 'items as the reader keys them'}",
            f"{s.n_items:,}", s.spearman, s.spearman_std, s.corrected_spearman]
           for (lang, identity), s in shr.items()])
    arb, arq = results["arb"], results["arq"]
    off = arb.appearances[np.abs(arb.diff) > bws.ROUNDING + 1e-9]
    off_min, off_max = (int(off.min()), int(off.max())) if len(off) else (0, 0)
    return f"""Only Modern Standard Arabic (arb) and Algerian Arabic (arq) have public raw
annotations (`BWS_annotations/<lang>_bws.csv`: 4-tuples, best and worst as positions; read with
`semrel.metrics.bws.readers.read_semeval_2024`, cells that are no list literal skipped). Each
item (a list of two sentences) was scored by counting, ((#best − #worst) / #appearances + 1) / 2.

**How items map to PairIDs.** An item maps to the published pair of the same language (any of its
train, dev and test files) whose two sentences, in order, equal the item's once **all whitespace is
removed**. The raw files split and join words differently from the release ("ما ترونه" /
"ماترونه"), so one published pair has up to three spelling variants among the items; a pair's
variants are pooled (best, worst and appearance counts summed) before scoring. Matching the words
as the reader keeps them apart finds far fewer pairs (column "words kept apart").

{rescoring}

- **arb**: the re-scored values reproduce the published scale exactly (fit 0.500·s + 0.500, i.e.
  (s + 1)/2; Spearman {arb.spearman:.4f}); {arb.within_rounding} of {len(arb.pair_ids)} pairs agree
  to the rounding, the rest by at most {np.abs(arb.diff).max():.3f} (pairs seen
  {off_min}–{off_max} times: one or two best/worst choices more or fewer than in this file, see
  the net change below). {len(arb.unmatched)} published pairs have no item; {arb.unmatched_loose} of them
  match when punctuation is ignored too (the raw text differs in punctuation as well).
- **arq**: the published scores are systematically less extreme than the counting scores of this
  file (fit {arq.fit[0]:.3f}·s + {arq.fit[1]:.3f}, Spearman {arq.spearman:.4f}; only
  {arq.within_rounding} of {len(arq.pair_ids)} pairs within the rounding; net changes of up to
  {abs(arq.largest(1)[0]["net_change"]):.0f} choices): the released arq scores cannot be
  reproduced by plain counting from this file. Largest differences:

{largest}

**Split-half reliability** ({bws.TRIALS:,} random halves, seed {bws.SEED},
`semrel.metrics.split_half`; Spearman–Brown 2ρ/(1+ρ)), beside STR-2021's. Keyed as the reader keys
them, one pair's spelling variants count as different items, each seen a few times, which lowers
SHR; pooled items are the pairs that were meant.

{reliability}"""


def bws_plans(image_dir: Path, mirror=None) -> str:
    """The plan block of each language's raw BWS file, items pooled as in the SHR table."""
    try:
        blocks = [plan_block(bws.pooled(bws.annotations(lang, mirror)), image_dir, name=f"{lang} (pooled items)",
                             prefix=f"bws_plan_{lang}") for lang in BWS_LANGUAGES]
    except SourceError as exc:
        return heading() + f"\nThe raw BWS files could not be read here ({exc}): no plan."
    return heading() + "\n" + "\n".join(blocks)


def card_body(built: dict, image_dir: Path) -> str:
    all_splits = _all(built)
    score_histograms(all_splits, image_dir / "score_hist_by_language.png")
    languages = ", ".join(f"{name} (`{code}`)" for code, (name, _) in LANGUAGES.items())
    return f"""# SemRel-2024 — Semantic Textual Relatedness in 14 languages

Sentence pairs annotated for **semantic relatedness** with Best-Worst Scaling (the STR-2021
protocol: a pair's score is ((#best − #worst) / #appearances + 1) / 2 in [0, 1]), in {languages};
the data of SemEval-2024 Task 1 (Ousidhoum et al., Findings of ACL 2024). Track A (supervised)
has train, dev and test for {len(TRACK_A)} languages; Tracks B (unsupervised) and C
(cross-lingual: train on other languages only) have dev and test for {len(TRACK_C)}.

**Licence and redistribution.** {LICENCE} This card is published without the data: build the
dataset yourself from the task repository ({REPOSITORY}, every file sha256-checked):

```bash
{build_recipe(SemRel2024.DATASET_ID)}
```

**English train is STR-2021.** The 5,500 English train pairs are the STR-2021 pairs (same texts,
scores rounded to 2 decimals: |Δ| ≤ {ROUNDING}). Each carries `str_2021_pair_id` and
`str_2021_source`: **do not train on one and test on the other.**

**English test.** {english_test_status(all_splits)}

**Spanish test** scores were never published: null, like C-STS's hidden test.

## Configs
- `all` (default): every language, column `language`; splits `train`, `validation` (upstream
  "dev") and `test`.
- `<code>` per language (`afr` … `tel`): the splits the task published for it.
- `cross-lingual-<code>` per Track C language: train = every Track A train set except the
  target's (column `language`), validation/test = the target's.

Columns: `pair_id` (upstream PairID, checked to name its language and split), `language`,
`sentence1`, `sentence2` (the two lines of upstream `Text`, as written), `score` (float32, null
where not published); configs with English train add `str_2021_pair_id`, `str_2021_source`.
Track B and C repeat Track A's files byte for byte where they overlap: each file is read once
(only the unlabelled `esp_dev.csv` differs between tracks, in line endings; it is not read).
`afr_pilot_dev_labels.csv` repeats the first 20 afr dev pairs (checked) and is no split.

## Pairs per language and split
{counts_table(all_splits)}

![score histograms](images/score_hist_by_language.png)

## Raw Best-Worst Scaling annotations re-scored
{bws_tables()}

## Citation
```bibtex
{CITATION}
```
"""


def report_section(built, image_dir: Path, *, mirror=None, cache_dir=None) -> str:
    all_splits = _all(built)
    score_histograms(all_splits, image_dir / "score_hist_by_language.png")
    n = sum(len(ds) for ds in all_splits.values())
    return f"""SemRel-2024 (SemEval-2024 Task 1): {n:,} sentence pairs in {len(LANGUAGES)} languages,
relatedness by Best-Worst Scaling (Ousidhoum et al., Findings of ACL 2024). Card only on the Hub:
the task's terms forbid redistribution. English train is STR-2021 (linked by `str_2021_pair_id`).
{english_test_status(all_splits)}

### Pairs per language and split

{counts_table(all_splits)}

![score histograms per language](images/score_hist_by_language.png)

### Raw BWS re-scored, split-half reliability per language

{bws_tables(mirror)}

Reproduce: `python scripts/reproduce_semrel_2024_bws.py`.

{bws_plans(image_dir, mirror)}"""


def overview(built, *, mirror=None, cache_dir=None):
    """Size; SHR (Spearman–Brown, pooled items) of the two languages with raw annotations."""
    from ..report import Figure, Overview

    n = sum(len(ds) for ds in _all(built).values())
    try:
        shr = {lang: bws.reliability(lang, bws.POOLED, mirror=mirror).corrected_spearman
               for lang in BWS_LANGUAGES}
        reliability = Figure("SHR (Spearman–Brown) " + ", ".join(f"{k} {v:.2f}" for k, v in shr.items())
                             + " (raw BWS; other languages' raw files not public)",
                             "python scripts/reproduce_semrel_2024_bws.py")
    except SourceError:
        reliability = Figure("raw BWS files not available here")
    return Overview(size=Figure(f"{n:,} pairs, {len(LANGUAGES)} languages",
                                "semrel build --only semrel-2024"), reliability=reliability)

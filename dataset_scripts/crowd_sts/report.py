"""Paper 002 Tables 1, 2 and 3/4 as text: ours beside the paper's numbers, with % change.

Used by ``scripts/reproduce_crowd_sts.py`` and the dataset card. Inputs are the ``annotations``,
``annotators`` and ``pairs`` configs as pandas frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .builder import FILTERED
from .filters import disagreeable
from .paper import MEASURE_NAMES, TABLE1, TABLE2, TABLE3
from .study import class_study, filter_study, flagged_sets, pair_measures, worker_count_table

ALL = FILTERED["all"]


def frame(splits) -> pd.DataFrame:
    """All splits of a built config (a ``DatasetDict``) as one pandas frame."""
    return pd.concat([ds.to_pandas() for ds in splits.values()], ignore_index=True)
TABLE3_BLOCKS = (("bleu", "bleu1", "chrf", "minilm_cosine"),  # paper Table 3 columns we have
                 ("rouge1", "rouge2", "rougeL", "word_overlap"))  # paper Table 4


def _num(value, fmt="{:.3f}") -> str:
    return "—" if value is None or pd.isna(value) else fmt.format(value)


def table1(study) -> str:
    lines = ["Table 1. Pearson r of measures with pair mean labels: baseline and all five filters "
             "(ours Δr: the 95 % interval of r_filt − r_base, Zou 2007; * excludes 0)",
             f"{'measure':<14} {'paper base':>10} {'ours base':>10} {'paper filt':>10} "
             f"{'ours filt':>10} {'paper %':>8} {'ours %':>8} {'ours Δr 95% CI':>18}"]
    filt = str(list(range(1, 6)))
    for measure in study.r.columns:
        paper = TABLE1.get(measure, (None, None, None))
        lines.append(f"{MEASURE_NAMES[measure]:<14} {_num(paper[0], '{:.2f}'):>10} "
                     f"{study.r.at['baseline', measure]:>10.3f} {_num(paper[1], '{:.2f}'):>10} "
                     f"{study.r.at[filt, measure]:>10.3f} {_num(paper[2], '{:+.1f}'):>8} "
                     f"{study.change.at[filt, measure]:>+8.1f} {_interval(study, filt, measure):>18}")
    best = study.change.drop(index="baseline").mean(axis=1).idxmax()
    lines.append(f"pairs: baseline {study.n_pairs['baseline']:,}, all five {study.n_pairs[filt]:,} "
                 f"({study.n_workers_dropped[filt]} workers dropped); largest mean gain: {best} "
                 f"({study.change.loc[best].mean():+.1f}% averaged over measures; paper: [2, 3])")
    return "\n".join(lines)


def table2(classes: pd.DataFrame, annotators: pd.DataFrame) -> str:
    counts = annotators["label_class"].value_counts()
    lines = ["Table 2. r with the labels of radical / centrist annotators only, before and after "
             "dropping workers flagged by all five filters (paper | ours)",
             f"{'measure':<14} {'radicals':>13} {'radicals filt':>13} {'centrists':>13} "
             f"{'centrists filt':>14}"]
    for measure in classes.index.drop("n_pairs"):
        paper = TABLE2.get(measure, (None,) * 4)
        cells = [f"{_num(p, '{:.2f}')} | {classes.at[measure, c]:.3f}" for p, c in
                 zip(paper, ("radical", "radical_filtered", "centrist", "centrist_filtered"), strict=True)]
        lines.append(f"{MEASURE_NAMES[measure]:<14} " + " ".join(f"{c:>13}" for c in cells))
    lines.append("pairs: " + ", ".join(f"{c} {int(classes.at['n_pairs', c]):,}" for c in classes)
                 + f"; workers: {counts.get('radical', 0)} radical, {counts.get('centrist', 0)} "
                 f"centrist, {counts.get('unclassified', 0)} unclassified")
    return "\n".join(lines)


TABLE3_TITLE = ("Table {number}. r (ours % change / paper % change) per filter combination "
                "[1] slow [2] low variance [3] high random [4] disagreeable [5] sentiment; "
                "* ours exceeds its 95 % interval (Zou 2007, r_filt − r_base)")


def _interval(study, label: str, measure: str) -> str:
    """``[low, high]`` of r_filt − r_base, ``*`` where it excludes 0; empty without intervals."""
    if study.low is None or pd.isna(study.low.at[label, measure]):
        return ""
    star = "*" if study.significant.at[label, measure] else ""
    return f"[{study.low.at[label, measure]:+.3f}, {study.high.at[label, measure]:+.3f}]{star}"


def _star(study, label: str, measure: str) -> str:
    return "*" if study.low is not None and study.significant.at[label, measure] else ""


def significance_note(study) -> str:
    """How many filter effects (combination × measure) exceed their 95 % interval."""
    if study.low is None:
        return ""
    effects = study.significant.drop(index="baseline")
    moved = study.change.drop(index="baseline") != 0
    return (f"{int(effects.to_numpy().sum())} of {int(moved.to_numpy().sum())} filter effects that move r "
            f"(combination × measure) exceed their 95 % interval (Zou 2007, dependent correlations "
            f"sharing the measure, on the pairs each filtered score keeps); not: "
            + (", ".join(sorted({label for label in effects.index if moved.loc[label].any()
                                 and not effects.loc[label].all()}, key=len)) or "none"))


def table3_rows(study) -> list[tuple[str, list[str], list[list[str]]]]:
    """Tables 3 and 4 as (title, header, rows): r per filter combination, each cell
    ``r (ours % change / paper % change)``; one row per combination, baseline first."""
    tables = []
    for number, block in zip((3, 4), TABLE3_BLOCKS, strict=True):
        block = [m for m in block if m in study.r.columns]
        rows = []
        for label in study.r.index:
            key = None if label == "baseline" else tuple(int(x) for x in label[1:-1].split(", "))
            cells = []
            for measure in block:
                r = study.r.at[label, measure]
                if key is None:
                    cells.append(f"{r:.3f}")
                    continue
                paper = TABLE3[key].get(measure)
                cells.append(f"{r:.3f} ({study.change.at[label, measure]:+.1f}{_star(study, label, measure)} / "
                             f"{_num(paper, '{:+.1f}')})")
            rows.append([label, *cells])
        tables.append((TABLE3_TITLE.format(number=number), ["filters", *(MEASURE_NAMES[m] for m in block)],
                       rows))
    return tables


def table3(study) -> str:
    out = []
    for title, header, rows in table3_rows(study):
        lines = [title, f"{header[0]:<16}" + "".join(f" {h:>24}" for h in header[1:])]
        lines += [f"{row[0]:<16}" + "".join(f" {c:>24}" for c in row[1:]) for row in rows]
        out.append("\n".join(lines))
    return "\n\n".join(out)


@dataclass(frozen=True)
class PaperStudyResult:
    """The paper's study on the built configs: the per-filter study, the radical/centrist study,
    the flagged-worker summary (text) and the notes on filters 4 and 5 (text)."""

    study: object
    classes: pd.DataFrame
    head: str
    note: str


def paper_study(annotations: pd.DataFrame, annotators: pd.DataFrame, pairs: pd.DataFrame, *,
                minilm: bool | None = None) -> PaperStudyResult:
    measures = pair_measures(pairs, minilm=minilm)
    flagged = flagged_sets(annotators, ALL)
    study = filter_study(annotations, measures, flagged)
    classes = class_study(annotations, measures, annotators, frozenset().union(*flagged.values()))
    counts = worker_count_table(annotators, ALL)
    authors = int(annotators["in_authors_list"].sum())
    variant = disagreeable(annotations, denominator="labels", min_cases=5).flagged
    change = study.change.loc["[4]"].mean()
    variant_change = filter_study(annotations, measures, {"disagreeable": variant}).change.loc["[4]"].mean()
    note = (f"Filter 4 as in the authors' code (share of all labels, > 4 labels): {len(variant)} "
            f"workers flagged, mean change {variant_change:+.1f}% (ours {change:+.1f}%, paper +0.0%)."
            f"\nFilter 5 flagged {len(flagged['sentiment'])} workers with the build's sentiment "
            "scorer (default VADER); the paper's transformers pipeline (not available offline) "
            "flagged enough to cost about 9% on its own.")
    head = (f"crowd-sts: {len(annotations):,} annotations, {len(pairs):,} pairs, "
            f"{len(annotators)} workers\n\nFlagged workers per filter (the authors' list has "
            f"{authors}):\n{counts.to_string(float_format=lambda v: f'{v:.3f}')}")
    return PaperStudyResult(study, classes, head, note)


def report(annotations: pd.DataFrame, annotators: pd.DataFrame, pairs: pd.DataFrame, *,
           minilm: bool | None = None) -> str:
    """Tables 1-4 as text, ours beside the paper's (``scripts/reproduce_crowd_sts.py``)."""
    r = paper_study(annotations, annotators, pairs, minilm=minilm)
    return "\n\n".join([r.head, table1(r.study), table2(r.classes, annotators), table3(r.study),
                        significance_note(r.study), r.note])

"""``--all-languages``' figures: each language's paired test difference of its final to the
per-language study's, the table beside the study's with the mean and the goals, and what
``--write-results`` keeps of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semrel.dataset_scripts.semrel_2024.official import BEST, LABSE

from .tables import LABELLED_A, bold, cell, gap

RESULTS_KEY_ALL = "semrel_2024_all_languages"
FAMILIES = {"per-language": "per language", "all": "all, as it is", "from-all": "all, fine-tuned"}
GOAL_MEAN = 0.80  # issue 52: the mean over the labelled languages above this


def paired_difference(new: Path, today: Path, rows, seed: int = 0) -> dict:
    """Spearman(new) − Spearman(today) on ``rows`` (a test split: ``pair_id``, ``score``), each
    file's ``PairID,Pred_Score`` aligned to the rows by PairID, with the 95 % paired-bootstrap
    interval of :func:`semrel.metrics.compare.compare_correlations` (seed 0, 1,000 resamples);
    files of the same scores differ by 0."""
    from semrel.metrics.compare import compare_correlations
    from semrel.metrics.submission import IdScores, align, read_predictions

    gold = IdScores("semrel-2024 test", tuple(rows["pair_id"]), np.asarray(rows["score"], dtype=np.float64))
    a, b = (align(read_predictions(f), gold) for f in (new, today))
    if np.array_equal(a, b):
        return {"difference": 0.0, "ci": [0.0, 0.0], "p_value": 1.0, "n": len(a), "same_predictions": True}
    c = compare_correlations(a, b, gold.scores, seed=seed)
    d = c.spearman_difference
    return {"difference": round(d.value, 4), "ci": [round(d.interval.low, 4), round(d.interval.high, 4)],
            "p_value": round(c.spearman_p_value, 4), "n": c.n, "same_predictions": False}


def _new(r: dict) -> float | None:
    return r["test"].get(r["final"])


def goals(languages: dict[str, dict]) -> dict:
    """Issue 52's goals over the labelled languages done (of :data:`~.tables.LABELLED_A`): every
    one at or above LaBSE, the mean above :data:`GOAL_MEAN`, at least one at or above its best
    submission; the means of the new finals and the study's."""
    done = [lang for lang in LABELLED_A if lang in languages]
    new = {lang: _new(languages[lang]) for lang in done}
    mean = round(float(np.mean(list(new.values()))), 4) if done else None
    today = round(float(np.mean([languages[lang]["today"]["test"] for lang in done])), 4) if done else None
    return {"languages": done, "of": len(LABELLED_A), "mean": mean, "today_mean": today,
            "below_labse": [lang for lang in done if new[lang] < LABSE[lang]],
            "at_least_best": [lang for lang in done if new[lang] >= BEST[lang]],
            "mean_above_goal": mean is not None and mean > GOAL_MEAN}


def _paired(p: dict | None) -> str:
    if p is None:
        return ""
    if p["same_predictions"]:
        return "0 (the same model)"
    return f"{p['difference']:+.3f} [{p['ci'][0]:+.3f}, {p['ci'][1]:+.3f}]"


def _longer(records: dict) -> list[str]:
    return [f"{n} {cell(g['dev_kept'])} ({g['longer_of']} {cell(g['longer_of_dev'])})" for n, g in records.items()]


def _met(ok: bool, word: str, which: list[str]) -> str:
    """``yes``/``no`` and, in brackets, ``which`` (after ``word``)."""
    return ("yes" if ok else "no") + (f" ({word + ': ' if word else ''}{', '.join(which)})" if which else "")


def markdown_all(languages: dict[str, dict]) -> str:
    """The test table (the study's final and the new one, their paired difference, LaBSE and the
    best submission; the means and the goals) and the dev table of the choices."""
    lines = ["| language | test pairs | per-language final | its test | **new final** | family | its test | "
             "new − per-language (95 % CI) | LaBSE | best | new − LaBSE | new − best |", "|---" * 12 + "|"]
    for lang, r in languages.items():
        new, official = _new(r), r["official"]
        pairs = f"{r['pairs']['test']:,}" if r["test_labelled"] else "no labels"
        lines.append(f"| {lang} | {pairs} | {r['today']['final']} | {cell(r['today']['test'])} | {r['final']} | "
                     f"{FAMILIES[r['final'].rsplit('-', 1)[0]]} | {bold(new)} | {_paired(r['paired'])} | "
                     f"{cell(official['labse'], 2)} | {cell(official['best'])} | {gap(new, official['labse'])} | "
                     f"{gap(new, official['best'])} |")
    g = goals(languages)
    if g["languages"]:
        labse = float(np.mean([LABSE[lang] for lang in g["languages"]]))
        best = float(np.mean([BEST[lang] for lang in g["languages"]]))
        lines.append(f"| mean of {len(g['languages'])} | | | {cell(g['today_mean'])} | | | {bold(g['mean'])} | "
                     f"{gap(g['mean'], g['today_mean'])} | {cell(labse)} | {cell(best)} | "
                     f"{gap(g['mean'], labse)} | {gap(g['mean'], best)} |")
    parts = ["\n".join(lines)]
    if g["languages"]:
        below, met, mean = g["below_labse"], g["at_least_best"], f"{g['mean']:.3f}"
        parts.append(f"Goals, over {len(g['languages'])} of the {g['of']} labelled languages: every language "
                     f"at or above LaBSE: {_met(not below, 'below', below)}; the mean above {GOAL_MEAN:.2f}: "
                     f"{_met(g['mean_above_goal'], '', [mean])}; at least one at or above its best "
                     f"submission: {_met(bool(met), '', met)}.")
    lines = ["| language | dev: per language rank / ridge | all, as it is: rank | all, fine-tuned: rank / ridge | "
             "final | fine-tuned bi: lr, kept epoch | fine-tuned cross: lr, kept epoch | "
             "longer schedules, dev (their member's) |", "|---" * 8 + "|"]
    for lang, r in languages.items():
        dev, tuned = r["candidates_dev"], {**r["from_all"]["grid"], **r["from_all"]["longer"]}
        picked = [f"{tuned[n]['learning_rate']:g}, {tuned[n]['kept_epoch']:g}"
                  for n in r["from_all"]["chosen"].values()]
        longer = _longer(r["per_language"]["longer"]) + _longer(r["from_all"]["longer"])
        lines.append(f"| {lang} | {cell(dev['per-language-rank'])} / {cell(dev['per-language-ridge'])} | "
                     f"{cell(dev['all-rank'])} | {cell(dev['from-all-rank'])} / {cell(dev['from-all-ridge'])} | "
                     f"{r['final']} | {picked[0]} | {picked[1]} | {'; '.join(longer) or 'none'} |")
    parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def store_all(record: dict, machine: str, path: Path | None = None) -> None:
    """``record["all_languages"]`` (its settings and each language's result) and the goals under
    :data:`RESULTS_KEY_ALL` of benchmarks/results.json (or ``path``); once every labelled
    language is done, their mean as the report's best fine-tuned SemRel-2024 figure (each
    language's final chosen on its dev)."""
    from semrel.publishing.results import RESULTS, store, store_fine_tuned

    path = RESULTS if path is None else path
    g = goals(record["all_languages"]["languages"])
    store(RESULTS_KEY_ALL, {"machine": machine, "command": record["command"], **record["all_languages"],
                            "goals": g}, path)
    if len(g["languages"]) == g["of"]:
        store_fine_tuned("semrel-2024", {
            "spearman": g["mean"],
            "model": "e5-small per language, chosen on dev among bi + cross trained on the language, on all nine "
                     "Track A train sets, and on those then on the language (rank average or ridge stack)",
            "protocol": f"Track A test, mean of {g['of']} languages ({' '.join(g['languages'])}); every setting "
                        "chosen on each language's dev", "machine": machine, "command": record["command"]}, path)

"""What the study shows and keeps: the tables of benchmarks/results/semrel-2024-languages.md, the study and the report's
best fine-tuned figures in benchmarks/results.json (``--write-results``), and the published test
files (``--publish``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semrel.dataset_scripts.semrel_2024.files import TRACK_A
from semrel.dataset_scripts.semrel_2024.official import BEST
from semrel.publishing import prediction_files

from .units import GRID_A

RESULTS_KEY = "semrel_2024_languages"


def publish(record: dict, out: Path, machine: str, into: Path) -> None:
    """``--publish``: each Track A language's final test file (``pred_<lang>.csv``: with
    ``--all-languages`` the final chosen among the families, else the per-language study's), Czech's too."""
    finals = {lang: (out / "track-a" / lang / "predictions" / f"{r['final']}.test.csv", "e5-small-per-language", r)
              for lang, r in record["track_a"].items()}
    finals.update({lang: (out / r["final_file"], "e5-small-all-languages", r)
                   for lang, r in record.get("all_languages", {}).get("languages", {}).items()})
    files = [prediction_files.Prediction(
        source, "semrel-2024", lang, "test", recipe,
        {"spearman": r["test"][r["final"]]} if r["test"] else prediction_files.HELD_BACK, f"pred_{lang}.csv")
        for lang, (source, recipe, r) in finals.items()]
    if record.get("czech"):  # 0-6: 6 × the rank average's score
        files.append(prediction_files.Prediction(out / "czech" / "predictions" / "rank.test.csv", "czech-news-sts",
                                                 "free", "test", "e5-small-semrel-2024-track-a",
                                                 record["czech"]["scores"]["rank"], "free-test.csv"))
    for path in prediction_files.publish_or_exit(files, command=record["command"], machine=machine, into=into):
        print(f"published: {path}")


def cell(value, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def bold(value) -> str:
    return "" if value is None else f"**{value:.3f}**"


def gap(value, reference) -> str:
    return "" if value is None or reference is None else f"{value - reference:+.3f}"


def markdown(record: dict) -> str:
    """The tables of benchmarks/results/semrel-2024-languages.md: Track A test, Track A dev and
    choices, Track C, Czech."""
    parts = []
    if record["track_a"]:
        lines = ["| language | test pairs | bi | cross | char-ridge | Dice | **final** | final model | "
                 "LaBSE | best | final − LaBSE | final − best |", "|---" * 12 + "|"]
        for lang, r in record["track_a"].items():
            test, official = r["test"], r["official"]
            final = test.get(r["final"])
            pairs = f"{r['pairs']['test']:,}" if r["test_labelled"] else "no labels"
            lines.append(f"| {lang} | {pairs} | " + " | ".join(cell(test.get(n)) for n in
                         ("bi", "cross", "char-ridge", "dice")) + f" | {bold(final)} | {r['final']} | "
                         f"{cell(official['labse'], 2)} | {cell(official['best'])} | "
                         f"{gap(final, official['labse'])} | {gap(final, official['best'])} |")
        parts.append("\n".join(lines))
        lines = ["| language | train pairs | dev pairs | bi: lr, kept epoch | cross: lr, kept epoch | "
                 "dev: bi / cross / char-ridge / Dice | dev: rank / ridge stack (cross-fitted) | final | "
                 "training s per grid member |", "|---" * 9 + "|"]
        for lang, r in record["track_a"].items():
            grid, dev, chosen = r["grid"], r["dev"], r["chosen"]
            seconds = ", ".join(f"{n} {g['train_seconds']:,.0f}" for n, g in grid.items())
            picked = [f"{grid[chosen[e]]['learning_rate']:g}, {grid[chosen[e]]['kept_epoch']:g}" for e in GRID_A]
            omitted = grid[chosen["bi"]].get("dev_omitted")  # dev pairs in train, left out of the choice of epochs
            lines.append(f"| {lang} | {r['pairs']['train']:,} | {r['pairs']['validation']:,}"
                         f"{'' if omitted is None else f' ({omitted} in train: omitted when choosing)'} | "
                         f"{picked[0]} | {picked[1]} | "
                         + " / ".join(cell(dev.get(n)) for n in ("bi", "cross", "char-ridge", "dice"))
                         + f" | {cell(r['candidates_dev']['rank'])} / {cell(r['candidates_dev']['ridge'])} | "
                         f"{r['final']} | {seconds} |")
        parts.append("\n".join(lines))
    if record["track_c"]:
        lines = ["| target | trained on | test pairs | bi | cross | Dice | **rank average** | "
                 "LaBSE-Cross | rank − LaBSE-Cross | dev: rank | training s: bi / cross |", "|---" * 11 + "|"]
        for lang, r in record["track_c"].items():
            test, final = r["test"], r["test"].get("rank")
            labse = r["official"]["labse_cross"]
            pairs = f"{r['pairs']['test']:,}" if r["test_labelled"] else "no labels"
            lines.append(f"| {lang} | {r['trained_on']} ({r['pairs']['train']:,} pairs) | {pairs} | "
                         + " | ".join(cell(test.get(n)) for n in ("bi", "cross", "dice"))
                         + f" | {bold(final)} | {cell(labse, 2)} | {gap(final, labse)} | "
                         f"{cell(r['dev'].get('rank'))} | "
                         + " / ".join(f"{r['members'][e]['train_seconds']:,.0f}" for e in ("bi", "cross")) + " |")
        parts.append("\n".join(lines))
    if record.get("czech"):
        c = record["czech"]
        lines = ["| Czech News STS free test | Pearson | Spearman | MSE (0–6) |", "|---|---|---|---|"]
        for name, s in c["scores"].items():
            label = {"rank": "**rank average**"}.get(name, name)
            lines.append(f"| {label} (trained on SemRel-2024 Track A, no Czech) | {s['pearson']:.3f} | "
                         f"{s['spearman']:.3f} | {s['mse']:.3f} |")
        paper = c["paper"]
        lines.append(f"| average annotator (paper, Table 1) | {paper['average_annotator_pearson']:.3f} | | |")
        tuned = paper["fine_tuned"]
        lines.append(f"| {tuned['model']} fine-tuned on {tuned['train_pairs']:,} Czech pairs (paper, Table 5) | "
                     f"{tuned['pearson']:.3f} | {tuned['spearman']:.3f} | |")
        lines.append("| MSE lower bound (Student-t, scripts/reproduce_czech_news.py) | | | "
                     f"{c['mse_lower_bound']:.3f} |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


LABELLED_A = [lang for lang in TRACK_A if lang in BEST and lang not in ("eng", "esp")]  # test labels here


def store(record: dict, machine: str, path: Path | None = None) -> None:
    """The study under :data:`RESULTS_KEY` of benchmarks/results.json (or ``path``); the report's
    best fine-tuned figures once every labelled Track A language (and Czech) is done."""
    from semrel.publishing.results import RESULTS, store_fine_tuned
    from semrel.publishing.results import store as store_key

    path = RESULTS if path is None else path
    stored = {key: value for key, value in record.items() if key not in ("machine", "all_languages")}
    store_key(RESULTS_KEY, {"machine": machine, **stored}, path)
    command = record["command"]
    if all(lang in record["track_a"] for lang in LABELLED_A):
        finals = [record["track_a"][lang]["test"][record["track_a"][lang]["final"]] for lang in LABELLED_A]
        store_fine_tuned("semrel-2024", {
            "spearman": round(float(np.mean(finals)), 4),
            "model": "e5-small bi + cross per language, rank average or ridge stack (+Dice, char n-gram "
                     "ridge) chosen on dev",
            "protocol": f"Track A test, mean of {len(finals)} languages ({' '.join(LABELLED_A)}); "
                        "every setting chosen on each language's dev", "machine": machine, "command": command},
            path)
    if record.get("czech"):
        final = record["czech"]["scores"][record["czech"]["final"]]
        store_fine_tuned("czech-news-sts", {
            "spearman": final["spearman"],
            "model": "e5-small bi + cross trained on SemRel-2024 Track A (no Czech data), rank average",
            "protocol": f"free test (1,200 pairs), no Czech training data; Pearson {final['pearson']:.3f}, "
                        f"MSE {final['mse']:.3f} (0–6 = 6 × score)", "machine": machine, "command": command},
            path)

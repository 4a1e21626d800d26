"""The study's entry of benchmarks/results.json (:data:`KEY`), the table of benchmarks/results/c-sts.md
it renders, beside the published anchors, and ``--publish``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semrel.publishing.prediction_files import Prediction
from semrel.publishing.prediction_files import publish_or_exit as publish_files

from .candidates import CONFIG, DATASET, SCORED

KEY = "c_sts_study"  # the study's entry in benchmarks/results.json
ANCHORS = [  # published figures beside ours: other labels or splits, so not comparable one to one
    ("C-STS paper: bi-encoder SimCSE-large, fine-tuned", 0.475,
     "original labels, hidden test (Deshpande et al. 2023)"),
    ("C-STS paper: cross-encoder, fine-tuned", 0.432, "original labels, hidden test"),
    ("C-STS paper: GPT-4, few-shot", 0.436, "original labels, hidden test"),
    ("Hyper-CL (ACL 2024): tri-encoder", 0.396, "original labels, hidden test"),
    ("Tu et al. 2024: SimCSE-large", 0.717, "their re-annotated validation slice"),
    ("Tu et al. 2024: QA-SimCSE-large", 0.759, "their re-annotated validation slice"),
    ("Zhang et al. 2025: models trained on this release", 0.739, "their evaluation"),
]
TARGET = 0.74


def fmt(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def fmt_ci(ci) -> str:
    return "" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def entry(records: list[dict], ensembles: list[dict], command: str, precision: str,
          not_run: list[str]) -> dict:
    """The study's entry of benchmarks/results.json (:func:`markdown` renders it)."""
    def rounded(value, digits=4):
        if isinstance(value, list):
            return [rounded(v, 3) for v in value]
        return None if value is None else round(value, digits)

    def row(r):
        v = r["validation"]
        return {"candidate": r["candidate"], "kind": r["kind"],
                "dev_by_epoch": [[round(e, 2), rounded(s)] for e, s in r["dev_by_epoch"]],
                "kept_epoch": r["kept_epoch"], "dev": rounded(r["dev"]),
                "validation_spearman": rounded(v["spearman"]),
                "validation_spearman_ci": rounded(v["spearman_ci"]),
                "validation_pearson": rounded(v["pearson"]),
                "validation_pearson_ci": rounded(v["pearson_ci"]),
                "train_seconds": round(r["train_seconds"]),
                **({"omitted_tied_pairs": r["omitted_groups"]} if r.get("omitted_groups") else {})}

    return {"about": "C-STS on the open re-annotation (issue 35): trained on c-sts/reannotated-dev "
                     "train (10,206 rows), epoch and ensemble chosen on its dev split (1,136 rows, "
                     "568 sentence pairs carved from train), scored on the re-annotated validation "
                     "(2,620 rows; validation_invalid never scored); benchmarks/results/c-sts.md "
                     "shows the same table.",
            "machine": "2-core CPU", "precision": precision, "command": command,
            "rows": [row(r) for r in records + ensembles],
            "anchors": [{"what": a, "spearman": s, "on": on} for a, s, on in ANCHORS],
            "not_run": not_run}


def markdown(study: dict) -> str:
    """The benchmarks/results/c-sts.md table of a results.json entry: our rows, then the published anchors."""
    head = ["candidate", "dev by epoch", "kept epoch", "dev (kept)", "validation Spearman [95 %]",
            "validation Pearson [95 %]", "training s"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in study["rows"]:
        epochs = ", ".join(f"{e:g}: {fmt(s)}" for e, s in r["dev_by_epoch"])
        kept = "—" if r["kept_epoch"] is None else f"{r['kept_epoch']:g}"
        omitted = f" ({r['omitted_tied_pairs']} tied pairs omitted)" if r.get("omitted_tied_pairs") else ""
        lines.append(f"| `{r['candidate']}`{omitted} | {epochs} | {kept} | {fmt(r['dev'])} | "
                     f"{fmt(r['validation_spearman'])} {fmt_ci(r['validation_spearman_ci'])} | "
                     f"{fmt(r['validation_pearson'])} {fmt_ci(r['validation_pearson_ci'])} | "
                     f"{r['train_seconds']:,} |")
    for a in study["anchors"]:
        lines.append(f"| {a['what']} — published, {a['on']} | | | | {a['spearman']:.3f} | | |")
    return "\n".join(lines)


def best_ensemble(ensembles: list[dict]) -> dict:
    """The ensemble best on dev (a tie: the rank average, built first)."""
    if not ensembles:
        raise SystemExit("no ensemble to publish or store (it needs 2 finished trained candidates)")
    return max(ensembles, key=lambda r: -np.inf if r["dev"] is None else r["dev"])


def publish(ensembles: list[dict], command: str, machine: str, into: Path) -> None:
    """``--publish``: the validation file (``{"0": score, ...}``) of :func:`best_ensemble` into
    ``benchmarks/predictions/c-sts/<method>-<members>/`` and results.json."""
    best = best_ensemble(ensembles)
    recipe = best["method"] + "-" + "+".join(m.split(",")[0].replace("@", "-") for m in best["members"])
    rho = best["validation"]["spearman"]  # None: undefined (constant predictions)
    print("published:", *publish_files([Prediction(Path(best["folder"]) / f"{SCORED}.json", DATASET, CONFIG, SCORED,
                                                   recipe, {"spearman": rho and round(rho, 4)})],
                                       command=command, machine=machine, into=into))


METHOD_NAMES = {"rank": "rank average", "ridge": "ridge stack"}
PROTOCOL = ("open re-annotation: trained on reannotated-dev train (10,206 rows), epochs and members chosen "
            "on its dev (1,136), scored on validation (2,620 rows, Tu et al.'s human labels; the 214 "
            "invalid never scored)")


def fine_tuned_cell(ensembles: list[dict], command: str, machine: str) -> dict:
    """``--write-results``: RESULTS' c-sts cell, :func:`best_ensemble`'s validation Spearman."""
    best = best_ensemble(ensembles)
    if best["validation"]["spearman"] is None:
        raise SystemExit(f"--write-results: {best['candidate']} has no validation Spearman (constant "
                         "predictions); nothing stored")
    return {"spearman": round(best["validation"]["spearman"], 4),
            "model": " + ".join(best["members"]) + f", {METHOD_NAMES[best['method']]}, chosen on dev",
            "protocol": PROTOCOL, "machine": machine, "command": command}

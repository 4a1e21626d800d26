"""A unit from its members to its result: the data it reads, its ensembles and the choice of its
final model on dev, its dev and test predictions scored by ``semrel evaluate``, and its
``result.json``."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from semrel import cli
from semrel.dataset_scripts.semrel_2024.official import BEST, LABSE, LABSE_CROSS
from semrel.metrics.output_files import write_whole

from .choices import best_per_encoder
from .members import Study, rank_argv, train_members
from .units import CHOICE_FOLDS, GRID_A, SETTINGS_C, Unit


def load(config: str, dataset: str = "semrel-2024"):
    from semrel.dataset_scripts.pairs import load_pairs

    return load_pairs(dataset, config)


def check_data(ap, todo: list[Unit]) -> None:
    """Load what the unfinished units read (sha256-checked) first: a missing file is one line naming it."""
    from semrel.dataset_scripts.errors import DataValidationError, SourceError

    try:
        for dataset, config in dict.fromkeys(r for u in todo for r in (("semrel-2024", u.train), (
                "czech-news-sts", "free") if u.language == "czech" else ("semrel-2024", u.config))):
            load(config, dataset)
    except (SourceError, DataValidationError) as exc:
        ap.exit(2, f"{ap.prog}: error: {(str(exc).strip().splitlines() or [type(exc).__name__])[0]}\n")


def evaluate(files: dict[str, Path], config: str, split: str) -> dict[str, float]:
    """``semrel evaluate`` of each file against ``config``'s ``split``: Spearman by name."""
    names = list(files)
    argv = ["evaluate", *(str(files[n]) for n in names), "--split", split, "--json"]
    argv += ["--language", config] * len(names)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        seconds = cli.run_logged(*argv)
    rows = json.loads(buffer.getvalue().split("\n", 1)[1])  # after the echoed command
    print(buffer.getvalue().split("\n", 1)[0] + f"  ({seconds:.1f} s)")
    return {name: round(row["spearman"], 4) for name, row in zip(names, rows, strict=True)}


def predict(unit: Unit, model: Path, split: str, name: str) -> Path:
    path = unit.folder / "predictions" / f"{name}.{split}.csv"
    cli.run_logged("predict", "--dataset", "semrel-2024", "--config", unit.config, "--split", split,
                   "--model", str(model), "--output", str(path))
    return path


def lexical_members(unit: Unit, data) -> dict[str, dict[str, Path]]:
    """Dice and (Track A) the char n-gram ridge fit on train: their dev and test predictions."""
    from semrel.metrics.overlap import dice
    from semrel.trainers.lexical import CharNgramRidge
    from semrel.trainers.prediction import write_submission

    scorers = {"dice": lambda rows: dice(list(rows["sentence1"]), list(rows["sentence2"]))}
    if unit.track == "A":
        train = data.splits["train"]
        ridge = CharNgramRidge.fit(train["sentence1"], train["sentence2"], train["score"])
        scorers["char-ridge"] = lambda rows: ridge.predict(rows["sentence1"], rows["sentence2"])
    files = {}
    for name, score in scorers.items():
        for split in ("validation", "test"):
            rows = data.splits[split]
            path = unit.folder / "predictions" / f"{name}.{split}.csv"
            files.setdefault(name, {})[split] = write_submission(score(rows), path, rows["pair_id"])
    return files


def ensembles(members: list[Path], into: Path, prefix: str = "") -> float:
    """The rank average and the ridge stack (with Dice and the char n-gram ridge) of ``members``,
    in ``into/<prefix>rank`` and ``into/<prefix>ridge``: the stack's cross-fitted dev Spearman
    (:data:`CHOICE_FOLDS` folds)."""
    from semrel.trainers.combination import spearman
    from semrel.trainers.stacking import cross_fitted, stack_inputs

    how = {"rank": ["--method", "rank"], "ridge": ["--method", "ridge", "--features", "dice", "char-ridge"]}
    for name, flags in how.items():
        cli.run_logged("ensemble", *flags, *(a for m in members for a in ("--member", str(m))),
                       "--output", str(into / f"{prefix}{name}"))
    rows = stack_inputs([str(m) for m in members], features=("dice", "char-ridge"))
    stacked = cross_fitted(rows, "ridge", features=("dice", "char-ridge"), folds=CHOICE_FOLDS)
    return round(spearman(stacked, rows.labels), 4)


def track_a(study: Study, unit: Unit) -> dict:
    grid = train_members(study, unit)
    chosen = best_per_encoder(grid)
    ridge = ensembles([unit.members / chosen[e] for e in GRID_A], unit.members)
    return {"grid": grid, "chosen": chosen, "ensemble_dev": {"rank": None, "ridge": ridge}}


def finish(study: Study, unit: Unit, trained: dict) -> dict:
    """Predict and score a unit whose members are trained (``trained``: what training recorded)."""
    data = load(unit.config)
    files = lexical_members(unit, data)
    members = ({e: unit.members / trained["chosen"][e] for e in GRID_A} if unit.track == "A"
               else {e: unit.members / e for e in SETTINGS_C})
    for name, folder in members.items():
        files[name] = {s: predict(unit, folder, s, name) for s in ("validation", "test")}
    dev_files = {n: f["validation"] for n, f in files.items()}
    dev_files["rank"] = predict(unit, unit.members / "rank", "validation", "rank")
    dev = evaluate(dev_files, unit.config, "validation")
    if unit.track == "A":
        candidates = {"rank": dev["rank"], "ridge": trained["ensemble_dev"]["ridge"]}
        final = max(candidates, key=candidates.get)  # on dev; a tie keeps the rank average
    else:
        candidates, final = {}, "rank"
    files[final] = {"test": predict(unit, unit.members / final, "test", final)}
    labelled = None not in data.splits["test"]["score"]
    test = evaluate({n: f["test"] for n, f in files.items()}, unit.config, "test") if labelled else {}
    official = ({"labse": LABSE.get(unit.language), "best": BEST.get(unit.language)} if unit.track == "A"
                else {"labse_cross": LABSE_CROSS.get(unit.language)})
    return {"track": unit.track, "language": unit.language, "config": unit.config, "trained_on": unit.train,
            "pairs": {s: len(data.splits[s]) for s in data.splits}, "test_labelled": labelled,
            **trained, "dev": dev, "candidates_dev": candidates, "final": final,
            "test": test, "official": official}


def track_c_members(study: Study, unit: Unit) -> dict:
    members = train_members(study, unit)
    if not (unit.members / "rank" / "semrel_ensemble.json").is_file():
        cli.run_logged(*rank_argv(unit))
    return {"members": members}


def run_unit(study: Study, unit: Unit) -> dict:
    result_path = unit.folder / "result.json"
    if result_path.is_file():
        print(f"kept: {unit.folder} is finished", flush=True)
        return json.loads(result_path.read_text())
    trained = track_a(study, unit) if unit.track == "A" else track_c_members(study, unit)
    result = finish(study, unit, trained)
    write_whole(result_path, json.dumps(result, indent=1), "output")
    return result

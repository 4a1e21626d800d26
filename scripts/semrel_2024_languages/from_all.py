"""``--all-languages``: a Track A language's final model chosen on its dev among three families,
in ``OUT/all-languages/<lang>/``, and its test figure beside the per-language study's final.

- **per language**: the study's members (``OUT/track-a/<lang>/``), each with its longer sibling
  where its kept epoch was its last (:func:`~.choices.longer_siblings`), rank average and ridge
  stack as the study makes them (the study's own where no sibling won);
- **all, as it is**: the Track C members trained on config ``all`` (``OUT/track-c/train-all/``,
  trained once, shared with Track C and Czech) and their rank average;
- **all, fine-tuned**: those members trained further on the language's own train split at every
  rate of :data:`~.units.GRID_FROM_ALL`, the epoch chosen on its dev, per encoder the better rate,
  longer siblings as above, rank average and ridge stack.

The candidate with the best dev figure (rank averages scored by ``semrel evaluate`` on dev, ridge
stacks cross-fitted on dev) is the final (:func:`~.choices.final_choice`); only it predicts test,
and the paired difference to the study's final is bootstrapped on test.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from semrel.dataset_scripts.semrel_2024.official import BEST, LABSE
from semrel.metrics.output_files import write_whole

from .all_table import paired_difference
from .choices import best_per_encoder, final_choice, longer_siblings, prefer_longer
from .members import Study, grid_record, remember, train_members
from .tracks import ensembles, evaluate, load, predict, track_c_members
from .units import (
    EPOCHS_FROM_ALL,
    GRID_A,
    GRID_FROM_ALL,
    LONGER,
    MemberSpec,
    Unit,
    from_all_specs,
    from_all_unit,
    member_specs,
    shared_unit,
)


def longer(study: Study, unit: Unit, specs: list[MemberSpec], grid: dict) -> tuple[dict, dict]:
    """``(chosen, siblings)``: per encoder the member chosen on dev after the longer-schedule rule,
    and the siblings trained for it (their records by name)."""
    chosen, by_name = best_per_encoder(grid), {s.name: s for s in specs}
    plan = longer_siblings(grid, chosen)
    trained = train_members(study, unit, [replace(by_name[n], name=name, epochs=epochs)
                                          for n, (name, epochs) in plan.items()])
    for n, (name, _) in plan.items():
        trained[name].update(longer_of=n, longer_of_dev=grid[n]["dev_kept"])
    return prefer_longer(chosen, grid, plan, trained), trained


def family(unit: Unit, prefix: str, members: dict[str, Path]) -> tuple[dict, float]:
    """A family's rank average and ridge stack (``unit.members/<prefix>rank``, ``.../<prefix>ridge``):
    their folders and the stack's cross-fitted dev figure."""
    ridge = ensembles([members[e] for e in GRID_A], unit.members, prefix)
    return {f"{prefix}rank": unit.members / f"{prefix}rank", f"{prefix}ridge": unit.members / f"{prefix}ridge"}, ridge


def run_from_all(study: Study, unit: Unit, today_unit: Unit, today: dict, shared: Unit) -> dict:
    """The language's families, its final on dev, and its result (kept once written)."""
    result_path = unit.folder / "result.json"
    if result_path.is_file():
        print(f"kept: {unit.folder} is finished", flush=True)
        return json.loads(result_path.read_text())
    track_c_members(study, shared)  # the all members and their rank average: trained once, kept
    own = {n: {**g, **grid_record(today_unit.members / n, remember(today_unit, n, None))}
           for n, g in today["grid"].items()}  # a study written before kept_last was recorded
    own_chosen, own_longer = longer(study, today_unit, member_specs(today_unit), own)
    specs = from_all_specs(unit, shared)
    grid = train_members(study, unit, specs)
    tuned_chosen, tuned_longer = longer(study, unit, specs, grid)

    members = {"all-bi": shared.members / "bi", "all-cross": shared.members / "cross",
               **{f"from-all-{e}": unit.members / tuned_chosen[e] for e in GRID_A}}
    folders, dev_fixed = {"all-rank": shared.members / "rank"}, {}
    if own_chosen == today["chosen"]:  # the study's own ensembles and their dev figures
        folders.update({"per-language-rank": today_unit.members / "rank",
                        "per-language-ridge": today_unit.members / "ridge"})
        dev_fixed = {"per-language-rank": today["dev"]["rank"],
                     "per-language-ridge": today["ensemble_dev"]["ridge"]}
    else:
        members.update({f"per-language-{e}": today_unit.members / own_chosen[e] for e in GRID_A})
        made, dev_fixed["per-language-ridge"] = family(
            unit, "per-language-", {e: today_unit.members / own_chosen[e] for e in GRID_A})
        folders.update(made)
    made, dev_fixed["from-all-ridge"] = family(unit, "from-all-",
                                               {e: unit.members / tuned_chosen[e] for e in GRID_A})
    folders.update(made)

    data = load(unit.config)
    dev_files = {n: predict(unit, m, "validation", n) for n, m in members.items()}
    dev_files.update({n: predict(unit, f, "validation", n) for n, f in folders.items()
                      if n.endswith("rank") and n not in dev_fixed})
    dev = evaluate(dev_files, unit.config, "validation")
    candidates = {n: dev_fixed[n] if n in dev_fixed else dev[n] for n in
                  ("per-language-rank", "per-language-ridge", "all-rank", "from-all-rank", "from-all-ridge")}
    final = final_choice(candidates)
    today_file = today_unit.folder / "predictions" / f"{today['final']}.test.csv"
    same = final == f"per-language-{today['final']}" and own_chosen == today["chosen"]
    final_file = today_file if same else predict(unit, folders[final], "test", final)
    test_files = {n: predict(unit, m, "test", n) for n, m in members.items()}
    labelled = None not in data.splits["test"]["score"]
    test = evaluate({**test_files, final: final_file}, unit.config, "test") if labelled else {}
    result = {
        "language": unit.language, "pairs": {s: len(data.splits[s]) for s in data.splits}, "test_labelled": labelled,
        "per_language": {"chosen": own_chosen, "longer": own_longer},
        "from_all": {"grid": grid, "chosen": tuned_chosen, "longer": tuned_longer},
        "dev": dev, "candidates_dev": candidates, "final": final,
        "final_file": os.path.relpath(final_file, unit.folder.parent.parent), "test": test,  # under OUT
        "today": {"final": today["final"], "test": today["test"].get(today["final"])},
        "paired": paired_difference(final_file, today_file, data.splits["test"]) if labelled else None,
        "official": {"labse": LABSE.get(unit.language), "best": BEST.get(unit.language)}}
    write_whole(result_path, json.dumps(result, indent=1), "output")
    return result


def from_all_units(out: Path, chosen: list[Unit]) -> list[Unit]:
    """The ``--all-languages`` unit of each Track A language of ``chosen``."""
    return [from_all_unit(out, u.language) for u in chosen if u.track == "A"]


def unfinished_from_all(out: Path, from_all: list[Unit]) -> list[Unit]:
    """The units of ``from_all`` still to do, and the ``all`` members' unit where there is one
    (what to check the data of before anything trains)."""
    todo = [u for u in from_all if not (u.folder / "result.json").is_file()]
    return todo + [shared_unit(out)] * bool(todo)


def all_languages(study: Study, out: Path, done: list[tuple[Unit, dict]]) -> dict:
    """``--all-languages``' part of ``study.json``: its settings, and per Track A language of
    ``done`` (the study's units and results) :func:`run_from_all`."""
    shared = shared_unit(out)
    return {"grid_from_all": GRID_FROM_ALL, "epochs_from_all": EPOCHS_FROM_ALL, "longer": LONGER,
            "languages": {u.language: run_from_all(study, from_all_unit(out, u.language), u, r, shared)
                          for u, r in done if u.track == "A"}}

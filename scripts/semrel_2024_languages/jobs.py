"""``--jobs N``: the study as processes side by side on one machine (one GPU shared), each unit's
members' fits first, then its scoring."""

from __future__ import annotations

import sys
from pathlib import Path

from semrel import cli

from .members import Study, rank_argv, remember
from .units import MemberSpec, Unit, from_all_specs, member_specs, shared_unit


def run_side_by_side(script: Path, args, study: Study, chosen: list[Unit], czech: Unit | None,
                     from_all: list[Unit] = ()) -> None:
    """Every unfinished unit of ``chosen`` as processes, ``args.jobs`` at a time on one GPU: each
    member still to train a ``semrel fit`` (a shared one once, its wall seconds recorded as
    :meth:`Study.fit` records them), each Track C rank average a ``semrel ensemble``, and each unit
    ``script`` for that unit alone, started once its members are there (earlier units first).
    Track C members save no resume checkpoints here (1.4 GB each for e5-small, and minutes of GPU
    to train again); a member that chooses its epoch keeps its best and latest as always.
    ``czech``: the Czech unit, whose members to train too (scored afterwards, in this process);
    ``from_all``: the ``--all-languages`` units, each after its language's unit, the ``all``
    members and its fine-tuned members (each after the ``all`` member it starts from); their
    longer schedules, decided on dev, train in the unit's own process."""
    from semrel.trainers.side_by_side import Task, side_by_side

    semrel = (sys.executable, "-m", "semrel")
    options = ["--output", str(args.output), "--precision", args.precision]
    options += [a for name, folder in args.model for a in ("--model", f"{name}={folder}")]
    options += ["--max-steps", str(args.max_steps)] if args.max_steps is not None else []
    tasks, made, members = [], {}, {}

    def task_for(folder: Path, task: Task) -> int:
        if folder not in made:
            made[folder] = len(tasks)
            tasks.append(task)
        return made[folder]

    def fits(unit: Unit, specs: list[MemberSpec], after=lambda m: ()) -> list[int]:
        needs = []
        for m in specs:
            folder = unit.members / m.name
            if not (folder / "metrics.json").is_file():
                argv = study.fit_argv(unit, m, resumable=False)
                needs.append(task_for(folder, Task((*semrel, *argv), folder.with_name(f"{m.name}.log"), after(m))))
                members[made[folder]] = (unit, m.name, folder)
        return needs

    def ranked(unit: Unit, needs: list[int]) -> list[int]:
        if (unit.members / "rank" / "semrel_ensemble.json").is_file():
            return needs
        return [task_for(unit.members / "rank", Task((*semrel, *rank_argv(unit)), unit.members / "rank.log",
                                                     tuple(needs)))]

    shared = shared_unit(args.output)
    for unit in chosen + ([czech] if czech else []) + list(from_all):
        if (unit.folder / "result.json").is_file():
            continue
        if unit in from_all:
            alls = fits(shared, member_specs(shared))  # the shared members are named for their encoders
            started = {members[i][1]: (i,) for i in alls}
            needs = ranked(shared, alls) + fits(unit, from_all_specs(unit, shared),
                                                lambda m, started=started: started.get(m.encoder, ()))
            own = args.output / "track-a" / unit.language  # the language's own unit, scored first
            needs += [made[own]] if own in made else []
        else:
            needs = fits(unit, member_specs(unit))
            needs = ranked(unit, needs) if unit.track == "C" else needs
        if unit is not czech:
            argv = (sys.executable, str(script), "--track", unit.track.lower(), "--language", unit.language,
                    *(["--all-languages"] if unit in from_all else []), *options)
            task_for(unit.folder, Task(argv, unit.folder / "score.log", tuple(needs), echo=True))

    def member_trained(index: int, seconds: float) -> None:
        if index in members:
            unit, name, folder = members[index]
            cli.drop_checkpoints(folder)
            remember(unit, name, seconds)

    side_by_side(tasks, args.jobs, member_trained, say=lambda line: print(line, flush=True))

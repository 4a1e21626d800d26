"""The members of a unit: each one's ``semrel fit`` (kept when finished, resumed when cut off),
the record of its run, and the wall seconds of its fit across invocations."""

from __future__ import annotations

import json
from pathlib import Path

from semrel import cli
from semrel.metrics.output_files import write_whole

from .units import MODEL, SAVE_STEPS_C, MemberSpec, Unit, member_specs


class Study:
    """What every fit of one invocation shares: the model folder, precision and smoke steps."""

    def __init__(self, args):
        self.model = dict(args.model).get(MODEL, MODEL)
        self.precision, self.max_steps = args.precision, args.max_steps

    def fit(self, unit: Unit, member: MemberSpec) -> float | None:
        """Train one member of ``unit`` unless its folder holds a finished run; its wall seconds
        (None: kept)."""
        folder = unit.members / member.name
        if (folder / "metrics.json").is_file():
            print(f"kept: {folder} holds a finished run", flush=True)
            return None
        seconds = cli.run_logged(*self.fit_argv(unit, member))
        cli.drop_checkpoints(folder)
        return seconds

    def fit_argv(self, unit: Unit, member: MemberSpec, resumable: bool = True) -> list[str]:
        """The ``semrel fit`` arguments of one member of ``unit``, trained on ``unit.train`` in
        ``unit.members / member.name`` (``--resume last`` when it was cut off); ``resumable``: a
        member that chooses no epoch saves a checkpoint every :data:`SAVE_STEPS_C` steps."""
        folder, choose_on = unit.members / member.name, member.choose_on
        model = self.model if member.start is None else str(member.start)
        argv = ["fit", "--dataset", "semrel-2024", "--config", unit.train, "--model", model,
                "--encoder", member.encoder, "--epochs", str(member.epochs), "--learning-rate", member.learning_rate,
                "--precision", self.precision, "--output", str(folder)]
        if choose_on:
            argv += ["--eval-dataset", "semrel-2024", "--eval-config", choose_on, "--eval-split", "validation",
                     "--metric-for-best", "spearman", "--selection-overlap", "omit"]  # train pairs: counted
        elif resumable:
            argv += ["--save-steps", str(SAVE_STEPS_C if self.max_steps is None else 1)]
        if self.max_steps is not None:
            argv += ["--max-steps", str(self.max_steps)] + (["--eval-steps", "1"] if choose_on else [])
        return argv + cli.resume_flags(folder)


def grid_record(folder: Path, wall: float | None) -> dict:
    metrics = json.loads((folder / "metrics.json").read_text())
    selection = metrics.get("selection") or {}
    kept, curve = selection.get("kept") or {}, selection.get("curve", [])
    return {"dev_by_evaluation": [e.get("spearman") for e in curve],
            "kept_epoch": kept.get("epoch"), "dev_kept": kept.get("spearman"),
            "kept_last": bool(curve) and kept.get("step") == curve[-1]["step"],
            "dev_omitted": selection.get("omitted"), "train_seconds": round(metrics["train_seconds"], 3),
            "epoch_seconds": [round(s, 3) for s in metrics.get("epoch_seconds", [])],
            "wall_seconds": None if wall is None else round(wall, 1)}


def remember(unit: Unit, name: str, seconds: float | None) -> float | None:
    """The wall seconds of a member's fit across invocations (a kept member: the recorded ones)."""
    path = unit.members / "seconds.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    if seconds is not None:
        known[name] = round(seconds, 1)
        write_whole(path, json.dumps(known, indent=1), "output")
    return known.get(name)


def train_members(study: Study, unit: Unit, specs: list[MemberSpec] | None = None) -> dict[str, dict]:
    """Each member of ``unit`` (``specs``, else :func:`member_specs`) trained or kept, by name: its
    settings (a Track A member's encoder first) and :func:`grid_record`."""
    trained = {}
    for m in member_specs(unit) if specs is None else specs:
        wall = remember(unit, m.name, study.fit(unit, m))
        trained[m.name] = {**({"encoder": m.encoder} if unit.track == "A" else {}),
                           "learning_rate": float(m.learning_rate), "epochs": m.epochs,
                           **grid_record(unit.members / m.name, wall)}
    return trained


def rank_argv(unit: Unit) -> tuple[str, ...]:
    """The ``semrel ensemble`` arguments of a Track C unit's rank average of its two members."""
    return ("ensemble", "--method", "rank", "--member", str(unit.members / "bi"), "--member",
            str(unit.members / "cross"), "--output", str(unit.members / "rank"))


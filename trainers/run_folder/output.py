"""An output folder's life: which folder a run may use, its fingerprint, where it resumes.

A run's fingerprint (data, starting model, recorded options; a CV's also names its family) is
written to ``checkpoints/semrel_run.json`` when the run starts. A folder holding a run is never
cleared without ``overwrite``; resuming continues only the run of the same fingerprint, from a
complete checkpoint (one whose ``trainer_state.json``, written last, exists).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from semrel.metrics.errors import ParameterError

from .files import (
    CHECKPOINTS,
    ENCODER_CONFIG,
    ENSEMBLE,
    RUN_FILE,
    TRAINER_STATE,
    checkpoint_step,
    read_fingerprint,
    write_fingerprint,
)


def holds_run(folder: Path) -> bool:
    """Whether ``folder`` holds a run of semrel (its fingerprint, or a saved model)."""
    return (folder / RUN_FILE).is_file() or (folder / ENCODER_CONFIG).is_file()


def check_output(output_dir: Path, run: dict, *, resume=None, overwrite: bool = False,
                 as_recorded=None) -> None:
    """Refuse an ``output_dir`` that ``run`` may not use: a non-empty folder holding no run
    (never cleared), a folder holding a run without ``overwrite`` (or, when resuming, holding
    another run: a different fingerprint), a file. ``resume``: the checkpoint to resume from
    (a folder, or True / ``"last"``), or None. ``as_recorded(options)``: the saved fingerprint's
    options as ``run`` records them (options added since at their defaults)."""
    if resume and overwrite:
        raise ParameterError("overwrite", True, "excludes {resume_from_checkpoint}: overwriting "
                             "clears the run that resuming continues")
    if output_dir.exists() and not output_dir.is_dir():
        raise ParameterError("output_dir", str(output_dir), "is a file, not a folder")
    if not (output_dir.is_dir() and any(output_dir.iterdir())):
        return
    if not holds_run(output_dir):
        raise ParameterError("output_dir", str(output_dir), "is not empty and holds no run of "
                             "semrel; choose an empty or new folder")
    if resume:
        saved = read_fingerprint(output_dir)
        if saved and isinstance(saved.get("options"), dict) and as_recorded is not None:
            saved["options"] = as_recorded(saved["options"])
        if saved != run:
            raise ParameterError("resume_from_checkpoint", resume, f"{output_dir} holds another "
                                 "run (data, model or options differ); resuming only continues "
                                 "the same run")
    elif not overwrite:
        raise ParameterError("output_dir", str(output_dir), "already holds a run: set "
                             "{overwrite} to replace it, or {resume_from_checkpoint} to continue "
                             "the same run")


def prepare_output(output_dir: Path, run: dict, *, resume=None, overwrite: bool = False,
                   as_recorded=None) -> None:
    """After :func:`check_output`: clear a held run with ``overwrite``, then write ``run``'s
    fingerprint."""
    check_output(output_dir, run, resume=resume, overwrite=overwrite, as_recorded=as_recorded)
    if overwrite and output_dir.is_dir():
        shutil.rmtree(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    write_fingerprint(output_dir, run)


def last_complete_checkpoint(folder: Path) -> Path:
    """The highest ``checkpoint-N`` in ``folder`` whose ``trainer_state.json`` exists
    (transformers writes it last, so a checkpoint cut off while written has none)."""
    complete = [p for p in folder.glob("checkpoint-*")
                if p.name.split("-")[-1].isdigit() and (p / TRAINER_STATE).is_file()]
    if not complete:
        raise ParameterError("resume_from_checkpoint", "last",
                             f"no complete checkpoint in {folder}")
    return max(complete, key=lambda p: int(p.name.split("-")[-1]))


def resume_point(output_dir: Path, resume) -> tuple[str | None, int]:
    """(the checkpoint a run in ``output_dir`` resumes from, its global step): ``resume`` a
    checkpoint folder, or True / ``"last"`` for the last complete one; (None, 0) without."""
    if resume is True or resume == "last":
        resume = str(last_complete_checkpoint(output_dir / CHECKPOINTS))
    if not resume:
        return None, 0
    return str(resume), checkpoint_step(resume)


def check_ensemble_output(path: Path) -> None:
    """An ensemble is saved only into a new or empty folder, or over an earlier ensemble."""
    if path.exists() and not (path / ENSEMBLE).is_file() and (
            not path.is_dir() or any(path.iterdir())):
        raise ParameterError("path", str(path), f"not empty and holds no ensemble (no "
                             f"{ENSEMBLE}); choose an empty or new folder")

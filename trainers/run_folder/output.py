"""An output folder's life: which folder a run may use, its fingerprint, where it resumes.

A run's fingerprint (data, starting model, recorded options; a CV's also names its family) is
written to ``checkpoints/semrel_run.json`` when the run starts, marked ``incomplete`` until the
run has written all it writes (:func:`finish_run`). A folder holding a run is never cleared
without ``overwrite``, except an unfinished run of the same fingerprint, which the same command
run again starts afresh; resuming continues only the run of the same fingerprint, from a
complete checkpoint (one whose ``trainer_state.json``, written last, exists) of that run.
"""

from __future__ import annotations

import json
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
    read_checked,
    read_fingerprint,
    write_fingerprint,
)
from .schema import FINGERPRINT_SCHEMA

INCOMPLETE = "incomplete"  # the fingerprint's mark of a run that has not finished


def holds_run(folder: Path) -> bool:
    """Whether ``folder`` holds a run of semrel (its fingerprint, or a saved model)."""
    return (folder / RUN_FILE).is_file() or (folder / ENCODER_CONFIG).is_file()


def _as_run(saved: dict | None, as_recorded) -> dict | None:
    """A saved fingerprint as a run records it now: without the mark, options added since at
    their defaults (``as_recorded``)."""
    if saved is None:
        return None
    saved = {k: v for k, v in saved.items() if k != INCOMPLETE}
    if as_recorded is not None:
        saved["options"] = as_recorded(saved["options"])
    return saved


def _show(value) -> str:
    return "none" if value is None else value if isinstance(value, str) else json.dumps(value)


def differences(saved: dict, run: dict) -> str:
    """What differs between a saved run and ``run``, in words (at most three options named)."""
    parts = [f"{key} {_show(saved.get(key))} vs this run's {_show(run.get(key))}"
             for key in dict.fromkeys([*saved, *run]) if key != "options" and
             saved.get(key) != run.get(key)]
    theirs, mine = saved.get("options", {}), run.get("options", {})
    options = [k for k in dict.fromkeys([*theirs, *mine]) if theirs.get(k) != mine.get(k)]
    parts += [f"option {k} {_show(theirs.get(k))} vs this run's {_show(mine.get(k))}"
              for k in options[:3]]
    if len(options) > 3:
        parts.append(f"{len(options) - 3} more options")
    return "; ".join(parts)


def _unfinished_same_run(output_dir: Path, run: dict, as_recorded) -> bool:
    """Whether ``output_dir`` holds ``run`` unfinished (its fingerprint marked incomplete)."""
    try:
        saved = read_fingerprint(output_dir)
    except ParameterError:  # unreadable: not known to be this run
        return False
    return bool(saved and saved.get(INCOMPLETE)) and _as_run(saved, as_recorded) == run


def check_output(output_dir: Path, run: dict, *, resume=None, overwrite: bool = False,
                 as_recorded=None) -> bool:
    """Refuse an ``output_dir`` that ``run`` may not use: a non-empty folder holding no run
    (never cleared), a folder holding a run without ``overwrite`` (or, when resuming, holding
    another run: a different fingerprint), a file; an unfinished run of the same fingerprint
    may be started afresh. ``resume``: the checkpoint to resume from (a folder, or True /
    ``"last"``), or None. ``as_recorded(options)``: the saved fingerprint's options as ``run``
    records them (options added since at their defaults). Returns whether the folder is to be
    cleared first (``overwrite``, or the same unfinished run started again)."""
    if resume and overwrite:
        raise ParameterError("overwrite", True, "excludes {resume_from_checkpoint}: overwriting "
                             "clears the run that resuming continues")
    if output_dir.exists() and not output_dir.is_dir():
        raise ParameterError("output_dir", str(output_dir), "is a file, not a folder")
    if not (output_dir.is_dir() and any(output_dir.iterdir())):
        return False
    if not holds_run(output_dir):
        raise ParameterError("output_dir", str(output_dir), "is not empty and holds no run of "
                             "semrel; choose an empty or new folder")
    if resume:
        saved = _as_run(read_fingerprint(output_dir), as_recorded)
        if saved != run:
            what = differences(saved, run) if saved else "it records no fingerprint"
            raise ParameterError("resume_from_checkpoint", resume, f"{output_dir} holds another "
                                 f"run ({what}); resuming only continues the same run")
        return False
    if overwrite or _unfinished_same_run(output_dir, run, as_recorded):
        return True
    raise ParameterError("output_dir", str(output_dir), "already holds a run: set "
                         "{overwrite} to replace it, or {resume_from_checkpoint} to continue "
                         "the same run")


def check_checkpoint_run(checkpoint, run: dict, *, as_recorded=None) -> None:
    """A checkpoint given by path (``resume_from_checkpoint``) must be one of ``run``: the
    fingerprint beside it (its run folder's ``checkpoints/semrel_run.json``) is ``run``'s."""
    file = Path(checkpoint).parent / Path(RUN_FILE).name
    if not file.is_file():
        raise ParameterError("resume_from_checkpoint", str(checkpoint), f"records no run: no "
                             f"{file.name} beside it (resume from a checkpoint in the "
                             f"{CHECKPOINTS} folder of a run of semrel)")
    saved = _as_run(read_checked(file, FINGERPRINT_SCHEMA, "resume_from_checkpoint",
                                 str(checkpoint), f"../{file.name}"), as_recorded)
    if saved != run:
        raise ParameterError("resume_from_checkpoint", str(checkpoint), "is a checkpoint of "
                             f"another run ({differences(saved, run)}); resuming only continues "
                             "the same run")


def prepare_output(output_dir: Path, run: dict, *, resume=None, overwrite: bool = False,
                   as_recorded=None) -> None:
    """After :func:`check_output`: clear what it says to clear, then write ``run``'s
    fingerprint, marked incomplete until :func:`finish_run`."""
    if check_output(output_dir, run, resume=resume, overwrite=overwrite,
                    as_recorded=as_recorded) and output_dir.is_dir():
        shutil.rmtree(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    write_fingerprint(output_dir, {**run, INCOMPLETE: True})


def finish_run(output_dir: Path, run: dict) -> None:
    """``run``'s fingerprint without the incomplete mark: everything it writes is written."""
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

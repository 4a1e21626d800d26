"""The names a benchmark's files and cards give its models: names, never paths of this machine.

- a packaged model by its packaged name (``minilm``);
- a Hub model by ``namespace/name@commit`` (the commit its files were fetched at);
- a local folder (a run, an ensemble, any model folder) by the name given on the command line
  when that is relative (``runs/bi``: it names nothing outside the folder it was run from), else
  by the folder's own name (``/home/me/runs/bi`` and ``~/runs/bi`` are ``bi``); two folders of
  the same name get as many of their parent folders' names as tell them apart (``a/bi``, ``b/bi``).

Every reason a file shows (a refusal, a failure) gets the same names for the models' paths, and
``~`` for the home folder.
"""

from __future__ import annotations

from pathlib import Path

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS


def _local(spec: str) -> bool:
    return spec not in PACKAGED_MODELS and Path(spec).expanduser().is_dir()


def _name(spec: str, path: Path, depth: int = 1) -> str:
    """The name of the model ``spec`` (its folder ``path``) as the module docstring says."""
    if spec in PACKAGED_MODELS:
        return spec
    if not _local(spec):
        from ..hub_models import hub_model_id

        hub = hub_model_id(spec)
        return f"{hub[0]}@{Path(path).name}" if hub else Path(spec).name
    if depth == 1 and not spec.startswith("~") and not Path(spec).is_absolute():
        return spec
    return Path(*Path(spec).expanduser().resolve().parts[-depth:]).as_posix()


def public_names(models: list[tuple[str, Path]]) -> tuple[dict[str, str], dict[str, str]]:
    """(spec -> name, text -> what replaces it in reasons) of ``models`` (each ``(spec, folder)``):
    every model's folder (its absolute paths) by its name, the home folder by ``~``."""
    depth = dict.fromkeys((spec for spec, _ in models), 1)
    while True:
        names = {spec: _name(spec, path, depth[spec]) for spec, path in models}
        taken = list(names.values())
        clash = [spec for spec, n in names.items() if taken.count(n) > 1 and _local(spec)
                 and depth[spec] < len(Path(spec).expanduser().resolve().parts) - 1]
        if not clash:
            break
        for spec in clash:
            depth[spec] += 1
    hidden = {str(Path.home()): "~"}
    for spec, path in models:
        wheres = (Path(path), Path(path).resolve(), *((Path(spec).expanduser().absolute(),) * _local(spec)))
        hidden.update((str(where), names[spec]) for where in wheres)
    return names, hidden


def hide(text: str, hidden: dict[str, str]) -> str:
    """``text`` with each key of ``hidden`` (longest first) replaced by its value."""
    for where in sorted(hidden, key=len, reverse=True):
        text = text.replace(where, hidden[where])
    return text

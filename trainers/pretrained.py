"""A starting transformer by name or path: a verified packaged encoder (``minilm``, ``mpnet``,
``e5-small``; see :mod:`semrel.dataset_scripts.pretrained`) or a local transformer folder."""

from __future__ import annotations

from pathlib import Path

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS, packaged_model_path
from semrel.metrics.errors import MissingPathError


def resolve_model(name_or_path: str) -> str:
    """A packaged model's verified folder, or ``name_or_path`` when it is a folder; a
    ``ParameterError`` naming the known packaged models otherwise (nothing is downloaded)."""
    if name_or_path in PACKAGED_MODELS:
        return str(packaged_model_path(name_or_path))
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return str(path)
    raise MissingPathError("name_or_path", name_or_path, "neither a model folder nor a packaged "
                           f"model name ({', '.join(sorted(PACKAGED_MODELS))})")

"""``--model minilm``: the packaged, checksum-verified all-MiniLM-L6-v2
(:mod:`dataset_scripts.pretrained`)."""

from __future__ import annotations

from dataset_scripts.pretrained import minilm_path


def resolve_model(name_or_path: str) -> str:
    """``minilm`` -> the verified packaged MiniLM folder; anything else is a path, unchanged."""
    return str(minilm_path()) if name_or_path == "minilm" else name_or_path

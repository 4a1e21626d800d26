"""Whether a transformer folder holds a trained sequence-classification head:
:func:`missing_head_tensors`.

The head's tensors are the parameters of the folder's ``AutoModelForSequenceClassification``
that lie outside its base model (``base_model_prefix``: ``classifier.weight``, ``classifier.bias``
for BERT; ``score.weight`` for a decoder), read from a model built on the ``meta`` device from
the folder's ``config.json`` (no weights are read or drawn). A head the weights lack would be
drawn at random on loading.
"""

from __future__ import annotations

from pathlib import Path

from .run_folder.files import SAFETENSORS, SAFETENSORS_INDEX, TORCH_WEIGHTS


def head_tensors(folder: Path) -> set[str]:
    """The names of the sequence-classification head's tensors of the model ``folder``'s
    ``config.json`` describes; a ValueError saying why where transformers cannot build that
    model."""
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    try:
        config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
        with torch.device("meta"):
            model = AutoModelForSequenceClassification.from_config(config)
    except (ValueError, KeyError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"its config.json names a model transformers cannot build ({first})") from None
    prefix = f"{model.base_model_prefix}."
    return {name for name in model.state_dict() if not name.startswith(prefix)}


def weight_names(folder: Path) -> set[str]:
    """The names of the tensors in ``folder``'s weights (``model.safetensors``, its sharded index,
    or ``pytorch_model.bin`` read onto the ``meta`` device; a ValueError where it cannot be)."""
    import json

    if (folder / SAFETENSORS).is_file():
        from safetensors import safe_open

        with safe_open(str(folder / SAFETENSORS), "numpy") as weights:
            return set(weights.keys())
    if (folder / SAFETENSORS_INDEX).is_file():
        return set(json.loads((folder / SAFETENSORS_INDEX).read_text(encoding="utf-8"))["weight_map"])
    import pickle

    import torch

    try:
        return set(torch.load(folder / TORCH_WEIGHTS, map_location="meta", weights_only=True))
    except (RuntimeError, pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise ValueError(f"{TORCH_WEIGHTS} cannot be read as torch weights (truncated or corrupt)") from exc


def missing_head_tensors(folder: Path) -> list[str]:
    """The head's tensors (:func:`head_tensors`) that ``folder``'s weights lack, sorted."""
    return sorted(head_tensors(folder) - weight_names(folder))

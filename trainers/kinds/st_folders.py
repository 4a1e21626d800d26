"""A sentence-transformers folder, as the bi-encoder and cross-encoder kinds read it: the model
type its ``config_sentence_transformers.json`` declares (:func:`st_model_type`) and the modules
its ``modules.json`` lists, each whole (:func:`check_sentence_transformers_modules`). Not a kind
itself (it declares no ``KIND``)."""

from __future__ import annotations

import json
from pathlib import Path

from semrel.metrics.errors import ParameterError

from ..run_folder.checks import check_transformer_folder
from ..run_folder.files import (
    CONFIG,
    SAFETENSORS,
    ST_CONFIG,
    ST_MODULES,
    TORCH_WEIGHTS,
    check_safetensors,
    read_json_object,
)
from . import kinds


def st_model_type(folder: Path, parameter: str, value) -> str:
    """The ``model_type`` of ``config_sentence_transformers.json`` (a SentenceTransformer when
    there is none, as sentence-transformers before v4 wrote it); a type no kind takes (each
    kind's ``st_model_type``) is a ParameterError."""
    said = read_json_object(folder / ST_CONFIG, parameter, value) if (folder / ST_CONFIG).is_file() else {}
    model_type = said.get("model_type", "SentenceTransformer")
    taken = [k.st_model_type for k in kinds().values() if getattr(k, "st_model_type", None)]
    if model_type not in taken:
        raise ParameterError(parameter, value, f"a sentence-transformers {model_type} ({ST_CONFIG}"
                             f"): semrel takes {' or '.join(f'a {t}' for t in taken)}")
    return model_type


def _modules(folder: Path, parameter: str, value) -> list[dict]:
    """The modules ``modules.json`` lists, each with a type and a path."""
    try:
        listed = json.loads((folder / ST_MODULES).read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ParameterError(parameter, value, f"{ST_MODULES} is not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ParameterError(parameter, value, f"{ST_MODULES} is not valid JSON (truncated or "
                             f"corrupt: {exc.msg}, line {exc.lineno} column {exc.colno})") from None
    if not isinstance(listed, list) or not listed or not all(
            isinstance(m, dict) and isinstance(m.get("type"), str) and isinstance(m.get("path"), str)
            for m in listed):
        raise ParameterError(parameter, value, f"{ST_MODULES} is not a list of modules with a type "
                             "and a path")
    return listed


def _module_config(where: Path, shown: str, kind: str, keys: tuple, parameter: str, value) -> dict:
    """A module folder's ``config.json``, holding one of ``keys`` (each of ``keys``' tuples)."""
    if not (where / CONFIG).is_file():
        raise ParameterError(parameter, value, f"{shown}{CONFIG} is missing: the {kind} module "
                             f"{ST_MODULES} names has no configuration")
    config = read_json_object(where / CONFIG, parameter, value, f"{shown}{CONFIG}")
    for needed in keys:
        if not any(key in config for key in needed):
            raise ParameterError(parameter, value, f"{shown}{CONFIG} gives no {' or '.join(needed)} "
                                 f"for its {kind} module")
    return config


def check_sentence_transformers_modules(folder: Path, parameter: str, value) -> None:
    """Each module ``modules.json`` lists is one sentence-transformers can load without drawing
    a weight: a type of sentence-transformers' own (semrel runs no code a model brings), a path
    inside ``folder``; a Transformer's folder a whole transformer folder, a Pooling's
    ``config.json`` giving its dimension, a Dense's its features and whole weights. A
    ParameterError on ``parameter`` naming the file and the module otherwise."""
    for module in _modules(folder, parameter, value):
        kind, rel = module["type"].rsplit(".", 1)[-1], module["path"]
        if not module["type"].startswith("sentence_transformers."):
            raise ParameterError(parameter, value, f"{ST_MODULES} names a module of type "
                                 f"{module['type']}, not one of sentence-transformers' own (semrel "
                                 "runs no code a model brings)")
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise ParameterError(parameter, value, f"{ST_MODULES} names {rel} for its {kind} module, "
                                 "a folder outside the model")
        where, shown = folder / rel, f"{rel}/" if rel else ""
        if kind in ("Transformer", "Pooling", "Dense") and not where.is_dir():
            raise ParameterError(parameter, value, f"{ST_MODULES} names {rel} for its {kind} module, "
                                 "a folder it lacks")
        if kind == "Transformer":
            try:
                check_transformer_folder(where, parameter)
            except ParameterError as exc:
                raise ParameterError(parameter, value, f"its {kind} module {rel} {exc.rule}" if rel
                                     else exc.rule) from None
        elif kind == "Pooling":
            _module_config(where, shown, kind, (("embedding_dimension", "word_embedding_dimension"),),
                           parameter, value)
        elif kind == "Dense":
            _module_config(where, shown, kind, (("in_features",), ("out_features",)), parameter, value)
            if (where / SAFETENSORS).is_file():
                check_safetensors(where / SAFETENSORS, parameter, value)
            elif not (where / TORCH_WEIGHTS).is_file():
                raise ParameterError(parameter, value, f"{rel} holds no weights ({SAFETENSORS} or "
                                     f"{TORCH_WEIGHTS}) for its {kind} module")



LEGACY_POOLING = {  # sentence-transformers' pooling_mode_* keys, in its order
    "pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean", "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean", "pooling_mode_lasttoken": "lasttoken"}


def sentence_transformers_pooling(config: dict) -> str:
    """The pooling a sentence-transformers ``Pooling`` config declares (``pooling_mode``, or its
    legacy ``pooling_mode_*`` flags; mean when none is set), several joined by ``+``."""
    mode = config.get("pooling_mode")
    if mode is None:
        mode = [name for key, name in LEGACY_POOLING.items() if config.get(key)] or "mean"
    return mode if isinstance(mode, str) else "+".join(map(str, mode))

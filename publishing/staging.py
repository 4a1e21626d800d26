"""Staged repo folders: what a push sends when a folder cannot go up as it is.

- card-only: ``build/hub/cards/<id>/`` is the repo of a dataset whose licence forbids
  redistributing its rows: a README whose YAML keeps the built card's metadata (licence,
  languages, tasks, size) but no ``configs``/``dataset_info`` (there is no data to point at), the
  built card's body and plots, and build-it-yourself instructions;
- models: ``build/hub/models/<name>/`` is a run folder of a model trained on a semrel dataset,
  whose card gets ``datasets: [<namespace>/<id>]`` -- the dataset repo the same namespace
  publishes -- which ``semrel fit`` cannot know when it writes the card.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
from pathlib import Path

from huggingface_hub import DatasetCard, DatasetCardData, ModelCard

from semrel.dataset_scripts.registry import get_spec, registered_id

from .cards import build_recipe
from .export import card_metadata

DATA_KEYS = ("configs", "dataset_info")
RUN_METRICS = "metrics.json"  # where `semrel fit` records the data ("<id>/<config>")


def stage_card_only(dataset_id: str, built: Path, dest: Path) -> Path:
    """Write the card-only repo folder of a dataset that may not be redistributed.

    The body is the built card's (statistics and plots, no rows) when the dataset was built,
    else one made from the builder's description; build-it-yourself instructions are appended
    unless the body already gives the build command.
    """
    spec = get_spec(dataset_id)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if (built / "README.md").is_file():
        card = DatasetCard.load(built / "README.md")
        body = card.text.strip()
        meta = {k: v for k, v in card.data.to_dict().items() if k not in DATA_KEYS}
        card_data = DatasetCardData(**meta)
        if (built / "images").is_dir():
            shutil.copytree(built / "images", dest / "images")
    else:
        body, card_data = _description(spec), card_metadata(spec)
    if f"semrel build --only {dataset_id}" not in body:
        body += "\n\n" + _build_yourself(spec)
    (dest / "README.md").write_text(f"---\n{card_data.to_yaml()}\n---\n\n{body}\n", encoding="utf-8")
    return dest


def _description(spec) -> str:
    b = spec.builder_class
    doc = (inspect.getmodule(b).__doc__ or "").strip()
    configs = "\n".join(f"- `{c.name}`: {c.description or ''}" for c in b.BUILDER_CONFIGS)
    return (f"# {getattr(b, 'PRETTY_NAME', spec.dataset_id)}\n\n{doc}\n\n"
            f"**Licence.** {b.LICENSE}\n\nHomepage: {b.HOMEPAGE}\n\n## Configs\n{configs}\n\n"
            f"## Citation\n```bibtex\n{b.CITATION}\n```")


def _build_yourself(spec) -> str:
    user = spec.user_data_configs
    needs = (f"\nConfigs {', '.join(f'`{c}`' for c in user)} need files the authors give to "
             f"each user: put them in DIR (the builder's error message names each file).\n"
             if user else "")
    return (f"## Build it yourself\n\nThis repository holds **no data**: the licence does not allow "
            f"redistributing it. Build it locally from the upstream files (sha256-verified) with "
            f"semrel:\n\n```bash\n{build_recipe(spec.dataset_id)}\n```\n{needs}")


def trained_on(folder: Path) -> str | None:
    """The semrel dataset id a model folder was trained on (its ``metrics.json`` ``data``,
    ``"<id>/<config>"``), or None for other folders and data."""
    metrics = Path(folder) / RUN_METRICS
    if not metrics.is_file():
        return None
    return registered_id(json.loads(metrics.read_text()).get("data"))


def stage_model(folder: Path, dest: Path, dataset_repo: str, ignore: tuple[str, ...]) -> Path:
    """The model repo folder of a run trained on a semrel dataset whose card names no dataset:
    the run's files (hard links where the file system allows, else copies; ``ignore`` patterns,
    e.g. checkpoints, stay out) with ``datasets: [<dataset_repo>]`` (``<namespace>/<id>``, see
    :func:`trained_on`) added to the card. The run folder itself is not changed."""
    names = (pattern.removesuffix("/*") for pattern in ignore)  # "checkpoints/*": the folder
    _linked_copy(folder, dest, ignore=shutil.ignore_patterns(*names))
    card = ModelCard.load(dest / "README.md")
    card.data.datasets = [dataset_repo]
    (dest / "README.md").unlink()  # a hard link to the run's card: write a new file instead
    card.save(dest / "README.md")
    return dest


def stage_space(folder: Path, dest: Path, repo_id: str, endpoint: str) -> Path:
    """The Space repo folder of a built Space: its files (hard links), with requirements.txt's
    ``./semrel-<version>-py3-none-any.whl`` line rewritten to
    ``semrel @ <endpoint>/spaces/<repo_id>/resolve/main/<wheel>``. The Hub installs a Space's
    requirements before it copies the repo's other files in, so a relative path to the wheel
    would not exist then; the URL of the wheel pushed with the Space does. The built folder
    (used by ``pip install -r requirements.txt && python app.py`` locally) is not changed."""
    _linked_copy(folder, dest)
    requirements = dest / "requirements.txt"
    lines = requirements.read_text(encoding="utf-8").splitlines()
    base = f"{endpoint.rstrip('/')}/spaces/{repo_id}/resolve/main"
    lines = [f"semrel @ {base}/{line[2:]}" if line.startswith("./") and line.endswith(".whl") else line
             for line in lines]
    requirements.unlink()  # a hard link to the built file: write a new one instead
    requirements.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


def _linked_copy(folder: Path, dest: Path, ignore=None) -> None:
    """``dest`` anew as a copy of ``folder`` made of hard links (a file to be changed there must be
    unlinked and written anew, or the original changes too)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(folder, dest, ignore=ignore, copy_function=_link_or_copy)


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links not allowed
        shutil.copy2(src, dst)
    return dst

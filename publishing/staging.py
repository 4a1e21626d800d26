"""Staged repo folders: what a push sends when a folder cannot go up as it is.

- card-only: ``build/hub/cards/<id>/`` is the repo of a dataset whose licence forbids
  redistributing its rows: a README whose YAML keeps the built card's metadata (licence,
  languages, tasks, size) but no ``configs``/``dataset_info`` (there is no data to point at), the
  built card's body and plots, and build-it-yourself instructions;
- models: ``build/hub/models/<name>/`` is what a run folder sends: its files less the gold labels
  of data that may not be redistributed and less the run's local path, with a card naming
  ``datasets: [<namespace>/<id>]`` -- the dataset repo the same namespace publishes -- which
  ``semrel fit`` cannot know when it writes the card (see :func:`stage_model`).
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
from pathlib import Path

from huggingface_hub import DatasetCard, DatasetCardData, ModelCard

from semrel.dataset_scripts.registry import get_spec, registered_id
from semrel.metrics.output_files import write_whole
from semrel.trainers.card import PATH_COMMENT
from semrel.trainers.run_folder import CARD, public_copy, run_data

from .cards import build_recipe
from .export import card_metadata

DATA_KEYS = ("configs", "dataset_info")
SNIPPET_PATH = re.compile(rf'^path = "[^"\n]*"  {re.escape(PATH_COMMENT)}$', re.M)


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
    return (f"# {spec.pretty_name}\n\n{doc}\n\n"
            f"**Licence.** {spec.terms}\n\nHomepage: {spec.homepage}\n\n## Configs\n{configs}\n\n"
            f"## Citation\n```bibtex\n{spec.citation}\n```")


def _build_yourself(spec) -> str:
    user = spec.user_data_configs
    needs = (f"\nConfigs {', '.join(f'`{c}`' for c in user)} need files the authors give to "
             f"each user: put them in DIR (the builder's error message names each file).\n"
             if user else "")
    return (f"## Build it yourself\n\nThis repository holds **no data**: the licence does not allow "
            f"redistributing it. Build it locally from the upstream files (sha256-verified) with "
            f"semrel:\n\n```bash\n{build_recipe(spec.dataset_id)}\n```\n{needs}")


def trained_on(folder: Path) -> str | None:
    """The semrel dataset id a model folder was trained on
    (:func:`~semrel.trainers.run_folder.run_data`), or None for other folders and data."""
    data = run_data(folder)
    return registered_id(data) if data else None


def labels_may_go(data: str | None) -> bool:
    """Whether gold labels of ``data`` may leave with a model: only those of a semrel dataset
    whose licence allows redistributing it (never those of a folder or other data we cannot judge)."""
    dataset_id = registered_id(data) if data else None
    return bool(dataset_id) and get_spec(dataset_id).redistributable


def stage_model(folder: Path, dest: Path, ignore: tuple[str, ...], *, repo_id: str | None = None,
                dataset_repo: str | None = None) -> dict[str, str]:
    """The model repo folder ``dest`` of the run folder ``folder``: its files (hard links where the
    file system allows, else copies; ``ignore`` patterns, e.g. checkpoints, stay out), with

    - its predictions without the gold labels unless the data may be redistributed
      (:func:`labels_may_go`), its figures without the run's local path
      (:func:`~semrel.trainers.run_folder.public_copy`);
    - the card naming ``datasets: [<dataset_repo>]`` when it names none (``<namespace>/<id>``,
      see :func:`trained_on`), and its usage snippet loading ``repo_id`` instead of the folder.

    Returns what was changed, by file. The run folder itself is not changed."""
    names = (pattern.removesuffix("/*") for pattern in ignore)  # "checkpoints/*": the folder
    _linked_copy(folder, dest, ignore=shutil.ignore_patterns(*names))
    data = run_data(folder)
    changed = public_copy(dest, labels_may_go=labels_may_go(data), data=data)
    if (dest / CARD).is_file():
        card = ModelCard.load(dest / CARD)
        notes = []
        if dataset_repo and not card.data.datasets:
            card.data.datasets = [dataset_repo]
            notes.append(f"datasets: [{dataset_repo}]")
        if repo_id and SNIPPET_PATH.search(card.text):
            card.text = SNIPPET_PATH.sub(f"from huggingface_hub import snapshot_download\n"
                                         f'path = snapshot_download("{repo_id}")  # this model, from the Hub',
                                         card.text, count=1)
            notes.append(f"its usage snippet loads {repo_id}")
        if notes:  # a new file in its place: the run's own may be hard-linked here
            write_whole(dest / CARD, str(card), CARD, error=_os_error)
            changed[CARD] = "; ".join(notes)
    return changed


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
    # a new file in its place: the old one is a hard link to the built file
    write_whole(requirements, "\n".join(lines) + "\n", requirements.name, error=_os_error)
    return dest


def _os_error(exc: OSError, kept: bool) -> OSError:
    """A staged file that cannot be written fails as the ``OSError`` it is (the push says so)."""
    return exc


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

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
import json
import os
import re
import shutil
from pathlib import Path

from huggingface_hub import DatasetCard, DatasetCardData, ModelCard

from semrel.dataset_scripts.registry import get_spec, registered_id

from .cards import build_recipe
from .export import card_metadata

DATA_KEYS = ("configs", "dataset_info")
RUN_METRICS = "metrics.json"  # where `semrel fit` records the data ("<id>/<config>")
PREDICTIONS = "eval_predictions.json"  # its scores on the evaluated split, with the gold labels
SNIPPET_PATH = re.compile(r'^path = "[^"\n]*"  # the folder of this model$', re.M)  # trainers.card


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


def run_data(folder: Path) -> str | None:
    """What a model folder was trained on, as its ``metrics.json`` records it (``data``:
    ``"<id>/<config>"``, a Hub id or a folder), else its ``eval_predictions.json``'s."""
    for name in (RUN_METRICS, PREDICTIONS):
        path = Path(folder) / name
        try:
            data = json.loads(path.read_text(encoding="utf-8")).get("data") if path.is_file() else None
        except (ValueError, AttributeError):  # not JSON, or not an object: the guard reports it
            data = None
        if isinstance(data, str) and data:
            return data
    return None


def trained_on(folder: Path) -> str | None:
    """The semrel dataset id a model folder was trained on (see :func:`run_data`), or None for
    other folders and data."""
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

    - ``eval_predictions.json`` without its ``labels`` (the gold references) unless the data may
      be redistributed (:func:`labels_may_go`): the predictions go, the references stay;
    - ``metrics.json`` without ``output_dir`` (the run's path on this machine);
    - the card naming ``datasets: [<dataset_repo>]`` when it names none (``<namespace>/<id>``,
      see :func:`trained_on`), and its usage snippet loading ``repo_id`` instead of the folder.

    Returns what was changed, by file. The run folder itself is not changed."""
    names = (pattern.removesuffix("/*") for pattern in ignore)  # "checkpoints/*": the folder
    _linked_copy(folder, dest, ignore=shutil.ignore_patterns(*names))
    changed, data = {}, run_data(folder)
    predictions = dest / PREDICTIONS
    if predictions.is_file() and not labels_may_go(data):
        record = _json_object(predictions)
        if record is not None and "labels" in record:
            del record["labels"]
            _rewrite(predictions, json.dumps(record))
            changed[PREDICTIONS] = (f"ids and predictions; the gold labels of {data or 'its data'} "
                                    "stay here (the data may not be redistributed)")
    metrics = dest / RUN_METRICS
    record = _json_object(metrics) if metrics.is_file() else None
    if record is not None and "output_dir" in record:
        del record["output_dir"]
        _rewrite(metrics, json.dumps(record, indent=2))
        changed[RUN_METRICS] = "without output_dir (the run's path on this machine)"
    if (dest / "README.md").is_file():
        card = ModelCard.load(dest / "README.md")
        notes = []
        if dataset_repo and not card.data.datasets:
            card.data.datasets = [dataset_repo]
            notes.append(f"datasets: [{dataset_repo}]")
        if repo_id and SNIPPET_PATH.search(card.text):
            card.text = SNIPPET_PATH.sub(f"from huggingface_hub import snapshot_download\n"
                                         f'path = snapshot_download("{repo_id}")  # this model, from the Hub',
                                         card.text, count=1)
            notes.append(f"its usage snippet loads {repo_id}")
        if notes:
            _rewrite(dest / "README.md", str(card))
            changed["README.md"] = "; ".join(notes)
    return changed


def _json_object(path: Path) -> dict | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):  # the guards report what is in it
        return None
    return record if isinstance(record, dict) else None


def _rewrite(path: Path, text: str) -> None:
    """Write ``path`` anew (it may be a hard link to the run's file, which must not change)."""
    path.unlink()
    path.write_text(text, encoding="utf-8")


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

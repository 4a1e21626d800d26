"""Staged repo folders: what a push sends when a folder cannot go up as it is.

- card-only: ``build/hub/cards/<id>/`` is the repo of a dataset whose licence forbids
  redistributing its rows: a README whose YAML keeps the built card's metadata (licence,
  languages, tasks, size) but no ``configs``/``dataset_info`` (there is no data to point at), the
  built card's body and plots, and build-it-yourself instructions;
- models: ``build/hub/models/<name>/`` is what a run or ensemble folder sends, decided by an
  allow-list of what a model repo needs (:func:`model_files`): the transformer, its tokenizer,
  the sentence-transformers files, semrel's encoder files, the card and ``metrics.json`` reduced
  to its figures (:data:`FIGURES`); every other file stays here, whatever it is called
  (predictions, CSVs, checkpoints, notes). The card names ``datasets: [<namespace>/<id>]`` -- the
  dataset repo the same namespace publishes -- which ``semrel fit`` cannot know when it writes
  the card (see :func:`stage_model`);
- dataset folders: ``build/hub/dataset-folders/<name>/`` is a dataset folder of ``semrel annotate
  dataset``, every file of it, its card's usage snippet loading the repo (:func:`stage_dataset_folder`).
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from huggingface_hub import DatasetCard, DatasetCardData, ModelCard

from semrel.dataset_scripts.registry import get_spec, registered_id
from semrel.metrics.output_files import write_whole
from semrel.trainers.card import PATH_COMMENT
from semrel.trainers.run_folder import CARD, ENSEMBLE, METRICS, run_data
from semrel.trainers.run_folder.files import members_inside, model_repo_files, read_tolerant
from semrel.trainers.run_folder.predictions import recorded_predictions

from .cards import build_recipe
from .export import card_metadata
from .guard import Recorded

DATA_KEYS = ("configs", "dataset_info")
FOLDER_SNIPPET = 'load_dataset("path/to/this/folder")'  # the usage line of semrel annotate dataset's card
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


# metrics.json's keys that go (figures, and the names that say what they measure); output_dir,
# the run's path, and any key not named here stay here
FIGURES = ("data", "eval_split", "score_range", "pearson", "pearson_ci", "spearman", "spearman_ci",
           "mse", "per_source", "per_language", "train_pairs", "train_seconds", "pairs_per_second",
           "epoch_seconds", "n_omitted_groups", "precision", "options", "selection")


@dataclass(frozen=True)
class StagedModel:
    """A staged model repo: ``changed`` (file -> how the staged copy differs from the run's)
    and ``kept``, every file of the run folder that stays here."""

    changed: dict[str, str]
    kept: tuple[str, ...]


def model_files(folder: Path) -> list[str]:
    """What a model push of ``folder`` sends (relative POSIX paths): for a run folder, the files
    a model repo needs (:func:`~semrel.trainers.run_folder.files.model_repo_files`: the
    transformer, tokenizer, sentence-transformers and semrel files it holds); for an ensemble
    folder, its ``semrel_ensemble.json``, its card and, of each member it names, the same files
    of that member's folder."""
    folder = Path(folder)
    if not (folder / ENSEMBLE).is_file():
        return model_repo_files(folder)
    return sorted({ENSEMBLE, *[CARD] * (folder / CARD).is_file(),
                   *(f"{m}/{f}" for m in members_inside(folder) if (folder / m).is_dir()
                     for f in model_repo_files(folder / m))})


def trained_on(folder: Path) -> str | None:
    """The semrel dataset id a model folder was trained on
    (:func:`~semrel.trainers.run_folder.run_data`; an ensemble: that of its first member that
    records one, the data every trained member shares), or None for other folders and data."""
    data = run_data(folder)
    if data is None and (Path(folder) / ENSEMBLE).is_file():
        data = next(filter(None, (run_data(Path(folder) / m) for m in members_inside(folder))), None)
    return registered_id(data) if data else None


def labels_may_go(data: str | None) -> bool:
    """Whether gold labels of ``data`` may leave with a model: only those of a semrel dataset
    whose licence allows redistributing it (never those of a folder or other data we cannot judge)."""
    dataset_id = registered_id(data) if data else None
    return bool(dataset_id) and get_spec(dataset_id).redistributable


def held_back(folder: Path) -> list[Recorded]:
    """What the run or ensemble folder ``folder`` records of data that may not be redistributed:
    the gold labels and sentences of each predictions file (``eval_predictions.json``,
    ``selection_predictions.json``, its members' too) whose data may not go
    (:func:`labels_may_go`), named ``<data>/<split>`` as the file records it."""
    found = []
    for record in recorded_predictions(folder):
        data, split = record.get("data"), record.get("split")
        if not isinstance(data, str) or labels_may_go(data):
            continue
        labels = record.get("labels") if isinstance(record.get("labels"), list) else []
        texts = [t for key in ("sentence1", "sentence2", "condition")
                 if isinstance(record.get(key), list) for t in record[key] if isinstance(t, str)]
        found.append(Recorded(f"{data}/{split}" if isinstance(split, str) and split else data,
                              tuple(float(v) for v in labels if isinstance(v, int | float)
                                    and not isinstance(v, bool)), frozenset(texts)))
    return found


def stage_model(folder: Path, dest: Path, *, repo_id: str | None = None,
                dataset_repo: str | None = None) -> StagedModel:
    """The model repo folder ``dest`` of the run or ensemble folder ``folder``: the files of
    :func:`model_files` (hard links where the file system allows, else copies), with

    - each ``metrics.json`` reduced to :data:`FIGURES` (no path of this machine, no rows);
    - the card naming ``datasets: [<dataset_repo>]`` when it names none (``<namespace>/<id>``,
      see :func:`trained_on`), and its usage snippet loading ``repo_id`` instead of the folder.

    Every other file stays here (``kept``). The run folder itself is not changed."""
    folder, dest = Path(folder), Path(dest)
    sent = model_files(folder)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for rel in sent:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(folder / rel, dest / rel)
    changed = {}
    for rel in [r for r in sent if PurePosixPath(r).name == METRICS]:
        record = read_tolerant(folder / rel)
        dropped = sorted(set(record or {}) - set(FIGURES))
        if record is None:
            (dest / rel).unlink()
        elif dropped:  # a new file in its place: the run's own may be hard-linked here
            figures = {k: record[k] for k in FIGURES if k in record}
            write_whole(dest / rel, json.dumps(figures, indent=2), rel, error=_os_error)
            changed[rel] = f"figures only; {', '.join(dropped)} stay{'s' * (len(dropped) == 1)} here"
    if (dest / CARD).is_file():
        card = ModelCard.load(dest / CARD)
        notes = []
        known = list(card.data.datasets or [])  # an ensemble's: its members' (a packaged model's too)
        if dataset_repo and dataset_repo not in known and (not known or (folder / ENSEMBLE).is_file()):
            card.data.datasets = [*known, dataset_repo]
            notes.append(f"datasets: [{', '.join(card.data.datasets)}]")
        if repo_id and SNIPPET_PATH.search(card.text):
            card.text = SNIPPET_PATH.sub(f"from huggingface_hub import snapshot_download\n"
                                         f'path = snapshot_download("{repo_id}")  # this model, from the Hub',
                                         card.text, count=1)
            notes.append(f"its usage snippet loads {repo_id}")
        if notes:
            write_whole(dest / CARD, str(card), CARD, error=_os_error)
            changed[CARD] = "; ".join(notes)
    staged = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}
    every = (p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return StagedModel(changed, tuple(sorted(set(every) - staged)))


def summary(kept, sent) -> str:
    """The files ``kept`` here in a line; a top-level folder none of whose files are ``sent``
    counts as one entry, ``name/ (n files)``."""
    sent_tops = {rel.split("/", 1)[0] for rel in sent if "/" in rel}
    parts, folders = [], {}
    for rel in kept:
        top = rel.split("/", 1)[0]
        if "/" in rel and top not in sent_tops:
            folders[top] = folders.get(top, 0) + 1
        else:
            parts.append(rel)
    parts += [f"{top}/ ({n} file{'s' * (n != 1)})" for top, n in folders.items()]
    return ", ".join(sorted(parts))


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


def stage_dataset_folder(folder: Path, dest: Path, *, repo_id: str | None = None) -> dict[str, str]:
    """The dataset repo folder ``dest`` of a dataset folder (``semrel annotate dataset``): every file
    (hard links), the card's usage line loading ``repo_id`` instead of a local folder
    (:data:`FOLDER_SNIPPET`). Returns file -> how the staged copy differs; the folder is not changed."""
    _linked_copy(folder, dest)
    card = dest / "README.md"
    text = card.read_text(encoding="utf-8")
    if not repo_id or FOLDER_SNIPPET not in text:
        return {}
    # a new file in its place: the old one is a hard link to the folder's card
    write_whole(card, text.replace(FOLDER_SNIPPET, f'load_dataset("{repo_id}")'), card.name, error=_os_error)
    return {card.name: f"its usage snippet loads {repo_id}"}


def _os_error(exc: OSError, kept: bool) -> OSError:
    """A staged file that cannot be written fails as the ``OSError`` it is (the push says so)."""
    return exc


def _linked_copy(folder: Path, dest: Path) -> None:
    """``dest`` anew as a copy of ``folder`` made of hard links (a file to be changed there must be
    unlinked and written anew, or the original changes too)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(folder, dest, copy_function=_link_or_copy)


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links not allowed
        shutil.copy2(src, dst)
    return dst

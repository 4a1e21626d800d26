"""Publishing to the Hub: dataset repos, metric Spaces and model repos — checked first, then pushed.

What a push sends (one repo and one commit per artefact; the repo mirrors the folder):

- a dataset that may be redistributed: ``build/hub/datasets/<id>/`` (Parquet, README card with
  configs and features, ``images/``), after :func:`~publishing.export.verify_folder` has
  rebuilt it from the upstream files and found it identical;
- a dataset that may not (every Source must allow it): **the card only** — a README whose YAML
  keeps licence, languages, task categories and tags but no ``configs`` (there is no data to
  point at), its plots, and build-it-yourself instructions — staged in ``build/hub/cards/<id>/``
  (:mod:`publishing.staging`);
- a dataset folder of ``semrel annotate dataset``: every file of it, staged in
  ``build/hub/dataset-folders/<name>/`` with its card's usage snippet loading the repo, to
  ``<namespace>/<folder name>`` (:mod:`publishing.dataset_folder`: what makes a folder one, and its checks);
- a metric: ``build/hub/spaces/<name>/`` (see :mod:`publishing.spaces`);
- a model folder written by ``semrel fit`` (or ``semrel ensemble``): what a model repo needs, by
  an allow-list (:func:`~publishing.staging.model_files`: weights, config, tokenizer,
  sentence-transformers and semrel files, the card, ``metrics.json`` reduced to its figures),
  staged in ``build/hub/models/<name>/`` (:func:`~publishing.staging.stage_model`); every other
  file (predictions, CSVs, checkpoints, notes) stays here, and the card's ``datasets:`` names the
  dataset's repo in the namespace.

Before anything is uploaded every artefact is checked (:func:`check`, which the dry run calls as
well) and a single problem stops the push: a repo id the Hub would refuse, a built dataset that
fails verification, a ``--dataset`` folder whose Parquet files do not read, that stock ``load_dataset``
does not load or whose annotator columns hold other than pseudonyms, a Space that would not run
standalone, a model folder without a card, a card-only folder that quotes a row of the data, a card
outside the Hub vocabulary (:mod:`publishing.hub_vocabulary`), anything that looks like a raw
Amazon Mechanical Turk WorkerId, an absolute path of this machine in any text or JSON file, or, in
a model repo, gold labels or sentences of data that may not be redistributed
(:mod:`publishing.guard`). Idempotency is the Hub client's: the preupload call returns each remote
file's oid, unchanged files are dropped from the commit and an empty commit is not made. The token
comes from the standard huggingface_hub sources (``HF_TOKEN``, ``hf auth login``) and is passed to
the client only — never printed or logged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import pyarrow.parquet as pq
from huggingface_hub import HfApi, ModelCard, constants, get_token
from huggingface_hub.utils import HFValidationError, filter_repo_objects, validate_repo_id

from semrel.dataset_scripts.registry import REGISTRY, get_spec
from semrel.trainers.run_folder import WEIGHT_FILES, run_data

from .dataset_folder import folder_problems, parquet_problems, refusal
from .export import data_files, fingerprint_problems, verify_folder
from .guard import (
    raw_worker_ids,
    scan_files,
    scan_gold_labels,
    scan_local_paths,
    scan_recorded,
    unreadable_parquet,
)
from .hub_vocabulary import check_card
from .spaces import check_space, metric_names
from .staging import (
    held_back,
    labels_may_go,
    stage_card_only,
    stage_dataset_folder,
    stage_model,
    stage_space,
    trained_on,
)

# Pair-schema text a card-only README must never quote (texts of >= 12 characters and >= 3 words:
# shorter phrase fragments, as in crowd-sts, occur in ordinary prose).
ROW_COLUMNS = ("sentence1", "sentence2", "condition")
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
WEIGHTS = WEIGHT_FILES  # a model repo holds one of these: the run folder's rule


class PublishError(RuntimeError):
    """A push refused before any upload, or stopped by the server (see :class:`PushFailed`)."""


class PushFailed(PublishError):
    """The server failed mid-push: what was done, what failed, what was not attempted."""

    def __init__(self, done: list[Pushed], failed: Artefact, pending: list[Artefact],
                 repo_id: str, cause: BaseException):
        self.done, self.failed, self.pending = done, failed, pending
        super().__init__(
            f"push of {repo_id} ({failed.kind}) failed: {type(cause).__name__}: {cause}\n"
            f"  its commit was not confirmed, so it is NOT reported as published.\n"
            f"  published before the error: {', '.join(p.repo_id for p in done) or 'none'}\n"
            f"  not attempted: {', '.join(a.name for a in pending) or 'none'}\n"
            "  Re-run the same command to resume: repos already up to date get no new commit and "
            "LFS files the server already holds are not sent again.")


@dataclass(frozen=True)
class Artefact:
    """One repo to publish: every file under ``folder`` goes to ``<namespace>/<name>``."""

    kind: str  # "dataset", "dataset card", "dataset folder", "space" or "model"
    name: str
    repo_type: str  # "dataset", "space" or "model"
    folder: Path
    note: str = ""
    changed: tuple[tuple[str, str], ...] = ()  # (file, how the staged copy differs from the original)
    kept: tuple[str, ...] = ()  # a model: the files of its run folder that stay here
    source: Path | None = None  # a model: its run (or ensemble) folder

    def files(self) -> list[str]:
        return sorted(p.relative_to(self.folder).as_posix() for p in self.folder.rglob("*") if p.is_file())


@dataclass(frozen=True)
class Pushed:
    artefact: Artefact
    repo_id: str
    commit: str
    changed: bool  # False: the repo already held exactly these files, no commit was made


def known_names() -> list[str]:
    return sorted(REGISTRY) + metric_names()


def plan(out: Path, names: Iterable[str], models: Iterable[Path] = (),
         namespace: str | None = None, *, folders: Iterable[Path] = ()) -> list[Artefact]:
    """The artefacts to push from the build folder ``out`` (``build/``): the datasets and metrics
    called ``names`` (see :func:`known_names`), the model folders ``models`` -- with a
    ``namespace``, a model trained on a semrel dataset whose card names no dataset is staged in
    ``out/hub/models/<name>`` with ``datasets: [<namespace>/<id>]`` (:func:`stage_model`) -- and
    the dataset folders ``folders`` (``semrel annotate dataset``), each to ``<namespace>/<its name>``."""
    names = list(names)
    unknown = sorted(set(names) - set(known_names()))
    if unknown:
        raise PublishError(f"unknown dataset or metric name(s) {unknown}; known: {known_names()}")
    hub = Path(out) / "hub"
    artefacts = []
    for dataset_id in [n for n in names if n in REGISTRY]:
        spec = get_spec(dataset_id)
        folder = hub / "datasets" / dataset_id
        if spec.redistributable:
            if not (folder / "README.md").is_file():
                raise PublishError(f"{dataset_id} is not built ({folder}): run `semrel build` first")
            artefacts.append(Artefact("dataset", dataset_id, "dataset", folder,
                                      "Parquet + card"))
        else:
            staged = stage_card_only(dataset_id, folder, hub / "cards" / dataset_id)
            artefacts.append(Artefact("dataset card", dataset_id, "dataset", staged,
                                      "card only: the licence forbids redistributing the data"))
    for name in [n for n in names if n not in REGISTRY]:
        folder = hub / "spaces" / name
        if not folder.is_dir():
            raise PublishError(f"metric {name} has no Space folder ({folder}): run `semrel build`")
        note = "metric Space (gradio)"
        if namespace:  # the Hub installs requirements before the wheel is in the repo: by URL
            folder = stage_space(folder, hub / "staged-spaces" / name, f"{namespace}/{name}",
                                 constants.ENDPOINT)
            note += " (requirements: the wheel by its URL in the repo)"
        artefacts.append(Artefact("space", name, "space", folder, note))
    for folder in map(Path, models):
        if not folder.is_dir():
            raise PublishError(f"--model {folder}: no such folder (a run folder of `semrel fit`)")
        if not REPO_NAME.match(folder.name):
            raise PublishError(f"model folder name {folder.name!r} is not a valid Hub repo name")
        dataset_id = trained_on(folder)
        dataset_repo = f"{namespace}/{dataset_id}" if namespace and dataset_id else None
        staged = hub / "models" / folder.name
        if staged.resolve() == folder.resolve():
            raise PublishError(f"--model {folder}: is where the push stages it; give the run folder")
        result = stage_model(folder, staged, dataset_repo=dataset_repo,
                             repo_id=f"{namespace}/{folder.name}" if namespace else None)
        note = "model + card (staged: " + (", ".join(result.changed) + " changed" if result.changed
                                           else "nothing changed") + ")"
        artefacts.append(Artefact("model", folder.name, "model", staged, note,
                                  changed=tuple(result.changed.items()), kept=result.kept,
                                  source=folder))
    artefacts += [_dataset_folder(Path(folder), hub, namespace) for folder in folders]
    repos = [a.name for a in artefacts if a.repo_type == "dataset"]
    if twice := next((n for n in repos if repos.count(n) > 1), None):
        raise PublishError(f"two datasets would go to one repo, {namespace or '<namespace>'}/{twice}: "
                           "rename a --dataset folder")
    return artefacts


def _dataset_folder(folder: Path, hub: Path, namespace: str | None) -> Artefact:
    """The artefact of a dataset folder, staged in ``hub/dataset-folders/<name>``; a folder that is
    none (:func:`~publishing.dataset_folder.refusal`) or whose name is no repo name is refused."""
    name = Path(os.path.abspath(folder)).name
    if why := refusal(folder):
        raise PublishError(f"--dataset {folder}: {why}")
    if why := _invalid(f"namespace/{name}"):
        raise PublishError(f"--dataset {folder}: {name!r} is no Hub repo name ({why}); rename the folder "
                           "(its name is the repo's)")
    staged = hub / "dataset-folders" / name
    if staged.resolve() == folder.resolve():
        raise PublishError(f"--dataset {folder}: is where the push stages it; give the dataset folder")
    changed = stage_dataset_folder(folder, staged, repo_id=f"{namespace}/{name}" if namespace else None)
    return Artefact("dataset folder", name, "dataset", staged, "Parquet + card (the folder, whole)",
                    changed=tuple(changed.items()), source=folder)


def _invalid(repo_id: str) -> str | None:
    """Why the Hub client refuses ``repo_id`` (``huggingface_hub.utils.validate_repo_id``, its
    words without the id), or None."""
    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        return str(exc).rsplit(": '", 1)[0]
    return None


def repo_id_problems(namespace: str, artefacts: list[Artefact]) -> list[str]:
    """Why ``<namespace>/<name>`` of each artefact is no repo id the Hub takes; empty when all are."""
    why = "it holds a '/'" if "/" in str(namespace) else _invalid(namespace)
    if why:
        return [f"namespace {namespace!r} is not a Hub user or organisation name ({why})"]
    return [f"{a.kind} {a.name}: {namespace}/{a.name} is not a Hub repo id ({why})"
            for a in artefacts if (why := _invalid(f"{namespace}/{a.name}"))]


def check(artefacts: list[Artefact], namespace: str | None = None, *, mirror=None,
          data_dir: dict | None = None, cache_dir=None, offline: bool = False) -> list[str]:
    """Raise :class:`PublishError` listing every problem; nothing may be uploaded until clean.
    The push and its dry run both call it: the same checks, and with ``namespace`` each repo id.

    ``offline`` (``push --dry-run``): nothing is downloaded, so without a local mirror the real
    WorkerIds are not known (the id pattern still is checked) and a redistributable dataset is not
    rebuilt from its upstream files; returns what was not checked so (empty otherwise)."""
    from semrel.dataset_scripts.sources import mirror_dirs

    problems = repo_id_problems(namespace, artefacts) if namespace is not None else []
    unchecked = []
    fetch = bool(mirror_dirs(mirror)) or not offline  # the upstream files can be had
    try:
        known = raw_worker_ids(mirror) if fetch else frozenset()
    except (OSError, ValueError) as exc:
        known = frozenset()
        problems.append(f"raw WorkerId guard: the crowd-sts upstream files could not be read to "
                        f"learn the real ids ({exc}); pass --mirror")
    if not fetch:
        unchecked.append("the real WorkerIds (their pattern was checked)")
    for a in artefacts:
        broken = parquet_problems(a.folder, a.files()) if a.kind == "dataset folder" else {}
        files = [rel for rel in a.files() if rel not in broken]  # each damaged file named once
        found = [f"{rel}: {why}" for rel, why in broken.items()]
        found += scan_files(a.folder, files, known) + scan_local_paths(a.folder, files)
        if a.kind in ("dataset", "dataset card", "dataset folder", "model") and (a.folder / "README.md").is_file():
            found += [p.replace(f"{a.folder / 'README.md'}", "README.md")
                      for p in check_card(a.folder / "README.md",
                                          "model" if a.kind == "model" else "dataset")]
        if a.kind == "dataset" and not fetch:  # each file's bytes against its name's sha256 still
            unchecked.append(f"dataset {a.name} against its upstream files")
            found += [p for config in data_files(a.folder) for p in fingerprint_problems(a.folder, config)]
        elif a.kind == "dataset":
            try:
                found += [f"verification failed: {p}" for p in verify_folder(
                    a.folder, a.name, mirror=mirror, data_dir=(data_dir or {}).get(a.name),
                    cache_dir=cache_dir)]
            except (OSError, ValueError) as exc:  # upstream file missing, bad rows, ...
                found.append(f"could not be verified against its upstream files: {exc}")
        elif a.kind == "dataset card":
            built = a.folder.parents[1] / "datasets" / a.name  # staged in <hub>/cards/<id>
            found += _card_only_problems(a, built)
        elif a.kind == "dataset folder":
            found += folder_problems(a.folder, files, load=not broken)
        elif a.kind == "space":
            found += check_space(a.folder)
        elif a.kind == "model":
            found += _model_problems(a)
        problems += [f"{a.kind} {a.name}: {p}" for p in found]
    if problems:
        raise PublishError("refusing to push, nothing was uploaded:\n  " + "\n  ".join(problems))
    return unchecked


def _card_only_problems(a: Artefact, built: Path) -> list[str]:
    problems = [f"{rel}: a card-only repo may hold only README.md and images/*.png"
                for rel in a.files() if rel != "README.md" and not
                (rel.startswith("images/") and rel.endswith(".png"))]
    card = (a.folder / "README.md").read_text(encoding="utf-8")
    texts = set()
    for path in built.rglob("*.parquet"):
        try:
            names = [c for c in ROW_COLUMNS if c in pq.read_schema(path).names]
            columns = pq.read_table(path, columns=names).columns
        except (OSError, ValueError) as exc:  # ArrowInvalid; a damaged footer: UnicodeDecodeError
            problems.append(f"{path}: {unreadable_parquet(exc)}")
            continue
        for column in columns:
            texts.update(column.to_pylist())
    quoted = sorted(t for t in texts if t and len(t) >= 12 and len(t.split()) >= 3 and t in card)
    if quoted:
        problems.append(f"README.md quotes {len(quoted)} sentence(s) of the data "
                        f"(e.g. {quoted[0][:30]!r}…)")
    return problems


def _model_problems(a: Artefact) -> list[str]:
    """A staged model repo: a card with metadata, weights, and nothing of the data that may not
    be redistributed that its run folder (``a.source``) records (:func:`~staging.held_back`):
    no gold labels under a gold key, named by what the file records or else by the run's data,
    and no run of its labels or sentence anywhere."""
    folder = a.folder
    if not folder.is_dir():
        return [f"{folder} is not a folder"]
    if not (folder / "README.md").is_file():
        return [f"{folder}/README.md (the model card) is missing"]
    problems = []
    if not ModelCard.load(folder / "README.md").data.to_dict():
        problems.append("README.md has no YAML metadata (licence, datasets, metrics, ...)")
    files = a.files()
    if not list(filter_repo_objects(files, allow_patterns=list(WEIGHTS))):
        problems.append(f"no weights file ({', '.join(WEIGHTS)}) in {folder}")
    source = a.source or folder
    recorded = held_back(source)
    data = run_data(source)
    names = ([data or "data that is no semrel dataset"] if not labels_may_go(data)
             else list(dict.fromkeys(r.name for r in recorded)))
    problems += scan_gold_labels(folder, files, " or ".join(names) or None, labels_may_go)
    return problems + scan_recorded(folder, files, recorded)


def resolve_token() -> str:
    """The token from the standard sources (``HF_TOKEN``, the ``hf auth login`` file)."""
    token = get_token()
    if not token:
        raise PublishError("no Hugging Face token: set HF_TOKEN or run `hf auth login` "
                           "(a token with write access to the namespace); nothing was uploaded")
    return token


def push(artefacts: list[Artefact], namespace: str, *, private: bool = False,
         token: str | None = None, say: Callable[[str], None] = print) -> list[Pushed]:
    """Create each repo (if needed) and commit its folder; returns what was pushed.

    :func:`check` them first. A server error stops the push with :class:`PushFailed`;
    re-running resumes.
    """
    if invalid := repo_id_problems(namespace, artefacts):
        raise PublishError("refusing to push, nothing was uploaded:\n  " + "\n  ".join(invalid))
    api = HfApi(token=token or resolve_token())
    message = f"semrel {version('semrel')}"
    done: list[Pushed] = []
    for i, a in enumerate(artefacts):
        repo_id = f"{namespace}/{a.name}"
        try:
            api.create_repo(repo_id, repo_type=a.repo_type, private=private, exist_ok=True,
                            space_sdk="gradio" if a.repo_type == "space" else None)
            before = api.repo_info(repo_id, repo_type=a.repo_type).sha
            info = api.upload_folder(repo_id=repo_id, repo_type=a.repo_type, folder_path=a.folder,
                                     commit_message=f"{message}: {a.kind} {a.name}",
                                     delete_patterns="*")
        except Exception as exc:  # network and server errors come in many types
            raise PushFailed(done, a, artefacts[i + 1:], repo_id, exc) from exc
        done.append(Pushed(a, repo_id, info.oid, changed=info.oid != before))
        say(f"{'pushed   ' if done[-1].changed else 'unchanged'} {a.repo_type:<8} {repo_id:<40} "
            f"{len(a.files()):>3} file(s)  {a.note}"
            + (f"  commit {info.oid[:10]}" if done[-1].changed else "  (no new commit)"))
    return done

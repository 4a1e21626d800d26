"""A Hub model id ``namespace/name[@revision]`` as a folder of the Hugging Face cache:
:func:`fetch_model`.

``huggingface_hub.snapshot_download`` fetches the files a model needs (:func:`model_patterns`:
config, weights -- safetensors where a folder of the repo has them, else ``pytorch_model.bin``
--, tokenizer, sentence-transformers module files, semrel's run and ensemble files, the card)
from ``HF_ENDPOINT`` into the cache (``HF_HUB_CACHE``, else ``$HF_HOME/hub``), and the folder
comes back with the commit sha the revision resolved to. With ``HF_HUB_OFFLINE=1`` only the
cache is read; a Hub that does not answer falls back to the cache too (saying so). Every failure
is a :class:`~semrel.metrics.errors.ParameterError` in one line: offline with nothing cached, no
such repo, no such revision, a gated repo, a timeout (``HF_HUB_ETAG_TIMEOUT``,
``HF_HUB_DOWNLOAD_TIMEOUT``), a refused connection.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path, PurePosixPath

from semrel.dataset_scripts.pairs import HUB_ID
from semrel.metrics.errors import ParameterError

from .run_folder.files import (
    CARD,
    CONFIG,
    ENCODER_CONFIG,
    ENSEMBLE,
    METRICS,
    PREDICTIONS,
    SAFETENSORS_INDEX,
    SELECTION,
    SENTENCE_TRANSFORMERS,
    ST_MODULES,
    TOKENIZER,
    TORCH_WEIGHTS,
)

log = logging.getLogger(__name__)
NAMED = (CONFIG, SAFETENSORS_INDEX, *TOKENIZER, *SENTENCE_TRANSFORMERS, ENCODER_CONFIG, METRICS,
         PREDICTIONS, SELECTION, ENSEMBLE, CARD)  # in any folder of the repo
TORCH = ("pytorch_model*.bin", f"{TORCH_WEIGHTS}.index.json")  # torch weights, whole or sharded


def hub_model_id(spec: str) -> tuple[str, str | None] | None:
    """``(repo id, revision or None)`` of ``namespace/name[@revision]`` (a repo id as
    ``huggingface_hub.utils.validate_repo_id`` takes it), else None.

    >>> hub_model_id("sentence-transformers/all-MiniLM-L6-v2@c9745ed1")
    ('sentence-transformers/all-MiniLM-L6-v2', 'c9745ed1')
    >>> hub_model_id("runs/bi"), hub_model_id("a/b/c"), hub_model_id("ns/name@"), hub_model_id("./bi")
    (('runs/bi', None), None, None, None)
    """
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    repo_id, at, revision = spec.partition("@")
    if not HUB_ID.match(repo_id) or (at and not revision.strip()) or revision != revision.strip():
        return None
    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        return None
    return repo_id, revision or None


def model_patterns(files) -> tuple[list[str], list[str]]:
    """``(allow_patterns, ignore_patterns)`` for a repo of ``files`` (relative paths): the files
    of :data:`NAMED` in any folder and weights, where a folder holds safetensors weights
    (``model*.safetensors``) its torch weights ignored."""
    allow = [*NAMED, *(f"*/{name}" for name in NAMED), "*.safetensors",
             *TORCH, *(f"*/{name}" for name in TORCH)]
    folders = {PurePosixPath(f).parent for f in files
               if PurePosixPath(f).name.startswith("model") and f.endswith(".safetensors")}
    ignore = [name if folder == PurePosixPath(".") else f"{folder}/{name}"
              for folder in sorted(folders) for name in TORCH]
    return allow, ignore


def model_files(files) -> list[str]:
    """Those of ``files`` (a repo's relative paths) that a download takes (:func:`model_patterns`),
    filtered by huggingface_hub's own rule."""
    from huggingface_hub.utils import filter_repo_objects

    allow, ignore = model_patterns(files)
    return list(filter_repo_objects(files, allow_patterns=allow, ignore_patterns=ignore))


def _cached_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The cache's snapshot folder of ``repo_id`` at ``revision`` (a branch or tag through its
    ``refs/`` file), or None; the cache layout of huggingface_hub's docs."""
    from huggingface_hub import constants

    storage = Path(constants.HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}"
    ref = storage / "refs" / (revision or "main")
    commit = ref.read_text().strip() if ref.is_file() else revision
    snapshot = storage / "snapshots" / commit if commit else None
    return snapshot if snapshot is not None and snapshot.is_dir() else None


def _download(repo_id: str, revision: str | None, files, **options) -> Path:
    from huggingface_hub import constants, snapshot_download

    allow, ignore = model_patterns(files)
    return Path(snapshot_download(repo_id, revision=revision, allow_patterns=allow,
                                  ignore_patterns=ignore,
                                  etag_timeout=constants.HF_HUB_ETAG_TIMEOUT, **options))


def _from_cache(repo_id: str, revision: str | None) -> Path:
    """The cached snapshot, checked whole against the tree listing cached beside it; a
    LocalEntryNotFoundError (IncompleteSnapshotError: files missing) otherwise."""
    snapshot = _cached_snapshot(repo_id, revision)
    files = [p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*")] if snapshot else []
    return _download(repo_id, revision, files, local_files_only=True)


def _unreachable(exc: BaseException) -> BaseException | None:
    """The timeout or failed connection behind ``exc`` (itself or a cause), or None."""
    import httpx2

    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (httpx2.TimeoutException, httpx2.NetworkError)):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _no_answer(cause: BaseException, where: str) -> str:
    import httpx2
    from huggingface_hub import constants

    endpoint = f"{constants.ENDPOINT} (HF_ENDPOINT)"
    if isinstance(cause, httpx2.TimeoutException):
        said = (f"{endpoint} did not answer within HF_HUB_ETAG_TIMEOUT="
                f"{constants.HF_HUB_ETAG_TIMEOUT} s (a download within HF_HUB_DOWNLOAD_TIMEOUT="
                f"{constants.HF_HUB_DOWNLOAD_TIMEOUT} s)")
    else:
        said = f"cannot connect to {endpoint}: {_first_line(cause)}"
    return f"{said}, and the Hugging Face cache holds no snapshot of {where}"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _missing(exc: BaseException) -> str:
    """What an incomplete cached snapshot lacks (``2 file(s) are missing (a, b)``), or ""."""
    found = re.search(r"\d+ file\(s\) are missing \([^)]*\)", str(exc))
    return f" ({found[0]})" if found else ""


def fetch_model(repo_id: str, revision: str | None = None, *, parameter: str = "model",
                value=None) -> tuple[Path, str]:
    """``(snapshot folder, commit sha)`` of the model repo ``repo_id`` at ``revision`` (a
    branch, tag or commit; default ``main``) in the Hugging Face cache, downloaded first when
    online; a ParameterError on ``parameter`` (showing ``value``) in one line otherwise."""
    from huggingface_hub import HfApi, constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    value = value or repo_id + (f"@{revision}" if revision else "")
    where = f"model repo {repo_id} at {revision or 'main'}"
    endpoint = constants.ENDPOINT
    try:
        if constants.is_offline_mode():
            folder = _from_cache(repo_id, revision)
        else:
            try:
                info = HfApi().model_info(repo_id, revision=revision,
                                          timeout=constants.HF_HUB_ETAG_TIMEOUT)
                files = [s.rfilename for s in info.siblings or []]
                if not model_files(files):
                    raise ParameterError(parameter, value, f"{where} holds no file of a model "
                                         f"({CONFIG}, {ST_MODULES}, {ENCODER_CONFIG}, {ENSEMBLE}, "
                                         "weights, ...)")
                if info.gated:  # access shows on a file: ask for one before the download starts
                    get_hf_file_metadata(hf_hub_url(repo_id, model_files(files)[0], revision=info.sha),
                                         timeout=constants.HF_HUB_ETAG_TIMEOUT)
                folder = _download(repo_id, revision, files)
            except Exception as exc:
                cause = _unreachable(exc)
                if cause is None:
                    raise
                try:
                    folder = _from_cache(repo_id, revision)
                except LocalEntryNotFoundError as missing:
                    raise ParameterError(parameter, value, _no_answer(cause, where)
                                         + _missing(missing)) from None
                log.warning("%s: the Hub did not answer (%s); using the cached snapshot %s",
                            value, _first_line(cause), folder.name)
    except LocalEntryNotFoundError as exc:
        if not constants.is_offline_mode():
            raise ParameterError(parameter, value, f"{where} could not be fetched from "
                                 f"{endpoint}: {_first_line(exc)}") from None
        raise ParameterError(parameter, value, f"no such folder, and HF_HUB_OFFLINE is set while "
                             f"the Hugging Face cache ({constants.HF_HUB_CACHE}) holds no whole "
                             f"snapshot of {where}{_missing(exc)}: fetch it once online "
                             "(HF_HUB_OFFLINE unset)") from None
    except GatedRepoError:
        raise ParameterError(parameter, value, f"{where} is gated: accept its terms on "
                             f"{endpoint}/{repo_id} and set HF_TOKEN to a token of that account"
                             ) from None
    except RevisionNotFoundError:
        raise ParameterError(parameter, value, f"model repo {repo_id} has no revision "
                             f"{revision} (a branch, tag or commit) on {endpoint}") from None
    except RepositoryNotFoundError:
        raise ParameterError(parameter, value, f"no such folder, and {endpoint} has no model repo "
                             f"{repo_id} (or it is private: set HF_TOKEN to a token that may "
                             "read it)") from None
    except HfHubHTTPError as exc:
        raise ParameterError(parameter, value, f"{endpoint} refused {where}: {_first_line(exc)}"
                             ) from None
    return folder, folder.name

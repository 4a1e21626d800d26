"""The builder base shared by every semrel dataset.

A :class:`SemrelBuilder` is a ``datasets.GeneratorBasedBuilder`` that knows its upstream
:class:`~dataset_scripts.sources.Source` files, its native ``SCORE_RANGE`` and what its
``DatasetInfo`` carries (``CITATION``, ``HOMEPAGE``, ``LICENSE``), and takes a ``mirror`` keyword
(see :func:`dataset_scripts.sources.fetch`); the card's metadata is the package's ``spec.py``
(:class:`~dataset_scripts.spec.DatasetSpec`). Subclasses parse and validate in
``_split_generators`` and yield rows keyed by a stable id in ``_generate_examples``.

User-supplied input (files in ``data_dir``, a password, a model folder) is part of the cache key:
a subclass lists it in :meth:`SemrelBuilder.user_inputs` (size + sha256 of each file, a
fingerprint of a secret's effect), reads the files through :meth:`SemrelBuilder.user_bytes` (which
refuses a file changed since it was fingerprinted), and reports what it omitted or could not do
with :meth:`SemrelBuilder.note`: notes are stored beside the cached data and warned on every
load, cached or not. A build from test fixtures (:func:`dataset_scripts.sources.fixture_key`)
is keyed apart from one of the real files.

The upstream files are checked on every load, cached or not: a build records each file it
fetched (``semrel_sources.json`` beside the cached data), and a load served from the cache fetches
them again from the mirror (located and sha256-checked, by ``stat`` alone while a file is unchanged:
:func:`dataset_scripts.sources.file_signature`), so a missing or broken mirror is the same error
with a warm cache as with a cold one. Without a mirror (downloads) the cached build is used as is:
its files were checked when downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import datasets

from .errors import DataValidationError
from .sources import Source, fetch, fixture_key, mirror_dirs, recording, remember

NOTES_FILE = "semrel_notes.json"
SOURCES_FILE = "semrel_sources.json"


def bytes_digest(data: bytes) -> str:
    """``"<size>:<sha256>"`` of some bytes: the cache key of a user file."""
    return f"{len(data)}:{hashlib.sha256(data).hexdigest()}"


def file_digest(path: str | os.PathLike) -> str:
    """:func:`bytes_digest` of the file at ``path``, or ``"absent"``."""
    path = Path(path)
    return bytes_digest(path.read_bytes()) if path.is_file() else "absent"


@dataclass
class SemrelConfig(datasets.BuilderConfig):
    """A config; ``needs_user_data`` marks configs built only from a user-supplied ``data_dir``,
    ``local_only`` those whose rows never leave the local ``datasets`` cache (an export writes
    their card, never their rows: C-STS's decrypted release)."""

    needs_user_data: bool = False
    local_only: bool = False


class SemrelBuilder(datasets.GeneratorBasedBuilder):
    BUILDER_CONFIG_CLASS = SemrelConfig
    DATASET_ID: str = ""
    SOURCES: tuple[Source, ...] = ()
    SCORE_RANGE: tuple[float, float] = (0.0, 1.0)
    CITATION: str = ""
    HOMEPAGE: str = ""
    LICENSE: str = ""

    def __init__(self, *args, mirror=None, **kwargs):
        self.mirror = mirror
        if kwargs.get("data_dir") is not None:
            kwargs["data_dir"] = os.path.expanduser(os.fspath(kwargs["data_dir"]))
        options = {k: v for k, v in kwargs.items() if k not in _BUILDER_KWARGS}
        self._user_key = self.user_inputs(kwargs.get("config_name") or self.DEFAULT_CONFIG_NAME,
                                          kwargs.get("data_dir"), options)
        key = {**self._user_key, **fixture_key(mirror)}
        if key:
            material = json.dumps([kwargs.get("hash"), sorted(key.items())])
            kwargs["hash"] = hashlib.sha256(material.encode()).hexdigest()[:16]
        self._notes: list[str] = []
        super().__init__(*args, **kwargs)

    def user_inputs(self, config_name: str, data_dir: str | None, options: dict) -> dict[str, str]:
        """What the user supplies to ``config_name``, for the cache key: ``{file path: digest}``
        (:func:`file_digest`, ``"absent"`` included) plus fingerprints of secrets' effects (never
        the secret). Default: nothing (the upstream files are checksummed)."""
        return {}

    def user_bytes(self, path: str | os.PathLike) -> bytes:
        """The bytes of a user file listed by :meth:`user_inputs`, refused if it changed since."""
        data = Path(path).read_bytes()
        if self._user_key.get(str(path)) != bytes_digest(data):
            raise DataValidationError(path, None, "the file changed while the dataset was being "
                                      "built", "load again")
        return data

    def note(self, message: str) -> None:
        """Record something the user must hear on every load of this build (omitted rows...)."""
        self._notes.append(message)

    def _download_and_prepare(self, dl_manager, verification_mode, **prepare_split_kwargs):
        self._notes = []
        with recording() as fetched:
            super()._download_and_prepare(dl_manager, verification_mode, **prepare_split_kwargs)
        # _output_dir is the build's temporary folder here: notes and sources are cached with the data
        Path(self._output_dir, NOTES_FILE).write_text(json.dumps(self._notes), encoding="utf-8")
        Path(self._output_dir, SOURCES_FILE).write_text(json.dumps(fetched), encoding="utf-8")
        self._built_now = True

    def download_and_prepare(self, *args, **kwargs):
        self._built_now = False
        super().download_and_prepare(*args, **kwargs)
        if not self._built_now:
            self._check_cached_sources(*args, **kwargs)
        path = Path(self._output_dir, NOTES_FILE)
        for message in json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []:
            warnings.warn(message, UserWarning, stacklevel=3)

    def _check_cached_sources(self, *args, **kwargs) -> None:
        """Fetch again, from the mirror, every upstream file the cached build was made of (see
        the module docstring); a cache without that record is built again."""
        if not mirror_dirs(self.mirror):
            return
        path = Path(self._output_dir, SOURCES_FILE)
        if not path.is_file():
            super().download_and_prepare(*args, **{**kwargs, "download_mode": "force_redownload"})
            return
        records = json.loads(path.read_text(encoding="utf-8"))
        remember(records)
        for record in records:
            fetch(Source(**record["source"]), mirror=self.mirror)

    @classmethod
    def redistributable(cls) -> bool:
        """Whether the data may be republished: every source must allow it."""
        return bool(cls.SOURCES) and all(s.redistributable for s in cls.SOURCES)

    def fetch(self, source: Source, dl_manager=None) -> str:
        return fetch(source, dl_manager=dl_manager, mirror=self.mirror)


# keywords of datasets.DatasetBuilder.__init__ (the rest are config options)
_BUILDER_KWARGS = {"cache_dir", "dataset_name", "config_name", "hash", "base_path", "info",
                   "features", "token", "repo_id", "data_files", "data_dir", "storage_options",
                   "writer_batch_size"}

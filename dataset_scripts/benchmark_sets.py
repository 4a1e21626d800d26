"""Every labelled evaluation set of the suite, for ``semrel benchmark`` (and peers such as MTEB
tasks): :func:`benchmark_sets` lists each (dataset, config, split[, subset]) of the table
:data:`BENCHMARK`, and :meth:`BenchmarkSet.load` gives its rows.

* STR-2021: all 5,500 pairs (``default``/``train``) and each source among them;
* SemRel-2024: per language, ``validation`` (upstream "dev") and ``test``;
* crowd-sts: the pair means (``pairs``) and each filtered config, ``train`` and ``test``;
* Czech News STS: the free test (with its annotations, for the MSE lower bound);
* C-STS: ``train`` and ``validation`` of the open re-annotation (``reannotated``, from the
  mirror), and of the original release where the user supplied it (``data_dir``).

A set that cannot be scored says why in ``skip`` (user data not given) or, found on loading,
by :class:`NoLabels` (SemRel-2024's Spanish test scores were never published; English test
labels are held back from the mirror); a split with some rows unlabelled is an error naming
them, never silently cut.

    >>> sets = benchmark_sets()
    >>> [s.name for s in sets if s.dataset == "czech-news-sts"]
    ['czech-news-sts/free/test']
    >>> next(s for s in sets if s.subset == "SNLI").name
    'str-2021/default/train/SNLI'
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from semrel.metrics.errors import ParameterError

if TYPE_CHECKING:
    import datasets

    from .pairs import PairData


@dataclass(frozen=True)
class Benchmarked:
    """What of one dataset is benchmarked: ``configs`` and their ``splits`` (a callable of
    the config where they differ); ``subset_column``: a column whose values are scored apart
    too (each value a subset, beside all rows); ``user_data_configs``: the configs read from
    user-supplied data (the others from the mirror)."""

    configs: tuple[str, ...]
    splits: tuple[str, ...] | object
    subset_column: str | None = None
    subsets: tuple[str, ...] = ()
    user_data_configs: tuple[str, ...] = ()

    def splits_of(self, config: str) -> tuple[str, ...]:
        return self.splits(config) if callable(self.splits) else self.splits


def _semrel_2024_splits(config: str) -> tuple[str, ...]:
    from .semrel_2024.builder import plan

    return tuple(split for split in plan(config) if split != "train")


def _table() -> dict[str, Benchmarked]:
    from .crowd_sts.builder import FILTERED
    from .semrel_2024.files import LANGUAGES
    from .str_2021.builder import SOURCES_IN_DATA

    return {
        "str-2021": Benchmarked(("default",), ("train",), "source", SOURCES_IN_DATA),
        "semrel-2024": Benchmarked(tuple(LANGUAGES), _semrel_2024_splits),
        "crowd-sts": Benchmarked(("pairs", *(f"pairs-filtered-{s}" for s in FILTERED)),
                                 ("train", "test")),
        "czech-news-sts": Benchmarked(("free",), ("test",)),
        "c-sts": Benchmarked(("reannotated", "default"), ("train", "validation"),
                             user_data_configs=("default",)),
    }


BENCHMARK_DATASETS = ("str-2021", "semrel-2024", "crowd-sts", "czech-news-sts", "c-sts")
# why a split has no gold scores, where that is known; the rest say "no scores in this split"
UNLABELLED = {
    ("semrel-2024", "esp", "test"): "Spanish test scores were never published",
    ("semrel-2024", "eng", "test"): "the labelled English test file (Track A/eng/"
                                    "eng_test_with_labels.csv) is held back from the mirror",
}


class NoLabels(ValueError):
    """A benchmark set whose split holds no gold scores (the reason in the message)."""


@dataclass(frozen=True)
class BenchmarkSet:
    """One labelled evaluation set: ``dataset`` (registry id), ``config``, ``split``, and
    ``subset`` (a value of ``subset_column``; None: every row); its native ``score_range``,
    ``languages`` (BCP-47 tags), ``skip`` (why it cannot be scored, None if it can) and the
    options :meth:`load` passes to :func:`~semrel.dataset_scripts.pairs.load_pairs`."""

    dataset: str
    config: str
    split: str
    score_range: tuple[float, float]
    languages: tuple[str, ...]
    subset: str | None = None
    subset_column: str | None = None
    skip: str | None = None
    load_options: tuple[tuple[str, object], ...] = field(default=(), compare=False, repr=False)

    @property
    def name(self) -> str:
        """``dataset/config/split[/subset]``: unique within :func:`benchmark_sets`."""
        return "/".join([self.dataset, self.config, self.split] + ([self.subset] if self.subset else []))

    def load(self) -> datasets.Dataset:
        """The set's rows (every column of the split; only the subset's rows), all with a gold
        score; :class:`NoLabels` for a split without scores, a ValueError naming the rows for
        a split with some missing."""
        import numpy as np

        rows = _pair_data(self.dataset, self.config, self.load_options).splits[self.split]
        if self.subset is not None:
            values = np.asarray(rows[self.subset_column], dtype=object)
            rows = rows.select(np.flatnonzero(values == self.subset))
        missing = [i for i, s in enumerate(rows["score"]) if s is None or s != s]
        if len(missing) == len(rows):
            reason = UNLABELLED.get((self.dataset, self.config, self.split),
                                    "the split holds no gold scores")
            raise NoLabels(f"{self.name}: no labels ({reason})")
        if missing:
            raise ValueError(f"{self.name}: {len(missing)} of {len(rows)} rows have no gold score "
                             f"(first: row {missing[0]}); a benchmark set is labelled whole")
        return rows


@lru_cache(maxsize=64)
def _pair_data(dataset: str, config: str, options: tuple) -> PairData:
    """One load per (dataset, config, options) in a process: the sets of a config share it."""
    from .pairs import load_pairs

    return load_pairs(dataset, config, **dict(options))


def benchmark_sets(mirror=None, *, data_dirs: dict[str, str] | None = None, cache_dir=None,
                   only: tuple[str, ...] | None = None, password: str | None = None
                   ) -> list[BenchmarkSet]:
    """Every benchmark set of :data:`BENCHMARK_DATASETS` (``only``: these dataset ids), in
    table order; ``mirror`` and ``cache_dir`` as :func:`~semrel.dataset_scripts.load` takes
    them, ``data_dirs`` the user-supplied data per dataset id (C-STS; its ``password``, else
    ``$CSTS_PASSWORD``). Sets of user-data datasets without their data carry a ``skip``."""
    from .registry import REGISTRY

    table = _table()
    data_dirs = dict(data_dirs or {})
    chosen = BENCHMARK_DATASETS if only is None else tuple(only)
    for name in chosen:
        if name not in table:
            raise ParameterError("only", name, f"is not a benchmarked dataset "
                                 f"({', '.join(BENCHMARK_DATASETS)})")
    for name in data_dirs:
        if name not in table or not table[name].user_data_configs:
            raise ParameterError("data_dirs", name, "takes no user-supplied data (only "
                                 f"{', '.join(n for n, b in table.items() if b.user_data_configs)})")
    sets = []
    for dataset in chosen:
        spec, what = REGISTRY[dataset], table[dataset]
        options = {"mirror": None if mirror is None else str(mirror),
                   "cache_dir": None if cache_dir is None else str(cache_dir)}
        for config in what.configs:
            config_options, skip = dict(options), None
            if config in what.user_data_configs:
                if dataset in data_dirs:
                    config_options["data_dir"] = str(data_dirs[dataset])
                    if dataset == "c-sts" and (password or os.environ.get("CSTS_PASSWORD")):
                        config_options["password"] = password or os.environ["CSTS_PASSWORD"]
                else:
                    skip = f"{dataset}/{config} needs user-supplied data (--data-dir {dataset}=DIR)"
            frozen = tuple(sorted((k, v) for k, v in config_options.items() if v is not None))
            languages = spec.languages_of(config)
            for split in what.splits_of(config):
                common = {"score_range": tuple(spec.score_range), "languages": languages,
                          "skip": skip, "load_options": frozen}
                sets.append(BenchmarkSet(dataset, config, split, **common))
                sets += [BenchmarkSet(dataset, config, split, subset=subset,
                                      subset_column=what.subset_column, **common)
                         for subset in what.subsets]
    return sets


def select_sets(only=None, **options) -> list[BenchmarkSet]:
    """:func:`benchmark_sets` (``options``), only those ``only`` names: each value a dataset id,
    the start of set names (``semrel-2024/eng``: its validation and test) or a dataset folder
    (:func:`folder_sets`); a value that names none is a ParameterError."""
    if not only:
        return benchmark_sets(**options)
    folders = [value for value in only if _is_dataset_folder(value)]
    only = [value for value in only if value not in folders]
    found = [s for folder in folders for s in folder_sets(folder, cache_dir=options.get("cache_dir"))]
    if not only:
        return found
    datasets = tuple(dict.fromkeys(value.split("/")[0] for value in only))
    sets = benchmark_sets(only=datasets, **options)
    for value in only:
        if not any(s.name == value or s.name.startswith(value.rstrip("/") + "/") for s in sets):
            raise ParameterError("only", value, f"names no benchmark set (e.g. {sets[0].name})")
    return found + [s for s in sets if any(s.name == v or s.name.startswith(v.rstrip("/") + "/") for v in only)]


def _is_dataset_folder(value: str) -> bool:
    from .registry import REGISTRY

    return value not in REGISTRY and Path(value).expanduser().is_dir()


def folder_sets(folder: str, *, cache_dir=None) -> list[BenchmarkSet]:
    """Every (config, split) of a Hub-layout dataset folder (Parquet + README ``configs:``, as
    ``semrel annotate dataset`` and ``semrel build`` write them) as benchmark sets: the score range
    and languages its card records (:func:`~semrel.dataset_scripts.pairs.load_pairs`' rules)."""
    from .pairs import load_pairs

    data = load_pairs(folder, cache_dir=None if cache_dir is None else str(cache_dir))
    options = (("cache_dir", str(cache_dir)),) if cache_dir is not None else ()
    return [BenchmarkSet(folder, data.config or "default", split, data.score_range, data.language,
                         load_options=options) for split in data.splits]

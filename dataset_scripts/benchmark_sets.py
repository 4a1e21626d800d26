"""Every labelled evaluation set of the suite, for ``semrel benchmark`` (and peers such as MTEB
tasks): each dataset's spec declares what it offers (:class:`~semrel.dataset_scripts.spec.Benchmarked`:
its (config, split) sets, subsets, the sets known to hold no labels); :func:`benchmark_sets` lists
them for every registered dataset that declares any, and :meth:`BenchmarkSet.load` gives their rows.

A set that cannot be scored says why in ``skip`` (user data not given) or, found on loading,
by :class:`NoLabels` (with the reason the spec gives); a split with some rows unlabelled is an
error naming them, never silently cut.

    >>> sets = benchmark_sets()
    >>> len({s.name for s in sets}) == len(sets), {s.dataset for s in sets} == set(benchmarked_datasets())
    (True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from semrel.metrics.errors import ParameterError

if TYPE_CHECKING:
    import datasets

    from .pairs import PairData
    from .spec import DatasetSpec


def benchmarked_datasets() -> tuple[str, ...]:
    """The id of every registered dataset whose spec declares benchmark sets, in the specs' ``order``."""
    from .registry import REGISTRY

    return tuple(dataset for _, dataset in sorted((spec.benchmark.order, dataset)
                                                  for dataset, spec in REGISTRY.items() if spec.benchmark))


def _user_data_configs(spec: DatasetSpec) -> set[str]:
    """The benchmarked configs of ``spec`` read from user-supplied data."""
    return {config for config, _ in spec.benchmark.sets} & set(spec.user_data_configs)


class NoLabels(ValueError):
    """A benchmark set whose split holds no gold scores (the reason in the message)."""


@dataclass(frozen=True)
class BenchmarkSet:
    """One labelled evaluation set: ``dataset`` (registry id), ``config``, ``split``, and
    ``subset`` (a value of ``subset_column``; None: every row); its native ``score_range``,
    ``languages`` (BCP-47 tags), ``skip`` (why it cannot be scored, None if it can), the
    options :meth:`load` passes to :func:`~semrel.dataset_scripts.pairs.load_pairs`, whether its
    pairs carry a condition, and why its split holds no gold scores where the spec says."""

    dataset: str
    config: str
    split: str
    score_range: tuple[float, float]
    languages: tuple[str, ...]
    subset: str | None = None
    subset_column: str | None = None
    skip: str | None = None
    load_options: tuple[tuple[str, object], ...] = field(default=(), compare=False, repr=False)
    conditional: bool = False
    unlabelled: str | None = field(default=None, compare=False, repr=False)

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
            reason = self.unlabelled or "the split holds no gold scores"
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
    """Every benchmark set of :func:`benchmarked_datasets` (``only``: these dataset ids), in
    that order; ``mirror`` and ``cache_dir`` as :func:`~semrel.dataset_scripts.load` takes
    them, ``data_dirs`` the user-supplied data per dataset id (with ``password`` where its builder
    takes one; else the builder reads its own environment variable). Sets of user-data configs
    without their data carry a ``skip``."""
    from .registry import REGISTRY

    offered = benchmarked_datasets()
    data_dirs = dict(data_dirs or {})
    chosen = offered if only is None else tuple(only)
    for name in chosen:
        if name not in offered:
            raise ParameterError("only", name, f"is not a benchmarked dataset ({', '.join(offered)})")
    takers = [name for name in offered if _user_data_configs(REGISTRY[name])]
    for name in data_dirs:
        if name not in takers:
            raise ParameterError("data_dirs", name, f"takes no user-supplied data (only {', '.join(takers)})")
    sets = []
    for dataset in chosen:
        spec = REGISTRY[dataset]
        what, user_data = spec.benchmark, _user_data_configs(spec)
        options = {"mirror": None if mirror is None else str(mirror),
                   "cache_dir": None if cache_dir is None else str(cache_dir)}
        for config, split in what.sets:
            config_options, skip = dict(options), None
            if config in user_data:
                if dataset in data_dirs:
                    config_options["data_dir"] = str(data_dirs[dataset])
                    if password and spec.takes_password:
                        config_options["password"] = password
                else:
                    skip = f"{dataset}/{config} needs user-supplied data (--data-dir {dataset}=DIR)"
            common = {"score_range": tuple(spec.score_range), "languages": spec.languages_of(config), "skip": skip,
                      "load_options": tuple(sorted((k, v) for k, v in config_options.items() if v is not None)),
                      "conditional": what.conditional, "unlabelled": what.why_unlabelled(config, split)}
            sets.append(BenchmarkSet(dataset, config, split, **common))
            sets += [BenchmarkSet(dataset, config, split, subset=subset, subset_column=what.subset_column, **common)
                     for subset in what.subsets]
    return sets


def select_sets(only=None, **options) -> list[BenchmarkSet]:
    """:func:`benchmark_sets` (``options``), only those ``only`` names: each value a dataset id,
    the start of set names (``<id>/<config>``: that config's sets) or a dataset folder
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

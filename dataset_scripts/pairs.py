"""A dataset argument as loaded pairs: whatever names the data (a registry id, a folder, a Hub
dataset id, a ``datasets.DatasetDict``) becomes :class:`PairData`, its splits in the shared pair
schema (:mod:`~semrel.dataset_scripts.schema`) with their native score range and provenance.

:func:`load_pairs` resolves the argument in this order: a registry id (its spec gives the score
range), a ``DatasetDict.save_to_disk`` folder, a Hub-layout folder (Parquet + README
``configs:``, as ``semrel build`` exports), a Hub dataset id ``namespace/name``; the last two
load with stock ``datasets.load_dataset`` and take the score range their card records. Errors
are :class:`~semrel.metrics.errors.ParameterError` naming what was tried.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from semrel.metrics.errors import MissingPathError, ParameterError

from .schema import check_score_range

if TYPE_CHECKING:
    import datasets

HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")  # namespace/name


@dataclass(frozen=True)
class PairData:
    """A loaded pair dataset: its splits, native score range and provenance for the card
    (``name``: what records call it; ``config``: its config, where it has one; ``citation``: the
    data's BibTeX; ``hub_id``: its Hub dataset id where it has one)."""

    splits: datasets.DatasetDict
    score_range: tuple[float, float]
    name: str
    citation: str = ""
    language: tuple[str, ...] = ()
    hub_id: str | None = None
    config: str | None = None


@dataclass(frozen=True)
class _Source:
    """Where a dataset argument points: ``kind`` registry | disk (``save_to_disk``) | folder
    (Hub layout) | hub; its declared configs and card (folder, hub) when it has them."""

    kind: str
    where: str
    configs: tuple[str, ...] = ()
    card: object = None


def _card_configs(card) -> tuple[str, ...]:
    configs = (card.data.get("configs") or []) if card else []
    return tuple(c["config_name"] for c in configs)


def _resolve(dataset: str) -> _Source:
    """What ``dataset`` names, tried in this order: a registry id, a folder (``save_to_disk``
    or Hub layout), a Hub dataset id ``namespace/name``; a ParameterError naming what was tried
    otherwise."""
    from huggingface_hub import DatasetCard
    from huggingface_hub.errors import RemoteEntryNotFoundError

    from .registry import REGISTRY

    if dataset in REGISTRY:
        return _Source("registry", dataset, tuple(REGISTRY[dataset].configs))
    path = Path(dataset).expanduser()
    tried = f"not a registry id ({', '.join(sorted(REGISTRY))})"
    if path.is_dir():
        if (path / "dataset_dict.json").is_file():
            return _Source("disk", str(path))
        if (path / "state.json").is_file():
            raise ParameterError("dataset", dataset, "is a save_to_disk folder of one Dataset; "
                                 "a DatasetDict (with a train split) is needed")
        card = DatasetCard.load(path / "README.md") if (path / "README.md").is_file() else None
        return _Source("folder", str(path), _card_configs(card), card)
    if path.exists():
        raise ParameterError("dataset", dataset, f"{tried}, and a file, not a folder")
    if not HUB_ID.match(dataset):
        raise ParameterError("dataset", dataset, f"{tried}, no folder, and not a Hub dataset id "
                             "(namespace/name)")
    try:
        card = DatasetCard.load(dataset, repo_type="dataset")
    except RemoteEntryNotFoundError:  # a Hub dataset without a card
        card = None
    except Exception as exc:  # offline, unknown repo, no access: say what was tried
        raise ParameterError("dataset", dataset, f"{tried}, no folder, and the Hub dataset could "
                             f"not be read ({_first_line(exc)})") from None
    return _Source("hub", dataset, _card_configs(card), card)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def dataset_configs(dataset: str) -> tuple[str, ...]:
    """The configs ``dataset`` declares (registry spec or dataset card); empty when it declares
    none (a ``save_to_disk`` folder, a folder or Hub dataset without ``configs:``)."""
    return _resolve(dataset).configs


def _recorded_range(card, score_range, where: str) -> tuple[float, float]:
    """The score range a dataset card records (``score_range: [lo, hi]``), else the given one."""
    recorded = card.data.get("score_range") if card else None
    if recorded is None:
        if score_range is None:
            raise ParameterError("score_range", None, f"must be given: {where} records no score "
                                 "range (score_range: [lo, hi] in its card)")
        return check_score_range(score_range)
    recorded = check_score_range(recorded)
    if score_range is not None and check_score_range(score_range) != recorded:
        raise ParameterError("score_range", list(score_range), f"differs from the score range "
                             f"{list(recorded)} that {where} records; leave it out")
    return recorded


def _card_citation(card) -> str:
    match = re.search(r"```bibtex\n(.*?)```", card.text, re.S) if card else None
    return match[1].strip() if match else ""


def load_pairs(dataset, config: str = "default", *, score_range=None, mirror=None,
               data_dir=None, cache_dir=None, **builder_kwargs) -> PairData:
    """``dataset`` as :class:`PairData`, whatever form it takes:

    * a registry id (``str-2021``, ``c-sts``, ...): ``dataset_scripts.load`` with ``mirror``,
      ``data_dir``, ``cache_dir`` and builder options (``password``); its own score range;
    * a ``DatasetDict.save_to_disk`` folder, or a ``datasets.DatasetDict``: ``score_range``
      needed, no configs;
    * a Hub-layout folder (data files + README.md with YAML ``configs:``, as ``semrel build``
      exports) or a Hub dataset id ``namespace/name``: stock ``datasets.load_dataset(dataset,
      config)``; the score range its card records (``score_range: [lo, hi]``), else
      ``score_range``.

    A ``score_range`` that contradicts the data's own is an error; so are registry-only
    options given for other data. Errors name what was tried.
    """
    if data_dir is not None and not Path(data_dir).expanduser().is_dir():
        raise MissingPathError("data_dir", str(data_dir), "no such folder")
    import datasets

    if isinstance(dataset, datasets.DatasetDict):
        _registry_only(None, mirror=mirror, data_dir=data_dir, **builder_kwargs)
        first = next(iter(dataset.values()), None)
        name = (first.info.dataset_name if first is not None else None) or "DatasetDict"
        return PairData(dataset, _no_configs(config, score_range, "a DatasetDict"),
                        name if config == "default" else f"{name}/{config}")
    dataset = str(dataset)
    source = _resolve(dataset)
    if source.kind == "registry":
        return _registry_pairs(dataset, config, score_range, mirror=mirror, data_dir=data_dir,
                               cache_dir=cache_dir, **builder_kwargs)
    _registry_only(dataset, mirror=mirror, data_dir=data_dir, **builder_kwargs)
    if source.kind == "disk":
        return PairData(datasets.load_from_disk(source.where),
                        _no_configs(config, score_range, "a save_to_disk folder"), source.where)
    if source.configs and config not in source.configs:
        raise ParameterError("config", config, f"must be a config of {dataset}: "
                             f"{', '.join(source.configs)}")
    lo_hi = _recorded_range(source.card, score_range, dataset)
    name = config if source.configs or config != "default" else None
    try:
        splits = datasets.load_dataset(source.where, name, cache_dir=cache_dir)
    except Exception as exc:
        what = "folder" if source.kind == "folder" else "Hub dataset"
        raise ParameterError("dataset", dataset, f"is a {what} that datasets.load_dataset cannot "
                             f"read ({_first_line(exc)})") from None
    language = source.card.data.get("language") if source.card else None
    return PairData(splits, lo_hi, f"{dataset}/{config}", _card_citation(source.card),
                    tuple([language] if isinstance(language, str) else language or ()),
                    dataset if source.kind == "hub" else None, config)


def _no_configs(config: str, score_range, what: str) -> tuple[float, float]:
    if config != "default":
        raise ParameterError("config", config, f"must be 'default': {what} has no configs")
    if score_range is None:
        raise ParameterError("score_range", None, f"must be given for {what} (its native score "
                             "range, e.g. (0, 5))")
    return check_score_range(score_range)


def _registry_only(dataset, **options) -> None:
    """Registry-only options given for other data: an error naming the first one."""
    for name, value in options.items():
        if value is not None:
            raise ParameterError(name, value, "is for registry datasets only; "
                                 f"{dataset or 'a DatasetDict'} is not one")


def _registry_pairs(dataset, config, score_range, **load_kwargs) -> PairData:
    from . import load
    from .registry import REGISTRY

    spec = REGISTRY[dataset]
    if config not in spec.configs:
        raise ParameterError("config", config, f"must be a config of {dataset}: "
                             f"{', '.join(spec.configs)}")
    if score_range is not None and check_score_range(score_range) != tuple(spec.score_range):
        raise ParameterError("score_range", list(score_range), f"differs from the score range "
                             f"{list(spec.score_range)} that {dataset} declares; leave it out")
    splits = load(dataset, config, **load_kwargs)
    first = next(iter(splits.values()), None)  # a config may cite more than the dataset (C-STS's re-annotation)
    citation = (first.info.citation if first is not None else "") or spec.citation
    return PairData(splits, spec.score_range, f"{dataset}/{config}", citation,
                    spec.languages_of(config), spec.hub_id, config)

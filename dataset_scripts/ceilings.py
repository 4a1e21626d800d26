"""The human ceiling of a labelled split: what a perfect system can expect against gold scores that
are a finite mean of noisy judgements, and the average single annotator scored like a model.

:func:`human_ceiling` answers for any dataset, config and split through the hook its spec names
(:attr:`~semrel.dataset_scripts.spec.DatasetSpec.ceiling`); "not available" (``value`` None, the
reason in ``note``) where no raw annotations exist, never an invented number. The definition and
its estimation are :mod:`semrel.metrics.ceiling`'s; each dataset's hook reads its raw annotations
through the dataset package's own readers.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from semrel.metrics.ceiling import CeilingResult, fraction_of_ceiling
from semrel.metrics.errors import DataValidationError, ParameterError

STATISTICS = ("spearman", "pearson")


@dataclass(frozen=True)
class HumanCeiling:
    """``value``: the expected Spearman correlation of a perfect system with the gold scores, √R
    (None: not available); ``interval``: its 95% interval where it can be bootstrapped;
    ``single_annotator``: the average single annotator's Spearman correlation with the mean of the
    other annotators, scored like a model (None: not available); ``method``: how it was computed,
    in words; ``note``: why a value is missing, or what to know about it.

    Beside them: the same for Pearson (``pearson``, ``pearson_interval``,
    ``single_annotator_pearson``), the interval of the single annotator (``*_interval``), the
    gold's reliability R and the split-half correlation it comes from (Spearman), the items and
    judgements behind it, and ``source`` (the files it was computed from, or the publication)."""

    value: float | None
    interval: tuple[float, float] | None = None
    single_annotator: float | None = None
    method: str = ""
    note: str = ""
    pearson: float | None = None
    pearson_interval: tuple[float, float] | None = None
    single_annotator_interval: tuple[float, float] | None = None
    single_annotator_pearson: float | None = None
    single_annotator_pearson_interval: tuple[float, float] | None = None
    reliability: float | None = None  # R of the gold (Spearman), ceiling = √R
    split_half: float | None = None  # the split-half Spearman R comes from (published SHR)
    n_items: int | None = None  # gold items the ceiling is for
    n_annotations: int | None = None  # judgements behind those items
    source: str = ""

    @property
    def available(self) -> bool:
        return self.value is not None

    def fraction(self, score: float, statistic: str = "spearman") -> float | None:
        """``score`` (a model's ``statistic``, "spearman" or "pearson") as a fraction of this
        ceiling (:func:`semrel.metrics.ceiling.fraction_of_ceiling`); None where the ceiling of that
        statistic is not available."""
        if statistic not in STATISTICS:
            raise ParameterError("statistic", statistic, f"must be one of {', '.join(STATISTICS)}")
        ceiling = self.value if statistic == "spearman" else self.pearson
        return None if ceiling is None else fraction_of_ceiling(score, ceiling)

    def as_dict(self) -> dict:
        """JSON-ready: every field (tuples as lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def not_available(note: str, method: str = "not available") -> HumanCeiling:
    """A ceiling that cannot be given, and why (``note`` starts with "not available")."""
    return HumanCeiling(None, method=method, note=note if note.startswith("not available") else
                        f"not available: {note}")


def computed(ceiling: Callable[[], CeilingResult], single: Callable[[], dict] | None = None, *, method: str,
             note: str, source: str) -> HumanCeiling:
    """A :class:`HumanCeiling` from :mod:`semrel.metrics.ceiling`: ``ceiling()`` gives its result and
    ``single()``, for ratings, the average single annotator (``{"pearson": Estimate, "spearman":
    Estimate}``). Raw annotations that give no ceiling (halves that disagree, too few items: a
    :class:`DataValidationError`) answer "not available" with the reason, never a number."""
    span = lambda interval: (interval.low, interval.high)  # noqa: E731
    try:
        result = ceiling()
    except DataValidationError as err:
        return not_available(f"its raw annotations give no ceiling: {err.rule} ({err.detail})", method)
    try:
        estimates = single() if single else None
    except DataValidationError as err:
        estimates, note = None, f"{note}; no single annotator: {err.rule} ({err.detail})"
    pick = lambda name, value: getattr(estimates[name], value) if estimates else None  # noqa: E731
    return HumanCeiling(
        result.spearman.value, span(result.spearman.interval), pick("spearman", "value"), method=method, note=note,
        pearson=result.pearson.value, pearson_interval=span(result.pearson.interval),
        single_annotator_interval=span(pick("spearman", "interval")) if estimates else None,
        single_annotator_pearson=pick("pearson", "value"),
        single_annotator_pearson_interval=span(pick("pearson", "interval")) if estimates else None,
        reliability=result.spearman.reliability, split_half=result.spearman.split_half,
        n_items=result.n_items, n_annotations=result.n_judgements, source=source)


def human_ceiling(dataset_id: str, config: str, split: str, *, subset: str | None = None,
                  mirror=None) -> HumanCeiling:
    """The :class:`HumanCeiling` of ``dataset_id``/``config``/``split`` (``subset``: a part of the
    split, such as an STR-2021 source, where the dataset's hook knows one); ``dataset_id`` may be a
    dataset folder (:func:`folder_ceiling`).

    >>> c = human_ceiling("c-sts", "default", "validation")
    >>> c.value is None, c.note.startswith("not available: C-STS")
    (True, True)
    """
    from .registry import REGISTRY, get_spec

    if dataset_id not in REGISTRY and Path(dataset_id).is_dir():
        return folder_ceiling(Path(dataset_id), config, split, subset=subset)
    spec = get_spec(dataset_id)
    if config not in spec.configs:
        raise ParameterError("config", config, f"is no config of {dataset_id} (it has {', '.join(spec.configs)})")
    if spec.ceiling is None:
        return not_available(f"{spec.pretty_name} holds one gold score per pair and no individual judgements "
                             "(its spec names no ceiling)")
    return pkgutil.resolve_name(spec.ceiling)(config, split, subset=subset, mirror=mirror)


def check_split(dataset_id: str, split: str, splits: tuple[str, ...]) -> None:
    """``split`` must be one of ``splits`` (a :class:`ParameterError` naming them otherwise)."""
    if split not in splits:
        raise ParameterError("split", split, f"is no split of {dataset_id} here (it has {', '.join(splits)})")


def check_no_subset(dataset_id: str, subset: str | None) -> None:
    if subset is not None:
        raise ParameterError("subset", subset, f"{dataset_id} has no subsets for a ceiling")


FOLDER_METHOD = "√R of the split-half Spearman r its card records (BWS counting; R = Spearman–Brown of r)"


def folder_ceiling(folder: Path, config: str, split: str, *, subset: str | None = None) -> HumanCeiling:
    """The ceiling of a dataset folder whose card records ``semrel_reliability`` (as ``semrel annotate
    dataset`` writes it: the SHR of its own annotations, R, √R and its interval); "not available"
    for a folder whose card records none, and for a subset (the figure is the whole folder's)."""
    from huggingface_hub import DatasetCard

    check_no_subset(str(folder), subset)
    card = DatasetCard.load(folder / "README.md") if (folder / "README.md").is_file() else None
    figures = card.data.get("semrel_reliability") if card else None
    if not isinstance(figures, dict) or figures.get("ceiling") is None:
        return not_available(f"{folder.name} records no reliability of its annotations in its card "
                             "(semrel_reliability, as semrel annotate dataset writes it)")
    interval = figures.get("ceiling_interval")
    return HumanCeiling(
        float(figures["ceiling"]), tuple(interval) if interval else None, method=FOLDER_METHOD,
        note=f"the card's split-half r = {figures['split_half']} over {figures.get('trials')} splits, of the "
             f"folder's own annotations; the figure is the whole folder's (config {config}, split {split})",
        reliability=figures.get("reliability"), split_half=figures.get("split_half"),
        n_annotations=figures.get("annotations"), source=f"{folder.name}/README.md")

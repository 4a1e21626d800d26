"""Every dataset of the suite, its configs and its native score range."""

from __future__ import annotations

from dataclasses import dataclass

from .base import SemrelBuilder
from .c_sts import CSts
from .crowd_sts import CrowdSts
from .czech_news_sts import CzechNewsSts
from .semrel_2024 import SemRel2024
from .str_2021 import Str2021


@dataclass(frozen=True)
class DatasetSpec:
    builder_class: type[SemrelBuilder]

    @property
    def dataset_id(self) -> str:
        return self.builder_class.DATASET_ID

    @property
    def score_range(self) -> tuple[float, float]:
        return self.builder_class.SCORE_RANGE

    @property
    def configs(self) -> list[str]:
        return [c.name for c in self.builder_class.BUILDER_CONFIGS]

    @property
    def user_data_configs(self) -> list[str]:
        return [c.name for c in self.builder_class.BUILDER_CONFIGS if c.needs_user_data]

    @property
    def redistributable(self) -> bool:
        return self.builder_class.redistributable()


REGISTRY: dict[str, DatasetSpec] = {
    spec.dataset_id: spec
    for spec in (
        DatasetSpec(Str2021),
        DatasetSpec(CSts),
        DatasetSpec(CrowdSts),
        DatasetSpec(CzechNewsSts),
        DatasetSpec(SemRel2024),
    )
}


def get_spec(dataset_id: str) -> DatasetSpec:
    try:
        return REGISTRY[dataset_id]
    except KeyError:
        raise KeyError(f"unknown dataset {dataset_id!r}; known: {', '.join(sorted(REGISTRY))}") from None


def registered_id(data_name: str | None) -> str | None:
    """The dataset id in a loaded data name ``"<id>/<config>"`` (``PairData.name``, a run's
    ``metrics.json`` ``data``) when that id is registered here; None for anything else (a local
    folder, a dataset semrel does not build)."""
    dataset_id = str(data_name or "").split("/")[0]
    return dataset_id if dataset_id in REGISTRY else None

"""Export built datasets to the Hub layout (Parquet + README with YAML ``configs:``) and verify them.

Layout of ``<out>/datasets/<id>/``: ``<config>/<split>-00000-of-00001.parquet``, ``images/*.png``
and ``README.md`` whose front matter lists every config's data files and features, so that
``datasets.load_dataset(folder, config)`` returns exactly the rows of ``dataset_scripts.load``.
"""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import datasets
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from . import load
from .registry import get_spec


@dataclass
class BuildResult:
    dataset_id: str
    folder: Path
    rows: dict[str, dict[str, int]] = field(default_factory=dict)  # config -> split -> rows
    skipped: dict[str, str] = field(default_factory=dict)  # config -> reason


def _card_module(builder_class):
    return importlib.import_module(builder_class.__module__.rsplit(".", 1)[0] + ".card")


def build_dataset(dataset_id: str, out_root: Path, *, mirror=None, data_dir=None,
                  cache_dir=None) -> BuildResult:
    """Build every available config of ``dataset_id`` into ``out_root/datasets/<id>``.

    Configs that need user-supplied data are skipped (and reported) when ``data_dir`` is None
    or lacks their files.
    """
    spec = get_spec(dataset_id)
    folder = Path(out_root) / "datasets" / dataset_id
    if folder.exists():
        shutil.rmtree(folder)
    result = BuildResult(dataset_id, folder)
    built = {}
    for config in spec.configs:
        if config in spec.user_data_configs and data_dir is None:
            result.skipped[config] = "needs user-supplied files (--data-dir)"
            continue
        try:
            built[config] = load(dataset_id, config, mirror=mirror, data_dir=data_dir,
                                 cache_dir=cache_dir)
        except FileNotFoundError as exc:
            if config not in spec.user_data_configs:
                raise
            result.skipped[config] = str(exc)
    if not built:
        return result
    for config, splits in built.items():
        for split, ds in splits.items():
            path = folder / config / f"{split}-00000-of-00001.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            ds.to_parquet(str(path))
        result.rows[config] = {split: len(ds) for split, ds in splits.items()}
    body = _card_module(spec.builder_class).card_body(built, folder / "images")
    (folder / "README.md").write_text(str(dataset_card(spec, built, body)), encoding="utf-8")
    return result


def dataset_card(spec, built: dict, body: str) -> DatasetCard:
    """README with metadata: licence, languages, task categories, configs and features."""
    b = spec.builder_class
    card_data = DatasetCardData(
        pretty_name=getattr(b, "PRETTY_NAME", spec.dataset_id),
        license=getattr(b, "CARD_LICENSE", "other"),
        language=getattr(b, "LANGUAGES", ["en"]),
        task_categories=getattr(b, "TASK_CATEGORIES", ["sentence-similarity"]),
        tags=["semantic-textual-similarity", "semrel"],
    )
    default = next(iter(built))
    MetadataConfigs({
        config: {
            "data_files": [{"split": split, "path": f"{config}/{split}-*.parquet"}
                           for split in splits],
            **({"default": True} if config == default else {}),
        }
        for config, splits in built.items()
    }).to_dataset_card_data(card_data)
    DatasetInfosDict({
        config: DatasetInfo(features=next(iter(splits.values())).features)
        for config, splits in built.items()
    }).to_dataset_card_data(card_data)
    return DatasetCard(f"---\n{card_data.to_yaml()}\n---\n\n{body}")


def verify_folder(folder: Path, dataset_id: str, *, mirror=None, data_dir=None,
                  cache_dir=None) -> list[str]:
    """Reload every config of a built folder with ``load_dataset`` and compare with the builder.

    Returns the problems found (empty = verified): config or split sets, features, or any row
    that differs.
    """
    folder = Path(folder)
    problems = []
    card = DatasetCard.load(folder / "README.md")
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    if not configs:
        return [f"{folder}/README.md lists no configs"]
    for config in configs:
        hub = datasets.load_dataset(str(folder), config, cache_dir=cache_dir)
        ref = load(dataset_id, config, mirror=mirror, data_dir=data_dir, cache_dir=cache_dir)
        if set(hub) != set(ref):
            problems.append(f"{config}: splits {sorted(hub)} != {sorted(ref)}")
            continue
        for split in ref:
            if hub[split].features != ref[split].features:
                problems.append(f"{config}/{split}: features differ")
            elif not hub[split].data.table.equals(ref[split].data.table):
                problems.append(f"{config}/{split}: rows differ")
    return problems

"""Export built datasets to the Hub layout (Parquet + README with YAML ``configs:``) and verify them.

Layout of ``<out>/datasets/<id>/``: ``<config>/<split>-00000-of-00001-<fingerprint>.parquet``,
``images/*.png`` and ``README.md`` whose front matter lists every config's data files, features
and split sizes, so that ``datasets.load_dataset(folder, config)`` returns exactly the rows of
``dataset_scripts.load``. A config whose rows must stay in the local cache (the spec's
``local_configs``: C-STS's release, decrypted with the user's password) gets no data files: the
card describes it (statistics, plots) and lists no data for it; a folder of such configs alone is
card-only.

The fingerprint is the start of the sha256 of the Parquet file's bytes
(:mod:`~semrel.dataset_scripts.parquet_files`: why a rebuild is never served rows cached from an
earlier one) and the card names each file exactly. :func:`verify_folder` refuses a file whose
bytes no longer match its name, and a folder written without fingerprints.

A build writes into a temporary sibling folder and replaces the old output only when complete, so
a failure leaves the previous good folder in place; :func:`build_lock` makes concurrent builds
into one folder wait for each other.
"""

from __future__ import annotations

import fcntl
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from pkgutil import resolve_name

import datasets
from datasets.exceptions import NonMatchingSplitsSizesError
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from semrel.dataset_scripts import load
from semrel.dataset_scripts.folders import remove_leftovers, replaced_whole
from semrel.dataset_scripts.parquet_files import DATA_FILE, write_parquet
from semrel.dataset_scripts.registry import get_spec
from semrel.dataset_scripts.sources import sha256_of

from .cards import need_plots
from .hub_vocabulary import size_category


@dataclass
class BuildResult:
    dataset_id: str
    folder: Path
    rows: dict[str, dict[str, int]] = field(default_factory=dict)  # config -> split -> rows
    skipped: dict[str, str] = field(default_factory=dict)  # config -> reason
    local: list[str] = field(default_factory=list)  # built configs whose rows stay in the cache

    @property
    def card_only(self) -> bool:
        """Every built config stays in the local cache: only README.md + images were written."""
        return bool(self.rows) and set(self.local) == set(self.rows)


@contextmanager
def build_lock(out_root: Path, say=print):
    """Hold ``<out_root>/.build.lock`` (an exclusive ``flock``); a second build waits for it.
    Holding it, what a killed build left beside the datasets, Spaces and the report is cleared
    (see :func:`~semrel.dataset_scripts.folders.remove_leftovers`)."""
    Path(out_root).mkdir(parents=True, exist_ok=True)
    with open(Path(out_root) / ".build.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another build into {out_root} to finish ...")
            fcntl.flock(handle, fcntl.LOCK_EX)
        for parent in (Path(out_root) / "hub" / "datasets", Path(out_root) / "hub" / "spaces", Path(out_root)):
            remove_leftovers(parent)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_dataset(dataset_id: str, out_root: Path, *, mirror=None, data_dir=None,
                  cache_dir=None) -> BuildResult:
    """Build every available config of ``dataset_id`` into ``out_root/datasets/<id>``.

    Configs that need user-supplied data are skipped (and reported) when ``data_dir`` is None
    or lacks their files. Any other error propagates and leaves the previous folder untouched.
    """
    need_plots()  # before the rows are read: the card's plots need matplotlib
    spec = get_spec(dataset_id)
    folder = Path(out_root) / "datasets" / dataset_id
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
    result.local = [config for config in built if config in spec.local_configs]
    with replaced_whole(folder) as staging:
        files = {config: {split: write_parquet(ds, staging, config, split)
                          for split, ds in splits.items()}
                 for config, splits in built.items() if config not in result.local}
        sizes = {config: split_sizes(staging, files[config]) for config in files}
        body = resolve_name(spec.card_body)(built, staging / "images")
        card = dataset_card(spec, built, body, sizes, files)
        (staging / "README.md").write_text(str(card), encoding="utf-8")
    result.rows = {config: {split: len(ds) for split, ds in splits.items()}
                   for config, splits in built.items()}
    return result


def card_metadata(spec, n_examples: int | None = None) -> DatasetCardData:
    """The dataset-level card metadata of ``spec`` in the Hub's vocabulary (see :mod:`.hub_vocabulary`)."""
    meta = dict(
        pretty_name=spec.pretty_name,
        license=spec.licence.hub_id,
        language=list(spec.languages),
        multilinguality="monolingual" if len(spec.languages) == 1 else "multilingual",
        task_categories=list(spec.task_categories),
        task_ids=list(spec.task_ids),
        source_datasets=["original"],
        tags=["semantic-textual-similarity", "semrel"],
        score_range=[float(x) for x in spec.score_range],  # the native scale trainers read back
    )
    if spec.licence.hub_id == "other":
        meta["license_name"] = spec.licence.name
        meta["license_link"] = spec.licence.link
    if n_examples is not None:
        meta["size_categories"] = [size_category(n_examples)]
    elif spec.size_category:  # not built here (user data): the known size
        meta["size_categories"] = [spec.size_category]
    return DatasetCardData(**meta)


def split_sizes(folder: Path, files: dict[str, str]) -> SplitDict:
    """The split sizes ``load_dataset`` records for one config's Parquet files (``files``: split
    -> path relative to ``folder``), read with the stock Parquet builder into a throw-away cache,
    so ``num_bytes`` is exact."""
    with tempfile.TemporaryDirectory(prefix="semrel-sizes-") as cache:
        b = datasets.load_dataset_builder("parquet", cache_dir=cache, data_files={
            split: str(Path(folder) / path) for split, path in files.items()})
        b.download_and_prepare()
        return b.info.splits


def dataset_card(spec, built: dict, body: str, sizes: dict[str, SplitDict] | None = None,
                 files: dict[str, dict[str, str]] | None = None) -> DatasetCard:
    """README with metadata: licence, languages, tasks, size (of the largest built config) and,
    for each config whose data is written (``sizes``: config -> its split sizes; ``files``:
    config -> split -> data file), its data files, features and split sizes (``num_examples``,
    ``num_bytes``); the first such config is the default."""
    card_data = card_metadata(spec, max(sum(len(ds) for ds in splits.values())
                                        for splits in built.values()))
    written = {config: splits for config, splits in built.items() if config in (files or {})}
    if written:
        default = next(iter(written))
        MetadataConfigs({
            config: {
                "data_files": [{"split": split, "path": files[config][split]} for split in splits],
                **({"default": True} if config == default else {}),
            }
            for config, splits in written.items()
        }).to_dataset_card_data(card_data)
        DatasetInfosDict({
            config: DatasetInfo(features=next(iter(splits.values())).features,
                                splits=SplitDict({s: SplitInfo(s, sizes[config][s].num_bytes,
                                                               sizes[config][s].num_examples)
                                                  for s in splits}),
                                dataset_size=sum(sizes[config][s].num_bytes for s in splits))
            for config, splits in written.items()
        }).to_dataset_card_data(card_data)
    return DatasetCard(f"---\n{card_data.to_yaml()}\n---\n\n{body}")


def verify_folder(folder: Path, dataset_id: str, *, mirror=None, data_dir=None,
                  cache_dir=None) -> list[str]:
    """Reload every config of a built folder with ``load_dataset`` and compare with a fresh
    build from the upstream files (a throw-away cache, so the check reads the mirror/download,
    never rows cached by an earlier build).

    Returns the problems found (empty = verified): config or split sets, features, any row
    that differs, or a data file whose bytes do not match the fingerprint in its name (a stock
    ``load_dataset`` may have served cached rows for it). A card-only folder (no configs) has
    nothing to reload: see :func:`is_card_only`.
    """
    folder = Path(folder)
    problems = []
    card = DatasetCard.load(folder / "README.md")
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    if not configs:
        return [f"{folder}/README.md lists no configs"]
    with tempfile.TemporaryDirectory(prefix="semrel-verify-") as fresh:
        for config in configs:
            try:
                hub = datasets.load_dataset(str(folder), config, cache_dir=cache_dir)
            except NonMatchingSplitsSizesError as exc:  # a file changed after the card was written
                problems.append(f"{config}: the Parquet files do not match the card's split sizes ({exc})")
                continue
            ref = load(dataset_id, config, mirror=mirror, data_dir=data_dir, cache_dir=fresh)
            if set(hub) != set(ref):
                problems.append(f"{config}: splits {sorted(hub)} != {sorted(ref)}")
                continue
            for split in ref:
                if hub[split].features != ref[split].features:
                    problems.append(f"{config}/{split}: features differ")
                elif not hub[split].data.table.equals(ref[split].data.table):
                    problems.append(f"{config}/{split}: rows differ")
            problems += fingerprint_problems(folder, config)
    return problems


def fingerprint_problems(folder: Path, config: str) -> list[str]:
    """Each data file the card names for ``config`` whose name is no
    :func:`~semrel.dataset_scripts.parquet_files.data_file_name` or whose bytes have another sha256
    than its name says."""
    problems = []
    for path in (p for paths in data_files(folder)[config].values() for p in paths):
        named = DATA_FILE.fullmatch(Path(path).name)
        if named is None:
            problems.append(f"{config}: {path} has no content fingerprint in its name (written by an "
                            "older semrel: stock load_dataset may serve rows cached from another build "
                            "for it); build it again")
        elif not sha256_of(Path(folder) / path).startswith(named["fingerprint"]):
            problems.append(f"{config}: {path} does not hold the bytes its name's fingerprint says "
                            "(changed after the build: stock load_dataset may serve the rows cached "
                            "for that name); build it again")
    return problems


def data_files(folder: Path) -> dict[str, dict[str, list[str]]]:
    """config -> split -> the data files (paths relative to ``folder``) its card names."""
    configs = MetadataConfigs.from_dataset_card_data(DatasetCard.load(Path(folder) / "README.md").data)
    return {config: {entry["split"]: [entry["path"]] if isinstance(entry["path"], str) else list(entry["path"])
                     for entry in meta.get("data_files", [])}
            for config, meta in configs.items()}


def is_card_only(folder: Path) -> bool:
    """A built folder holding a card and no data (its rows stay in the local cache)."""
    return (Path(folder) / "README.md").is_file() and not any(Path(folder).rglob("*.parquet"))

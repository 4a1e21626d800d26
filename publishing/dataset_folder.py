"""A dataset folder (``semrel annotate dataset``) as a push artefact: what makes a folder one, and
the checks of its files beyond those every artefact gets in :func:`semrel.publishing.publish.check`
(the raw WorkerId and local path scans, the card against the Hub vocabulary).

A dataset folder holds ``README.md``, a dataset card whose YAML names a licence, and Parquet files
(the ones its ``configs:`` name, or those ``datasets`` finds by their layout); no link. It goes to
``<namespace>/<folder name>`` whole (:func:`semrel.publishing.staging.stage_dataset_folder`) once

- every Parquet file reads, and holds the bytes its name's fingerprint says where its name has one
  (:func:`~semrel.dataset_scripts.parquet_files.data_file_name`): :func:`parquet_problems`;
- the folder loads with stock ``datasets.load_dataset(folder)``, each config its card names;
- no column of annotators (:data:`ANNOTATOR_COLUMNS`, in a Parquet, CSV or TSV file) holds anything
  but semrel's pseudonyms ``ann-<12 hex>`` (:func:`semrel.annotation.answers.pseudonym`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from semrel.dataset_scripts.parquet_files import DATA_FILE
from semrel.dataset_scripts.sources import sha256_of

WRITER = "semrel annotate dataset"
ANNOTATOR_COLUMNS = ("annotator", "annotator_id", "annotators", "worker", "worker_id", "workerid", "rater",
                     "rater_id", "user", "user_id", "username", "completed_by")
PSEUDONYM = r"^ann-[0-9a-f]{12}$"


def refusal(folder: Path) -> str | None:
    """Why ``folder`` is no dataset folder that may be pushed, in one line; None when it is one."""
    import yaml
    from huggingface_hub import DatasetCard

    folder = Path(folder)
    if not (folder / "README.md").is_file():
        return f"holds no README.md (the dataset card): not a dataset folder ({WRITER} writes one)"
    if not any(folder.rglob("*.parquet")):
        return f"holds no Parquet file: not a dataset folder ({WRITER} writes one)"
    if link := next((p for p in sorted(folder.rglob("*")) if p.is_symlink()), None):
        return f"{link.relative_to(folder)} is a link: a dataset folder goes whole, file by file; copy the file in"
    text = (folder / "README.md").read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return f"README.md has no YAML header (---): not a dataset card ({WRITER} writes one)"
    try:
        card = DatasetCard(text)
    except (ValueError, yaml.YAMLError) as exc:
        return f"README.md: its YAML header does not parse ({_first_line(exc)})"
    if not card.data.license:
        return ("README.md names no licence (YAML license): data goes to the Hub only under its licence; "
                f"write the folder again with {WRITER} --license")
    return None


def parquet_problems(folder: Path, files: list[str]) -> dict[str, str]:
    """File -> why, for each Parquet file of ``files`` that pyarrow cannot read, or whose bytes are
    not those its name's fingerprint says."""
    found = {}
    for rel in (f for f in files if f.endswith(".parquet")):
        path = Path(folder) / rel
        try:
            pq.read_table(path)
        except (OSError, ValueError) as exc:  # ArrowInvalid; a damaged footer: UnicodeDecodeError
            why = _first_line(exc).replace(str(path), rel)  # pyarrow names the staged copy
            found[rel] = (f"is no readable Parquet file ({type(exc).__name__}: {why}): damaged? "
                          f"write the folder again ({WRITER})")
            continue
        named = DATA_FILE.fullmatch(path.name)
        if named and not sha256_of(path).startswith(named["fingerprint"]):
            found[rel] = ("does not hold the bytes its name's fingerprint says (changed after it was written: "
                          f"stock load_dataset may serve rows cached for that name); write the folder again ({WRITER})")
    return found


def folder_problems(folder: Path, files: list[str], *, load: bool = True) -> list[str]:
    """The annotator columns of ``files`` that hold other than pseudonyms, and (``load``) why the
    folder does not load with ``datasets.load_dataset``."""
    found = [problem for rel in files for problem in _annotator_problems(Path(folder), rel)]
    if load and (why := _load_problem(Path(folder))):
        found.append(why)
    return found


def _annotator_problems(folder: Path, rel: str) -> list[str]:
    if not rel.lower().endswith((".parquet", ".csv", ".tsv")):
        return []
    path = folder / rel
    try:
        table = (pq.read_table(path) if rel.lower().endswith(".parquet") else pcsv.read_csv(
            path, parse_options=pcsv.ParseOptions(delimiter="\t" if rel.lower().endswith(".tsv") else ",")))
    except (OSError, ValueError) as exc:
        return [f"{rel}: cannot be read as a table to check its annotator columns ({_first_line(exc)})"]
    found = []
    for name in (n for n in table.column_names if n.lower() in ANNOTATOR_COLUMNS):
        values = table[name].combine_chunks()
        while pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
            values = pc.list_flatten(values)
        values = pc.cast(values, pa.string())
        raw = len(values) - values.null_count - (pc.sum(pc.match_substring_regex(values, PSEUDONYM)).as_py() or 0)
        if raw:
            found.append(f"{rel}: column {name!r} holds {raw} annotator id(s) that are no semrel pseudonym "
                         "(ann-<12 hex>): pseudonymise them (semrel annotate pull, potato-pull and crowd do)")
    return found


def _load_problem(folder: Path) -> str | None:
    """Why stock ``datasets.load_dataset(folder)`` fails (each config the card names), or None."""
    import datasets

    from .export import data_files

    bars = not datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        with tempfile.TemporaryDirectory(prefix="semrel-push-") as cache:
            for config in data_files(folder) or [None]:
                datasets.load_dataset(str(folder), config, cache_dir=cache)
    except Exception as exc:  # noqa: BLE001 -- datasets fails in many types; each is a refusal
        why = _first_line(exc).replace(str(folder), folder.name)  # the staged copy: named by the repo's name
        return f"does not load with datasets.load_dataset: {type(exc).__name__}: {why}"
    finally:
        if bars:
            datasets.enable_progress_bars()
    return None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0]

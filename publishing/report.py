"""The reliability report: ``build/report/index.html``, one static page, plots as PNG files beside it.

It reads top-down: an **overview** table first (one row per dataset: size, reliability figure,
baseline, best fine-tuned figure, each with the command that made it), then one folded section
(``<details>``) per dataset and per metric Space, whose long tables fold again.

Sizes, reliability and baselines are computed from the build; the best fine-tuned figure is
measured once (hours of training) and lives in ``benchmarks/results.json`` beside
``benchmarks/RESULTS.md``, read by :func:`fine_tuned_figure`, never copied into code.

A dataset contributes through the functions its spec names
(:class:`~semrel.dataset_scripts.spec.DatasetSpec` ``report_section`` and ``overview``, as a rule
in its module of :mod:`publishing.datasets`):

    def report_section(built, image_dir, *, mirror=None, cache_dir=None) -> str: ...   # markdown
    def overview(built, *, mirror=None, cache_dir=None) -> Overview: ...

``built`` maps each built config to its ``DatasetDict``, loaded lazily from the built Parquet folder
(``built["default"]["train"]``), or from the local cache for a card-only build. A dataset without
``report_section`` gets its split statistics and the card's plots (never the whole card). Markdown
is rendered with markdown-it (tables on), the page with the Jinja2 template ``report.html.j2``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from pkgutil import resolve_name

import datasets
import jinja2
from huggingface_hub import DatasetCard, RepoCard
from markdown_it import MarkdownIt

from semrel.dataset_scripts import load
from semrel.dataset_scripts.folders import replaced_whole
from semrel.dataset_scripts.registry import get_spec

from .cards import split_statistics
from .results import FINE_TUNED, RESULTS

TEMPLATE = Path(__file__).with_name("report.html.j2")
FOLD_ROWS = 8  # tables with more body rows than this fold away


@dataclass(frozen=True)
class Figure:
    """One overview cell: the figure and the command that made it (empty when none)."""

    text: str = "—"
    command: str = ""


@dataclass(frozen=True)
class Overview:
    size: Figure = Figure()
    reliability: Figure = Figure()
    baseline: Figure = Figure()
    fine_tuned: Figure = Figure()


@dataclass(frozen=True)
class Section:
    name: str
    kind: str  # "dataset" or "metric"
    summary: str
    html: str
    overview: Overview = field(default_factory=Overview)

    @property
    def anchor(self) -> str:
        return f"{self.kind}-{re.sub(r'[^a-z0-9]+', '-', self.name.lower())}"


class BuiltFolder(Mapping):
    """config -> DatasetDict of an exported folder, each loaded on first use: a config with data
    files with load_dataset; one whose rows stay in the local cache (named in the card's
    statistics table but listing no data: the spec's ``local_configs``) with
    ``dataset_scripts.load``."""

    def __init__(self, folder: Path, dataset_id: str, *, mirror=None, data_dir=None, cache_dir=None):
        self.folder, self.dataset_id, self.cache_dir = Path(folder), dataset_id, cache_dir
        self.mirror, self.data_dir = mirror, data_dir
        card = DatasetCard.load(self.folder / "README.md")
        written = [c["config_name"] for c in card.data.to_dict().get("configs", [])]
        tabled = re.findall(r"^\| (\S+) \| \w+ \| [\d,]+ \|", card.text, re.M)
        local = get_spec(dataset_id).local_configs
        self.local = [c for c in dict.fromkeys(tabled) if c in local and c not in written]
        self.configs = written + self.local
        self._loaded: dict[str, datasets.DatasetDict] = {}

    def __getitem__(self, config: str) -> datasets.DatasetDict:
        if config not in self.configs:
            raise KeyError(f"{config!r} is not built in {self.folder} (built: {self.configs})")
        if config not in self._loaded:
            cache = None if self.cache_dir is None else str(self.cache_dir)
            self._loaded[config] = (
                load(self.dataset_id, config, mirror=self.mirror, data_dir=self.data_dir,
                     cache_dir=cache) if config in self.local
                else datasets.load_dataset(str(self.folder), config, cache_dir=cache))
        return self._loaded[config]

    def __iter__(self):
        return iter(self.configs)

    def __len__(self) -> int:
        return len(self.configs)


def fine_tuned_figure(dataset_id: str, results: Path | None = None) -> Figure:
    """The best fine-tuned figure of ``dataset_id`` from ``results`` (default :data:`RESULTS`).

    Without the file (semrel installed, not built from a checkout) the cell points to
    ``benchmarks/RESULTS.md``; a dataset the file does not list was not measured."""
    path = RESULTS if results is None else Path(results)
    if not path.is_file():
        return Figure("see benchmarks/RESULTS.md in the source repository")
    entry = json.loads(path.read_text(encoding="utf-8"))[FINE_TUNED].get(dataset_id)
    if entry is None:
        return Figure("not measured")
    return Figure(f"ρ {entry['spearman']:.3f}, {entry['protocol']}: {entry['model']} "
                  "(benchmarks/RESULTS.md)", entry["command"])


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _fold_long_tables(html: str) -> str:
    def fold(match: re.Match) -> str:
        rows = match[0].count("<tr>") - 1
        if rows <= FOLD_ROWS:
            return match[0]
        return f"<details><summary>table, {rows} rows</summary>\n{match[0]}</details>"
    return re.sub(r"<table>.*?</table>", fold, html, flags=re.S)


def render(markdown: str, image_prefix: str) -> str:
    """Markdown -> HTML; headings under the section's h2 (h1, h2 -> h3; h3 -> h4 ...),
    ``images/x.png`` -> ``<prefix>/x.png`` and tables longer than ``FOLD_ROWS`` folded."""
    html = _markdown().render(markdown)
    html = re.sub(r"<(/?)h([1-5])>", lambda m: f"<{m[1]}h{max(3, int(m[2]) + 1)}>", html)
    return _fold_long_tables(html.replace('src="images/', f'src="{image_prefix}/'))


def report_hook(dataset_id: str):
    """The dataset's ``report_section`` function, or None."""
    reference = get_spec(dataset_id).report_section
    return resolve_name(reference) if reference else None


def _generic_section(built, folder: Path, image_dir: Path) -> str:
    """Split statistics and the card's plots."""
    plots = []
    if (folder / "images").is_dir():
        shutil.copytree(folder / "images", image_dir, dirs_exist_ok=True)
        plots = [f"![{p.stem}](images/{p.name})" for p in sorted(image_dir.glob("*.png"))]
    return f"### Statistics\n\n{split_statistics(built)}\n\n" + "\n\n".join(plots)


def dataset_section(dataset_id: str, folder: Path, image_root: Path, *, mirror=None,
                    data_dir=None, cache_dir=None) -> Section:
    spec = get_spec(dataset_id)
    terms = "redistributable" if spec.redistributable else "card only (licence forbids redistribution)"
    if not (folder / "README.md").is_file():
        reason = ("needs user-supplied files (--data-dir)"
                  if spec.user_data_configs and spec.user_data_configs == spec.configs
                  else "not built in this run")
        return Section(dataset_id, "dataset", f"not built: {reason}",
                       f'<p class="note">Not built: {reason}.</p>',
                       Overview(size=Figure(f"not built: {reason}",
                                            f"semrel build --only {dataset_id}")))
    built = BuiltFolder(folder, dataset_id, mirror=mirror, data_dir=data_dir, cache_dir=cache_dir)
    image_dir = image_root / dataset_id
    if image_dir.exists():
        shutil.rmtree(image_dir)
    image_dir.mkdir(parents=True)
    hook = report_hook(dataset_id)
    markdown = (hook(built, image_dir, mirror=mirror, cache_dir=cache_dir) if hook
                else _generic_section(built, folder, image_dir))
    overview = (resolve_name(spec.overview)(built, mirror=mirror, cache_dir=cache_dir) if spec.overview
                else Overview())
    if overview.size == Figure():
        rows = max(sum(len(ds) for ds in built[c].values()) for c in built)
        overview = dataclasses.replace(
            overview, size=Figure(f"{rows:,} rows", f"semrel build --only {dataset_id}"))
    overview = dataclasses.replace(overview, fine_tuned=fine_tuned_figure(dataset_id))
    summary = f"{len(built)} config(s); {terms}"
    return Section(dataset_id, "dataset", summary, render(markdown, f"images/{dataset_id}"), overview)


def metric_section(folder: Path) -> Section:
    """The Space's description, files and how to run it (the metric card stays in the Space);
    a note when it is not built (its build failed and there was none before)."""
    if not (folder / "README.md").is_file():
        return Section(folder.name, "metric", "not built",
                       f'<p class="note">Not built: run <code>semrel build --only {folder.name}</code>.</p>')
    card = RepoCard.load(folder / "README.md")
    description = str(card.data.to_dict().get("description", "")).strip()
    files = ", ".join(f"<code>{p.name}</code>" for p in sorted(folder.iterdir()) if p.is_file())
    html = (f"<p>{jinja2.filters.escape(description)}</p>\n<p>Space files: {files}. "
            f"Card: <code>{folder.name}/README.md</code> in the Space; run it locally with "
            f"<code>cd {folder.name} &amp;&amp; pip install -r requirements.txt &amp;&amp; "
            f"python app.py</code>.</p>")
    return Section(folder.name, "metric", first_sentence(description), html)


ABBREVIATIONS = ("al.", "e.g.", "i.e.", "cf.", "vs.", "etc.", "approx.")


def first_sentence(text: str) -> str:
    """The first sentence of ``text``, whole: up to the first ``.``/``!``/``?`` + space outside
    brackets and not ending an abbreviation (``et al.``), else all of it; never cut mid-phrase."""
    text = " ".join(str(text).split())
    depth = 0
    for i, char in enumerate(text):
        depth += (char in "([{") - (char in ")]}")
        if char in ".!?" and depth <= 0 and text[i + 1:i + 2] in (" ", ""):
            if not text[:i + 1].lower().endswith(ABBREVIATIONS):
                return text[:i + 1]
    return text


def build_report(out: Path, dataset_ids: Iterable[str], metric_names: Iterable[str], *,
                 mirror=None, data_dirs: Mapping[str, str] | None = None, cache_dir=None,
                 stale: Mapping[str, str] | None = None) -> Path:
    """Write ``out/report/index.html`` (+ ``images/``) from ``out/hub``; returns the page's path.

    ``stale`` names datasets whose last build failed (dataset -> error): their sections show the
    previous good output with a warning. The report is written beside its folder and swapped in
    whole (:func:`~semrel.dataset_scripts.folders.replaced_whole`): a failed or killed build
    leaves the previous report, page and images, as it was.
    """
    report = Path(out) / "report"
    with replaced_whole(report) as staging:  # the previous report stays whole until this one is
        images = staging / "images"
        dataset_sections = []
        for d in dataset_ids:
            try:
                dataset_sections.append(dataset_section(
                    d, Path(out) / "hub" / "datasets" / d, images, mirror=mirror,
                    data_dir=(data_dirs or {}).get(d), cache_dir=cache_dir))
            except (OSError, ValueError) as exc:  # e.g. the upstream file of a failed build
                note = f"section not rebuilt: {type(exc).__name__}: {exc}"
                dataset_sections.append(Section(d, "dataset", "stale: section not rebuilt",
                                                f'<p class="note">{jinja2.filters.escape(note)}</p>',
                                                Overview(Figure("stale: see the warning above"))))
        metric_sections = [metric_section(Path(out) / "hub" / "spaces" / m) for m in metric_names]
        env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
        page = env.from_string(TEMPLATE.read_text(encoding="utf-8")).render(
            version=version("semrel"), datasets=dataset_sections, metrics=metric_sections,
            stale=dict(stale or {}))
        (staging / "index.html").write_text(page, encoding="utf-8")
    path = report / "index.html"
    return path

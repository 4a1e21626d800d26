"""The reliability report: ``build/report/index.html``, one static page, plots as PNG files beside it.

One section per built dataset and per metric Space, after an overview table. A dataset package
contributes its section through an optional hook, ``dataset_scripts/<pkg>/report.py``::

    def report_section(built, image_dir, *, mirror=None, cache_dir=None) -> str:
        '''Markdown: tables and plots (saved as PNG into image_dir, linked as images/<file>.png).'''

``built`` maps each built config to its ``DatasetDict``, loaded lazily from the built Parquet folder
(``built["default"]["train"]``); ``mirror``/``cache_dir`` are there for sections that need more
than the built rows (upstream files, other configs). A package without the hook gets its card
body (statistics and score histograms). Metric sections show the metric card of the Space.
Markdown is rendered with markdown-it (tables on), the page with the Jinja2 template
``report.html.j2`` beside this module.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import datasets
import jinja2
from huggingface_hub import DatasetCard, RepoCard
from markdown_it import MarkdownIt

from .registry import get_spec

TEMPLATE = Path(__file__).with_name("report.html.j2")


@dataclass(frozen=True)
class Section:
    name: str
    kind: str  # "dataset" or "metric"
    summary: str
    html: str

    @property
    def anchor(self) -> str:
        return f"{self.kind}-{re.sub(r'[^a-z0-9]+', '-', self.name.lower())}"


class BuiltFolder(Mapping):
    """config -> DatasetDict of an exported folder, each loaded on first use with load_dataset."""

    def __init__(self, folder: Path, cache_dir=None):
        self.folder, self.cache_dir = Path(folder), cache_dir
        card = DatasetCard.load(self.folder / "README.md")
        self.configs = [c["config_name"] for c in card.data.to_dict().get("configs", [])]
        self._loaded: dict[str, datasets.DatasetDict] = {}

    def __getitem__(self, config: str) -> datasets.DatasetDict:
        if config not in self.configs:
            raise KeyError(f"{config!r} is not built in {self.folder} (built: {self.configs})")
        if config not in self._loaded:
            self._loaded[config] = datasets.load_dataset(
                str(self.folder), config, cache_dir=None if self.cache_dir is None else str(self.cache_dir))
        return self._loaded[config]

    def __iter__(self):
        return iter(self.configs)

    def __len__(self) -> int:
        return len(self.configs)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def render(markdown: str, image_prefix: str) -> str:
    """Markdown -> HTML; headings under the section's h2 (h1, h2 -> h3; h3 -> h4 ...) and
    ``images/x.png`` -> ``<prefix>/x.png``."""
    html = _markdown().render(markdown)
    html = re.sub(r"<(/?)h([1-5])>", lambda m: f"<{m[1]}h{max(3, int(m[2]) + 1)}>", html)
    return html.replace('src="images/', f'src="{image_prefix}/')


def report_hook(dataset_id: str):
    """The package's ``report_section`` function, or None."""
    package = get_spec(dataset_id).builder_class.__module__.rsplit(".", 1)[0]
    if importlib.util.find_spec(f"{package}.report") is None:
        return None
    return getattr(importlib.import_module(f"{package}.report"), "report_section", None)


def dataset_section(dataset_id: str, folder: Path, image_root: Path, *, mirror=None,
                    cache_dir=None) -> Section:
    spec = get_spec(dataset_id)
    terms = "redistributable" if spec.redistributable else "card only (licence forbids redistribution)"
    if not (folder / "README.md").is_file():
        reason = ("needs user-supplied files (--data-dir)" if spec.user_data_configs
                  else "not built in this run")
        return Section(dataset_id, "dataset", f"not built: {reason}",
                       f'<p class="note">Not built: {reason}.</p>')
    built = BuiltFolder(folder, cache_dir)
    image_dir = image_root / dataset_id
    if image_dir.exists():
        shutil.rmtree(image_dir)
    hook = report_hook(dataset_id)
    if hook is not None:
        image_dir.mkdir(parents=True)
        markdown = hook(built, image_dir, mirror=mirror, cache_dir=cache_dir)
    else:
        markdown = DatasetCard.load(folder / "README.md").text
        if (folder / "images").is_dir():
            shutil.copytree(folder / "images", image_dir)
    summary = f"{len(built)} config(s); {terms}"
    return Section(dataset_id, "dataset", summary, render(markdown, f"images/{dataset_id}"))


def metric_section(folder: Path) -> Section:
    card = RepoCard.load(folder / "README.md")
    files = ", ".join(f"<code>{p.name}</code>" for p in sorted(folder.iterdir()) if p.is_file())
    html = f"<p>Space files: {files}</p>\n" + render(card.text, f"images/{folder.name}")
    return Section(folder.name, "metric", str(card.data.to_dict().get("description", "")), html)


def build_report(out: Path, dataset_ids: Iterable[str], metric_names: Iterable[str], *,
                 mirror=None, cache_dir=None) -> Path:
    """Write ``out/report/index.html`` (+ ``images/``) from ``out/hub``; returns the page's path."""
    report = Path(out) / "report"
    report.mkdir(parents=True, exist_ok=True)
    images = report / "images"
    dataset_sections = [dataset_section(d, Path(out) / "hub" / "datasets" / d, images,
                                        mirror=mirror, cache_dir=cache_dir) for d in dataset_ids]
    metric_sections = [metric_section(Path(out) / "hub" / "spaces" / m) for m in metric_names]
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    page = env.from_string(TEMPLATE.read_text(encoding="utf-8")).render(
        version=version("semrel"), datasets=dataset_sections, metrics=metric_sections)
    path = report / "index.html"
    path.write_text(page, encoding="utf-8")
    return path

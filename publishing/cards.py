"""Shared pieces of dataset cards: statistics tables, histogram plots and the build recipe.

Plots are drawn on a ``matplotlib.figure.Figure`` with the Agg canvas (no pyplot, no backend
switch: importing this module leaves the user's matplotlib state alone). matplotlib comes with the
``report`` extra and is imported only when a plot is drawn; every build recipe installs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from semrel.dataset_scripts.registry import get_spec

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOTS_EXTRA = "report"  # the extra that brings matplotlib
NO_ADDRESS = "semrel is on no package index and has no public repository address yet"


def source_line() -> str:
    """The comment that opens every recipe: where semrel's source is. The address is the
    ``Source`` (else ``Homepage``) entry of semrel's metadata, i.e. ``[project.urls]`` in
    pyproject.toml; while there is none the line says so."""
    try:
        entries = metadata("semrel").get_all("Project-URL") or []
    except PackageNotFoundError:
        entries = []
    urls = dict(entry.split(", ", 1) for entry in entries)
    url = urls.get("Source") or urls.get("Homepage")
    where = f"semrel's source is at {url}" if url else NO_ADDRESS
    return f"# {where}:\n# run these lines in a copy of its source folder"


def install_lines(extras: str = "") -> str:
    """The shell lines that install semrel from its source folder (``extras`` e.g. "crowd"); the
    front door lives in ``src/semrel/``, so Python run in that folder imports the installed copy."""
    target = f"'.[{extras}]'" if extras else "."
    return f"{source_line()}\npip install {target}"


def build_recipe(dataset_id: str) -> str:
    """The shell lines of a card's "build it yourself": install semrel from its source with the
    extras the build needs (the spec's ``extras`` and ``report`` for the card's plots;
    never torch), build the dataset without the report, and load its first config that needs no
    user files. Configs that do need them get ``--data-dir`` (on the command when every config
    needs it, else in a comment: the recipe runs as written)."""
    spec = get_spec(dataset_id)
    extras = ",".join(dict.fromkeys([*spec.extras, PLOTS_EXTRA]))
    public = [c for c in spec.configs if c not in spec.user_data_configs]
    data_dir = f"--data-dir {dataset_id}=DIR"
    build = f"semrel build --only {dataset_id} --no-report"
    lines = [install_lines(extras),
             f"{build}   # downloads the upstream files, or reads $SEMREL_MIRROR" if public
             else f"{build} {data_dir}"]
    if public and spec.user_data_configs:
        lines.append(f"# configs {', '.join(spec.user_data_configs)} need the files the authors give "
                     f"each user:\n# put them in DIR and add {data_dir}")
    load_args = f"'{public[0]}'" if public else f"'{spec.configs[0]}', data_dir='DIR'"
    lines.append(f"python -c \"from semrel.dataset_scripts import load; "
                 f"print(load('{dataset_id}', {load_args}))\"")
    return "\n".join(lines)


def _matplotlib():
    """matplotlib's Figure and Agg canvas classes; without matplotlib, an error naming the extra."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"a dataset card's plots need matplotlib, which is not installed: in semrel's source "
            f"folder, pip install '.[{PLOTS_EXTRA}]' (or use the card's build recipe)", name=exc.name
        ) from exc
    return Figure, FigureCanvasAgg


def need_plots() -> None:
    """Fail now, with the install line, where cards cannot get their plots (before a long build)."""
    _matplotlib()


def figure(figsize: tuple[float, float]) -> Figure:
    """A figure on its own Agg canvas (savefig works without pyplot)."""
    figure_class, canvas = _matplotlib()
    fig = figure_class(figsize=figsize)
    canvas(fig)
    return fig


def save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A GitHub-flavoured markdown table; floats are printed with 3 decimals."""
    fmt = lambda v: f"{v:.3f}" if isinstance(v, (float, np.floating)) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def split_statistics(built: Mapping, score_column: str = "score") -> str:
    """Rows and score mean/std/min/max for every config and split of ``built`` ("–" where a
    split has no score column or no score: hidden or invalid labels are null)."""
    rows = []
    for config, splits in built.items():
        for split, ds in splits.items():
            scores = np.asarray(ds[score_column], dtype=float) if score_column in ds.column_names else None
            stats = ([np.nanmean(scores), np.nanstd(scores), np.nanmin(scores), np.nanmax(scores)]
                     if scores is not None and not np.isnan(scores).all() else ["–"] * 4)
            rows.append([config, split, f"{len(ds):,}", *stats])
    return markdown_table(["config", "split", "rows", "mean score", "std", "min", "max"], rows)


def histograms(groups: Mapping[str, np.ndarray], path: Path, *, xlabel: str, title: str,
               bins: int | np.ndarray = 20, value_range: tuple[float, float] | None = None,
               ncols: int = 4, vlines: Mapping[str, float] | None = None) -> Path:
    """One histogram panel per group (small multiples), saved as PNG at ``path``.

    ``vlines`` draws labelled vertical lines (e.g. filter thresholds) on every panel.
    """
    n = len(groups)
    ncols = min(ncols, n)
    nrows = int(np.ceil(n / ncols))
    fig = figure((3.2 * ncols, 2.6 * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, (name, values) in zip(axes.flat, groups.items(), strict=False):
        values = np.asarray(values, dtype=float)
        ax.hist(values[~np.isnan(values)], bins=bins, range=value_range, color="#4C72B0",
                edgecolor="white")
        for label, x in (vlines or {}).items():
            ax.axvline(x, color="#C44E52", linestyle="--", linewidth=1)
            ax.text(x, ax.get_ylim()[1] * 0.9, f" {label}", color="#C44E52", fontsize=7)
        ax.set_title(f"{name} (n={len(values):,})", fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(title, fontsize=11)
    return save(fig, path)


def grouped_bars(values: Mapping[str, Mapping[str, float]], path: Path, *, ylabel: str,
                 title: str) -> Path:
    """Grouped bar chart saved as PNG: one group per outer key, one bar per inner key (series).

    ``{"STS": {"paper": 0.60, "ours": 0.61}, ...}``; a missing value leaves a gap.
    """
    groups = list(values)
    series = list(dict.fromkeys(s for v in values.values() for s in v))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(groups))
    fig = figure((max(4.0, 0.9 * len(groups) + 1.5), 3.2))
    ax = fig.subplots()
    colours = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3"]
    for i, name in enumerate(series):
        heights = [values[g].get(name, np.nan) for g in groups]
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, heights, width, label=name,
                      color=colours[i % len(colours)])
        ax.bar_label(bars, fmt="%.2f", fontsize=6, padding=1)
    ax.set_xticks(x, groups, fontsize=8, rotation=20)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    return save(fig, path)

"""Shared pieces of dataset cards: statistics tables and histogram plots.

Plots are drawn on a ``matplotlib.figure.Figure`` with the Agg canvas (no pyplot, no backend
switch: importing this module leaves the user's matplotlib state alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# How to get the code: semrel is on no package index, and its repository has no public URL to
# give pip (git+...), so a card says where the source comes from and installs from that folder.
GET_THE_SOURCE = ("# semrel is on no package index: get its source (a clone of the semrel repository\n"
                  "# or its source archive), then in that folder:")


def install_lines(extras: str = "") -> str:
    """The shell lines that install semrel from its source folder (``extras`` e.g. "crowd")."""
    return f"{GET_THE_SOURCE}\npip install '.[{extras}]'" if extras else f"{GET_THE_SOURCE}\npip install ."


def figure(figsize: tuple[float, float]) -> Figure:
    """A figure on its own Agg canvas (savefig works without pyplot)."""
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
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
    """Rows and score mean/std/min/max for every config and split of ``built``."""
    rows = []
    for config, splits in built.items():
        for split, ds in splits.items():
            scores = np.asarray(ds[score_column], dtype=float) if score_column in ds.column_names else None
            stats = ([np.nanmean(scores), np.nanstd(scores), np.nanmin(scores), np.nanmax(scores)]
                     if scores is not None and len(scores) else ["–"] * 4)
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
    for ax, (name, values) in zip(axes.flat, groups.items()):
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

"""Shared pieces of dataset cards: statistics tables and histogram plots (matplotlib, Agg)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


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
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.6 * nrows), squeeze=False)
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
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

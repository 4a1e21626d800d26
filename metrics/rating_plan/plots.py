"""The pictures of a rating plan: reliability against raters per item (measured and projected),
and the item means with their intervals. matplotlib's Figure on the Agg canvas (no pyplot, no
backend switch), as the report's plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..output_files import written_whole

MAX_ITEMS_DRAWN = 400  # items in the means picture (evenly spaced by rank above this)


def _figure(width: float = 6.4, height: float = 4.0):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("the --output pictures need matplotlib, which is not installed "
                          "(pip install matplotlib)") from None
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path, argument: str) -> Path:
    with written_whole(path, argument, binary=True) as file:
        fig.savefig(file, format="png", dpi=110)
    return path


def reliability_picture(rating_plan, path: Path, argument: str = "--output") -> Path:
    """Measured trace (points, intervals), both projections to K and beyond, the target."""
    p = rating_plan.plan
    fig = _figure()
    ax = fig.add_subplot()
    k = p.trace_raters
    values = np.array([t.value for t in p.trace])
    errors = np.array([[t.value - t.low for t in p.trace], [t.high - t.value for t in p.trace]])
    ax.errorbar(k, values, yerr=np.clip(errors, 0, None), fmt="o", color="black", capsize=3,
                label="measured (raters subsampled)")
    top = max(p.raters, int(k.max())) * 1.5
    if p.ratings_needed is not None and p.trusted:
        needed = getattr(p, p.trusted.replace("-", "_")).raters_needed.value
        top = max(top, min(needed * 1.2, 10 * top)) if np.isfinite(needed) else top
    grid = np.linspace(1, top, 200)
    for projection, style in ((p.spearman_brown, "-"), (p.resampled, "--")):
        b0, b1 = projection.line
        ax.plot(grid, 1.0 / (b0 + b1 / grid), style, label=f"projected: {projection.method}")
    ax.axvline(p.raters, color="grey", lw=0.8, ls=":")
    ax.annotate(f"K={p.raters}", (p.raters, 0.02), color="grey")
    if p.target is not None:
        ax.axhline(p.target, color="tab:red", lw=0.8, label=f"target {p.target:g}")
    ax.set_xlabel("raters per item")
    ax.set_ylabel("reliability of the item means")
    ax.set_ylim(0, 1)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(f"now {p.now.value:.3f} [{p.now.low:.3f}, {p.now.high:.3f}]; "
                 f"at K={p.raters}: {getattr(p, p.trusted.replace('-', '_')).reliability.value:.3f} ({p.trusted})",
                 fontsize=9)
    fig.tight_layout()
    return _save(fig, path, argument)


def means_picture(rating_plan, path: Path, argument: str = "--output") -> Path:
    """Item means sorted, each with its t-interval (items rated once: a bare point)."""
    m = rating_plan.means
    order = np.argsort(m.mean, kind="stable")
    if order.size > MAX_ITEMS_DRAWN:
        order = order[np.linspace(0, order.size - 1, MAX_ITEMS_DRAWN).round().astype(int)]
    fig = _figure()
    ax = fig.add_subplot()
    x = np.arange(order.size)
    low, high, mean = m.low[order], m.high[order], m.mean[order]
    has = ~np.isnan(low)
    ax.vlines(x[has], low[has], high[has], color="tab:blue", lw=0.6, alpha=0.6)
    ax.plot(x, mean, ".", color="black", ms=2)
    ax.set_xlabel(f"items by mean ({order.size} of {m.mean.size} drawn)" if order.size < m.mean.size
                  else "items by mean")
    ax.set_ylabel("mean rating (95% t-interval)")
    fig.tight_layout()
    return _save(fig, path, argument)


def write_pictures(rating_plan, folder: Path) -> list[Path]:
    """Both pictures in ``folder``: ``reliability.png`` and ``item_means.png``."""
    folder = Path(folder)
    return [reliability_picture(rating_plan, folder / "reliability.png"),
            means_picture(rating_plan, folder / "item_means.png")]

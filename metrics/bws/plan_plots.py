"""Pictures of a BWS plan: SHR against annotations (measured, resampled, projected with its band) and
the item scores with their intervals, sorted. matplotlib's ``Figure`` on the Agg canvas (no pyplot,
no backend switch), as the dataset cards draw theirs; PNG files written whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..output_files import written_whole


def _figure(size):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError("--output pictures need matplotlib, which is not installed: "
                                  "pip install matplotlib (or semrel's 'report' extra)", name=exc.name) from exc
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path, argument: str) -> Path:
    fig.tight_layout()
    with written_whole(path, argument, binary=True) as file:
        fig.savefig(file, format="png", dpi=110)
    return path


def reliability_plot(path: Path, now, curve, sb, rs, target=None, argument: str = "--output") -> Path:
    """SHR against annotations: resampled points (each repeat), the fitted curves' median and band,
    Spearman–Brown's curve and band, out to the projection (and the target's budget)."""
    fig = _figure((6.4, 4.2))
    ax = fig.add_subplot()
    top = max(sb.annotations, now.annotations) * 1.05
    for m in (sb.needed, rs.needed):  # out to the budget reaching the target, at most 20x now
        if m is not None and np.isfinite(m):
            top = max(top, min(m * 1.05, 20 * now.annotations))
    m = np.linspace(curve.annotations.min(), top, 200)
    fitted = np.stack([curve.at(x) for x in m], axis=1)
    low, mid, high = np.nanquantile(fitted, [0.025, 0.5, 0.975], axis=0)
    ax.fill_between(m, low, high, color="tab:orange", alpha=0.25, label="resampling fit (95 % band)")
    ax.plot(m, mid, color="tab:orange")
    factor = m / now.annotations
    sb_mid = factor * now.shr / (1 + (factor - 1) * now.shr)
    sb_low = factor * now.low / (1 + (factor - 1) * now.low)
    sb_high = factor * now.high / (1 + (factor - 1) * now.high)
    ax.fill_between(m, sb_low, sb_high, color="tab:blue", alpha=0.15, label="Spearman–Brown (split spread)")
    ax.plot(m, sb_mid, color="tab:blue", linestyle="--")
    ax.scatter(np.repeat(curve.annotations[None], len(curve.shr), axis=0).ravel(), curve.shr.ravel(), s=6,
               color="grey", alpha=0.5, label="SHR of random subsets")
    ax.errorbar([now.annotations], [now.shr], yerr=[[now.shr - now.low], [now.high - now.shr]], fmt="o",
                color="black", label=f"now: {now.annotations:,} annotations")
    ax.axvline(sb.annotations, color="grey", linestyle=":", label=f"K = {sb.per_tuple:.2f} per tuple")
    if target is not None:
        ax.axhline(target, color="tab:red", linestyle=":", label=f"target {target:g}")
    ax.set_xlabel("annotations")
    ax.set_ylabel("split-half reliability (Spearman)")
    ax.legend(fontsize=7, loc="lower right")
    return _save(fig, path, argument)


def items_plot(path: Path, boot, likelihood, argument: str = "--output") -> Path:
    """Item scores sorted, each with its interval: counting with the bootstrap over tuples (left),
    Bradley–Terry with the likelihood interval (right)."""
    fig = _figure((8.4, 3.8))
    panels = fig.subplots(1, 2, sharey=True)
    for ax, result, color, name in ((panels[0], boot, "tab:blue", "counting, bootstrap over tuples"),
                                    (panels[1], likelihood, "tab:orange", "Bradley–Terry, likelihood")):
        order = np.argsort(result.score, kind="stable")
        x = np.arange(len(order))
        ax.vlines(x, result.low[order], result.high[order], color=color, alpha=0.3, linewidth=0.6)
        ax.plot(x, result.score[order], color="black", linewidth=1)
        ax.set_title(f"{name} ({result.level:.0%})", fontsize=9)
        ax.set_xlabel("items, sorted by score")
    panels[0].set_ylabel("score (-1 .. 1)")
    return _save(fig, path, argument)

"""The "know when to stop annotating" block of a dataset's report section: the reliability of its
item means against raters per item (measured and projected) and its item means with intervals,
from the raw ratings (:func:`semrel.metrics.rating_plan.plan.plan_ratings`)."""

from __future__ import annotations

from pathlib import Path

from semrel.metrics.rating_plan.plan import plan_ratings
from semrel.metrics.rating_plan.plots import means_picture, reliability_picture
from semrel.metrics.rating_plan.table import make_table


def plan_block(items, annotators, scores, image_dir: Path, *, scale: tuple[float, float], raters: int,
               prefix: str) -> str:
    """Markdown: the figures and both pictures (``<prefix>_reliability.png``, ``<prefix>_item_means.png``)."""
    p = plan_ratings(make_table(items, annotators, scores, scale=scale), raters=raters, trials=100,
                     n_resamples=200)
    plan = p.plan
    reliability_picture(p, Path(image_dir) / f"{prefix}_reliability.png", "image_dir")
    means_picture(p, Path(image_dir) / f"{prefix}_item_means.png", "image_dir")
    trusted = getattr(plan, plan.trusted.replace("-", "_")).reliability

    def r(x):
        return f"{x.value:.3f} [{x.low:.3f}, {x.high:.3f}]"

    return f"""### Know when to stop annotating

Reliability of the item means with {p.raters[2]} raters per item: {r(plan.now)} (split-half,
Spearman–Brown; Krippendorff's α {r(p.alpha)}); projected with {raters}: {r(trusted)}
({plan.trusted}; `semrel ratings plan`, 95% bootstrap intervals over items).

![reliability against raters per item](images/{prefix}_reliability.png)
![item means with intervals](images/{prefix}_item_means.png)
"""

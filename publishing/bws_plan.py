"""The "know when to stop annotating" block of a dataset's report section for raw Best–Worst Scaling
annotations: split-half reliability (SHR) against annotations, measured and projected, and the item
scores with their intervals (:func:`semrel.metrics.bws.plan.bws_plan`, pictures from
:mod:`semrel.metrics.bws.plan_plots`). The report uses fewer resamples than ``semrel bws plan``'s
defaults (:data:`REPORT`), and says so in the block."""

from __future__ import annotations

import math
from pathlib import Path

from semrel.metrics.bws.plan import CAP, bws_plan
from semrel.metrics.bws.plan_plots import items_plot, reliability_plot

# bws_plan's arguments in the report: SHR now as the SHR tables (1,000 splits, seed 0), fewer
# bootstrap replicates and resampled curves than the command's 1,000 and 20 x 50
REPORT = {"trials": 1000, "resamples": 200, "repeats": 10, "curve_trials": 20, "seed": 0}
TARGET = 0.9  # the SHR whose budget the block names


def interval(value: float, low: float, high: float) -> str:
    """``0.823 [0.806, 0.840]``."""
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _needed(p) -> str:
    if math.isfinite(p.needed):
        high = "more than 100× now" if not math.isfinite(p.needed_high) else f"{p.needed_high:,.0f}"
        return f"{p.needed:,.0f} annotations [{p.needed_low:,.0f}, {high}]"
    return (f"none within {CAP}× the annotations so far (SHR there "
            f"{interval(p.at_cap, p.at_cap_low, p.at_cap_high)})")


def plan_block(ann, image_dir: Path, *, name: str, prefix: str, target: float = TARGET) -> str:
    """Markdown for the collection ``ann`` (called ``name``): the figures and both pictures,
    ``<prefix>_reliability.png`` and ``<prefix>_items.png`` in ``image_dir``."""
    p = bws_plan(ann, target=target, **REPORT)
    image_dir = Path(image_dir)
    reliability_plot(image_dir / f"{prefix}_reliability.png", p.now, p.curve, p.spearman_brown, p.resampling,
                     target, argument="image_dir")
    items_plot(image_dir / f"{prefix}_items.png", p.bootstrap, p.likelihood, argument="image_dir")
    now, sb, rs = p.now, p.spearman_brown, p.resampling
    widest = p.bootstrap.width[p.least_certain[0]]
    return f"""**{name}**: {now.annotations:,} annotations of {now.tuples:,} tuples ({now.per_tuple:.2f} per
tuple), {len(ann.items):,} items. SHR now {interval(now.shr, now.low, now.high)} (Spearman–Brown
{now.corrected:.3f}); projected at {sb.per_tuple:.2f} per tuple: Spearman–Brown
{interval(sb.shr, sb.low, sb.high)}, resampling {interval(rs.shr, rs.low, rs.high)}; {p.trust}.
To reach SHR {target:g}: Spearman–Brown {_needed(sb)}; resampling {_needed(rs)}. Widest item
interval (counting, bootstrap): {widest:.3f}; items always best {len(p.always_best):,}, always
worst {len(p.always_worst):,}.

![{name}: SHR against annotations](images/{prefix}_reliability.png)
![{name}: item scores with intervals](images/{prefix}_items.png)
"""


def heading() -> str:
    """The block's title and how its figures were made."""
    return f"""### Know when to stop annotating

SHR of the counting scores now (mean over {REPORT['trials']:,} random halves, 95% spread of the
splits) and projected by Spearman–Brown and by resampling the collection's own annotations
({REPORT['repeats']} random orders × {REPORT['curve_trials']} splits per point; `semrel bws plan`
uses 20 × 50), with the annotations that reach the target; item scores with 95% intervals
(bootstrap over tuples, {REPORT['resamples']} replicates where the command uses 1,000; and the
Bradley–Terry likelihood). Seed {REPORT['seed']}. See docs/reliability-plan.md.
"""

"""Where a BWS collection stands and how many more annotations reach a target reliability.

Reliability is the split-half reliability SHR of the counting scores (:func:`split_half_bws`, the
NRC procedure: every tuple's annotations halved at random, the halves' counting scores correlated
by Spearman, mean over ``trials``). SHR(m) is a property of m annotations: each half holds m / 2.

**Spearman–Brown.** The split-half correlation of m annotations is stepped up to m' = f m
annotations (f = K / k0 for K annotations per tuple where the file has k0 = annotations / tuples)::

    SHR(f m) = f SHR(m) / (1 + (f - 1) SHR(m))          (Spearman 1910; Brown 1910)

The halves of the larger collection are f times the halves of this one, so the same f steps the
half correlation; the whole collection's reliability is 2 SHR / (1 + SHR) at any size. In odds,
SHR / (1 - SHR) grows in proportion to m. Interval: the same step applied to the 2.5 and 97.5
percentiles of the per-split Spearman (the spread over random splits).

**Resampling.** The collection is cut down to fractions of its annotations (a random nested
order per repeat, ``repeats`` orders), SHR measured at each, and the curve
logit SHR(m) = a + b log m fitted per repeat (least squares on the logit): the odds grow as m^b,
Spearman–Brown is b = 1. The SemEval-2024 files show b of about 0.2–0.3 (benchmarks/results/making-a-dataset.md,
"Know when to stop annotating: held out"). Projection and interval: the fitted curves' median and
2.5 / 97.5 percentiles over the repeats.

**Annotations to reach a target** t: m* solves SHR(m*) = t: Spearman–Brown
m* = m t (1 - r) / (r (1 - t)) (none if r <= 0); resampling m* = exp((logit t - a) / b) (none if
b <= 0). Both curves tend to 1 as m grows without bound, so what is out of reach is said against a
budget: ``CAP`` times the annotations so far; ``at_cap`` is the SHR projected there.
Which to read where they disagree: :func:`trust`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataValidationError
from .counting import Annotations

FRACTIONS = (0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0)
CAP = 100  # the largest budget a plan considers: CAP x the annotations so far


@dataclass(frozen=True)
class Reliability:
    """SHR now: mean split-half Spearman over ``trials`` random splits, and the percentile interval
    of the per-split Spearman (the spread over splits)."""

    shr: float
    low: float
    high: float
    corrected: float  # 2 shr / (1 + shr): reliability of the scores from all annotations
    trials: int
    annotations: int
    tuples: int  # distinct tuples (item sets)

    @property
    def per_tuple(self) -> float:
        return self.annotations / self.tuples


@dataclass(frozen=True)
class Curve:
    """SHR of nested random subsets of the annotations: ``shr[r, f]`` at ``annotations[f]`` in repeat r,
    and the fitted logit SHR(m) = a + b log m of each repeat (``intercept`` a, ``slope`` b)."""

    annotations: np.ndarray
    shr: np.ndarray
    intercept: np.ndarray
    slope: np.ndarray

    def at(self, m) -> np.ndarray:
        """(repeats,) fitted SHR at m annotations."""
        return 1 / (1 + np.exp(-(self.intercept + self.slope * np.log(m))))


@dataclass(frozen=True)
class Projection:
    """SHR projected at ``per_tuple`` annotations per tuple (``annotations`` in all) with its interval,
    the SHR at CAP x the annotations so far (``at_cap``), and the annotations reaching ``target``
    (inf: none within that budget)."""

    method: str
    per_tuple: float
    annotations: float
    shr: float
    low: float
    high: float
    at_cap: float
    at_cap_low: float
    at_cap_high: float
    target: float | None = None
    needed: float | None = None  # annotations in all (inf when the target is above the ceiling)
    needed_low: float | None = None
    needed_high: float | None = None

    @property
    def reliability(self) -> float:
        """2 SHR / (1 + SHR) at ``per_tuple``: the reliability of the scores from all those annotations."""
        return spearman_brown(self.shr, 2.0)


def spearman_brown(r, factor):
    """factor r / (1 + (factor - 1) r), elementwise.

    >>> round(float(spearman_brown(0.6, 2.0)), 4)
    0.75
    """
    r = np.asarray(r, dtype=np.float64)
    return factor * r / (1 + (factor - 1) * r)


def check_target(target) -> float | None:
    if target is not None and not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1) (a split-half reliability), got {target!r}")
    return target


def check_annotated_twice(ann: Annotations, source: str = "<annotations>") -> None:
    """A split-half reliability needs items annotated at least twice; name the file where none is."""
    appearances = np.bincount(ann.tuples.ravel(), minlength=len(ann.items))
    if appearances.max() < 2:
        raise DataValidationError(source, None, "every item is in one annotation only",
                                  f"{len(ann.best)} annotation(s) of {len(ann.items)} items; split-half "
                                  "reliability needs items annotated at least twice, in two halves")


def _shr(ann: Annotations, trials: int, seed) -> np.ndarray:
    """Per-split Spearman of ``trials`` splits (NaN where a split has < 2 items in both halves)."""
    import warnings

    from ..split_half.split_half import split_half_bws

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return split_half_bws(ann, trials=trials, seed=seed).spearman_trials


def shr_now(ann: Annotations, *, trials: int = 1000, seed=0, level: float = 0.95,
            source: str = "<annotations>") -> Reliability:
    """SHR of ``ann`` with the spread of its random splits (see module doc)."""
    from ..split_half.split_half import tuple_groups

    check_annotated_twice(ann, source)
    rho = _shr(ann, trials, seed)
    low, high = np.quantile(rho, [(1 - level) / 2, (1 + level) / 2])
    shr = float(rho.mean())
    tuples = int(tuple_groups(ann.tuples, len(ann.items)).max()) + 1
    return Reliability(shr=shr, low=float(low), high=float(high), corrected=float(spearman_brown(shr, 2.0)),
                       trials=len(rho), annotations=len(ann.best), tuples=tuples)


def subset(ann: Annotations, rows: np.ndarray) -> Annotations:
    """The annotations at ``rows`` (item codes unchanged; items absent from them score nothing)."""
    from dataclasses import replace

    return replace(ann, tuples=ann.tuples[rows], best=ann.best[rows], worst=ann.worst[rows], rows=ann.rows[rows])


def resampled_curve(ann: Annotations, *, fractions=FRACTIONS, repeats: int = 20, trials: int = 50,
                    seed=0) -> Curve:
    """SHR at nested random fractions of the annotations, and the curve fitted per repeat."""
    rng = np.random.default_rng(seed)
    n = len(ann.best)
    sizes = np.unique(np.round(np.asarray(fractions) * n).astype(np.int64))
    shr = np.full((repeats, len(sizes)), np.nan)
    for r in range(repeats):
        order = rng.permutation(n)
        for f, size in enumerate(sizes):
            rho = _shr(subset(ann, np.sort(order[:size])), trials, rng.integers(2**63))
            shr[r, f] = np.nanmean(rho) if np.isfinite(rho).any() else np.nan
    fits = np.array([fit_curve(sizes, row) for row in shr])
    return Curve(annotations=sizes, shr=shr, intercept=fits[:, 0], slope=fits[:, 1])


def fit_curve(m: np.ndarray, shr: np.ndarray) -> tuple[float, float]:
    """(a, b) of logit SHR(m) = a + b log m, least squares over the points with SHR in (0, 1);
    with fewer than two such points, b = 0 (a flat curve: no growth is shown)."""
    ok = np.isfinite(shr) & (shr > 0) & (shr < 1)
    if ok.sum() < 2:
        level = float(np.nanmean(shr)) if np.isfinite(shr).any() else 0.0
        return float(np.log(max(level, 1e-9) / max(1 - level, 1e-9))), 0.0
    b, a = np.polyfit(np.log(np.asarray(m, dtype=np.float64)[ok]), np.log(shr[ok] / (1 - shr[ok])), 1)
    return float(a), float(b)


def needed_sb(shr, annotations, target) -> np.ndarray:
    """Annotations m* with Spearman–Brown SHR(m*) = target from SHR at ``annotations`` (inf if SHR <= 0)."""
    shr = np.asarray(shr, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = annotations * target * (1 - shr) / (shr * (1 - target))
    return np.where(shr > 0, m, np.inf)


def needed_curve(intercept, slope, target) -> np.ndarray:
    """Annotations m* with logit SHR(m*) = a + b log m* = logit target (inf where b <= 0)."""
    intercept, slope = np.asarray(intercept, dtype=np.float64), np.asarray(slope, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        m = np.exp((np.log(target / (1 - target)) - intercept) / slope)
    return np.where(slope > 0, m, np.inf)


def project_sb(now: Reliability, per_tuple: float, target: float | None = None, cap: float = CAP) -> Projection:
    """Spearman–Brown projection of SHR to ``per_tuple`` annotations per tuple (see module doc)."""
    factor = per_tuple / now.per_tuple
    shr = np.array([now.shr, now.low, now.high])
    projected, at_cap = spearman_brown(shr, factor), spearman_brown(shr, cap)
    needed = None
    if target:
        needed = needed_sb(shr[[0, 2, 1]], now.annotations, target)
        needed[needed > cap * now.annotations] = np.inf
    return Projection(method="spearman_brown", per_tuple=per_tuple, annotations=per_tuple * now.tuples,
                      shr=float(projected[0]), low=float(projected[1]), high=float(projected[2]),
                      at_cap=float(at_cap[0]), at_cap_low=float(at_cap[1]), at_cap_high=float(at_cap[2]),
                      target=target, **(_needed(needed) if target else {}))


def project_curve(now: Reliability, curve: Curve, per_tuple: float, target: float | None = None,
                  level: float = 0.95, cap: float = CAP) -> Projection:
    """Resampling projection: the fitted curves at ``per_tuple`` annotations per tuple."""
    q = [(1 - level) / 2, 0.5, (1 + level) / 2]
    m = per_tuple * now.tuples
    low, mid, high = np.quantile(curve.at(m), q)
    cap_low, cap_mid, cap_high = np.quantile(curve.at(cap * now.annotations), q)
    needed = None
    if target:
        per_repeat = needed_curve(curve.intercept, curve.slope, target)
        per_repeat[per_repeat > cap * now.annotations] = np.inf
        needed = np.quantile(per_repeat, [0.5, (1 - level) / 2, (1 + level) / 2], method="inverted_cdf")
    return Projection(method="resampling", per_tuple=per_tuple, annotations=m, shr=float(mid), low=float(low),
                      high=float(high), at_cap=float(cap_mid), at_cap_low=float(cap_low),
                      at_cap_high=float(cap_high), target=target, **(_needed(needed) if target else {}))


def _needed(values) -> dict:
    mid, low, high = (float(v) for v in values)
    return {"needed": mid, "needed_low": min(low, high), "needed_high": max(low, high)}


def trust(sb: Projection, rs: Projection) -> str:
    """Which projection to read, and why (the rule of docs/reliability-plan.md)."""
    if rs.low <= sb.shr <= rs.high:
        return "the projections agree (Spearman–Brown inside the resampling interval): read either"
    if sb.shr > rs.high:
        return ("the projections disagree: read resampling, which measures how this collection's SHR grows; "
                "Spearman–Brown assumes parallel halves and is the optimistic bound")
    return ("the projections disagree, resampling above Spearman–Brown: read Spearman–Brown, the resampled "
            "curve grows faster than parallel halves can (a noisy fit: plan again after the next batch)")


@dataclass(frozen=True)
class BWSPlan:
    """Everything :func:`bws_plan` finds: SHR now, both projections, which to read, item intervals,
    the least certain items, items always best or always worst, and (with annotators) their checks."""

    now: Reliability
    curve: Curve
    spearman_brown: Projection
    resampling: Projection
    trust: str
    bootstrap: object  # intervals.ItemIntervals (counting)
    likelihood: object  # intervals.ItemIntervals (Bradley–Terry)
    least_certain: np.ndarray  # item codes, widest bootstrap interval first
    always_best: np.ndarray  # item codes chosen best in every annotation they are in
    always_worst: np.ndarray
    annotators: object | None = None  # annotators.AnnotatorChecks
    notes: tuple = ()  # what was not computed, and why (one line each)


def bws_plan(ann: Annotations, *, per_tuple: float | None = None, target: float | None = None, trials: int = 1000,
             resamples: int = 1000, repeats: int = 20, curve_trials: int = 50, least: int = 10, seed=0,
             annotators=None, seconds=None, source: str = "<annotations>") -> BWSPlan:
    """Where the collection ``ann`` stands and the plan to ``per_tuple`` annotations per tuple
    (default: twice the current) and to ``target`` (an SHR in (0, 1)); see the module doc.

    >>> from semrel.metrics.bws.counting import encode_annotations
    >>> rng = np.random.default_rng(0)
    >>> t = np.array([rng.choice(40, 4, replace=False) for _ in range(80)]).repeat(2, axis=0)
    >>> noisy = np.arange(40)[t] + rng.normal(scale=8, size=t.shape)
    >>> ann = encode_annotations(t, noisy.argmax(1) + 1, noisy.argmin(1) + 1, choice="position")
    >>> p = bws_plan(ann, target=0.9, trials=100, resamples=200, repeats=5, curve_trials=20)
    >>> p.now.per_tuple, p.spearman_brown.per_tuple
    (2.0, 4.0)
    >>> p.spearman_brown.shr > p.now.shr
    True
    """
    from .annotators import annotator_checks
    from .intervals import bootstrap_intervals, likelihood_intervals

    check_target(target)
    now = shr_now(ann, trials=trials, seed=seed, source=source)
    per_tuple = 2 * now.per_tuple if per_tuple is None else float(per_tuple)
    if not per_tuple > 0:
        raise ValueError(f"per_tuple must be > 0, got {per_tuple!r}")
    curve = resampled_curve(ann, repeats=repeats, trials=curve_trials, seed=seed)
    sb, rs = project_sb(now, per_tuple, target), project_curve(now, curve, per_tuple, target)
    boot = bootstrap_intervals(ann, resamples=resamples, seed=seed)
    likelihood = likelihood_intervals(ann)[0]
    n_items = len(ann.items)
    app = np.bincount(ann.tuples.ravel(), minlength=n_items)
    checks, notes = None, []
    if annotators is not None:
        try:
            checks = annotator_checks(ann, annotators, seconds, source=source)
        except DataValidationError as exc:  # one annotator: the other figures stand, the note says why
            notes.append(str(exc))
    return BWSPlan(now=now, curve=curve, spearman_brown=sb, resampling=rs, trust=trust(sb, rs),
                   bootstrap=boot, likelihood=likelihood,
                   least_certain=np.argsort(-boot.width, kind="stable")[:least],
                   always_best=np.flatnonzero(np.bincount(ann.best, minlength=n_items) == app),
                   always_worst=np.flatnonzero(np.bincount(ann.worst, minlength=n_items) == app),
                   annotators=checks, notes=tuple(notes))

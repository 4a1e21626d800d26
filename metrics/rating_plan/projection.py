"""Projected reliability of item means at K raters per item, and the raters a target needs.

Classical test theory: the mean of K raters has reliability R_K = 1 / (1 + λ/K), λ = σ²_noise /
σ²_true, so 1/R_K is linear in 1/K.

- **Spearman–Brown**: λ from the whole panel's split-half r (λ = (1/r − 1)/h_half), then
  R_K = K / (K + λ); its asymptote is 1 (Spearman 1910; Brown 1910).
- **Resampled**: the collection's own raters subsampled to k = 1, 2, ... per item (items with
  that many), each k's reliability measured by split-half (the trace), and the line
  1/R_k = b0 + b1/k fitted to it by least squares; R_K = 1 / (b0 + b1/K) with the asymptote 1/b0
  (b0 >= 1; b0 = 1 is Spearman–Brown's line). It checks the 1/K law on the data instead of
  assuming it.

Both are bootstrapped over items with the same resamples (:mod:`.reliability`). Which to trust:
inside the observed range (K <= the most raters an item has) the resampled trace measured R_K;
beyond it, Spearman–Brown unless the resampled asymptote's interval stays below 1 (the data level
off faster than 1/K: more raters of this kind buy less than Spearman–Brown promises).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from .reliability import Ranged, ranged, resample_weights, spearman_brown, split_reliability, weighted_r

MIN_TRACE_ITEMS = 10  # a trace point needs this many items with that many raters


@dataclass(frozen=True)
class Projection:
    """One projection at K raters per item (``reliability``), its asymptote, and the raters per
    item a target needs (None without a target; ``math.inf`` where it is out of reach)."""

    method: str  # "spearman-brown" or "resampled"
    reliability: Ranged
    asymptote: Ranged
    raters_needed: Ranged | None
    line: tuple[float, float]  # (b0, b1) of 1/R_K = b0 + b1/K


@dataclass(frozen=True)
class Plan:
    """The current reliability, the trace, both projections at ``raters``, and the verdict."""

    now: Ranged  # reliability of the item means as collected
    split_half: float  # the whole panel's mean split-half r
    trace_raters: np.ndarray  # k of each trace point
    trace: list[Ranged]  # R_k measured on k-rater subsamples
    raters: int  # K
    spearman_brown: Projection
    resampled: Projection
    trusted: str  # "spearman-brown" or "resampled"
    disagree: bool  # one projection's value lies outside the other's interval
    why: str  # one sentence: which to trust and why
    target: float | None
    ratings_needed: Ranged | None  # more ratings (over the current items) to reach the target, trusted projection


def fit_lines(k: np.ndarray, reliabilities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares (b0, b1) of 1/R = b0 + b1/k per row of ``reliabilities`` (rows, len(k)),
    b0 held at 1 where the free fit gives b0 < 1 (an asymptote above 1 is no reliability)."""
    x = 1.0 / np.asarray(k, dtype=np.float64)
    y = 1.0 / np.clip(reliabilities, 1e-6, None)
    if x.size == 1:
        return np.ones(y.shape[0]), (y[:, 0] - 1.0) / x[0]
    xc = x - x.mean()
    b1 = ((y - y.mean(axis=1, keepdims=True)) * xc).sum(axis=1) / (xc * xc).sum()
    b0 = y.mean(axis=1) - b1 * x.mean()
    low = b0 < 1
    b1 = np.where(low, ((y - 1.0) * x).sum(axis=1) / (x * x).sum(), b1)
    return np.where(low, 1.0, b0), b1


def needed(b0, b1, target: float) -> np.ndarray:
    """Raters per item K with 1/(b0 + b1/K) >= target (inf where the asymptote 1/b0 <= target)."""
    b0, b1 = np.asarray(b0, dtype=np.float64), np.asarray(b1, dtype=np.float64)
    gap = 1.0 / target - b0
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(gap > 0, b1 / gap, np.inf)
    return np.ceil(np.maximum(k, 1.0))


def project(values: np.ndarray, counts: np.ndarray, *, raters: int, target: float | None = None,
            max_raters: int | None = None, trials: int = 200, n_resamples: int = 400, seed: int = 0,
            confidence: float = 0.95) -> Plan:
    """The plan (module docstring) for a NaN-padded (items, raters) panel and its ``counts``."""
    if target is not None and not 0 < target < 1:
        raise ParameterError("target", target, "must be in (0, 1)")
    if raters < 1:
        raise ParameterError("raters", raters, "must be >= 1")
    rng = np.random.default_rng(seed)
    whole = split_reliability(values, counts, None, rng, trials)
    ks = [k for k in range(1, int(counts.max()) + 1) if (counts >= max(k, 2)).sum() >= MIN_TRACE_ITEMS]
    if not ks:
        ks = [1]
    splits = [split_reliability(values, counts, k, rng, trials) for k in ks]
    r_whole = float(np.nanmean(whole.r))
    point_trace = np.array([spearman_brown(np.nanmean(s.r), s.factor) for s in splits])
    boot_whole, boot_trace = [], []
    moments = np.concatenate([whole.moments] + [s.moments for s in splits], axis=1)
    for w in resample_weights(values.shape[0], n_resamples, rng):
        sums = (w @ moments).reshape(w.shape[0], len(ks) + 1, 6, -1)
        r = weighted_r(sums)  # (resamples, 1 + len(ks))
        boot_whole.append(r[:, 0])
        boot_trace.append(spearman_brown(r[:, 1:], np.array([s.factor for s in splits])))
    boot_whole, boot_trace = np.concatenate(boot_whole), np.concatenate(boot_trace)
    h_half_whole = whole.factor * float(np.mean(1.0 / counts[counts > 0]))

    def sb_line(r):  # 1/R_K = 1 + λ/K, λ = (1/r − 1)/h_half
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.ones_like(r), (1.0 / np.clip(r, 1e-6, None) - 1.0) / h_half_whole

    lines = {"spearman-brown": (sb_line(np.array([r_whole])), sb_line(boot_whole)),
             "resampled": (fit_lines(np.array(ks), point_trace[None, :]), fit_lines(np.array(ks), boot_trace))}
    projections = {}
    for method, ((p0, p1), (q0, q1)) in lines.items():
        def at(b0, b1):
            return 1.0 / (b0 + b1 / raters)
        need = None
        if target is not None:
            need = ranged(needed(p0, p1, target)[0], needed(q0, q1, target), confidence)
        projections[method] = Projection(method, ranged(at(p0, p1)[0], at(q0, q1), confidence),
                                         ranged(1.0 / p0[0], 1.0 / q0, confidence), need,
                                         (float(p0[0]), float(p1[0])))
    sb, rs = projections["spearman-brown"], projections["resampled"]
    observed = raters <= int(counts.max())
    if observed:
        trusted, why = "resampled", f"{raters} raters per item is inside the observed range: the trace measured it"
    elif rs.asymptote.high < 1:
        trusted, why = "resampled", (f"the resampled trace levels off below 1 (asymptote {rs.asymptote.value:.3f}, "
                                     f"interval up to {rs.asymptote.high:.3f}): Spearman-Brown's 1/K law overstates")
    else:
        trusted, why = "spearman-brown", ("beyond the observed raters the trace is consistent with the 1/K law "
                                          "(asymptote interval reaches 1): Spearman-Brown uses every rating")
    disagree = not (sb.reliability.low <= rs.reliability.value <= sb.reliability.high
                    and rs.reliability.low <= sb.reliability.value <= rs.reliability.high)
    more = None
    if target is not None:
        chosen = projections[trusted]
        _check_reachable(chosen, target, max_raters)

        def added(k):  # ratings to bring every item to k raters
            return float(np.maximum(k - counts[counts > 0], 0).sum()) if np.isfinite(k) else math.inf
        more = Ranged(added(chosen.raters_needed.value), added(chosen.raters_needed.low),
                      added(chosen.raters_needed.high), confidence)
    now = ranged(spearman_brown(r_whole, whole.factor), spearman_brown(boot_whole, whole.factor), confidence)
    return Plan(now, r_whole, np.array(ks), [ranged(p, boot_trace[:, j], confidence)
                                             for j, p in enumerate(point_trace)],
                raters, sb, rs, trusted, disagree, why, target, more)


def _check_reachable(chosen: Projection, target: float, max_raters: int | None) -> None:
    """A :class:`ParameterError` on ``target`` when no budget reaches it under ``chosen``."""
    if not np.isfinite(chosen.raters_needed.value):
        raise ParameterError("target", target, f"above what any budget reaches: the {chosen.method} projection "
                             f"levels off at {chosen.asymptote.value:.3f} (its asymptote)")
    if max_raters is not None and chosen.raters_needed.value > max_raters:
        b0, b1 = chosen.line
        raise ParameterError("target", target, f"above what any budget reaches with at most {max_raters} raters per "
                             f"item ({{max_raters}}): the {chosen.method} projection reaches "
                             f"{1.0 / (b0 + b1 / max_raters):.3f} there (asymptote {chosen.asymptote.value:.3f}) "
                             f"and needs {int(chosen.raters_needed.value)}")

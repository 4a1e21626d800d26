"""Best-Worst Scaling scores beyond counting: Bradley–Terry and Hollis' Value scoring.

Both read an annotation (tuple T, best b, worst w) as the paired comparisons it implies
(Hollis 2018, Behavior Research Methods 50:711, "pairings"; Marley & Louviere 2005)::

    b > x  for every other x in T   (b > w once)        x > w  for every x in T other than b, w

k - 1 + k - 2 pairs per annotation (5 for k = 4). Methods (``METHODS``):

- ``counting``: (#best - #worst) / #appearances, :mod:`semrel.metrics.bws.counting` (the default).
- ``bradley_terry``: P(i > j) = 1 / (1 + exp(theta_j - theta_i)) (Bradley & Terry 1952), theta the
  maximum a posteriori estimate under choix's penalty (``choix.opt_pairwise``)::

      minimise  sum over pairs log(1 + exp(theta_loser - theta_winner)) + alpha * sum_i theta_i^2

  An item that is always best (or always worst, or a part of the design that only ever wins
  against the rest) has no maximum-likelihood estimate: theta diverges. The penalty keeps every
  theta finite: it is a Gaussian prior theta_i ~ N(0, 1 / (2 alpha)) and the fit its posterior mode
  (choix's ``alpha``; Caron & Doucet 2012). Default ``alpha = 0.5``: a standard normal prior, which
  also shrinks the items seen in few tuples (a weaker 0.01 gave lower split-half reliability on the
  sparse SemEval-2024 files: benchmarks/results/data.md). The optimum has sum(theta) = 0. Scales:
  ``strength`` = theta (natural-log odds), ``score_01`` = sigmoid(theta) = P(item > an item of
  mean strength) in (0, 1), ``score`` = 2 * score_01 - 1 = tanh(theta / 2) in (-1, 1).

  Fitted with scipy's trust-region Newton conjugate-gradient method on the pairs aggregated per
  item pair (the objective is choix's, and the tests check the fit against
  ``choix.opt_pairwise``; choix itself loops over the pairs in Python, some 600x slower on 8,800
  annotations: benchmarks/results/data.md).
- ``value``: Hollis' (2018) Value scoring, a tournament: every item starts at v = 0.5; ``passes``
  times (Hollis: 100) the pairs are shuffled (seeded: the order matters) and each (winner, loser)
  in turn moves both values, with rate = 0.025 / pass::

      s = 1 - o_w / (o_w + o_l),  o = v / (1 - v)       (how surprising the outcome is)
      v_w += s * rate * (1 - v_w);   v_l -= s * rate * v_l

  Values stay in (0, 1) by construction, so an always-best item ends near 1, never at inf.
  Hollis adds two dummy items (one beating, one losing to every item once per pass) to bound
  Elo ratings; they are left out here (Value is bounded without them). ``score_01`` = v,
  ``score`` = 2v - 1. The passes are exact (the same numbers as a loop over the shuffled pairs):
  each step updates at once every pair whose items no earlier pending pair touches.

Every method takes the same input and raises the same errors as counting (one validation,
:func:`semrel.metrics.bws.counting.as_annotations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from .counting import BWSScoresResult, Choice, OnInvalid, as_annotations, counting_score, tally

Method = Literal["counting", "bradley_terry", "value"]
METHODS = ("counting", "bradley_terry", "value")
DEFAULT_ALPHA = 0.5
DEFAULT_PASSES = 100
VALUE_RATE = 0.025


@dataclass(frozen=True)
class BWSMethodResult(BWSScoresResult):
    """Scores of one method; ``appearances``, ``n_best``, ``n_worst`` are counts as for counting."""

    method: str = "counting"
    strength: np.ndarray | None = None  # bradley_terry: theta, natural-log odds, mean 0


def check_method(method) -> None:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, not {method!r}")


def bws_scores(tuples, best=None, worst=None, *, method: Method = "counting", choice: Choice = "item",
               on_invalid: OnInvalid = "raise", alpha: float = DEFAULT_ALPHA, passes: int = DEFAULT_PASSES,
               seed=0) -> BWSMethodResult:
    """Scores of BWS annotations by ``method`` (arguments as :func:`counting.bws_counting_scores`;
    ``alpha``: bradley_terry's penalty; ``passes`` and ``seed``: value's shuffles).

    >>> t = [["a", "b", "c", "d"], ["a", "b", "c", "e"], ["a", "c", "d", "e"]]
    >>> r = bws_scores(t, ["a", "a", "a"], ["d", "e", "d"], method="bradley_terry")
    >>> r.items.tolist(), [round(x, 2) for x in r.strength.tolist()]
    (['a', 'b', 'c', 'd', 'e'], [1.44, 0.13, 0.13, -1.15, -0.55])
    >>> bws_scores(t, ["a", "a", "a"], ["d", "e", "d"], method="value").score_01.round(3).tolist()
    [0.678, 0.505, 0.507, 0.366, 0.433]
    """
    check_method(method)
    ann = as_annotations(tuples, best, worst, choice=choice, on_invalid=on_invalid)
    appearances, n_best, n_worst = tally(ann)
    strength = None
    if method == "counting":
        score = counting_score(n_best, n_worst, appearances)
        score_01 = (score + 1.0) / 2.0
    elif method == "bradley_terry":
        strength = bradley_terry(ann.tuples, ann.best, ann.worst, len(ann.items), alpha=alpha)
        score_01 = 0.5 + 0.5 * np.tanh(strength / 2.0)  # sigmoid(theta)
        score = np.tanh(strength / 2.0)
    else:
        score_01 = value_scores(ann.tuples, ann.best, ann.worst, len(ann.items), passes=passes, seed=seed)
        score = 2.0 * score_01 - 1.0
    return BWSMethodResult(items=ann.items, appearances=appearances, n_best=n_best, n_worst=n_worst,
                           score=score, score_01=score_01, n_annotations=len(ann.best),
                           n_skipped=ann.n_skipped, method=method, strength=strength)


def method_scores(tuples, best, worst, n_items: int, method: Method, *, alpha: float = DEFAULT_ALPHA,
                  passes: int = DEFAULT_PASSES, seed=0) -> np.ndarray:
    """``score`` per item code 0..n_items-1 of coded annotations (items absent from them score 0)."""
    check_method(method)
    if method == "counting":
        appearances = np.bincount(tuples.ravel(), minlength=n_items)
        net = np.bincount(best, minlength=n_items) - np.bincount(worst, minlength=n_items)
        return counting_score(net, 0, np.maximum(appearances, 1))
    if method == "bradley_terry":
        return np.tanh(bradley_terry(tuples, best, worst, n_items, alpha=alpha) / 2.0)
    return 2.0 * value_scores(tuples, best, worst, n_items, passes=passes, seed=seed) - 1.0


def implied_pairs(tuples: np.ndarray, best: np.ndarray, worst: np.ndarray,
                  with_source: bool = False):
    """(winners, losers) of the pairs the annotations imply (k - 1 + k - 2 per annotation), item codes
    as in ``tuples``; with ``with_source`` also the annotation (row) each pair comes from."""
    winners, losers, source = [], [], []
    rows = np.arange(len(best))
    for column in np.asarray(tuples).T:
        other = column != best
        middle = other & (column != worst)
        winners += [best[other], column[middle]]
        losers += [column[other], worst[middle]]
        source += [rows[other], rows[middle]] if with_source else []
    pairs = np.concatenate(winners), np.concatenate(losers)
    return (*pairs, np.concatenate(source)) if with_source else pairs


def bradley_terry(tuples, best, worst, n_items: int, *, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """theta (n_items,) of the penalised Bradley–Terry fit to the implied pairs (see module doc)."""
    import scipy.sparse as sp
    from scipy.optimize import minimize

    if not alpha > 0:
        raise ValueError(f"alpha must be > 0 (without the penalty an always-best item has no finite "
                         f"strength), got {alpha!r}")
    i, j, wins_i, total = pair_counts(*implied_pairs(tuples, best, worst), n_items)
    # Hessian = 2 alpha I + the Laplacian of the weights total * p (1 - p): diagonal, and the upper
    # triangle as a CSR matrix whose rows are i and columns j (pair_counts sorts them so: no sort here)
    upper = sp.csr_matrix((np.zeros(len(i)), j, np.r_[0, np.cumsum(np.bincount(i, minlength=n_items))]),
                          shape=(n_items, n_items))
    state = {}  # e = exp(-|d|) of the last objective, and the Hessian of the last theta hessp saw

    def objective(theta):  # sum total * log(1 + e^d) - wins_i * d, d = theta_i - theta_j; and its gradient
        d = theta[i] - theta[j]
        e = np.exp(-np.abs(d))  # np.exp is vectorised; expit and logaddexp are slower here
        inverse = 1.0 / (1.0 + e)
        r = total * np.where(d >= 0, inverse, e * inverse) - wins_i  # total * sigmoid(d) - wins_i
        gradient = 2 * alpha * theta + np.bincount(i, r, n_items) - np.bincount(j, r, n_items)
        softplus = np.log1p(e)
        softplus += np.maximum(d, 0.0)  # log(1 + e^d)
        state["objective"] = (theta.copy(), e, inverse)
        # sums, not @: a BLAS call per evaluation costs more than the evaluation on a busy machine
        return np.sum(total * softplus - wins_i * d) + alpha * np.sum(theta * theta), gradient

    def hessp(theta, v):  # Hessian times v (scipy passes each Newton step's theta as a fresh array)
        if "theta" not in state or not np.array_equal(state["theta"], theta):
            seen, e, inverse = state.get("objective", (None, None, None))
            if seen is None or not np.array_equal(seen, theta):
                e = np.exp(-np.abs(theta[i] - theta[j]))
                inverse = 1.0 / (1.0 + e)
            upper.data = total * e * inverse * inverse  # p (1 - p) = e / (1 + e)^2
            state.update(theta=theta.copy(),
                         diag=2 * alpha + np.bincount(i, upper.data, n_items) + np.bincount(j, upper.data, n_items))
        return state["diag"] * v - upper @ v - upper.T @ v

    fit = minimize(objective, np.zeros(n_items), jac=True, hessp=hessp, method="trust-ncg",
                   options={"gtol": 1e-8 * float(total.sum()), "initial_trust_radius": 10.0})
    if not np.isfinite(fit.x).all():
        raise FloatingPointError(f"Bradley–Terry fit gave non-finite strengths ({fit.message}); alpha={alpha}")
    return fit.x


def pair_counts(winners, losers, n_items: int):
    """(i, j, wins of i over j, comparisons of i and j) per distinct item pair i < j: one sort of
    int keys (pair * 2 + 1 where the higher code won), no argsort."""
    dtype = np.int32 if 2 * n_items * n_items < 2**31 else np.int64  # a smaller key sorts faster
    winners, losers = winners.astype(dtype, copy=False), losers.astype(dtype, copy=False)
    keys = np.minimum(winners, losers) * dtype(n_items) + np.maximum(winners, losers)
    keys, counts = np.unique(keys * dtype(2) + (winners > losers), return_counts=True)
    pair = keys // 2
    start = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    total = np.add.reduceat(counts, start).astype(np.float64)
    wins_i = np.add.reduceat(np.where(keys % 2 == 0, counts, 0), start).astype(np.float64)
    return pair[start] // n_items, pair[start] % n_items, wins_i, total


def value_scores(tuples, best, worst, n_items: int, *, passes: int = DEFAULT_PASSES, rate: float = VALUE_RATE,
                 seed=0) -> np.ndarray:
    """Hollis' (2018) Value scores v (n_items,) in (0, 1) of the implied pairs (see module doc)."""
    winners, losers = implied_pairs(tuples, best, worst)
    return value_tournament(winners, losers, n_items, passes=passes, rate=rate, seed=seed)[0]


def value_tournament(winners, losers, n_items: int, members=None, *, passes: int = DEFAULT_PASSES,
                     rate: float = VALUE_RATE, seed=0) -> np.ndarray:
    """Value scores (fits, n_items) of several tournaments at once: fit f plays the pairs p with
    ``members[p, f]`` (default: one fit of every pair). All fits share one shuffle per pass, so each
    plays its own pairs in a uniformly random order (split-half trials run together this way)."""
    if passes < 1:
        raise ValueError(f"passes must be >= 1, got {passes}")
    members = np.ones((len(winners), 1), dtype=bool) if members is None else np.asarray(members, dtype=bool)
    rng = np.random.default_rng(seed)
    value = np.full((members.shape[1], n_items), 0.5)
    block = max(16, n_items // 2)  # pairs looked at per step: about 40 % of them are free
    never = np.iinfo(np.int64).max
    first = np.full(n_items, never)  # per item: its first slot in the current step
    for p in range(1, passes + 1):
        queue = rng.permutation(len(winners))  # pair indices in this pass's order
        pending = queue[:0]
        start = 0
        while start < len(queue) or len(pending):
            end = min(len(queue), start + block - len(pending))
            step = np.concatenate([pending, queue[start:end]])
            start = end
            w, lo = winners[step], losers[step]
            slots = np.column_stack([w, lo]).ravel()  # w0, l0, w1, l1, ...: slot 2m is pair m's winner
            np.minimum.at(first, slots, np.arange(len(slots)))
            at = 2 * np.arange(len(step))
            free = (first[w] == at) & (first[lo] == at + 1)  # no earlier pair in the step touches its items
            first[slots] = never
            _value_update(value, w[free], lo[free], members[step[free]].T * (rate / p))
            pending = step[~free]
    return value


def _value_update(value: np.ndarray, w: np.ndarray, lo: np.ndarray, rate) -> None:
    """One Value step of disjoint pairs in every fit (rows of ``value``; ``rate`` per fit and pair, 0
    where a fit does not play the pair): s = 1 - o_w / (o_w + o_l), o = v / (1 - v), written without
    dividing by 1 - v (= v_l (1 - v_w) / (v_l (1 - v_w) + v_w (1 - v_l)))."""
    vw, vl = value[:, w], value[:, lo]
    a, b = vl * (1.0 - vw), vw * (1.0 - vl)
    s = a / (a + b)
    value[:, w] = vw + s * rate * (1.0 - vw)
    value[:, lo] = vl - s * rate * vl

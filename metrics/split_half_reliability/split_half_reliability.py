"""evaluate adapter for split-half reliability; the math is semrel.metrics.split_half.

Config "bws" (default): BWS annotations (tuples, best, worst). Config "ratings": long-format
ratings (items, ratings).
"""

import datasets
import evaluate

from semrel.metrics.arrow_columns import numbers, sorted_codes
from semrel.metrics.bws.arrow_input import annotations_from_arrow, bws_features
from semrel.metrics.citations import ABDALLA_2023, CRONBACH_1951, KIRITCHENKO_MOHAMMAD_2017
from semrel.metrics.errors import DataValidationError
from semrel.metrics.module_inputs import StrictInputs
from semrel.metrics.split_half.split_half import DEFAULT_SEED, split_half_bws, split_half_ratings

_CITATION = KIRITCHENKO_MOHAMMAD_2017 + ABDALLA_2023 + CRONBACH_1951

_DESCRIPTION = """\
Split-half reliability (SHR): per trial, the annotations of every BWS tuple (or the ratings of
every item) are split at random into two halves; each half scores the items (BWS counting, or
mean rating) and the two score lists are correlated (Spearman with average ranks for ties, and
Pearson). Mean and standard deviation over trials, optionally Spearman-Brown corrected 2r/(1+r).
STR-2021 reports SHR 0.84 (Spearman, 1,000 trials).
"""

_KWARGS_DESCRIPTION = """
Args (config "bws"):
    tuples (list of list of str or int): the k items of each annotated tuple, one row per annotation.
    best, worst (list of str or int): item ids, or 1-based positions with choice="position".
    choice (str): "item" (default) or "position".
    missing (str): "omit" (default) leaves out, per trial, items not scored in both halves;
        "zero" scores them 0 in the half that lacks them, as SHR-BWS.pl does.
    method (str): how each half scores the items: "counting" (default), "bradley_terry" or
        "value" (as bws_scores; these two with missing="omit" only).
Args (config "ratings"):
    items (list of str): the rated item of each row.  ratings (list of float): the rating.
Args (both):
    trials (int): random splits, default 1000.  seed (int): default 0, so the same call gives the
        same answer; seed=None draws fresh randomness.
    spearman_brown (bool): also report mean 2r/(1+r).  on_invalid (str): "raise" or "omit".
Returns:
    spearman, spearman_std, pearson, pearson_std, corrected_spearman, corrected_pearson (None
    unless spearman_brown), n_items, n_items_both_mean, n_items_both_min, n_skipped.
Examples:
    >>> import evaluate
    >>> from semrel.metrics import module_path
    >>> shr = evaluate.load(module_path("split_half_reliability"))
    >>> tuples = [["a", "b", "c", "d"]] * 4 + [["a", "b", "c", "e"]] * 4
    >>> worst = ["d", "c", "d", "d", "e", "e", "c", "e"]
    >>> r = shr.compute(tuples=tuples, best=["a"] * 8, worst=worst, trials=100, seed=0)
    >>> r["n_items"], r["spearman"] > 0.5
    (5, True)
    >>> ratings = evaluate.load(module_path("split_half_reliability"), "ratings")
    >>> r = ratings.compute(items=["x", "x", "y", "y", "z", "z"], ratings=[1, 2, 3, 4, 5, 5], trials=10, seed=0)
    >>> r["n_items"]
    3
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SplitHalfReliability(StrictInputs, evaluate.Measurement):
    def _info(self):
        if self.config_name == "ratings":
            features = datasets.Features({"items": datasets.Value("string"), "ratings": datasets.Value("float64")})
        elif self.config_name in ("bws", "default"):
            features = bws_features()
        else:
            raise KeyError(f"config must be 'bws' or 'ratings', not {self.config_name!r}")
        return self._module_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, features,
                                 reference_urls=["http://saifmohammad.com/WebPages/BestWorst.html"], arrow=True)

    def _compute(self, trials=1000, seed=DEFAULT_SEED, spearman_brown=False, on_invalid="raise", choice="item",
                 missing="omit", method="counting", **columns):
        # columns: the config's inputs (tuples, best, worst | items, ratings), all required
        if self.config_name == "ratings":
            if method != "counting":
                raise ValueError(f"split_half_reliability: method applies to config 'bws' only, not 'ratings' "
                                 f"(got method={method!r})")
            if choice != "item" or missing != "omit":  # BWS options: refused, not ignored
                raise ValueError("split_half_reliability: choice and missing apply to config 'bws' only, "
                                 f"not 'ratings' (got choice={choice!r}, missing={missing!r})")
            r = _split_half_ratings(columns["items"], columns["ratings"], trials=trials, seed=seed,
                                    spearman_brown=spearman_brown, on_invalid=on_invalid)
        else:
            annotations = annotations_from_arrow(columns["tuples"], columns["best"], columns["worst"],
                                                 choice=choice, on_invalid=on_invalid)
            r = split_half_bws(annotations, trials=trials, seed=seed, missing=missing,
                               spearman_brown=spearman_brown, method=method)
        return {"spearman": r.spearman, "spearman_std": r.spearman_std, "pearson": r.pearson,
                "pearson_std": r.pearson_std, "corrected_spearman": r.corrected_spearman,
                "corrected_pearson": r.corrected_pearson, "n_items": r.n_items,
                "n_items_both_mean": float(r.n_items_both.mean()), "n_items_both_min": int(r.n_items_both.min()),
                "n_skipped": r.n_skipped}


def _split_half_ratings(items, ratings, **options):
    """split_half_ratings of Arrow columns: items as codes in sorted id order (the same groups and
    draws as the ids); the Python lists where coding cannot be exact and for errors (they name the
    row in the user's ids)."""
    coded, values = sorted_codes(items), numbers(ratings)
    if coded is not None and values is not None:
        try:
            return split_half_ratings(coded[0][0], values, **options)
        except DataValidationError:
            pass
    return split_half_ratings(items.to_pylist(), ratings.to_pylist(), **options)

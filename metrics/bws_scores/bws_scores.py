"""evaluate adapter for Best-Worst Scaling counting scores; the math is semrel.metrics.bws.counting."""

import evaluate

from semrel.metrics.bws.arrow_input import annotations_from_arrow, bws_features
from semrel.metrics.bws.scoring import bws_scores
from semrel.metrics.citations import ABDALLA_2023, KIRITCHENKO_MOHAMMAD_2016, KIRITCHENKO_MOHAMMAD_2017
from semrel.metrics.module_inputs import StrictInputs

_CITATION = KIRITCHENKO_MOHAMMAD_2016 + KIRITCHENKO_MOHAMMAD_2017 + ABDALLA_2023

_DESCRIPTION = """\
Best-Worst Scaling (BWS) scores by counting (Orme 2009): annotators see k items (usually 4) and
pick the best and the worst; each item scores (#best - #worst) / #appearances in [-1, 1], and
(score + 1) / 2 in [0, 1] as STR-2021 publishes it. Same numbers as the NRC script
get-scores-from-BWS-annotations-counting.pl, with errors that name the row for bad input.
"""

_KWARGS_DESCRIPTION = """
Args:
    tuples (list of list of str or int): the k items of each annotated tuple, one row per annotation.
    best (list of str or int): the item chosen as best: an item id, or a 1-based position in the
        tuple with choice="position".
    worst (list of str or int): the item chosen as worst, likewise.
    choice (str): "item" (default) or "position".
    on_invalid (str): "raise" (default) a DataValidationError naming the first bad row and its
        rule, or "omit" bad rows and count them in n_skipped.
    method (str): "counting" (default); "bradley_terry": score = tanh(theta / 2), score_01 =
        sigmoid(theta) of a Bradley-Terry fit (standard normal prior) to the pairs each annotation
        implies, theta also returned as "strength"; "value": Hollis' (2018) Value tournament,
        score_01 = v in (0, 1), score = 2v - 1 (seeded). See semrel.metrics.bws.scoring.
Returns:
    items: item ids, sorted; appearances, n_best, n_worst: counts per item;
    score: (n_best - n_worst) / appearances; score_01: (score + 1) / 2;
    n_annotations: annotations used; n_skipped: rows skipped.
Examples:
    >>> import evaluate
    >>> from semrel.metrics import module_path
    >>> bws = evaluate.load(module_path("bws_scores"))
    >>> r = bws.compute(tuples=[["a", "b", "c", "d"], ["a", "b", "c", "e"]], best=["a", "b"], worst=["d", "a"])
    >>> r["items"], r["score"]
    (['a', 'b', 'c', 'd', 'e'], [0.0, 0.5, 0.0, -1.0, 0.0])
    >>> bws.compute(tuples=[["a", "b", "c", "d"]], best=[1], worst=[4], choice="position")["score_01"]
    [1.0, 0.5, 0.5, 0.0]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BwsScores(StrictInputs, evaluate.Measurement):
    def _info(self):
        return self._module_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, bws_features(),
                                 reference_urls=["http://saifmohammad.com/WebPages/BestWorst.html"], arrow=True)

    def _compute(self, tuples, best, worst, choice="item", on_invalid="raise", method="counting"):
        annotations = annotations_from_arrow(tuples, best, worst, choice=choice, on_invalid=on_invalid)
        r = bws_scores(annotations, method=method)
        out = {"items": r.items.tolist(), "appearances": r.appearances.tolist(), "n_best": r.n_best.tolist(),
               "n_worst": r.n_worst.tolist(), "score": r.score.tolist(), "score_01": r.score_01.tolist(),
               "n_annotations": r.n_annotations, "n_skipped": r.n_skipped}
        if method != "counting":  # counting's output has no method key
            out["method"] = method
            if r.strength is not None:
                out["strength"] = r.strength.tolist()
        return out

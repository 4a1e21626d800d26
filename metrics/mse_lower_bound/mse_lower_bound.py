"""evaluate adapter of the MSE lower bound of averaged gold scores (math in lower_bound.py)."""

import datasets
import evaluate

from .lower_bound import mse_lower_bound

_CITATION = """\
@article{sido2021czech,
  title = {Czech News Dataset for Semantic Textual Similarity},
  author = {Sido, Jakub and Sej{\\'a}k, Michal and Pra{\\v{z}}{\\'a}k, Ond{\\v{r}}ej and Konop{\\'i}k, Miloslav and Moravec, V{\\'a}clav},
  journal = {arXiv preprint arXiv:2108.08708},
  year = {2021}
}"""

_DESCRIPTION = """\
The lowest MSE any model can expect against gold scores that are means of a few human
annotations (Sido et al. 2021, §6): per item, the estimated variance of the annotation mean,
(s²/n)·(n−1)/(n−3) under the Student-t model (n ≥ 4) or s²/n under the normal model (n ≥ 2),
averaged over items. With predictions, also the model's MSE against the item means and its excess.
"""

_KWARGS_DESCRIPTION = """
Args:
    annotations (`list` of `list` of `float`): the individual annotations of each item (ragged).
    predictions (`list` of `float`, optional): a model's score per item, on the annotation scale.
    model (`str`): "t" (default, the paper's) or "normal".
    too_few (`str`): "raise" (default) or "skip" items with too few annotations (counted).
Returns:
    mse_lower_bound, rmse_lower_bound, n_items, n_skipped, model;
    with predictions also mse and excess_mse (= mse − mse_lower_bound).
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/mse_lower_bound")
    >>> out = metric.compute(annotations=[[1, 2, 2, 3], [0, 0, 1, 1]], predictions=[2.0, 0.5])
    >>> out["mse_lower_bound"], out["mse"], out["n_items"]
    (0.375, 0.0, 2)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MseLowerBound(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"annotations": datasets.List(datasets.Value("float64"))}),
            reference_urls=["https://arxiv.org/abs/2108.08708"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Predictions are optional: passed to ``_compute`` as a keyword, not stored as a feature."""
        if references is not None:
            raise ValueError("mse_lower_bound takes annotations=..., not references=...")
        return super().compute(item_predictions=predictions, **kwargs)

    def _compute(self, annotations, item_predictions=None, model="t", too_few="raise"):
        result = mse_lower_bound(annotations, item_predictions, model=model, too_few=too_few)
        out = {"mse_lower_bound": result.bound, "rmse_lower_bound": result.rmse_bound,
               "n_items": result.n_items, "n_skipped": result.n_skipped, "model": result.model}
        if result.mse is not None:
            out.update(mse=result.mse, excess_mse=result.excess)
        return out

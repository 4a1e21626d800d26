"""evaluate adapter of the MSE lower bound of averaged gold scores (math in semrel.metrics.lower_bound)."""

import datasets
import evaluate

from semrel.metrics.citations import SIDO_2021
from semrel.metrics.lower_bound import mse_lower_bound
from semrel.metrics.module_inputs import StrictInputs

_CITATION = SIDO_2021

_DESCRIPTION = """\
The lowest MSE any model can expect against gold scores that are means of a few human
annotations (Sido et al. 2021, §6): per item, the estimated variance of the annotation mean,
(s²/n)·(n−1)/(n−3) under the Student-t model (n ≥ 4) or s²/n under the normal model (n ≥ 2),
averaged over items. With predictions, also the model's MSE against the item means and its excess.
"""

_KWARGS_DESCRIPTION = """
Args:
    annotations (`list` of `list` of `float`): the individual annotations of each item (ragged).
    predictions (`list` of `float`, optional): a model's score per item, on the annotation scale;
        left out (or None for every item), the result is the bound alone.
    model (`str`): "t" (default, the paper's) or "normal".
    on_invalid (`str`): "raise" (default) or "omit" items with too few annotations (counted).
Returns:
    mse_lower_bound, rmse_lower_bound, n_items, n_skipped, model;
    with predictions also mse and excess_mse (= mse − mse_lower_bound).
Examples:
    >>> import evaluate
    >>> from semrel.metrics import module_path
    >>> metric = evaluate.load(module_path("mse_lower_bound"))
    >>> out = metric.compute(annotations=[[1, 2, 2, 3], [0, 0, 1, 1]], predictions=[2.0, 0.5])
    >>> out["mse_lower_bound"], out["mse"], out["n_items"]
    (0.375, 0.0, 2)
    >>> metric.compute(annotations=[[1, 2, 2, 3], [0, 0, 1, 1]])["mse_lower_bound"]
    0.375
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MseLowerBound(StrictInputs, evaluate.Metric):
    def _info(self):
        # predictions is nullable: None for every item stands for "left out" (see add_batch)
        return self._module_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, datasets.Features(
            {"annotations": datasets.List(datasets.Value("float64")), "predictions": datasets.Value("float64")}),
            reference_urls=["https://arxiv.org/abs/2108.08708"])

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """As evaluate's, with ``predictions`` optional: left out, it is None for every item.

        evaluate has no optional inputs: ``compute`` fills an input left out with None and its
        ``add_batch`` then fails (``object of type 'NoneType' has no len()``).
        """
        annotations = kwargs.get("annotations")
        if predictions is None and hasattr(annotations, "__len__") and not isinstance(annotations, (str, bytes, dict)):
            predictions = [None] * len(annotations)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(self, annotations, predictions=None, model="t", on_invalid="raise"):
        result = mse_lower_bound(annotations, predictions, model=model, on_invalid=on_invalid)
        out = {"mse_lower_bound": result.bound, "rmse_lower_bound": result.rmse_bound,
               "n_items": result.n_items, "n_skipped": result.n_skipped, "model": result.model}
        if result.mse is not None:
            out.update(mse=result.mse, excess_mse=result.excess)
        return out

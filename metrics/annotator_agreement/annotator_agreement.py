"""evaluate adapter of annotator agreement over long-format ratings (math in semrel.metrics.agreement)."""

import datasets
import evaluate
import pandas as pd
import pyarrow as pa

from semrel.metrics.agreement import annotator_agreement
from semrel.metrics.arrow_columns import numbers, sorted_codes
from semrel.metrics.citations import SIDO_2021
from semrel.metrics.module_inputs import StrictInputs

_CITATION = SIDO_2021 + """\
@misc{krippendorff2011computing,
  title = {Computing Krippendorff's Alpha-Reliability},
  author = {Krippendorff, Klaus},
  year = {2011},
  howpublished = {Departmental Papers (ASC), University of Pennsylvania},
  url = {https://repository.upenn.edu/asc_papers/43}
}"""

_DESCRIPTION = """\
Agreement of human annotators from a long table of ratings (item, annotator, rating):
inter-annotator agreement as in Sido et al. (2021, Table 1) -- every rating against its item's
mean, pooled over the dataset (Pearson, Spearman, RMSE, MSE) -- and its leave-one-out variant;
intra-annotator agreement from repeated (item, annotator) ratings; Krippendorff's alpha with the
interval metric, computed in memory linear in the number of ratings.
"""

_KWARGS_DESCRIPTION = """
Args:
    items (`list` of `str` or `int`): the item of each rating.
    annotators (`list` of `str` or `int`): who gave the rating; a repeated (item, annotator)
        pair is a re-test (intra agreement only; its first rating counts everywhere else).
    ratings (`list` of `float`): the ratings.
    on_invalid (`str`): "raise" (default) or "omit" items rated by fewer than 2 annotators.
Returns:
    inter_pearson, inter_spearman, inter_rmse, inter_mse, inter_loo_pearson, inter_loo_spearman,
    inter_loo_rmse, inter_loo_mse, intra_pearson, intra_spearman, intra_rmse, intra_mse (None
    without repeated ratings), krippendorff_alpha, n_items, n_items_skipped, n_annotators,
    n_ratings, n_repeats.
Examples:
    >>> import evaluate
    >>> from semrel.metrics import module_path
    >>> metric = evaluate.load(module_path("annotator_agreement"))
    >>> out = metric.compute(items=["a", "a", "b", "b", "c", "c"],
    ...                      annotators=["x", "y", "x", "y", "x", "y"],
    ...                      ratings=[1, 2, 4, 4, 5, 6])
    >>> round(out["krippendorff_alpha"], 4), round(out["inter_mse"], 4), out["n_items"]
    (0.9038, 0.1667, 3)
"""

_FEATURES = [
    datasets.Features({"items": datasets.Value(item_type), "annotators": datasets.Value(annotator_type),
                       "ratings": datasets.Value("float64")})
    for item_type in ("string", "int64")
    for annotator_type in ("string", "int64")
]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AnnotatorAgreement(StrictInputs, evaluate.Measurement):
    def _info(self):
        return self._module_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, _FEATURES,
                                 reference_urls=["https://arxiv.org/abs/2108.08708",
                                                 "https://repository.upenn.edu/asc_papers/43"], arrow=True)

    def _compute(self, items, annotators, ratings, on_invalid="raise"):
        columns = [_ids(items), _ids(annotators), numbers(ratings)]
        if any(column is None for column in columns):  # a null or blank id: the Python lists name the row
            columns = [items.to_pylist(), annotators.to_pylist(), ratings.to_pylist()]
        result = annotator_agreement(*columns, on_invalid=on_invalid)
        out = {}
        for name in ("inter", "inter_loo", "intra"):
            part = getattr(result, name)
            for field in ("pearson", "spearman", "rmse", "mse"):
                out[f"{name}_{field}"] = None if part is None else getattr(part, field)
        out["krippendorff_alpha"] = result.alpha
        for field in ("n_items", "n_items_skipped", "n_annotators", "n_ratings", "n_repeats"):
            out[field] = getattr(result, field)
        return out


def _ids(column):
    """Integer ids as numpy; string ids as a Categorical of their codes (no Python string per row)."""
    if pa.types.is_integer(column.type):
        return numbers(column)
    coded = sorted_codes(column)
    return None if coded is None else pd.Categorical.from_codes(coded[0][0], categories=pd.Index(coded[1]))

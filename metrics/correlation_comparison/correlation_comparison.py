"""evaluate comparison module: is one system's correlation with human scores higher than another's?
(math in semrel.metrics.compare)."""

import datasets
import evaluate

from semrel.metrics.compare import compare_correlations
from semrel.metrics.module_inputs import StrictInputs

_CITATION = """\
@article{steiger1980tests,
  title = {Tests for Comparing Elements of a Correlation Matrix},
  author = {Steiger, James H.},
  journal = {Psychological Bulletin}, volume = {87}, number = {2}, pages = {245--251}, year = {1980}
}
@inproceedings{graham-baldwin-2014-testing,
  title = {Testing for Significance of Increased Correlation with Human Judgment},
  author = {Graham, Yvette and Baldwin, Timothy},
  booktitle = {Proceedings of EMNLP 2014}, pages = {172--176}, year = {2014}
}
@book{efron1993introduction,
  title = {An Introduction to the Bootstrap},
  author = {Efron, Bradley and Tibshirani, Robert J.},
  publisher = {Chapman and Hall}, year = {1993}
}
"""

_DESCRIPTION = """\
Two systems scored on the same items against the same human scores: Williams' test (df = n - 3)
for the difference of their dependent Pearson correlations, which share the references (Steiger
1980; Graham & Baldwin 2014), and a seeded paired bootstrap of the Spearman difference with its
confidence interval and a two-sided p-value.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions1 (`list` of `float`): the first system's score per item.
    predictions2 (`list` of `float`): the second system's score for the same items, same order.
    references (`list` of `float`): the human score per item.
    ids1, ids2 (`list`, optional): the item ids each system was scored on; checked to be the same
        items in the same order.
    confidence (`float`): the interval's level, default 0.95.
    n_resamples (`int`): bootstrap resamples (default 1000, at least 100).
    method (`str`): the interval: "percentile" (default; the p-value is its inversion), "BCa", "basic"
        or "auto" (BCa up to 5,000 items, else percentile).
    seed (`int`): the bootstrap's seed (default 0).
    on_invalid (`str`): "raise" (default) or "omit" items with a non-finite value (counted).
Returns:
    pearson1, pearson2, pearson_difference, pearson_difference_ci (Zou 2007), pearson_between (r of
    the two systems), williams_t,
    williams_df, williams_p_value; spearman1, spearman2, spearman_difference,
    spearman_difference_ci ([low, high]), spearman_difference_ci_method, spearman_p_value;
    confidence, n, n_omitted.
Examples:
    >>> import evaluate
    >>> from semrel.metrics import module_path
    >>> comparison = evaluate.load(module_path("correlation_comparison"), module_type="comparison")
    >>> out = comparison.compute(predictions1=[1, 2, 3, 4, 5, 6, 7, 8, 10, 9],
    ...                          predictions2=[2, 1, 4, 3, 6, 5, 8, 7, 10, 9],
    ...                          references=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    >>> round(out["williams_t"], 3), out["williams_df"], round(out["williams_p_value"], 4)
    (2.63, 7, 0.0339)
    >>> round(out["spearman_difference"], 4), out["spearman_difference_ci_method"]
    (0.0485, 'bootstrap-percentile')
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CorrelationComparison(StrictInputs, evaluate.Comparison):
    def _info(self):
        return self._module_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, datasets.Features(
            {name: datasets.Value("float64") for name in ("predictions1", "predictions2", "references")}),
            reference_urls=["https://doi.org/10.1037/0033-2909.87.2.245", "https://aclanthology.org/D14-1020/"])

    def _compute(self, predictions1, predictions2, references, ids1=None, ids2=None, confidence=0.95,
                 n_resamples=1000, method="percentile", seed=0, on_invalid="raise"):
        return compare_correlations(predictions1, predictions2, references, ids1=ids1, ids2=ids2,
                                    confidence=confidence, n_resamples=n_resamples, method=method, seed=seed,
                                    on_invalid=on_invalid).as_dict()

"""evaluate module: Pearson, Spearman and Kendall with human scores, with confidence intervals
(math in semrel.metrics.human_correlation and semrel.metrics.correlation_intervals)."""

import datasets
import evaluate

from semrel.metrics.citations import SIDO_2021
from semrel.metrics.human_correlation import correlation_with_humans
from semrel.metrics.module_inputs import StrictInputs

_CITATION = SIDO_2021 + """\
@book{efron1993introduction,
  title = {An Introduction to the Bootstrap},
  author = {Efron, Bradley and Tibshirani, Robert J.},
  publisher = {Chapman and Hall}, year = {1993}
}
@article{fieller1957tests,
  title = {Tests for Rank Correlation Coefficients. I},
  author = {Fieller, E. C. and Hartley, H. O. and Pearson, E. S.},
  journal = {Biometrika}, volume = {44}, pages = {470--481}, year = {1957}
}
"""

_DESCRIPTION = """\
Correlation of a model's scores with human scores, each coefficient with its confidence interval:
Pearson's r with the Fisher-z interval, Spearman's rho with a seeded paired bootstrap (BCa up to
5,000 items, percentile above), Kendall's tau-b with Fieller's interval. References are one gold
score per item, or every annotation of each item combined by an explicit aggregation (mean,
median, or the "average annotator" of Sido et al. 2021: each annotation against the mean of the
item's other annotations, the human figure a model is compared with). With groups (a label per
item), also per group.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `float`): the model's score per item.
    references (`list` of `float`, or `list` of `list` of `float`): the gold score per item, or the
        individual annotations of each item (ragged).
    aggregation (`str`): how annotations are combined: "mean", "median" or "average_annotator";
        required with several annotations per item, left out with one score per item.
    groups (`list`, optional): a label per item (source, language, ...): results per group too.
    confidence (`float`): the intervals' level, default 0.95.
    n_resamples (`int`): bootstrap resamples for Spearman (default 1000, at least 100).
    method (`str`): "auto" (BCa up to 5,000 items, else percentile), "BCa", "percentile" or "basic".
    seed (`int`): the bootstrap's seed (default 0: the same inputs give the same interval).
    on_invalid (`str`): "raise" (default) or "omit" items with a non-finite value (counted), and
        groups with fewer than 8 items (listed in omitted_groups).
Returns:
    pearson, spearman, kendall, each with <name>_ci ([low, high]) and <name>_ci_method; n,
    confidence, aggregation, n_items, n_omitted, n_annotations; with aggregation="average_annotator"
    also average_annotator (pearson, spearman with intervals); with groups also groups (label ->
    the same coefficients) and omitted_groups.
Examples:
    >>> import evaluate
    >>> from semrel.metrics import module_path
    >>> metric = evaluate.load(module_path("correlation_with_humans"))
    >>> out = metric.compute(predictions=[0.1, 0.4, 0.2, 0.8, 0.5, 0.9, 0.3, 0.7],
    ...                      references=[0.0, 2.5, 1.0, 4.0, 3.5, 5.0, 1.5, 4.5])
    >>> round(out["spearman"], 4), [round(v, 4) for v in out["pearson_ci"]], out["pearson_ci_method"]
    (0.9762, [0.8309, 0.9945], 'fisher-z')
    >>> out = metric.compute(predictions=[0.1, 0.4, 0.2, 0.8, 0.5, 0.9, 0.3, 0.7],
    ...                      references=[[0, 1], [2, 2], [1, 0], [4, 5], [3, 2], [5, 5], [1, 2], [4, 3]],
    ...                      aggregation="median")
    >>> round(out["spearman"], 4), out["aggregation"], out["n_annotations"]
    (0.994, 'median', 16)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CorrelationWithHumans(StrictInputs, evaluate.Metric):
    def _info(self):
        number = datasets.Value("float64")
        features = [datasets.Features({"predictions": number, "references": datasets.List(number)}),
                    datasets.Features({"predictions": number, "references": number})]
        return self._module_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, features,
                                 reference_urls=["https://arxiv.org/abs/2108.08708",
                                                 "https://docs.scipy.org/doc/scipy/reference/generated/"
                                                 "scipy.stats.bootstrap.html"])

    def _compute(self, predictions, references, aggregation=None, groups=None, confidence=0.95, n_resamples=1000,
                 method="auto", seed=0, on_invalid="raise"):
        return correlation_with_humans(predictions, references, groups=groups, aggregation=aggregation,
                                       confidence=confidence, n_resamples=n_resamples, method=method, seed=seed,
                                       on_invalid=on_invalid).as_dict()

"""evaluate module: correlation of the lexical-overlap (Dice) baseline with human scores."""

import datasets
import evaluate

from semrel.metrics.module_inputs import StrictInputs
from semrel.metrics.overlap import dice_correlation

_CITATION = """\
@inproceedings{abdalla-etal-2023-makes,
  title = {What Makes Sentences Semantically Related? A Textual Relatedness Dataset and Empirical Study},
  author = {Abdalla, Mohamed and Vishnubhotla, Krishnapriya and Mohammad, Saif M.},
  booktitle = {Proceedings of EACL 2023},
  year = {2023}
}"""

_DESCRIPTION = """\
The Dice coefficient of unique lower-cased unigrams, 2|U(X) ∩ U(Y)| / (|U(X)| + |U(Y)|)
(STR-2021 paper, Eq. 1), used as a relatedness predictor; returns its Spearman and Pearson
correlation with the human scores. On STR-2021 the paper reports Spearman 0.57 (5-fold CV mean).
"""

_KWARGS_DESCRIPTION = """
Args:
    sentence1 (list of str): first sentence of each pair.
    sentence2 (list of str): second sentence of each pair.
    references (list of float): human scores.
Returns:
    spearman (float), pearson (float), n (int)
Examples:
    >>> import evaluate
    >>> from semrel.metrics import module_path
    >>> metric = evaluate.load(module_path("lexical_overlap"))
    >>> r = metric.compute(sentence1=["a cat sat", "dogs bark", "a b"],
    ...                    sentence2=["a cat ran", "birds sing", "a b"], references=[0.6, 0.1, 1.0])
    >>> round(r["spearman"], 2)
    1.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class LexicalOverlap(StrictInputs, evaluate.Metric):
    def _info(self):
        return self._module_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, datasets.Features(
            {"sentence1": datasets.Value("string"), "sentence2": datasets.Value("string"),
             "references": datasets.Value("float64")}))

    def _compute(self, sentence1, sentence2, references):
        result = dice_correlation(sentence1, sentence2, references)
        return {"spearman": result.spearman, "pearson": result.pearson, "n": result.n}

"""semrel: human-judged sentence similarity and relatedness on the Hugging Face stack.

One import package, four parts (each is its own folder in the repository):

- ``semrel.dataset_scripts``: a builder per dataset (``REGISTRY``: STR-2021, SemRel-2024,
  crowd-sts, C-STS, Czech News STS), loaded with ``load``;
- ``semrel.metrics``: metric math as numpy functions, and an evaluate module folder per metric
  (``names()``: BWS scores, split-half reliability, annotator agreement, lexical overlap, the MSE
  lower bound, correlation with humans, correlation comparison);
- ``semrel.trainers``: cross-, bi- and tri-encoders fine-tuned with a ``transformers.Trainer``,
  and ensembles of them;
- ``semrel.publishing``: Hub-layout export, cards, the report, Spaces and ``push``.

The command line is ``semrel`` (``python -m semrel``). Importing has no side effects.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("semrel")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

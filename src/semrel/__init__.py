"""semrel: human-judged sentence similarity and relatedness on the Hugging Face stack.

One import package, four parts (each is its own folder in the repository):

- ``semrel.dataset_scripts``: builders for STR-2021, crowd-sts, C-STS, Czech News STS (``load``);
- ``semrel.metrics``: BWS scores, split-half reliability, annotator agreement, lexical overlap,
  the MSE lower bound: numpy functions, with an evaluate module folder for each;
- ``semrel.trainers``: cross-, bi- and tri-encoders fine-tuned with a ``transformers.Trainer``;
- ``semrel.publishing``: Hub-layout export, cards, the report, Spaces and ``push``.

The command line is ``semrel`` (``python -m semrel``). Importing has no side effects.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("semrel")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

"""semrel: human-judged sentence similarity and relatedness on the Hugging Face stack.

One import package, four parts (each is its own folder in the repository):

- ``semrel.dataset_scripts``: a builder and a spec per dataset (``load``; ``REGISTRY`` lists
  every dataset package that declares a spec);
- ``semrel.metrics``: numpy functions, and an evaluate module folder per metric (``names()``
  lists every folder);
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

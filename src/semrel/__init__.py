"""semrel: human-judged sentence similarity and relatedness on the Hugging Face stack.

One import package, four parts (each is its own folder in the repository):

- ``semrel.dataset_scripts``: a builder and a spec per dataset (``load``; ``REGISTRY`` lists
  every dataset package that declares a spec);
- ``semrel.metrics``: numpy functions, and an evaluate module folder per metric (``names()``
  lists every folder);
- ``semrel.trainers``: cross-, bi- and tri-encoders fine-tuned with a ``transformers.Trainer``,
  and ensembles of them;
- ``semrel.publishing``: Hub-layout export, cards, the report, Spaces and ``push``.

The command line is ``semrel`` (``python -m semrel``); ``semrel.benchmark(models, only=[...])``
is its ``benchmark`` in one call (:func:`semrel.trainers.benchmark.api.benchmark`, imported on
first use). Importing has no side effects.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("semrel")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"


def __getattr__(name: str):
    if name == "benchmark":
        from semrel.trainers.benchmark.api import benchmark

        return benchmark
    raise AttributeError(f"module 'semrel' has no attribute {name!r}")

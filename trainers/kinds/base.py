"""What a model kind is (:class:`ModelKind`): a subclass per kind, one module each, its instance
the module's ``KIND`` (found by :func:`~trainers.kinds.discover`).

Every method takes a resolved model (:class:`~trainers.model_ref.ModelRef`: ``spec`` as given,
its ``path``, its ``kind``); errors are :class:`~semrel.metrics.errors.ParameterError` on the
parameter they are given, in one line. Heavy libraries only inside the methods that need them,
so listing the kinds (``semrel --help``) imports no torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class ModelKind:
    """A kind of model folder. ``name``: the ``--model-kind`` value; ``order``: when it is asked
    to detect a folder (lower first; the first that detects it wins); ``files``: the files it
    looks for (named when no kind detects a folder); ``start_words`` / ``member_words``: the kind
    in words on a run's card (what it started from) and an ensemble's card (a member semrel did
    not train), None where it cannot be either; ``records_training``: its folder records the
    run behind it (the pairs it saw, its score range), whatever kind reads it."""

    name: ClassVar[str] = ""
    order: ClassVar[int] = 100
    files: ClassVar[tuple[str, ...]] = ()
    start_words: ClassVar[str | None] = None
    member_words: ClassVar[str | None] = None
    records_training: ClassVar[bool] = False

    def detects(self, folder: Path, parameter: str, value) -> bool:
        """Whether ``folder`` holds this kind's files (asked in ``order``): by default, the first
        of :attr:`files`."""
        return (folder / self.files[0]).is_file()

    def check(self, path, parameter: str = "model") -> Path:
        """``path`` checked whole as a model of this kind before anything is loaded: a folder that
        is not one is refused, so nothing loads with weights drawn at random."""
        raise NotImplementedError

    def check_member(self, path, parameter: str = "members") -> bool:
        """``path`` checked as an ensemble member of this kind; True for a run of ``semrel fit``
        (whose record and predictions the ensemble reads)."""
        self.check(path, parameter)
        return False

    def scorer_class(self, ref) -> type:
        """The :class:`~trainers.scoring.base.Scorer` subclass that scores ``ref``."""
        raise NotImplementedError

    def scorer(self, ref, options: dict, member):
        """The scorer of ``ref`` (``options``: the scorer's keyword arguments; ``member(ref)``:
        the loaded scorer of another model, for a kind made of models)."""
        return self.scorer_class(ref)(ref.spec, ref.path, **options)

    def scored_models(self, ref) -> list[tuple[object, str]]:
        """(model, its name in messages) of each model a scorer of ``ref`` tokenises."""
        return [(ref, ref.spec)]

    def tokenized(self, ref) -> tuple[Path, bool, str, int]:
        """What the scorer tokenises: (the folder of its tokenizer and config, whether a unit is
        a text pair, the prompt before a sentence, how many prompted sentences a unit holds)."""
        return ref.path, False, "", 1

    def start(self, ref, parameter: str) -> Path:
        """The transformer folder ``semrel fit`` starts from."""
        return ref.path

    def own_pooling(self, ref, encoder: str, parameter: str) -> tuple[str, str] | None:
        """``(pooling, the file that says it)`` a bi- or tri-``encoder`` keeps from ``ref``;
        None where the model has none."""
        return None

    def seen_folders(self, scorer) -> list[Path]:
        """The folders whose records say what the model behind ``scorer`` saw."""
        return [scorer.path]

"""The builder base shared by every semrel dataset.

A :class:`SemrelBuilder` is a ``datasets.GeneratorBasedBuilder`` that knows its upstream
:class:`~dataset_scripts.sources.Source` files, its native ``SCORE_RANGE`` and its card, and takes
a ``mirror`` keyword (see :func:`dataset_scripts.sources.fetch`). Subclasses parse and validate in
``_split_generators`` and yield rows keyed by a stable id in ``_generate_examples``.
"""

from __future__ import annotations

from dataclasses import dataclass

import datasets

from .sources import Source, fetch


@dataclass
class SemrelConfig(datasets.BuilderConfig):
    """A config; ``needs_user_data`` marks configs built only from a user-supplied ``data_dir``."""

    needs_user_data: bool = False


class SemrelBuilder(datasets.GeneratorBasedBuilder):
    BUILDER_CONFIG_CLASS = SemrelConfig
    DATASET_ID: str = ""
    SOURCES: tuple[Source, ...] = ()
    SCORE_RANGE: tuple[float, float] = (0.0, 1.0)
    CITATION: str = ""
    HOMEPAGE: str = ""
    LICENSE: str = ""

    def __init__(self, *args, mirror=None, **kwargs):
        self.mirror = mirror
        super().__init__(*args, **kwargs)

    @classmethod
    def redistributable(cls) -> bool:
        """Whether the data may be republished: every source must allow it."""
        return bool(cls.SOURCES) and all(s.redistributable for s in cls.SOURCES)

    def fetch(self, source: Source, dl_manager=None) -> str:
        return fetch(source, dl_manager=dl_manager, mirror=self.mirror)

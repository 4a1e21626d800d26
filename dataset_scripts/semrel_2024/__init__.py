"""semrel-2024: the SemEval-2024 Task 1 release (:mod:`.files`), its builder (:mod:`.builder`),
the STR-2021 link (:mod:`.str_link`), the BWS re-scoring (:mod:`.bws`) and the official evaluation
(:mod:`.evaluation`).

Importing the package is light: the builder (and with it ``datasets``) is imported on first use of
``SemRel2024`` or ``plan``, so the ``semrel`` command reads the split names without it.
"""

from .files import FILES, LANGUAGES, TRACK_A, TRACK_C, ReleaseFile, SplitRows, languages_with, read_file, read_split
from .str_link import link_str_2021

__all__ = ["FILES", "LANGUAGES", "TRACK_A", "TRACK_C", "ReleaseFile", "SemRel2024", "SplitRows",
           "languages_with", "link_str_2021", "plan", "read_file", "read_split"]


def __getattr__(name: str):
    if name in ("SemRel2024", "plan"):
        from . import builder

        return getattr(builder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

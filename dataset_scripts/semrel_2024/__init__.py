from .builder import SemRel2024, plan
from .files import FILES, LANGUAGES, TRACK_A, TRACK_C, ReleaseFile, SplitRows, languages_with, read_file, read_split
from .str_link import link_str_2021

__all__ = ["FILES", "LANGUAGES", "TRACK_A", "TRACK_C", "ReleaseFile", "SemRel2024", "SplitRows",
           "languages_with", "link_str_2021", "plan", "read_file", "read_split"]

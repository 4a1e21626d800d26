from .files import FILES, LANGUAGES, TRACK_A, TRACK_C, ReleaseFile, SplitRows, read_file, read_split

__all__ = ["FILES", "LANGUAGES", "TRACK_A", "TRACK_C", "ReleaseFile", "SplitRows", "read_file", "read_split"]

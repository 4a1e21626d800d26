from .builder import SOURCE, Str2021, read_pairs

__all__ = ["SOURCE", "Str2021", "read_pairs"]

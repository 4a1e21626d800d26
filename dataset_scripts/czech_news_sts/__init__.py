from .builder import SOURCE, USER_FILES, CzechNewsSts

__all__ = ["SOURCE", "USER_FILES", "CzechNewsSts"]

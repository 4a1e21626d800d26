from .builder import AUTHORS_LIST, FILTERED, SOURCES, CrowdSts, build_study

__all__ = ["AUTHORS_LIST", "FILTERED", "SOURCES", "CrowdSts", "build_study"]

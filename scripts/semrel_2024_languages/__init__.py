"""The parts of ``scripts/train_semrel_2024_languages.py`` (its docstring describes the study):
``units`` what it trains and scores, ``members`` the ``semrel fit`` of each member, ``tracks`` a
unit from its members to its result, ``czech`` Czech News STS, ``tables`` the tables, results and
published files, ``jobs`` the study as processes side by side (``--jobs``). The script imports it
as a top-level package (its folder is the script's ``sys.path[0]``), the tests as
``scripts.semrel_2024_languages``."""

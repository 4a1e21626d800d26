"""The parts of ``benchmarks/bench_c_sts.py`` (its docstring describes the study): ``candidates``
what a candidate is and the data it is scored on, ``runs`` each candidate's run and the ensembles,
``tables`` the results entry, its table and the published file. The script imports it as a
top-level package (its folder is the script's ``sys.path[0]``), the tests as
``benchmarks.c_sts_study``."""

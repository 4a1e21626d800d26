"""Publishing: everything that turns built datasets, metrics and models into Hub artefacts.

It sits above ``dataset_scripts``, ``metrics`` and ``trainers`` (nothing there imports it), outside
the builders' cache key: :mod:`.export` (Parquet + dataset cards), :mod:`.datasets` (per-dataset
card bodies and report sections), :mod:`.cards` (tables and plots), :mod:`.hub_vocabulary`
(allowed card values and the card check), :mod:`.guard` (raw-WorkerId scan), :mod:`.staging`
(card-only repos), :mod:`.publish` (check and push), :mod:`.report` (the HTML report),
:mod:`.spaces` (metric Spaces), :mod:`.results` (``benchmarks/results.json``) and
:mod:`.prediction_files` (the held-out prediction files beside it). Importing the package imports
none of them.
"""

"""Per-dataset card bodies and report sections, one module per dataset package
(``publishing/datasets/<package>.py``), outside the builders' cache key.

A module defines ``card_body(built, image_dir) -> str`` (markdown; plots saved into image_dir)
and optionally ``report_section(built, image_dir, *, mirror=None, cache_dir=None) -> str`` and
``overview(built, *, mirror=None, cache_dir=None) -> Overview``; the dataset's spec
(``dataset_scripts/<package>/spec.py``) names each as ``"module:function"``, and the licence,
size category, extras and card-only flag of the card are the spec's too.
"""

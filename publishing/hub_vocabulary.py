"""The Hub's card vocabulary this project uses, and a check of built cards against it.

The values are the Hub's own (``huggingface.co/datasets`` filters; e.g. SemEval-2014 Task 1,
a continuous relatedness score like ours, is tagged text-classification with the sub-tasks
semantic-similarity-scoring and text-scoring). The Hub does not reject unknown values, it just
does not index them, so :func:`check_card` is what keeps a typo out of a pushed card. Languages are
any ISO 639-1, 639-2 or 639-3 code (:func:`semrel.dataset_scripts.languages.language_problem`).
"""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from semrel.dataset_scripts.languages import language_problem
from semrel.dataset_scripts.spec import SIMILARITY_TASK_CATEGORIES, SIMILARITY_TASK_IDS

SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                   (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"))
ALLOWED = {
    "task_categories": set(SIMILARITY_TASK_CATEGORIES),
    "task_ids": set(SIMILARITY_TASK_IDS),
    "size_categories": {name for _, name in SIZE_CATEGORIES},
    "multilinguality": {"monolingual", "multilingual", "translation"},
    "source_datasets": {"original"},
    "license": {"other", "unknown", "cc0-1.0", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0",
                "cc-by-nc-sa-4.0", "apache-2.0", "mit"},
    "pipeline_tag": {"sentence-similarity", "text-classification", "text-ranking",
                     "feature-extraction"},
    "library_name": {"sentence-transformers", "transformers", "semrel"},  # semrel: its own kinds
}
DATASET_KEYS = ("pretty_name", "license", "language", "multilinguality", "size_categories",
                "task_categories", "task_ids")
MODEL_KEYS = ("license", "language", "pipeline_tag", "library_name", "datasets")
OWN_DISTRIBUTION = "semrel"  # on no package index: a card must say how to get the source instead
# Paths of the machine that built the card: the build tree, temporary and home folders
BUILD_PATH = re.compile(r"(?<![\w.-])(?:\./)?build/(?:hub|report)\b|(?<![\w.])/(?:work|tmp|home|root)/")
PIP_INSTALL = re.compile(r"pip install ([^\n`#]*)")
HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` value for ``n`` examples."""
    return next(name for limit, name in SIZE_CATEGORIES if n < limit)


def uninstallable(line: str) -> list[str]:
    """Requirements of a ``pip install`` argument list that no package index serves: this project
    by name, ``git+`` URLs (there is no public repository URL) and names that are no known
    distribution. Local paths (``.``, ``'.[train]'``, ``-e .``) install from a checkout."""
    bad = []
    for token in line.split():
        token = token.strip("'\"")
        if not token or token.startswith(("-", ".", "/")):
            continue
        name = re.split(r"[\[<>=!~;@ ]", token, maxsplit=1)[0]
        if token.startswith("git+") or name.lower() == OWN_DISTRIBUTION:
            bad.append(token)
            continue
        try:
            distribution(name)
        except PackageNotFoundError:
            bad.append(token)
    return bad


def _listed(values) -> list:
    """A card value as a list (a single value, a list, or nothing)."""
    return values if isinstance(values, list) else [values] if values else []


def check_card(path: Path, kind: str | None = None) -> list[str]:
    """Problems of a dataset or model card (README.md) against the Hub vocabulary above, its
    install lines and the paths it names (empty = fine). ``kind`` is "dataset" or "model";
    by default a card with ``pipeline_tag`` or ``library_name`` is a model card. A model card
    carries no ``model-index`` (the Hub would show self-reported figures in a results widget) and
    a ``base_model`` only as a Hub id (``namespace/name``)."""
    from huggingface_hub import RepoCard

    text = Path(path).read_text(encoding="utf-8")
    meta = RepoCard(text, ignore_metadata_errors=True).data.to_dict() if text.startswith("---") else {}
    kind = kind or ("model" if {"pipeline_tag", "library_name"} & set(meta) else "dataset")
    where = f"{path}"
    problems = [f"{where}: YAML lacks {key}" for key in (DATASET_KEYS if kind == "dataset"
                                                        else MODEL_KEYS) if not meta.get(key)]
    if kind == "model" and "model-index" in meta:
        problems.append(f"{where}: YAML has a model-index: the Hub would show these self-reported "
                        "figures in a results widget; give them in the card's text instead")
    bases = meta.get("base_model")
    problems += [f"{where}: base_model {base!r} is not a Hub id (namespace/name)"
                 for base in (bases if isinstance(bases, list) else [bases] if bases else [])
                 if not HUB_ID.fullmatch(str(base))]
    for key, allowed in ALLOWED.items():
        values = meta.get(key)
        for value in _listed(values):
            if value not in allowed:
                problems.append(f"{where}: {key} {value!r} is not in the allowed list {sorted(allowed)}")
    problems += [f"{where}: language {value!r} {problem}" for value in _listed(meta.get("language"))
                 if (problem := language_problem(value))]
    if meta.get("license") == "other":
        problems += [f"{where}: license: other needs {key}" for key in ("license_name", "license_link")
                     if not meta.get(key)]
    for line in PIP_INSTALL.findall(text):
        problems += [f"{where}: `pip install {bad}` installs nothing on a clean machine (no package "
                     "index serves it): say how to get the source and install from it"
                     for bad in uninstallable(line)]
    problems += [f"{where}: names a path of the build machine ({hit[0]!r})"
                 for hit in BUILD_PATH.finditer(text)]
    return problems

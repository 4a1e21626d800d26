"""C-STS: conditional semantic textual similarity (Deshpande et al., EMNLP 2023; shared/papers/003).

Each row holds two sentences, a natural-language condition and a 1–5 similarity under that
condition; every sentence pair appears twice, under a high- and a low-similarity condition. The
release (``data/csts.tar.enc`` of princeton-nlp/c-sts) is encrypted and its password is handed out
per user; the authors require that nobody publicly shares the decrypted contents or the password.
So this builder takes **user-supplied** data in ``data_dir``: either ``csts.tar.enc`` plus the
password (``password=`` or ``$CSTS_PASSWORD``), decrypted in memory (never written as files), or the
three decrypted CSVs. Publishing is refused (not redistributable).
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

import datasets

from ..base import SemrelBuilder, SemrelConfig
from ..errors import DataValidationError
from ..schema import sentence_pair_groups
from ..sources import Source
from .crypto import openssl_decrypt, read_tar_members

PASSWORD_ENV = "CSTS_PASSWORD"
ENCRYPTED_NAME = "csts.tar.enc"
SPLIT_FILES = {"train": "csts_train.csv", "validation": "csts_validation.csv",
               "test": "csts_test.csv"}
COLUMNS = ("sentence1", "sentence2", "condition", "label")
SCORE_RANGE = (1.0, 5.0)
HIDDEN_LABEL = -1.0  # test labels are hidden (scored by the authors' server)

SOURCE = Source(
    dataset_id="c-sts",
    file_name=ENCRYPTED_NAME,
    url="https://github.com/princeton-nlp/c-sts/raw/main/data/csts.tar.enc",
    sha256="",  # user-supplied and not mirrored: checked by decryption (padding + tar), not hash
    licence="Password from the authors on request; by using the data you agree not to publicly "
    "share its unencrypted contents (or the password).",
    licence_url="https://github.com/princeton-nlp/c-sts#data",
    redistributable=False,
)

CITATION = """\
@inproceedings{deshpande-etal-2023-csts,
  title = {{C-STS}: Conditional Semantic Textual Similarity},
  author = {Deshpande, Ameet and Jimenez, Carlos E. and Chen, Howard and Murahari, Vishvak and
            Graf, Victoria and Rajpurohit, Tanmay and Kalyan, Ashwin and Chen, Danqi and
            Narasimhan, Karthik},
  booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  year = {2023},
  url = {https://arxiv.org/abs/2305.15093}
}"""

FEATURES = {
    "default": datasets.Features({
        "sentence1": datasets.Value("string"), "sentence2": datasets.Value("string"),
        "condition": datasets.Value("string"), "score": datasets.Value("float32"),
    }),
    "pairs": datasets.Features({
        "sentence1": datasets.Value("string"), "sentence2": datasets.Value("string"),
        "condition1": datasets.Value("string"), "score1": datasets.Value("float32"),
        "condition2": datasets.Value("string"), "score2": datasets.Value("float32"),
    }),
}


def user_files(data_dir: str | None, password: str | None) -> dict[str, tuple[str, bytes]]:
    """Split -> (file name for messages, CSV bytes), from the CSVs or the encrypted archive."""
    where = (f"Put {ENCRYPTED_NAME} (from {SOURCE.url}; password from the authors) or the "
             f"three decrypted files {', '.join(SPLIT_FILES.values())} into a directory and pass "
             "it as data_dir")
    if data_dir is None:
        raise FileNotFoundError(f"c-sts needs user-supplied data. {where}.")
    folder = Path(data_dir)
    csvs = {split: folder / name for split, name in SPLIT_FILES.items()}
    if all(p.is_file() for p in csvs.values()):
        return {split: (str(p), p.read_bytes()) for split, p in csvs.items()}
    encrypted = folder / ENCRYPTED_NAME
    if not encrypted.is_file():
        found = [p.name for p in csvs.values() if p.is_file()]
        raise FileNotFoundError(f"c-sts: neither {ENCRYPTED_NAME} nor all three CSVs in {folder} "
                                f"(found CSVs: {found or 'none'}). {where}.")
    password = password if password is not None else os.environ.get(PASSWORD_ENV)
    if not password:
        raise DataValidationError(str(encrypted), None, "a password is needed to decrypt it",
                                  f"pass password=... or set ${PASSWORD_ENV}")
    plain = openssl_decrypt(encrypted.read_bytes(), password, name=str(encrypted))
    members = read_tar_members(plain, tuple(SPLIT_FILES.values()), name=str(encrypted))
    return {split: (f"{encrypted}:{name}", members[name]) for split, name in SPLIT_FILES.items()}


def read_split(name: str, data: bytes, split: str) -> list[dict]:
    """Parse and validate one C-STS CSV.

    Rules: columns sentence1, sentence2, condition, label present; sentences non-empty (an empty
    condition is kept as ``""``, as released); label a number in [1, 5], or −1 in ``test``
    (hidden, becomes null).
    """
    reader = csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline=""))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise DataValidationError(name, None, "missing column(s) " + ", ".join(missing),
                                  f"header is {reader.fieldnames}")
    rows = []
    for row_no, row in enumerate(reader, start=1):
        for column in ("sentence1", "sentence2"):
            if not (row[column] or "").strip():
                raise DataValidationError(name, row_no, f"empty {column}")
        rows.append({"sentence1": row["sentence1"], "sentence2": row["sentence2"],
                     "condition": row["condition"] or "",
                     "score": _label(name, row_no, row["label"], split)})
    return rows


def _label(name: str, row_no: int, raw: str | None, split: str) -> float | None:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise DataValidationError(name, row_no, "label must be a number", repr(raw)) from None
    if split == "test" and value == HIDDEN_LABEL:
        return None
    lo, hi = SCORE_RANGE
    if not (math.isfinite(value) and lo <= value <= hi):
        rule = f"label must be in [{lo:g}, {hi:g}]" + (" or -1 (hidden)" if split == "test" else "")
        raise DataValidationError(name, row_no, rule, repr(raw))
    return value


def condition_pairs(name: str, rows: list[dict]) -> list[dict]:
    """One row per sentence pair with both of its conditions and scores, in file order."""
    out = []
    for first, second in sentence_pair_groups(name, [r["sentence1"] for r in rows],
                                              [r["sentence2"] for r in rows]):
        a, b = rows[first], rows[second]
        out.append({"sentence1": a["sentence1"], "sentence2": a["sentence2"],
                    "condition1": a["condition"], "score1": a["score"],
                    "condition2": b["condition"], "score2": b["score"], "_row": first + 1})
    return out


class CSts(SemrelBuilder):
    """Builder of ``c-sts`` (see module docstring); extra keyword ``password``."""

    DATASET_ID = "c-sts"
    PRETTY_NAME = "C-STS: Conditional Semantic Textual Similarity"
    CARD_LICENSE = "other"
    LANGUAGES = ["en"]
    TASK_CATEGORIES = ["sentence-similarity"]
    SOURCES = (SOURCE,)
    SCORE_RANGE = SCORE_RANGE
    CITATION = CITATION
    HOMEPAGE = "https://github.com/princeton-nlp/c-sts"
    LICENSE = SOURCE.licence
    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIGS = [
        SemrelConfig(name="default", needs_user_data=True,
                     description="Rows as released: sentence1, sentence2, condition, score "
                                 "(test scores are hidden: null)."),
        SemrelConfig(name="pairs", needs_user_data=True,
                     description="One row per sentence pair with both conditions and scores."),
    ]
    DEFAULT_CONFIG_NAME = "default"

    def __init__(self, *args, password: str | None = None, **kwargs):
        self._password = password  # never part of the config, the cache key or the card
        super().__init__(*args, **kwargs)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=__doc__, features=FEATURES[self.config.name],
                                    homepage=self.HOMEPAGE, license=self.LICENSE,
                                    citation=self.CITATION)

    def _split_generators(self, dl_manager):
        files = user_files(self.config.data_dir, self._password)
        generators = []
        for split, (name, data) in files.items():
            rows = read_split(name, data, split)
            if self.config.name == "pairs":
                rows = condition_pairs(name, rows)
            generators.append(datasets.SplitGenerator(split, gen_kwargs={"rows": rows,
                                                                         "split": split}))
        return generators

    def _generate_examples(self, rows, split):
        for i, row in enumerate(rows, start=1):
            row = dict(row)
            key = f"{split}-{row.pop('_row', i)}"
            yield key, row

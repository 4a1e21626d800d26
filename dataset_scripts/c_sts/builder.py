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

import os
from pathlib import Path

import datasets

from ..base import SemrelBuilder, SemrelConfig, file_digest
from ..errors import DataValidationError
from ..schema import sentence_pair_groups
from ..sources import Source
from ..textio import NUMBER_RULE, ascii_number, csv_rows
from .crypto import key_fingerprint, openssl_decrypt, read_tar_members

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


def _where() -> str:
    return (f"Put {ENCRYPTED_NAME} (from {SOURCE.url}; password from the authors) or the three "
            f"decrypted files {', '.join(SPLIT_FILES.values())} into a directory and pass it as "
            "data_dir")


def user_paths(data_dir: str | os.PathLike | None) -> dict[str, Path]:
    """The files c-sts reads: split -> CSV when all three CSVs are in ``data_dir``, else
    ``{"archive": csts.tar.enc}``; ``FileNotFoundError`` naming the place when neither is."""
    if data_dir is None:
        raise FileNotFoundError(f"c-sts needs user-supplied data. {_where()}.")
    folder = Path(data_dir).expanduser()
    if folder.exists() and not folder.is_dir():
        raise FileNotFoundError(f"c-sts: data_dir {folder} is a file; give the folder that holds the files. "
                                f"{_where()}.")
    csvs = {split: folder / name for split, name in SPLIT_FILES.items()}
    encrypted = folder / ENCRYPTED_NAME
    folders = [p.name for p in csvs.values() if p.is_dir()]
    if not folders and not all(p.is_file() for p in csvs.values()) and encrypted.is_dir():
        folders = [encrypted.name]
    if folders:
        raise FileNotFoundError(f"c-sts: {', '.join(folders)} in {folder} is a folder, not a file. {_where()}.")
    if all(p.is_file() for p in csvs.values()):
        return csvs
    if not encrypted.is_file():
        found = [p.name for p in csvs.values() if p.is_file()]
        raise FileNotFoundError(f"c-sts: neither {ENCRYPTED_NAME} nor all three CSVs in {folder} "
                                f"(found CSVs: {found or 'none'}). {_where()}.")
    return {"archive": encrypted}


def resolve_password(password: str | None) -> str | None:
    return password if password is not None else os.environ.get(PASSWORD_ENV)


def user_files(data_dir: str | None, password: str | None,
               read=Path.read_bytes) -> dict[str, tuple[str, bytes]]:
    """Split -> (file name for messages, CSV bytes), from the CSVs or the encrypted archive;
    ``read(path)`` reads a file (the builder's checks that it is the file its cache key saw)."""
    paths = user_paths(data_dir)
    if "archive" not in paths:
        return {split: (str(p), read(p)) for split, p in paths.items()}
    encrypted = paths["archive"]
    password = resolve_password(password)
    if not password:
        raise DataValidationError(str(encrypted), None, "a password is needed to decrypt it",
                                  f"pass password=... or set ${PASSWORD_ENV}")
    plain = openssl_decrypt(read(encrypted), password, name=str(encrypted))
    members = read_tar_members(plain, tuple(SPLIT_FILES.values()), name=str(encrypted))
    return {split: (f"{encrypted}:{name}", members[name]) for split, name in SPLIT_FILES.items()}


def read_split(name: str, data: bytes, split: str) -> list[dict]:
    """Parse and validate one C-STS CSV (:func:`dataset_scripts.textio.csv_rows`: UTF-8, a
    leading BOM dropped, every row with the header's field count, at least one row).

    Rules: columns sentence1, sentence2, condition, label present; sentences non-empty (an empty
    condition is kept as ``""``, as released); label a number in ASCII digits in [1, 5], or −1 in
    ``test`` (hidden, becomes null).
    """
    rows = []
    for row_no, row in csv_rows(name, data, COLUMNS):
        for column in ("sentence1", "sentence2"):
            if not row[column].strip():
                raise DataValidationError(name, row_no, f"empty {column}")
        rows.append({"sentence1": row["sentence1"], "sentence2": row["sentence2"],
                     "condition": row["condition"],
                     "score": _label(name, row_no, row["label"], split)})
    return rows


def _label(name: str, row_no: int, raw: str, split: str) -> float | None:
    value = ascii_number(raw)
    if value is None:
        raise DataValidationError(name, row_no, f"label must be a number ({NUMBER_RULE})",
                                  repr(raw))
    if split == "test" and value == HIDDEN_LABEL:
        return None
    lo, hi = SCORE_RANGE
    if not lo <= value <= hi:
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
        self._password = password  # never in the config or the card; the cache key: see below
        super().__init__(*args, **kwargs)

    def user_inputs(self, config_name, data_dir, options) -> dict[str, str]:
        """The files read (size + sha256) and, for the archive, a fingerprint of the key the
        password derives: a wrong or missing password never finds a cached build."""
        try:
            paths = user_paths(data_dir)
        except FileNotFoundError:
            return {"data_dir": "no c-sts files"}  # the build raises
        key = {str(p): file_digest(p) for p in paths.values()}
        if "archive" in paths:
            password = resolve_password(self._password)
            try:
                key["password"] = (key_fingerprint(paths["archive"].read_bytes(), password)
                                   if password else "none")
            except DataValidationError:
                key["password"] = "unreadable archive"  # the build raises
        return key

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=__doc__, features=FEATURES[self.config.name],
                                    homepage=self.HOMEPAGE, license=self.LICENSE,
                                    citation=self.CITATION)

    def _split_generators(self, dl_manager):
        files = user_files(self.config.data_dir, self._password, read=self.user_bytes)
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

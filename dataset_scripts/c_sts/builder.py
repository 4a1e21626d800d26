"""C-STS: conditional semantic textual similarity (Deshpande et al., EMNLP 2023; shared/papers/003).

Each row holds two sentences, a natural-language condition and a 1–5 similarity under that
condition; every sentence pair appears twice, under a high- and a low-similarity condition.

Two releases, two sets of configs:

- the original (``data/csts.tar.enc`` of princeton-nlp/c-sts), configs ``default`` and ``pairs``:
  encrypted, its password handed out per user; the authors require that nobody publicly shares the
  decrypted contents or the password. So these configs take **user-supplied** data in
  ``data_dir``: either ``csts.tar.enc`` plus the password (``password=`` or ``$CSTS_PASSWORD``),
  decrypted in memory (never written as files), or the three decrypted CSVs. Their rows never
  leave the local cache (``local_only``).
- the open re-annotation (:mod:`.reannotated`, CC-BY-4.0, read from the mirror or its URL with its
  sha256), configs ``reannotated`` (train, validation, and the 214 validation rows labelled -1 as
  ``validation_invalid``), ``reannotated-pairs`` and ``reannotated-dev`` (``reannotated`` with a
  tenth of train's sentence pairs set apart as ``dev``, for choosing epochs and settings without
  looking at validation); with the original in ``data_dir`` too,
  ``reannotated-original`` puts both labels side by side (local only).
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
from . import reannotated
from .crypto import key_fingerprint, openssl_decrypt, read_tar_members

PASSWORD_ENV = "CSTS_PASSWORD"
ENCRYPTED_NAME = "csts.tar.enc"
SPLIT_FILES = {"train": "csts_train.csv", "validation": "csts_validation.csv",
               "test": "csts_test.csv"}
COLUMNS = ("sentence1", "sentence2", "condition", "label")
SCORE_RANGE = (1.0, 5.0)
MINUS_ONE = -1.0  # original test: hidden (scored by the authors' server); re-annotated validation: invalid

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

ROW_FEATURES = {"sentence1": datasets.Value("string"), "sentence2": datasets.Value("string"),
                "condition": datasets.Value("string"), "score": datasets.Value("float32")}
PAIR_FEATURES = {"sentence1": datasets.Value("string"), "sentence2": datasets.Value("string"),
                 "condition1": datasets.Value("string"), "score1": datasets.Value("float32"),
                 "condition2": datasets.Value("string"), "score2": datasets.Value("float32")}
FEATURES = {
    "default": datasets.Features(ROW_FEATURES),
    "pairs": datasets.Features(PAIR_FEATURES),
    "reannotated": datasets.Features(ROW_FEATURES),
    "reannotated-pairs": datasets.Features(PAIR_FEATURES),
    "reannotated-dev": datasets.Features(ROW_FEATURES),
    "reannotated-original": datasets.Features({**ROW_FEATURES,
                                               "original_score": datasets.Value("float32")}),
}
REANNOTATED_CONFIGS = ("reannotated", "reannotated-pairs", "reannotated-dev", "reannotated-original")


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


def read_split(name: str, data: bytes, minus_one: str | None = None) -> list[dict]:
    """Parse and validate one C-STS CSV (:func:`dataset_scripts.textio.csv_rows`: UTF-8, a
    leading BOM dropped, CRLF or LF, every row with the header's field count, at least one row).

    Rules: columns sentence1, sentence2, condition, label present; sentences non-empty (an empty
    condition is kept as ``""``, as released); label a number in ASCII digits (``3`` and ``3.0``
    alike) in [1, 5], or -1 where ``minus_one`` says what it means (the original test: hidden;
    the re-annotated validation: invalid), which becomes null. ``_row`` is the 1-based data row.
    """
    rows = []
    for row_no, row in csv_rows(name, data, COLUMNS):
        for column in ("sentence1", "sentence2"):
            if not row[column].strip():
                raise DataValidationError(name, row_no, f"empty {column}")
        rows.append({"sentence1": row["sentence1"], "sentence2": row["sentence2"],
                     "condition": row["condition"],
                     "score": _label(name, row_no, row["label"], minus_one), "_row": row_no})
    return rows


def _label(name: str, row_no: int, raw: str, minus_one: str | None) -> float | None:
    value = ascii_number(raw)
    if value is None:
        raise DataValidationError(name, row_no, f"label must be a number ({NUMBER_RULE})",
                                  repr(raw))
    if minus_one is not None and value == MINUS_ONE:
        return None
    lo, hi = SCORE_RANGE
    if not lo <= value <= hi:
        rule = f"label must be in [{lo:g}, {hi:g}]" + (f" or -1 ({minus_one})" if minus_one else "")
        raise DataValidationError(name, row_no, rule, repr(raw))
    return value


def condition_pairs(name: str, rows: list[dict]) -> list[dict]:
    """One row per sentence pair with both of its conditions and scores, in file order
    (``_row``: the row of its first condition)."""
    out = []
    for first, second in sentence_pair_groups(name, [r["sentence1"] for r in rows],
                                              [r["sentence2"] for r in rows]):
        a, b = rows[first], rows[second]
        out.append({"sentence1": a["sentence1"], "sentence2": a["sentence2"],
                    "condition1": a["condition"], "score1": a["score"],
                    "condition2": b["condition"], "score2": b["score"], "_row": a["_row"]})
    return out


def reannotated_splits(config: str, path: str, original: dict[str, tuple[str, bytes]] | None = None,
                       ) -> tuple[dict[str, list[dict]], list[str]]:
    """split -> rows of a ``reannotated*`` config from ``dataset.zip`` at ``path`` (and, for
    ``reannotated-original``, the ``original`` files: split -> (name, CSV bytes)); and the notes
    a load must repeat (rows the join could not match).

    The -1 rule (:mod:`.reannotated`): validation rows labelled -1 go to ``validation_invalid``;
    in ``reannotated-pairs`` a pair goes there when either of its conditions is -1. In
    ``reannotated-dev`` train is split into ``train`` and ``dev`` (:func:`.reannotated.carve_dev`).
    """
    splits, notes = {}, []
    for split, (name, data) in reannotated.read_members(path).items():
        rows = read_split(name, data, reannotated.INVALID_MEANING if split == "validation" else None)
        columns = ("score",)
        if config == "reannotated-pairs":
            rows, columns = condition_pairs(name, rows), ("score1", "score2")
        elif config == "reannotated-original":
            theirs = read_split(original[split][0], original[split][1], None)
            rows, counts = reannotated.join_original(rows, theirs)
            if counts["unmatched"] or counts["ambiguous"]:
                notes.append(f"c-sts/reannotated-original/{split}: original_score is null on "
                             f"{counts['unmatched']} row(s) without an original row of the same "
                             f"(sentence1, sentence2, condition) and on {counts['ambiguous']} row(s) "
                             f"whose key is held twice; {counts['matched']} matched")
        valid, invalid = reannotated.split_invalid(rows, columns)
        if config == "reannotated-dev" and split == "train":
            splits[split], splits[reannotated.DEV_SPLIT] = reannotated.carve_dev(name, valid)
        else:
            splits[split] = valid
        if invalid:
            splits[reannotated.INVALID_SPLIT] = invalid
    return splits, notes


class CSts(SemrelBuilder):
    """Builder of ``c-sts`` (see module docstring); extra keyword ``password``."""

    DATASET_ID = "c-sts"
    SOURCES = (SOURCE, reannotated.SOURCE)
    SCORE_RANGE = SCORE_RANGE
    CITATION = CITATION
    HOMEPAGE = "https://github.com/princeton-nlp/c-sts"
    LICENSE = SOURCE.licence
    VERSION = datasets.Version("1.2.0")
    BUILDER_CONFIGS = [
        SemrelConfig(name="default", needs_user_data=True, local_only=True,
                     description="The original release's rows: sentence1, sentence2, condition, "
                                 "score (test scores are hidden: null)."),
        SemrelConfig(name="pairs", needs_user_data=True, local_only=True,
                     description="The original release, one row per sentence pair with both "
                                 "conditions and scores."),
        SemrelConfig(name="reannotated",
                     description="The open re-annotation (CC-BY-4.0): train (LLM-assisted), "
                                 "validation (Tu et al. 2024's human labels), validation_invalid "
                                 "(the rows labelled -1, score null)."),
        SemrelConfig(name="reannotated-pairs",
                     description="The re-annotation, one row per sentence pair with both conditions; "
                                 "a pair with -1 on either side is in validation_invalid."),
        SemrelConfig(name="reannotated-dev",
                     description="The re-annotation with a dev split for choosing: a tenth of "
                                 "train's sentence pairs (both conditions of a pair together), "
                                 "train the rest; validation and validation_invalid as in "
                                 "reannotated."),
        SemrelConfig(name="reannotated-original", needs_user_data=True, local_only=True,
                     description="The re-annotation's rows with original_score: the original "
                                 "release's label of the same (sentence1, sentence2, condition)."),
    ]
    DEFAULT_CONFIG_NAME = "default"

    def __init__(self, *args, password: str | None = None, **kwargs):
        self._password = password  # never in the config or the card; the cache key: see below
        super().__init__(*args, **kwargs)

    def user_inputs(self, config_name, data_dir, options) -> dict[str, str]:
        """The files read (size + sha256) and, for the archive, a fingerprint of the key the
        password derives: a wrong or missing password never finds a cached build. Configs of the
        re-annotation alone read no user file."""
        if config_name in REANNOTATED_CONFIGS and config_name != "reannotated-original":
            return {}
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
        """A re-annotation config cites the re-annotation too; it is CC-BY-4.0 unless it holds
        the original's labels (``reannotated-original``: the original's terms)."""
        name = self.config.name
        open_only = name in REANNOTATED_CONFIGS and not self.config.local_only
        return datasets.DatasetInfo(
            description=__doc__, features=FEATURES[name], homepage=self.HOMEPAGE,
            license=reannotated.SOURCE.licence if open_only else self.LICENSE,
            citation=f"{self.CITATION}\n{reannotated.CITATION}" if name in REANNOTATED_CONFIGS
            else self.CITATION)

    def _split_generators(self, dl_manager):
        config = self.config.name
        if config in REANNOTATED_CONFIGS:
            original = (user_files(self.config.data_dir, self._password, read=self.user_bytes)
                        if config == "reannotated-original" else None)
            splits, notes = reannotated_splits(config, self.fetch(reannotated.SOURCE, dl_manager),
                                               original)
            for message in notes:
                self.note(message)
        else:
            splits = {}
            for split, (name, data) in user_files(self.config.data_dir, self._password,
                                                  read=self.user_bytes).items():
                rows = read_split(name, data, "hidden" if split == "test" else None)
                splits[split] = condition_pairs(name, rows) if config == "pairs" else rows
        return [datasets.SplitGenerator(split, gen_kwargs={"rows": rows, "split": split})
                for split, rows in splits.items()]

    def _generate_examples(self, rows, split):
        for row in rows:
            row = dict(row)
            yield f"{split}-{row.pop('_row')}", row

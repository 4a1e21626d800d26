"""STR-2021: 5,500 English sentence pairs scored for semantic relatedness by Best-Worst Scaling.

Abdalla, Vishnubhotla & Mohammad (EACL 2023), "What Makes Sentences Semantically Related? A
Textual Relatedness Dataset and Empirical Study" (shared/papers/001). Score = ((#best − #worst) /
#appearances + 1) / 2 in [0, 1]; ``bws_score`` = 2·score − 1 is the raw counting score in [−1, 1].
Configs follow the paper's §6 protocols: 5-fold CV stratified by subset and leave-one-source-out.
"""

from __future__ import annotations

from pathlib import Path

import datasets

from ..base import SemrelBuilder, SemrelConfig
from ..errors import DataValidationError
from ..sources import Source
from ..splits import leave_one_group_out, stratified_folds
from ..textio import NUMBER_RULE, ascii_number, csv_rows

SOURCE = Source(
    dataset_id="str-2021",
    file_name="sem_text_rel_ranked.csv",
    url="https://raw.githubusercontent.com/Priya22/semantic-textual-relatedness/master/sem_text_rel_ranked.csv",
    sha256="2624f378bbd4793466c235720e6d6b386449c322f576667825bea3998dc66a9d",
    licence="Research use only; cite the paper; do not redistribute (direct people to "
    "https://doi.org/10.5281/zenodo.7599667 or the GitHub repository). Commercial use: "
    "contact NRC.",
    licence_url="https://github.com/Priya22/semantic-textual-relatedness",
    redistributable=False,
)

SOURCES_IN_DATA = ("Formality", "Goodreads", "ParaNMT", "SNLI", "STS", "Stance", "Wikipedia")
N_FOLDS = 5
FOLD_SALT = "str-2021/cv"
COLUMNS = ("Index", "SourceID", "SubsetID", "PairID", "Text", "Score")

CITATION = """\
@inproceedings{abdalla-etal-2023-makes,
  title = {What Makes Sentences Semantically Related? A Textual Relatedness Dataset and Empirical Study},
  author = {Abdalla, Mohamed and Vishnubhotla, Krishnapriya and Mohammad, Saif M.},
  booktitle = {Proceedings of the 17th Conference of the European Chapter of the Association for
               Computational Linguistics},
  year = {2023},
  address = {Dubrovnik, Croatia},
  url = {https://arxiv.org/abs/2110.04845}
}"""

FEATURES = datasets.Features(
    {
        "pair_id": datasets.Value("string"),
        "source": datasets.Value("string"),
        "subset": datasets.Value("string"),
        "sentence1": datasets.Value("string"),
        "sentence2": datasets.Value("string"),
        "score": datasets.Value("float32"),
        "bws_score": datasets.Value("float32"),
    }
)


def _configs() -> list[SemrelConfig]:
    configs = [SemrelConfig(name="default", description="All 5,500 pairs in one split.")]
    configs += [
        SemrelConfig(name=f"cv-fold-{i}",
                     description=f"5-fold CV stratified by subset: fold {i} is the test split.")
        for i in range(N_FOLDS)
    ]
    configs += [
        SemrelConfig(name=f"lodo-{s.lower()}",
                     description=f"Leave-one-source-out: test = {s}, train = the other sources.")
        for s in SOURCES_IN_DATA
    ]
    return configs


def read_pairs(path: str) -> list[dict]:
    """Parse and validate ``sem_text_rel_ranked.csv``; raise DataValidationError on any bad row.

    Rules: those of :func:`dataset_scripts.textio.csv_rows` (UTF-8, the header's field count);
    all columns present; Text holds two non-empty sentences split by exactly one newline; Score
    is a number (ASCII digits) in [0, 1] with at most 3 decimals (float noise such as
    0.35700000000000004 is rounded away, anything coarser is an error); PairID unique and of the
    form ``<SubsetID>_<n>``.
    """
    pairs, first_row_of = [], {}
    for row_no, row in csv_rows(path, Path(path).read_bytes(), COLUMNS):
        pair_id = row["PairID"]
        if pair_id in first_row_of:
            raise DataValidationError(path, row_no, "duplicate PairID",
                                      f"{pair_id!r} first seen at row {first_row_of[pair_id]}")
        first_row_of[pair_id] = row_no
        if not pair_id.startswith(row["SubsetID"] + "_"):
            raise DataValidationError(path, row_no, "PairID must be <SubsetID>_<n>",
                                      f"PairID {pair_id!r}, SubsetID {row['SubsetID']!r}")
        text = row["Text"]
        if text.count("\n") != 1:
            raise DataValidationError(path, row_no, "Text must hold two sentences separated "
                                      "by exactly one newline",
                                      f"{pair_id}: found {text.count(chr(10))} newlines")
        sentence1, sentence2 = (s.strip() for s in text.split("\n"))
        if not sentence1 or not sentence2:
            raise DataValidationError(path, row_no, "empty sentence", pair_id)
        pairs.append({"pair_id": pair_id, "source": row["SourceID"],
                      "subset": row["SubsetID"], "sentence1": sentence1,
                      "sentence2": sentence2, **_scores(path, row_no, row["Score"])})
    return pairs


def _scores(path: str, row_no: int, raw: str) -> dict:
    value = ascii_number(raw)
    if value is None:
        raise DataValidationError(path, row_no, f"Score must be a number ({NUMBER_RULE})",
                                  repr(raw))
    if not 0.0 <= value <= 1.0:
        raise DataValidationError(path, row_no, "Score must be in [0, 1]", repr(raw))
    score = round(value, 3)
    if abs(value - score) > 1e-9:
        raise DataValidationError(path, row_no, "Score must have at most 3 decimals", repr(raw))
    return {"score": score, "bws_score": round(2 * score - 1, 3)}


class Str2021(SemrelBuilder):
    """Builder of ``str-2021`` (see module docstring)."""

    DATASET_ID = "str-2021"
    SOURCES = (SOURCE,)
    SCORE_RANGE = (0.0, 1.0)
    CITATION = CITATION
    HOMEPAGE = "https://github.com/Priya22/semantic-textual-relatedness"
    LICENSE = SOURCE.licence
    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIGS = _configs()
    DEFAULT_CONFIG_NAME = "default"

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=__doc__, features=FEATURES, homepage=self.HOMEPAGE,
                                    license=self.LICENSE, citation=self.CITATION)

    def _split_generators(self, dl_manager):
        pairs = read_pairs(self.fetch(SOURCE, dl_manager))
        name = self.config.name
        if name == "default":
            return [datasets.SplitGenerator(datasets.Split.TRAIN, gen_kwargs={"pairs": pairs})]
        if name.startswith("cv-fold-"):
            folds = stratified_folds([p["pair_id"] for p in pairs], [p["subset"] for p in pairs],
                                     N_FOLDS, salt=FOLD_SALT)
            test = folds == int(name.rsplit("-", 1)[1])
        else:
            masks = leave_one_group_out([p["source"].lower() for p in pairs])
            test = masks[name.removeprefix("lodo-")]
        return [
            datasets.SplitGenerator(datasets.Split.TRAIN,
                                    gen_kwargs={"pairs": [p for p, t in zip(pairs, test, strict=True) if not t]}),
            datasets.SplitGenerator(datasets.Split.TEST,
                                    gen_kwargs={"pairs": [p for p, t in zip(pairs, test, strict=True) if t]}),
        ]

    def _generate_examples(self, pairs):
        for pair in pairs:
            yield pair["pair_id"], pair

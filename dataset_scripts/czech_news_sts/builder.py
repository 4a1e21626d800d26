"""Czech News STS: Czech news sentence pairs scored 0–6 for semantic textual similarity.

Sido et al. (2021), "Czech News Dataset for Semantic Textual Similarity" (shared/papers/004,
arXiv:2108.08708). The context-free test split (``free``, 1,200 pairs, 9 annotations each) comes
from the public upstream file; the rest of the release (train raw/N2/N1, the context-dependent
test) only from a user-supplied ``data_dir`` laid out as in :data:`USER_FILES` (paper §8 formats,
see ``formats.py``). ``sig`` is computed: the pairs whose context-free and context-dependent
means differ at the 0.95 level (two-sided t-test per pair, ``significance.py``; paper §5.1).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import datasets

from semrel.metrics.citations import SIDO_2021
from semrel.metrics.errors import check_on_invalid

from ..base import SemrelBuilder, SemrelConfig, file_digest
from ..errors import DataValidationError
from ..sources import Source
from .formats import SCALE, read_dep, read_test, read_train
from .significance import LEVEL, context_shift_ttest, significant

SOURCE = Source(
    dataset_id="czech-news-sts",
    file_name="free-test.tsv",
    url="https://raw.githubusercontent.com/seznam/czech-semantic-embedding-models/main/data/free-test.tsv",
    sha256="a0156a77dbebfa29c2e4a7baed8651aad77701a25ea0e6659179e610dc81cafb",
    licence="No data licence stated. The paper offers the dataset 'publicly accessible for research "
    "purposes' and releases it only as a text export because its source (Czech News Agency "
    "reports) is not public (§3, §8); the repository's CC-BY-4.0 covers its models, not this "
    "file. Treated as research use only and not redistributable.",
    licence_url="https://github.com/seznam/czech-semantic-embedding-models",
    redistributable=False,
)

FREE_ANNOTATIONS = 9  # every pair of the free test has exactly 9 annotations (paper §4.2.2)
USER_FILES = {
    "train-raw": "train-raw.tsv",
    "train-n2": "train-n2.tsv",
    "train-n1": "train-n1.tsv",
    "dep": "dep-test.tsv",
}

CITATION = SIDO_2021

_SCORES = datasets.List(datasets.Value("int8"))
_PAIR = {"pair_id": datasets.Value("string"), "sentence1": datasets.Value("string"),
         "sentence2": datasets.Value("string"), "score": datasets.Value("float32")}
_R1 = {"r1_score": datasets.Value("int8"), "r1_score_raw": datasets.Value("int32"),
       "r1_score_valid": datasets.Value("bool")}
_CONTEXT = {"context1": datasets.Value("string"), "context2": datasets.Value("string")}
FEATURES = {
    "free": datasets.Features({**_PAIR, "annotations": _SCORES, **_R1}),
    "dep": datasets.Features({**_PAIR, **_CONTEXT, "annotations": _SCORES, **_R1}),
    "sig": datasets.Features({**_PAIR, **_CONTEXT, "score_free": datasets.Value("float32"),
                              "annotations": _SCORES, "annotations_free": _SCORES,
                              "t_statistic": datasets.Value("float64"),
                              "p_value": datasets.Value("float64")}),
    "train": datasets.Features(_PAIR),
}


@dataclass
class CzechNewsConfig(SemrelConfig):
    """``on_invalid="omit"`` drops invalid rows of user-supplied files (counts are warned on
    every load); ``"raise"`` (default) stops at the first."""

    on_invalid: str = "raise"

    def __post_init__(self):
        super().__post_init__()
        check_on_invalid(self.on_invalid)


def _configs() -> list[CzechNewsConfig]:
    return [
        CzechNewsConfig(name="free", description="Context-free test: 1,200 pairs, mean of 9 "
                        "annotations, every annotation, the R1 score (public upstream file)."),
        CzechNewsConfig(name="dep", needs_user_data=True,
                        description="Context-dependent test (user-supplied dep-test.tsv), "
                        "aligned with the free test by pair_id."),
        CzechNewsConfig(name="sig", needs_user_data=True,
                        description="Pairs whose free and dep means differ at the 0.95 level "
                        "(two-sided t-test per pair); score = context-dependent mean."),
        *(CzechNewsConfig(name=name, needs_user_data=True,
                          description=f"Train {name.split('-')[1].upper()}: two sentences + the "
                          f"R1 score (user-supplied {file}).")
          for name, file in USER_FILES.items() if name.startswith("train-")),
    ]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _with_r1(pair: dict) -> dict:
    raw = pair.pop("r1_score_raw")
    valid = SCALE[0] <= raw <= SCALE[1]
    return {**pair, "r1_score": raw if valid else None, "r1_score_raw": raw, "r1_score_valid": valid}


def align_dep(free: list[dict], dep: list[dict], dep_path: str) -> list[dict]:
    """Give each dep row the pair_id of its free counterpart (same key sentences, k-th occurrence)."""
    ids = defaultdict(list)
    for pair in free:
        ids[(_norm(pair["sentence1"]), _norm(pair["sentence2"]))].append(pair["pair_id"])
    taken, rows = Counter(), defaultdict(list)
    for pair in dep:
        key = (_norm(pair["sentence1"]), _norm(pair["sentence2"]))
        if key in ids and taken[key] >= len(ids[key]):
            raise DataValidationError(dep_path, pair["row"], "context-dependent pair occurs more often "
                                      f"than in the free test ({len(ids[key])}x there): a duplicated row?",
                                      f"same key sentences as row(s) {rows[key]}: "
                                      f"{key[0][:60]!r} / {key[1][:60]!r}")
        if key not in ids:
            raise DataValidationError(dep_path, pair["row"], "context-dependent pair has no "
                                      "context-free counterpart (key sentences must equal a "
                                      "free-test pair)", f"{key[0][:60]!r} / {key[1][:60]!r}")
        rows[key].append(pair["row"])
        pair["pair_id"] = ids[key][taken[key]]
        taken[key] += 1
    return dep


class CzechNewsSts(SemrelBuilder):
    """Builder of ``czech-news-sts`` (see module docstring)."""

    DATASET_ID = "czech-news-sts"
    SOURCES = (SOURCE,)
    SCORE_RANGE = (0.0, 6.0)
    CITATION = CITATION
    HOMEPAGE = "https://arxiv.org/abs/2108.08708"
    LICENSE = SOURCE.licence
    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = CzechNewsConfig
    BUILDER_CONFIGS = _configs()
    DEFAULT_CONFIG_NAME = "free"

    def _info(self) -> datasets.DatasetInfo:
        kind = "train" if self.config.name.startswith("train-") else self.config.name
        return datasets.DatasetInfo(description=__doc__, features=FEATURES[kind],
                                    homepage=self.HOMEPAGE, license=self.LICENSE,
                                    citation=self.CITATION)

    @staticmethod
    def _user_file_names(config_name: str) -> list[str]:
        if config_name in ("dep", "sig"):
            return [USER_FILES["dep"]]
        return [USER_FILES[config_name]] if config_name in USER_FILES else []

    def user_inputs(self, config_name, data_dir, options) -> dict[str, str]:
        """Size + sha256 of the user files ``config_name`` reads (``"absent"`` if missing)."""
        names = self._user_file_names(config_name)
        return {str(Path(data_dir) / n): file_digest(Path(data_dir) / n)
                for n in names} if data_dir else {n: "absent" for n in names}

    def _user_file(self, config: str) -> Path:
        name = USER_FILES[config]
        where = Path(self.config.data_dir) / name if self.config.data_dir else None
        if where is not None and where.parent.exists() and not where.parent.is_dir():
            raise DataValidationError(where.parent, None, "data_dir is a file, not a folder",
                                      f"give the folder that holds {name}")
        if where is not None and where.exists() and not where.is_file():
            raise DataValidationError(where, None, f"is a folder, not the file {name}",
                                      f"czech-news-sts/{self.config.name} reads this file, in the paper §8 format")
        if where is None or not where.is_file():
            raise FileNotFoundError(
                f"czech-news-sts/{self.config.name} needs {name} (paper §8 format, from the "
                f"authors' release); put it at {where if where else f'<data_dir>/{name}'} and pass "
                f"data_dir=... (docs/datasets.md, 'Czech News STS')")
        return where

    def _read(self, reader, path, user_file: bool = True, **kwargs) -> list[dict]:
        data = self.user_bytes(path) if user_file else None
        rows, omitted = reader(path, on_invalid=self.config.on_invalid, data=data, **kwargs)
        if omitted:
            self.note(f"{path}: omitted {sum(omitted.values())} invalid rows ("
                      + ", ".join(f"{rule}: {n}" for rule, n in sorted(omitted.items())) + ")")
        return rows

    def _free(self, dl_manager) -> list[dict]:
        pairs = self._read(read_test, self.fetch(SOURCE, dl_manager), user_file=False,
                           n_annotations=FREE_ANNOTATIONS)
        for pair in pairs:
            pair["pair_id"] = f"test-{pair['row']:04d}"
        return pairs

    def _dep(self, free: list[dict]) -> list[dict]:
        path = self._user_file("dep")
        return align_dep(free, self._read(read_dep, path), str(path))

    def _split_generators(self, dl_manager):
        name = self.config.name
        if name.startswith("train-"):
            pairs = self._read(read_train, self._user_file(name))
            for pair in pairs:
                pair["pair_id"] = f"{name}-{pair['row']:06d}"
            return [datasets.SplitGenerator(datasets.Split.TRAIN, gen_kwargs={"pairs": pairs})]
        if name == "dep":
            self._user_file("dep")  # fail on a missing file before fetching anything
        free = self._free(dl_manager)
        if name == "free":
            pairs = [_with_r1(p) for p in free]
        elif name == "dep":
            pairs = [_with_r1(p) for p in self._dep(free)]
        else:
            pairs = self._significant(free, self._dep(free))
            if not pairs:
                raise DataValidationError(self._user_file("dep"), None, "sig: no pair's "
                                          "context-free and context-dependent means differ at "
                                          f"the {LEVEL} level", "the sig config would be empty")
        return [datasets.SplitGenerator(datasets.Split.TEST, gen_kwargs={"pairs": pairs})]

    def _significant(self, free: list[dict], dep: list[dict]) -> list[dict]:
        by_id = {p["pair_id"]: p for p in free}
        testable = [d for d in dep if len(d["annotations"]) >= 2
                    and len(by_id[d["pair_id"]]["annotations"]) >= 2]
        if len(testable) < len(free):
            self.note(f"sig: {len(free) - len(testable)} of {len(free)} free pairs not tested "
                      "(no dep counterpart or < 2 annotations on a side)")
        dep = testable
        test = context_shift_ttest([by_id[d["pair_id"]]["annotations"] for d in dep],
                                   [d["annotations"] for d in dep])
        keep = significant(test, LEVEL)
        return [{"pair_id": d["pair_id"], "sentence1": d["sentence1"], "sentence2": d["sentence2"],
                 "context1": d["context1"], "context2": d["context2"], "score": d["score"],
                 "score_free": by_id[d["pair_id"]]["score"], "annotations": d["annotations"],
                 "annotations_free": by_id[d["pair_id"]]["annotations"],
                 "t_statistic": float(t), "p_value": float(p)}
                for d, t, p, k in zip(dep, test.statistic, test.pvalue, keep, strict=True) if k]

    def _generate_examples(self, pairs):
        for pair in pairs:
            yield pair["pair_id"], {k: v for k, v in pair.items() if k != "row"}

"""SemRel-2024: sentence pairs in 14 languages scored for semantic relatedness by Best-Worst Scaling.

Ousidhoum et al. (Findings of ACL 2024), "SemRel2024: A Collection of Semantic Textual Relatedness
Datasets for 14 Languages"; SemEval-2024 Task 1. Same protocol as STR-2021: score =
((#best − #worst) / #appearances + 1) / 2 in [0, 1]. Configs:

- ``<lang>`` (14: afr amh arb arq ary eng esp hau hin ind kin mar pan tel): every split the task
  published for it, ``train`` (Track A's nine languages), ``validation`` (upstream "dev") and
  ``test``. Spanish test scores are null (never published); English test scores are null when the
  labelled file (held back from the mirror) cannot be had, and a note says so on every load.
- ``cross-lingual-<lang>`` (Track C's twelve): train = every Track A train set except the target
  language's, validation/test = the target's.
- ``all``: every language, one split each.

Columns: ``pair_id`` (upstream PairID, checked to name its language and split), ``language``,
``sentence1``, ``sentence2``, ``score`` (float32, null where unpublished); configs holding English
train add ``str_2021_pair_id`` and ``str_2021_source``: English train *is* STR-2021 (see
``str_link.py``).
"""

from __future__ import annotations

import datasets

from ..base import SemrelBuilder, SemrelConfig, file_digest
from ..errors import DataValidationError
from ..sources import mirror_dirs
from ..str_2021 import SOURCE as STR_2021_SOURCE
from ..str_2021 import read_pairs as read_str_2021
from .files import (
    AFR_PILOT,
    DATASET_ID,
    ENG_TEST_UNLABELLED,
    FILES,
    LANGUAGES,
    REPOSITORY,
    SPLIT_NAMES,
    TRACK_A,
    TRACK_C,
    read_file,
    read_split,
)
from .str_link import link_str_2021

CITATION = """\
@inproceedings{ousidhoum-etal-2024-semrel2024,
  title = {{SemRel2024}: A Collection of Semantic Textual Relatedness Datasets for 14 Languages},
  author = {Ousidhoum, Nedjma and Muhammad, Shamsuddeen Hassan and Abdalla, Mohamed and others},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2024},
  year = {2024},
  url = {https://arxiv.org/abs/2402.08638}
}
@inproceedings{ousidhoum-etal-2024-semeval,
  title = {{SemEval}-2024 Task 1: Semantic Textual Relatedness for African and Asian Languages},
  author = {Ousidhoum, Nedjma and Muhammad, Shamsuddeen Hassan and Abdalla, Mohamed and others},
  booktitle = {Proceedings of the 18th International Workshop on Semantic Evaluation (SemEval-2024)},
  year = {2024}
}"""

_BASE = {"pair_id": datasets.Value("string"), "language": datasets.Value("string"),
         "sentence1": datasets.Value("string"), "sentence2": datasets.Value("string"),
         "score": datasets.Value("float32")}
_STR_LINK = {"str_2021_pair_id": datasets.Value("string"),
             "str_2021_source": datasets.Value("string")}
FEATURES = datasets.Features(_BASE)
FEATURES_WITH_STR_LINK = datasets.Features({**_BASE, **_STR_LINK})
HELD_BACK = ("eng", "test")


def plan(config: str) -> dict[str, list[tuple[str, str]]]:
    """Our split -> the (language, upstream split) files it concatenates, for ``config``."""
    if config == "all":
        return {ours: [key for key in FILES if key[1] == split] for split, ours in SPLIT_NAMES.items()}
    target = config.removeprefix("cross-lingual-")
    if config.startswith("cross-lingual-"):
        return {"train": [(lang, "train") for lang in TRACK_A if lang != target],
                "validation": [(target, "dev")], "test": [(target, "test")]}
    return {ours: [(config, split)] for split, ours in SPLIT_NAMES.items() if (config, split) in FILES}


def config_languages(config: str) -> tuple[str, ...]:
    """The languages of ``config``'s rows, in :data:`LANGUAGES` order."""
    present = {language for files in plan(config).values() for language, _ in files}
    return tuple(language for language in LANGUAGES if language in present)


def _configs() -> list[SemrelConfig]:
    configs = [SemrelConfig(name="all", description="Every language (language column): train of "
                            "the 9 Track A languages, validation and test of all 14.")]
    for lang, (name, _) in LANGUAGES.items():
        splits = ", ".join(plan(lang))
        configs.append(SemrelConfig(name=lang, description=f"{name}: {splits}."))
    for lang in TRACK_C:
        configs.append(SemrelConfig(
            name=f"cross-lingual-{lang}",
            description=f"Track C, {LANGUAGES[lang][0]}: train = every Track A train set except "
                        f"{lang}'s; validation/test = {lang}'s."))
    return configs


class SemRel2024(SemrelBuilder):
    """Builder of ``semrel-2024`` (see module docstring)."""

    DATASET_ID = DATASET_ID
    SOURCES = (*(f.source for f in FILES.values()), ENG_TEST_UNLABELLED.source, AFR_PILOT.source,
               STR_2021_SOURCE)
    SCORE_RANGE = (0.0, 1.0)
    CITATION = CITATION
    HOMEPAGE = REPOSITORY
    LICENSE = FILES[("eng", "train")].source.licence
    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIGS = _configs()
    DEFAULT_CONFIG_NAME = "all"

    def user_inputs(self, config_name, data_dir, options) -> dict[str, str]:
        """Whether the held-back labelled English test file is in the mirror (its size and
        sha256, or "absent"), so putting it there later rebuilds instead of serving null scores."""
        if HELD_BACK not in {key for keys in plan(config_name).values() for key in keys}:
            return {}
        path = FILES[HELD_BACK].path
        dirs = mirror_dirs(self.mirror)
        if not dirs:
            return {path: "download"}
        found = next((d / DATASET_ID / path for d in dirs if (d / DATASET_ID / path).is_file()), None)
        return {path: file_digest(found) if found else "absent"}

    def _info(self) -> datasets.DatasetInfo:
        with_link = ("eng", "train") in {key for keys in plan(self.config.name).values() for key in keys}
        return datasets.DatasetInfo(description=__doc__,
                                    features=FEATURES_WITH_STR_LINK if with_link else FEATURES,
                                    homepage=self.HOMEPAGE, license=self.LICENSE,
                                    citation=self.CITATION)

    def _split_generators(self, dl_manager):
        splits = plan(self.config.name)
        with_link = "str_2021_pair_id" in self.info.features
        rows = {}
        for key in dict.fromkeys(k for keys in splits.values() for k in keys):
            read = read_split(*key, mirror=self.mirror, dl_manager=dl_manager)
            if read.note:
                self.note(read.note)
            rows[key] = [{**r, "language": key[0]} for r in read.rows]
        if ("afr", "dev") in rows:
            self._check_afr_pilot(rows[("afr", "dev")], dl_manager)
        if ("eng", "train") in rows:
            str_pairs = read_str_2021(self.fetch(STR_2021_SOURCE, dl_manager))
            rows[("eng", "train")] = link_str_2021(rows[("eng", "train")], str_pairs,
                                                   FILES[("eng", "train")].path)
        return [datasets.SplitGenerator(name, gen_kwargs={
                    "rows": [r for key in keys for r in rows[key]], "with_link": with_link})
                for name, keys in splits.items()]

    def _check_afr_pilot(self, dev: list[dict], dl_manager) -> None:
        """``afr_pilot_dev_labels.csv`` must repeat afr dev pairs exactly (it is not a split)."""
        path = self.fetch(AFR_PILOT.source, dl_manager)
        with open(path, "rb") as handle:
            pilot = read_file(path, handle.read(), language="afr", split="dev")
        by_id = {r["pair_id"]: r for r in dev}
        for row in pilot:
            same = by_id.get(row["pair_id"])
            if same is None or [same[k] for k in ("sentence1", "sentence2", "score")] != [
                    row[k] for k in ("sentence1", "sentence2", "score")]:
                raise DataValidationError(path, row["row"], "a pilot pair must equal the afr dev "
                                          "pair with its PairID (text and score)", row["pair_id"])

    def _generate_examples(self, rows, with_link):
        columns = list(FEATURES_WITH_STR_LINK if with_link else FEATURES)
        for row in rows:
            yield row["pair_id"], {c: row.get(c) for c in columns}

"""crowd-sts: 39,660 MTurk similarity labels (1–5) of 13,225 sentence pairs by 463 workers (2019).

Solomon, Cohn, Rosenblum, Hershkovitz & Yamshchikov (2021), "Rethinking Crowd Sourcing for
Semantic Similarity" (shared/papers/002). Three annotations per pair (15 Paralex HITs have two),
with each annotator's metadata; the paper's five reliability filters (:mod:`.filters`) give the
filtered configs: the labels of flagged annotators are dropped before averaging.
Worker ids are HMAC-SHA256 pseudonyms (:func:`.reading.pseudonymise`); raw MTurk ids never leave
the parser.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import datasets
import pandas as pd

from ..base import SemrelBuilder, SemrelConfig, file_digest
from ..sources import Source
from .filters import FilterResult, drop_workers, flagged_by, run_filters
from .reading import DEFAULT_KEY, read_annotations, read_worker_list, resolve_key
from .tables import aggregate_pairs, annotator_table, holdout_mask, split_groups

REPO = "https://github.com/Hernanros/SOTA"
LICENCE = (
    "No licence stated: the upstream repository (github.com/Hernanros/SOTA) has no licence file, "
    "so default copyright applies, and the sentences come from third-party corpora with their "
    "own terms (GYAFC needs the Yahoo Answers L6 licence; Yelp reviews fall under the Yelp "
    "dataset terms). Not redistributable: build it locally from the upstream files."
)
FILES = {  # upstream file name -> sha256 (= its Git LFS oid)
    "Bible_human.csv": "33f473f182fdf73d0892f15c56093eaf9e50baf9269028c29ff1e002ec7bd90e",
    "Bible_random_human.csv": "59bfb54d2db88f4a790dc4d09f3d31957b59478429e646e1c7f78caf17f48ff6",
    "GYAFC_formal_human.csv": "8689cc8efe60523702299c8eecad4cdf29b820e5d4fde92234e8505a48814e3a",
    "GYAFC_formal_random_human.csv": "c3f517f48fdcf42979d0f0746fad7e9be99bb8b9e977c66ca32612d7c3bdd37e",
    "GYAFC_informal_human.csv": "656acec3b578aaf55254ee6cd5e927535b4bfc79946b9e3e9bfe686bfa79a60c",
    "GYAFC_informal_random_human.csv": "d2934deb58101e8fea026f78528f411574fbd1abcf43f39b55b250c1b676f0d8",
    "GYAFC_rewrites_human.csv": "08a2f2374d67785cd955c18bb982c1fa08b6f96c894b739abe313696a0a0abb3",
    "GYAFC_rewrites_random_human.csv": "9e046c42cc55ac7417d13c7afcabb5363afd405f3974f7a176feb91742b38393",
    "Paralex_human.csv": "42d1bd815817ba205a45633c96456874fc1eb071e9c624342cda8b72e666fb9d",
    "Paralex_random_human.csv": "b486413938d57351518f7ace92585914522f6f4b64db67773dcfb1024852ca03",
    "Paraphrase_human.csv": "d9afd953c588f66fce9e05e735f4c4fc3b935e9739e7a2b3711f24ebe9d7ba47",
    "Paraphrase_random_human.csv": "df950ae83e6464621cef9758cc178bc34695718adb3967b5b99634e4db9ab5a3",
    "Yelp_Random_human.csv": "d03565bcfb26087b9687d93fca2860413234a4511511946a2ac20b4d47402abb",
    "Yelp_human.csv": "1941523a0b397ea0201f4e4b3ca4e9e17e3c365b8eb1fd3ac0af178497c55acf",
}
SOURCES = tuple(
    Source("crowd-sts", name, f"https://media.githubusercontent.com/media/Hernanros/SOTA/master/data/raw_data/{name}",
           sha256, LICENCE, REPO, redistributable=False)
    for name, sha256 in FILES.items()
)
AUTHORS_LIST = Source(  # the authors' union of flagged WorkerIds (an earlier rule generation)
    "crowd-sts", "bad_annotators_all.txt",
    "https://raw.githubusercontent.com/Hernanros/SOTA/master/data/bad_annotators/ba_all.txt",
    "f8afc9e8fb9d08e56a4978ed2381f38d1008bebb005cee5210c6641eba207377", LICENCE, REPO,
    redistributable=False)

FILTERED = {  # config suffix -> filters whose flagged workers are dropped
    "slow": ("slow",),
    "low-variance": ("low_variance",),
    "high-random": ("high_random",),
    "disagreeable": ("disagreeable",),
    "sentiment": ("sentiment",),
    "low-variance-high-random": ("low_variance", "high_random"),
    "all": ("slow", "low_variance", "high_random", "disagreeable", "sentiment"),
}

CITATION = """\
@article{solomon2021rethinking,
  title = {Rethinking Crowd Sourcing for Semantic Similarity},
  author = {Solomon, Shaul and Cohn, Adam and Rosenblum, Hernan and Hershkovitz, Chezi and Yamshchikov, Ivan P.},
  journal = {arXiv preprint arXiv:2109.11969},
  year = {2021}
}"""

_S, _F32, _I32, _B = (datasets.Value(t) for t in ("string", "float32", "int32", "bool"))
ANNOTATION_FEATURES = datasets.Features({
    "pair_id": _S, "worker_id": _S, "label": datasets.Value("int8"), "seconds": _I32,
    "source": _S, "is_random": _B, "sentence1": _S, "sentence2": _S,
    "sentence1_raw": _S, "sentence2_raw": _S,
})
PAIR_FEATURES = datasets.Features({
    "pair_id": _S, "source": _S, "is_random": _B, "sentence1": _S, "sentence2": _S,
    "score": _F32, "n_annotations": _I32, "label_std": _F32, "split_group": _S,
})
ANNOTATOR_FEATURES = datasets.Features({
    "worker_id": _S, "n_annotations": _I32, "n_random": _I32, "label_mean": _F32,
    "label_std": _F32, "seconds_mean": _F32, "seconds_median": _F32, "share_extreme": _F32,
    "label_class": _S, "label_mean_random": _F32, "label_mean_non_random": _F32,
    "n_unanimous_cases": _I32, "n_disagreements": _I32, "n_sentiment_pairs": _I32,
    "sentiment_label_var": _F32,
    **{f"flagged_{name}": _B for name in FILTERED["all"]},
    "flagged_any": _B, "in_authors_list": _B,
})


@dataclass
class CrowdStsConfig(SemrelConfig):
    """``filters``: for ``pairs-filtered-*``, the filters whose flagged workers are dropped.
    ``key_fingerprint`` keys the cache on a non-default pseudonym key (never the key itself);
    ``sentiment_model``: a local transformers model folder for filter 5 instead of VADER.
    """

    filters: tuple[str, ...] = field(default_factory=tuple)
    key_fingerprint: str | None = None
    sentiment_model: str | None = None


def _configs() -> list[CrowdStsConfig]:
    return [
        CrowdStsConfig(name="pairs", description="One row per pair: mean label, n, std; "
                       "grouped leak-free train/test split."),
        CrowdStsConfig(name="annotations", description="One row per annotation (pseudonymised)."),
        CrowdStsConfig(name="annotators", description="One row per worker: statistics, "
                       "radical/centrist class, filter flags."),
        *(CrowdStsConfig(name=f"pairs-filtered-{suffix}", filters=names,
                         description="Pairs re-aggregated without the labels of workers flagged "
                         "by: " + " + ".join(names) + ".")
          for suffix, names in FILTERED.items()),
    ]


@dataclass(frozen=True)
class Study:
    """Everything the configs are cut from: the tidy annotations, filter results, tables."""

    annotations: pd.DataFrame
    results: dict[str, FilterResult]
    annotators: pd.DataFrame
    pairs: pd.DataFrame  # with split_group and is_test

    def filtered_pairs(self, names) -> pd.DataFrame:
        kept = drop_workers(self.annotations, flagged_by(self.results, names))
        split = self.pairs.set_index("pair_id")[["split_group", "is_test"]]
        return aggregate_pairs(kept).join(split, on="pair_id")


def key_fingerprint(key: str) -> str:
    return hashlib.sha256(b"crowd-sts fingerprint\0" + key.encode("utf-8")).hexdigest()[:16]


@lru_cache(maxsize=2)
def build_study(paths: tuple[tuple[str, str], ...], authors_list: str, key: str,
                sentiment_model: str | None = None) -> Study:
    """Parse, filter and tabulate once per process (every config of a build shares it)."""
    annotations = read_annotations(dict(paths), key)
    options = {}
    if sentiment_model:
        from transformers import pipeline

        from .measures import pipeline_sentiment

        options["sentiment"] = {"scorer": pipeline_sentiment(
            pipeline("sentiment-analysis", model=sentiment_model, device=-1))}
    results = run_filters(annotations, options=options)
    annotators = annotator_table(annotations, results, read_worker_list(authors_list, key))
    pairs = aggregate_pairs(annotations)
    pairs["split_group"] = split_groups(pairs)
    pairs["is_test"] = holdout_mask(pairs["split_group"])
    return Study(annotations, results, annotators, pairs)


class CrowdSts(SemrelBuilder):
    """Builder of ``crowd-sts`` (see module docstring). ``pseudonym_key``: HMAC key for worker ids
    (else ``$SEMREL_CROWD_STS_KEY``, else the public default)."""

    DATASET_ID = "crowd-sts"
    SOURCES = (*SOURCES, AUTHORS_LIST)
    SCORE_RANGE = (1.0, 5.0)
    CITATION = CITATION
    HOMEPAGE = REPO
    LICENSE = LICENCE
    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = CrowdStsConfig
    BUILDER_CONFIGS = _configs()
    DEFAULT_CONFIG_NAME = "pairs"

    def __init__(self, *args, pseudonym_key: str | None = None, **kwargs):
        self.pseudonym_key = resolve_key(pseudonym_key)
        if self.pseudonym_key != DEFAULT_KEY:
            kwargs["key_fingerprint"] = key_fingerprint(self.pseudonym_key)
        super().__init__(*args, **kwargs)

    def user_inputs(self, config_name, data_dir, options) -> dict[str, str]:
        """A local ``sentiment_model`` folder is user input: size + sha256 of each of its files."""
        folder = options.get("sentiment_model")
        if not folder:
            return {}
        files = sorted(p for p in Path(folder).expanduser().rglob("*") if p.is_file())
        return {str(p): file_digest(p) for p in files} or {str(folder): "absent"}

    def _info(self) -> datasets.DatasetInfo:
        name = self.config.name
        features = (ANNOTATION_FEATURES if name == "annotations" else
                    ANNOTATOR_FEATURES if name == "annotators" else PAIR_FEATURES)
        return datasets.DatasetInfo(description=__doc__, features=features,
                                    homepage=self.HOMEPAGE, license=self.LICENSE,
                                    citation=self.CITATION)

    def study(self, dl_manager=None) -> Study:
        paths = tuple((s.file_name, self.fetch(s, dl_manager)) for s in SOURCES)
        return build_study(paths, self.fetch(AUTHORS_LIST, dl_manager), self.pseudonym_key,
                           self.config.sentiment_model)

    def _split_generators(self, dl_manager):
        study = self.study(dl_manager)
        name = self.config.name
        if name == "annotations":
            rows = study.annotations.assign(key=study.annotations["pair_id"] + "/"
                                            + study.annotations["worker_id"])
            return [datasets.SplitGenerator(datasets.Split.TRAIN, gen_kwargs={"rows": rows})]
        if name == "annotators":
            rows = study.annotators.assign(key=study.annotators["worker_id"])
            return [datasets.SplitGenerator(datasets.Split.TRAIN, gen_kwargs={"rows": rows})]
        pairs = study.filtered_pairs(self.config.filters) if self.config.filters else study.pairs
        pairs = pairs.assign(key=pairs["pair_id"])
        return [
            datasets.SplitGenerator(datasets.Split.TRAIN, gen_kwargs={"rows": pairs[~pairs["is_test"]]}),
            datasets.SplitGenerator(datasets.Split.TEST, gen_kwargs={"rows": pairs[pairs["is_test"]]}),
        ]

    def _generate_examples(self, rows: pd.DataFrame):
        columns = list(self.info.features)
        for record in rows[["key", *columns]].to_dict("records"):
            key = record.pop("key")
            yield key, {k: None if isinstance(v, float) and math.isnan(v) else v
                        for k, v in record.items()}

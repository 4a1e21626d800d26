"""toy-sts: 32 English sentence pairs with similarity scores in [0, 5] (test fixture, CC0)."""

import csv

import datasets

from semrel.dataset_scripts.base import SemrelBuilder, SemrelConfig
from semrel.dataset_scripts.sources import Source
from semrel.dataset_scripts.splits import stratified_folds

SOURCE = Source(dataset_id="toy-sts", file_name="pairs.csv", url="https://example.invalid/pairs.csv",
                sha256="db49313bf97c2b7077cfd6f4255094afa0768b9e1cc2eb350b8880d7785f7eaa",
                licence="CC0-1.0", licence_url="https://creativecommons.org/publicdomain/zero/1.0/",
                redistributable=True)
FEATURES = datasets.Features({"id": datasets.Value("string"), "sentence1": datasets.Value("string"),
                              "sentence2": datasets.Value("string"), "score": datasets.Value("float32")})


class ToySts(SemrelBuilder):
    DATASET_ID = "toy-sts"
    SOURCES = (SOURCE,)
    SCORE_RANGE = (0.0, 5.0)
    LICENSE = SOURCE.licence
    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIGS = [SemrelConfig(name="default", description="all pairs"),
                       SemrelConfig(name="cv-fold-0", description="fold 0 of 4 is the test split")]

    def _info(self):
        return datasets.DatasetInfo(description=__doc__, features=FEATURES, license=self.LICENSE)

    def _split_generators(self, dl_manager):
        with open(self.fetch(SOURCE, dl_manager), newline="", encoding="utf-8") as handle:
            rows = [dict(r, score=float(r["score"])) for r in csv.DictReader(handle)]
        if self.config.name == "default":
            return [datasets.SplitGenerator("train", gen_kwargs={"rows": rows})]
        test = stratified_folds([r["id"] for r in rows], ["all"] * len(rows), 4, salt="toy") == 0
        train_rows = [r for r, t in zip(rows, test, strict=True) if not t]
        test_rows = [r for r, t in zip(rows, test, strict=True) if t]
        return [datasets.SplitGenerator("train", gen_kwargs={"rows": train_rows}),
                datasets.SplitGenerator("test", gen_kwargs={"rows": test_rows})]

    def _generate_examples(self, rows):
        for row in rows:
            yield row["id"], row

"""The human ceiling per dataset (semrel.dataset_scripts.ceilings): the published STR-2021 figure,
"not available" (None and a reason, never a number) where no raw annotations exist, the values
computed from the fixture mirror's raw files, and on the real mirror the figures docs/metrics.md and
benchmarks/results/data.md report (``python scripts/human_ceilings.py``)."""

from __future__ import annotations

import json
import math
import pkgutil

import pytest

from semrel.dataset_scripts.ceilings import HumanCeiling, human_ceiling
from semrel.dataset_scripts.registry import REGISTRY
from semrel.dataset_scripts.spec import DatasetSpec, Licence
from semrel.dataset_scripts.str_2021.builder import Str2021
from semrel.metrics.errors import ParameterError

STR_CEILING = math.sqrt(2 * 0.84 / 1.84)
VALUES = ("value", "interval", "single_annotator", "pearson", "pearson_interval", "single_annotator_interval",
          "single_annotator_pearson", "single_annotator_pearson_interval", "reliability", "split_half")


def test_every_spec_names_a_ceiling_that_resolves_but_c_sts():
    hooks = {dataset_id: spec.ceiling for dataset_id, spec in REGISTRY.items() if spec.ceiling}
    assert set(hooks) == {"str-2021", "semrel-2024", "crowd-sts", "czech-news-sts"}
    assert all(callable(pkgutil.resolve_name(hook)) for hook in hooks.values())
    with pytest.raises(ValueError, match="ceiling must be 'module:function'"):
        DatasetSpec(Str2021, pretty_name="x", licence=Licence("cc0-1.0"), languages=("en",), card_body="m:f",
                    ceiling="not a reference")


def test_str_2021_is_the_published_figure_for_every_config_and_source():
    c = human_ceiling("str-2021", "default", "train")
    assert c.value == pytest.approx(STR_CEILING) and c.reliability == pytest.approx(2 * 0.84 / 1.84)
    assert c.split_half == 0.84 and (c.n_items, c.n_annotations) == (5500, 21936)
    assert c.interval is c.single_annotator is c.pearson is None
    assert c.source.startswith("published: Abdalla") and "not recomputed" in c.note
    lodo = human_ceiling("str-2021", "lodo-goodreads", "test", subset="Goodreads")
    assert lodo.value == c.value and "the whole dataset's" in lodo.note
    with pytest.raises(ParameterError, match="subset='Reddit': is no source of str-2021"):
        human_ceiling("str-2021", "default", "train", subset="Reddit")
    with pytest.raises(ParameterError, match="split='test': is no split of str-2021"):
        human_ceiling("str-2021", "default", "test")


@pytest.mark.parametrize(("dataset_id", "config", "split", "reason"), [
    ("c-sts", "default", "validation", "holds one gold score per pair and no individual judgements"),
    ("semrel-2024", "eng", "test", "raw annotations are public for arb and arq only"),
    ("semrel-2024", "kin", "validation", "raw annotations are public for arb and arq only"),
    ("semrel-2024", "all", "test", "a ceiling is per language"),
    ("semrel-2024", "cross-lingual-arq", "train", "the other languages' train sets"),
    ("czech-news-sts", "dep", "test", "user-supplied dep-test.tsv"),
    ("czech-news-sts", "train-n1", "train", "one annotation (the R1 score) per pair"),
    ("crowd-sts", "annotations", "train", "is no pair config"),
])
def test_not_available_is_none_and_a_reason(dataset_id, config, split, reason):
    c = human_ceiling(dataset_id, config, split)
    assert not c.available and c.note.startswith("not available: ") and reason in c.note
    assert all(getattr(c, name) is None for name in VALUES)
    assert c.fraction(0.8) is None and c.fraction(0.8, "pearson") is None


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ParameterError, match="config='cv-fold-9': is no config of str-2021"):
        human_ceiling("str-2021", "cv-fold-9", "test")
    with pytest.raises(ParameterError, match="split='dev': is no split of semrel-2024"):
        human_ceiling("semrel-2024", "arq", "dev")
    with pytest.raises(ParameterError, match="subset='x': czech-news-sts has no subsets"):
        human_ceiling("czech-news-sts", "free", "test", subset="x")
    with pytest.raises(KeyError, match="unknown dataset 'sts-b'"):
        human_ceiling("sts-b", "default", "test")


def test_fraction_of_the_ceiling_and_json():
    c = human_ceiling("str-2021", "cv-fold-0", "test")
    assert c.fraction(0.8779) == pytest.approx(0.8779 / STR_CEILING)
    assert c.fraction(0.8, "pearson") is None  # no published Pearson
    with pytest.raises(ParameterError, match="statistic='kendall'"):
        c.fraction(0.8, "kendall")
    assert json.loads(json.dumps(c.as_dict()))["value"] == pytest.approx(STR_CEILING)


@pytest.mark.parametrize(("dataset_id", "config", "split"), [
    ("czech-news-sts", "free", "test"), ("semrel-2024", "arq", "test"),
])
def test_computed_from_the_fixture_raw_files(fixture_mirror, dataset_id, config, split):
    c = human_ceiling(dataset_id, config, split, mirror=fixture_mirror)
    assert c.available and c.source.startswith("computed from")
    assert c.interval[0] <= c.value <= c.interval[1] <= 1 and c.value == pytest.approx(math.sqrt(c.reliability))
    assert c.split_half <= c.reliability <= c.value
    assert (c.single_annotator is None) == (dataset_id == "semrel-2024")


def test_raw_files_whose_halves_disagree_give_no_number(fixture_mirror):
    c = human_ceiling("semrel-2024", "arb", "test", mirror=fixture_mirror)  # 10 fixture pairs
    assert not c.available and "the halves do not agree" in c.note and c.value is None


def _summary(c: HumanCeiling) -> tuple:
    single = c.single_annotator_pearson
    return (round(c.value, 3), round(c.pearson, 3), round(c.split_half, 3),
            None if single is None else round(single, 3), c.n_items, c.n_annotations)


@pytest.mark.slow
@pytest.mark.parametrize(("dataset_id", "config", "split", "expected"), [
    ("czech-news-sts", "free", "test", (0.975, 0.981, 0.904, 0.843, 1200, 10800)),
    ("semrel-2024", "arb", "validation", (0.973, 0.972, 0.899, None, 31, 500)),
    ("semrel-2024", "arb", "test", (0.954, 0.955, 0.836, None, 543, 2710)),
    ("semrel-2024", "arq", "validation", (0.909, 0.906, 0.701, None, 97, 1321)),
    ("semrel-2024", "cross-lingual-arq", "test", (0.908, 0.904, 0.700, None, 582, 5516)),
    ("crowd-sts", "pairs", "test", (0.714, 0.717, 0.316, 0.329, 2881, 8640)),
    ("crowd-sts", "pairs-filtered-all", "test", (0.828, 0.841, 0.618, 0.647, 2501, 4225)),
])
def test_real_figures(mirror, dataset_id, config, split, expected):
    assert _summary(human_ceiling(dataset_id, config, split, mirror=mirror)) == expected


@pytest.mark.slow
def test_czech_average_annotator_brackets_the_papers(mirror):
    """The paper's 0.861 (each annotation against its stack's mean, itself included) lies between the
    same measure on the public file (0.878) and the leave-one-out one reported as the single annotator."""
    c = human_ceiling("czech-news-sts", "free", "test", mirror=mirror)
    assert "Pearson 0.861" in c.note and "the same on this file: 0.878" in c.note
    assert c.single_annotator_pearson < 0.861 < 0.878
    low, high = c.single_annotator_pearson_interval
    assert low < c.single_annotator_pearson < high < 0.861
    assert c.single_annotator < c.value  # one annotator is far below a perfect system


@pytest.mark.slow
def test_the_table_in_the_docs_is_what_the_script_prints(mirror, capsys):
    from project import REPO
    from scripts import human_ceilings

    human_ceilings.main(["--mirror", str(mirror)])
    table = capsys.readouterr().out.strip()
    assert table.count("\n") == 1 + len(human_ceilings.cells("test"))
    for page in ("docs/metrics.md", "benchmarks/results/data.md"):
        assert f"\n{table}\n" in (REPO / page).read_text(encoding="utf-8"), f"{page} shows another table"

"""The benchmark's evaluation sets: every labelled (dataset, config, split[, subset]), loaded whole."""

from __future__ import annotations

import pytest

from semrel.dataset_scripts.benchmark_sets import NoLabels, benchmark_sets, benchmarked_datasets
from semrel.dataset_scripts.languages import mteb_language
from semrel.dataset_scripts.registry import REGISTRY
from semrel.dataset_scripts.spec import Benchmarked, DatasetSpec, Licence, MtebFacts
from semrel.dataset_scripts.str_2021.builder import Str2021
from semrel.metrics.errors import ParameterError


def test_every_set_once_with_its_range_and_languages(fixture_mirror):
    sets = benchmark_sets(fixture_mirror)
    names = [s.name for s in sets]
    assert len(names) == len(set(names))
    assert {s.dataset for s in sets} == set(benchmarked_datasets())
    semrel = {(s.config, s.split) for s in sets if s.dataset == "semrel-2024"}
    assert ("eng", "validation") in semrel and ("esp", "test") in semrel
    assert not any(split == "train" for _, split in semrel)  # English train is STR-2021
    assert {s.subset for s in sets if s.dataset == "str-2021"} >= {None, "SNLI", "Wikipedia"}
    czech = next(s for s in sets if s.dataset == "czech-news-sts")
    assert (czech.score_range, czech.languages) == ((0.0, 6.0), ("cs",))
    assert next(s for s in sets if s.config == "hau").languages == ("ha",)
    assert {s.config for s in sets if s.dataset == "crowd-sts"} >= {"pairs", "pairs-filtered-all"}
    assert {s.dataset for s in sets if s.conditional} == {"c-sts"}


def test_user_data_sets_say_why_they_are_skipped(fixture_mirror):
    skipped = [s for s in benchmark_sets(fixture_mirror) if s.skip]
    assert [s.name for s in skipped] == ["c-sts/default/train", "c-sts/default/validation"]
    assert skipped[0].skip == "c-sts/default needs user-supplied data (--data-dir c-sts=DIR)"


def test_c_sts_open_reannotation_is_scored_from_the_mirror_with_its_conditions(upstream, cache_dir):
    sets = {s.name: s for s in benchmark_sets(upstream, cache_dir=cache_dir, only=("c-sts",))}
    assert not sets["c-sts/reannotated/train"].skip and not sets["c-sts/reannotated/validation"].skip
    rows = sets["c-sts/reannotated/validation"].load()
    assert "condition" in rows.column_names and len(rows) and None not in rows["score"]
    assert min(rows["score"]) >= 1  # the 214 rows labelled -1 are validation_invalid, not here


def test_a_subset_holds_its_rows_only(fixture_mirror, cache_dir):
    sets = benchmark_sets(fixture_mirror, cache_dir=cache_dir, only=("str-2021",))
    whole = sets[0].load()
    parts = {s.subset: s.load() for s in sets[1:]}
    assert sum(len(p) for p in parts.values()) == len(whole)
    for subset, rows in parts.items():
        assert set(rows["source"]) <= {subset}


def test_a_split_without_scores_says_why(fixture_mirror, cache_dir):
    sets = {s.name: s for s in benchmark_sets(fixture_mirror, cache_dir=cache_dir,
                                                only=("semrel-2024",))}
    with pytest.raises(NoLabels, match="Spanish test scores were never published"):
        sets["semrel-2024/esp/test"].load()
    rows = sets["semrel-2024/eng/validation"].load()
    assert len(rows) and None not in rows["score"]


def test_unknown_dataset_is_refused():
    with pytest.raises(ParameterError, match="only='sts-b': is not a benchmarked dataset"):
        benchmark_sets(only=("sts-b",))
    with pytest.raises(ParameterError, match="takes no user-supplied data"):
        benchmark_sets(data_dirs={"str-2021": "x"})


FACTS = MtebFacts(("Written",), "found")
DECLARATIONS = [  # (what a spec declares, the one line it is refused with)
    (Benchmarked((), FACTS), "str-2021: benchmark sets must be distinct (config, split) pairs, got ()"),
    (Benchmarked((("default", "train"),) * 2, FACTS), "str-2021: benchmark sets must be distinct (config, split) "
                                                      "pairs, got (('default', 'train'), ('default', 'train'))"),
    (Benchmarked((("nope", "train"),), FACTS), "str-2021: benchmark sets name configs the builder lacks: nope"),
    (Benchmarked((("default", "train"),), FACTS, subset_column="source"),
     "str-2021: benchmark subsets need their subset_column and a subset_column its subsets"),
    (Benchmarked((("default", "train"),), FACTS, unlabelled=(("default", "test", "why"),)),
     "str-2021: benchmark unlabelled names no set of its own: [('default', 'test')]"),
]


@pytest.mark.parametrize("benchmark,line", DECLARATIONS, ids=range(len(DECLARATIONS)))
def test_a_wrong_benchmark_declaration_is_refused(benchmark, line):
    with pytest.raises(ValueError) as refused:
        DatasetSpec(Str2021, pretty_name="x", licence=Licence("cc0-1.0"), languages=("en",), card_body="m:f",
                    benchmark=benchmark)
    assert str(refused.value) == line


LANGUAGES = [  # (tag, ISO 639-3 code a spec names, MTEB's code or the one line it is refused with)
    ("cs", None, "ces-Latn"),
    ("rw", None, "kin-Latn"),
    ("ar", "arb", "arb-Arab"),
    ("ar", None, "language 'ar' (ara): no script for MTEB in semrel.dataset_scripts.languages.SCRIPTS (add it; "
                 "a macrolanguage's tag names its member in MtebFacts.iso639_3)"),
    ("zz", None, "language 'zz': is no ISO 639-1 or 639-3 code (e.g. en, deu, gsw)"),
]


@pytest.mark.parametrize("tag,code,expected", LANGUAGES)
def test_a_language_tag_in_mtebs_terms(tag, code, expected):
    if expected.startswith("language"):
        with pytest.raises(ValueError) as refused:
            mteb_language(tag, code)
        assert str(refused.value) == expected
    else:
        assert mteb_language(tag, code) == expected


def test_every_benchmark_set_has_its_languages_in_mtebs_terms():
    langs = {s.name: REGISTRY[s.dataset].benchmark.mteb.eval_langs(s.languages) for s in benchmark_sets()}
    assert langs["semrel-2024/arb/test"] == ["arb-Arab"] and langs["czech-news-sts/free/test"] == ["ces-Latn"]

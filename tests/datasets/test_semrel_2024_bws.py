"""semrel-2024's raw BWS tuples (arb, arq): items mapped to the published pairs, the arb scale
reproduced by re-scoring, split-half reliability with pooled variants, and the figures recorded in
benchmarks/results.json."""

import numpy as np
import pytest

from semrel.dataset_scripts.semrel_2024.bws import POOLED, READER, pair_key, reliability, rescore


def test_pair_key_ignores_spacing_only():
    assert pair_key(" ماذا عن هنا؟", "قولو بصوت عالي ما ترونه ") == pair_key("ماذا عن هنا؟", "قولو بصوت عالي ماترونه")
    assert pair_key("a b", "c") != pair_key("c", "a b")


@pytest.fixture(scope="module")
def rescored(mirror):
    return {lang: rescore(lang, mirror) for lang in ("arb", "arq")}


@pytest.mark.parametrize("lang, items, published, exact, matched, within, unmatched", [
    ("arb", 1800, 627, 569, 574, 436, 53),
    ("arq", 3991, 1941, 881, 1939, 91, 2),
])
def test_rescoring_maps_items_to_published_pairs(rescored, lang, items, published, exact, matched,
                                                 within, unmatched):
    r = rescored[lang]
    assert (r.n_items, r.n_published, r.n_exact, len(r.pair_ids)) == (items, published, exact, matched)
    assert (r.within_rounding, len(r.unmatched)) == (within, unmatched)
    assert len(set(r.pair_ids)) == len(r.pair_ids) and r.items_mapped > matched  # variants pooled
    assert set(r.splits) <= {"train", "dev", "test"}


def test_arb_rescoring_reproduces_the_published_scale_arq_does_not(rescored):
    arb, arq = rescored["arb"], rescored["arq"]
    assert arb.spearman > 0.999 and np.abs(arb.diff).max() < 0.05
    assert arb.fit == pytest.approx((0.5, 0.5), abs=0.002)  # published = (counting + 1) / 2
    assert arq.fit[0] == pytest.approx(0.43, abs=0.01) and 0.96 < arq.spearman < 0.98


def test_pooling_variants_raises_split_half_reliability(mirror):
    pooled = reliability("arb", POOLED, trials=50, mirror=mirror)
    raw = reliability("arb", READER, trials=50, mirror=mirror)
    assert pooled.n_items < raw.n_items
    assert pooled.corrected_spearman > raw.corrected_spearman + 0.1
    assert 0.85 < pooled.corrected_spearman < 0.95
    assert reliability("arb", POOLED, trials=50, mirror=mirror).spearman == pooled.spearman  # seeded


def test_results_json_holds_the_rescoring_figures(rescored):
    import json

    from project import REPO

    figures = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    for lang, r in rescored.items():
        f = figures["semrel_2024_bws"]["rescoring"][lang]
        assert (f["items"], f["published"], f["matched_exact_key"], f["matched"], f["items_mapped"],
                f["within_rounding"], f["unmatched"]) == (r.n_items, r.n_published, r.n_exact,
                                                          len(r.pair_ids), r.items_mapped,
                                                          r.within_rounding, len(r.unmatched))
        assert f["spearman"] == round(r.spearman, 4) and f["max_abs_diff"] == round(float(np.abs(r.diff).max()), 3)


@pytest.mark.slow
def test_results_json_holds_the_split_half_figures(mirror):
    import json

    from project import REPO

    figures = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))["semrel_2024_bws"]
    for lang in ("arb", "arq"):
        for identity in (POOLED, READER):
            s = reliability(lang, identity, trials=figures["split_half"]["trials"],
                            seed=figures["split_half"]["seed"], mirror=mirror)
            f = figures["split_half"][lang][identity]
            assert (f["items"], f["spearman"], f["spearman_brown"]) == (
                s.n_items, round(s.spearman, 3), round(s.corrected_spearman, 3))

"""The five crowd-sts filters and the derived tables on small hand-made tables with known answers."""

import numpy as np
import pandas as pd
import pytest

from semrel.dataset_scripts.crowd_sts.filters import (
    disagreeable,
    drop_workers,
    flagged_by,
    high_random,
    low_variance,
    reduce_labels,
    run_filters,
    sentiment_disaligned,
    sentiment_pairs,
    slow,
)
from semrel.dataset_scripts.crowd_sts.study import combinations_of, filter_study, paper_key
from semrel.dataset_scripts.crowd_sts.tables import aggregate_pairs, holdout_mask, label_classes, split_groups


def table(rows, texts=None):
    """rows: (pair_id, worker_id, label[, seconds[, is_random]])."""
    df = pd.DataFrame([(*r, *(10, False)[len(r) - 3:]) for r in rows],
                      columns=["pair_id", "worker_id", "label", "seconds", "is_random"])
    texts = texts or {}
    df["sentence1"] = df["pair_id"].map(lambda p: texts.get(p, (f"{p} one", f"{p} two"))[0])
    df["sentence2"] = df["pair_id"].map(lambda p: texts.get(p, (f"{p} one", f"{p} two"))[1])
    df["source"] = "toy"
    return df


def test_slow_uses_strict_mean_threshold():
    t = table([("p1", "a", 3, 400), ("p2", "a", 3, 300), ("p1", "b", 3, 300), ("p2", "b", 3, 300),
               ("p1", "c", 3, 10)])
    r = slow(t)
    assert r.flagged == {"a"}  # mean 350 > 300; b's mean is exactly 300
    assert r.stats.loc["a", "seconds_mean"] == 350 and list(r.stats.index) == ["a", "b", "c"]
    assert slow(t, max_mean_seconds=299).flagged == {"a", "b"}


def test_low_variance_sample_std():
    t = table([(f"p{i}", "flat", v) for i, v in enumerate([4, 4, 4, 5])]
              + [(f"p{i}", "unit", v) for i, v in enumerate([1, 2, 3])]  # std exactly 1
              + [(f"p{i}", "wide", v) for i, v in enumerate([1, 5, 1, 5])]
              + [("p0", "once", 3)])
    r = low_variance(t)
    assert r.flagged == {"flat"}
    assert r.stats.loc["flat", "label_std"] == pytest.approx(0.5)
    assert r.stats.loc["unit", "label_std"] == pytest.approx(1.0)
    assert np.isnan(r.stats.loc["once", "label_std"])  # one label: undefined, not flagged
    assert low_variance(t, min_std=1.01).flagged == {"flat", "unit"}


def test_high_random_needs_two_labels_each_side():
    t = table([("r1", "gullible", 5, 10, True), ("r2", "gullible", 4, 10, True),
               ("n1", "gullible", 2, 10, False), ("n2", "gullible", 3, 10, False),
               ("r1", "tie", 3, 10, True), ("r2", "tie", 3, 10, True),
               ("n1", "tie", 2, 10, False), ("n2", "tie", 4, 10, False),
               ("r1", "good", 1, 10, True), ("r2", "good", 2, 10, True),
               ("n1", "good", 5, 10, False), ("n2", "good", 4, 10, False),
               ("r1", "once", 5, 10, True), ("n1", "once", 1, 10, False),
               ("n2", "once", 1, 10, False)])
    r = high_random(t)
    assert r.flagged == {"gullible", "tie"}  # ≥: equal means are flagged
    assert r.stats.loc["gullible", "label_mean_random"] == 4.5
    assert r.stats.loc["once", "label_mean_non_random"] == 1.0
    assert high_random(t, min_labels_each=1).flagged == {"gullible", "tie", "once"}


DISAGREE = [("p1", "x", 5), ("p1", "y", 5), ("p1", "z", 1),   # z against unanimous +1
            ("p2", "x", 4), ("p2", "y", 5), ("p2", "z", 2),   # again
            ("p3", "x", 1), ("p3", "y", 2), ("p3", "z", 3),   # z's 0 against unanimous -1
            ("p4", "x", 3), ("p4", "y", 3), ("p4", "z", 3),   # everybody agrees: a case each
            ("p5", "x", 1), ("p5", "z", 5)]                    # 2 annotations: no case


def test_reduce_labels():
    assert reduce_labels(np.array([1, 2, 3, 4, 5])).tolist() == [-1, -1, 0, 1, 1]


def test_disagreeable_counts_cases_against_unanimous_others():
    r = disagreeable(table(DISAGREE))
    assert r.flagged == {"z"}
    assert r.stats.loc["z"].tolist() == [4, 3]  # 4 cases, 3 disagreements: 0.75 > 0.5
    assert r.stats.loc["x"].tolist() == [1, 0] and r.stats.loc["y"].tolist() == [1, 0]
    assert disagreeable(table(DISAGREE), max_share=0.75).flagged == set()
    assert disagreeable(table(DISAGREE), min_cases=5).flagged == set()


def test_disagreeable_authors_variant_divides_by_all_labels():
    t = table(DISAGREE)
    assert disagreeable(t, denominator="labels").flagged == {"z"}  # 3 / 5 labels = 0.6
    assert disagreeable(t, denominator="labels", min_cases=6).flagged == set()
    with pytest.raises(ValueError, match="denominator"):
        disagreeable(t, denominator="pairs")


SENTIMENT_TEXTS = {
    "s1": ("i love this place so much", "i hate this place so much"),       # BLEU-1 5/6
    "s2": ("i really love this pizza a lot", "i really hate this pizza a lot"),  # 6/7
    "s3": ("we love the pizza here", "we hate the pizza here"),             # exactly 0.8: out
    "s4": ("the food was great", "the food was great"),                     # gap 0
    "s5": ("a totally different sentence", "nothing in common here"),        # never scored
}
POLARITY = {"love": 0.97, "hate": -0.96, "great": 0.6}


def dictionary_scorer(texts):
    assert not any("common" in t or "different" in t for t in texts), "scored a low-BLEU pair"
    return np.array([next((v for w, v in POLARITY.items() if w in t.split()), 0.0) for t in texts])


def sentiment_table():
    rows = [("s1", "u", 1), ("s2", "u", 5), ("s1", "v", 2), ("s2", "v", 3), ("s1", "w", 1),
            ("s3", "w", 5), ("s4", "w", 1), ("s5", "u", 5), ("s5", "v", 1)]
    return table(rows, SENTIMENT_TEXTS)


def test_sentiment_pairs_select_high_bleu1_opposite_sentiment():
    chosen = sentiment_pairs(sentiment_table(), scorer=dictionary_scorer).set_index("pair_id")
    assert set(chosen.index) == {"s1", "s2", "s4"}  # BLEU-1 > 0.8 (s3 is exactly 0.8)
    assert chosen.loc["s1", "bleu1"] == pytest.approx(5 / 6)
    assert chosen.loc["s1", "gap"] == pytest.approx(1.93)
    assert chosen["selected"].to_dict() == {"s1": True, "s2": True, "s4": False}


def test_sentiment_filter_flags_inconsistent_variance():
    r = sentiment_disaligned(sentiment_table(), scorer=dictionary_scorer)
    assert r.flagged == {"u"}  # labels 1 and 5 there: variance 8; v: 0.5; w: one label only
    assert r.stats.loc["u", "n_sentiment_pairs"] == 2 and r.stats.loc["w", "n_sentiment_pairs"] == 1
    assert r.stats.loc["v", "sentiment_label_var"] == pytest.approx(0.5)
    assert sentiment_disaligned(sentiment_table(), scorer=dictionary_scorer,
                                min_sentiment_gap=1.95).flagged == set()


def test_sentiment_scorer_output_is_checked():
    with pytest.raises(ValueError, match=r"outside \[-1, 1\]"):
        sentiment_disaligned(sentiment_table(), scorer=lambda texts: np.full(len(texts), 1.5))
    with pytest.raises(ValueError, match="shape"):
        sentiment_disaligned(sentiment_table(), scorer=lambda texts: np.zeros(1))


def test_default_scorer_is_vader():
    r = sentiment_pairs(sentiment_table())
    s1 = r.set_index("pair_id").loc["s1"]
    assert s1["sentiment1"] > 0.5 and s1["sentiment2"] < -0.5


def test_run_filters_union_and_drop():
    t = table(DISAGREE)
    results = run_filters(t, ["low_variance", "disagreeable"])
    assert flagged_by(results, ["disagreeable"]) == {"z"}
    kept = drop_workers(t, flagged_by(results, ["disagreeable", "low_variance"]))
    assert "z" not in set(kept["worker_id"]) and len(kept) == len(t) - 5
    with pytest.raises(KeyError, match="unknown filter"):
        run_filters(t, ["nope"])
    with pytest.raises(ValueError, match="lacks column"):
        slow(t.drop(columns="seconds"))


def test_aggregate_pairs_mean_n_and_std():
    pairs = aggregate_pairs(table(DISAGREE)).set_index("pair_id")
    assert pairs.loc["p1", "score"] == pytest.approx(11 / 3) and pairs["score"].dtype == np.float32
    assert pairs["n_annotations"].tolist() == [3, 3, 3, 3, 2]
    assert pairs.loc["p4", "label_std"] == 0 and pairs.loc["p5", "label_std"] == pytest.approx(8 ** 0.5)
    single = aggregate_pairs(table([("q", "a", 4)]))
    assert np.isnan(single.loc[0, "label_std"])


def test_label_classes_radical_centrist():
    rows = ([(f"p{i}", "rad", v) for i, v in enumerate([1, 5, 5, 1, 3, 2])]
            + [(f"p{i}", "cen", v) for i, v in enumerate([2, 4, 4, 2, 1, 5, 3, 2])]
            + [(f"p{i}", "flat", v) for i, v in enumerate([1, 1, 1, 1])]   # variance 0
            + [(f"p{i}", "tie", v) for i, v in enumerate([1, 2, 4, 5])])  # 50 / 50
    classes = label_classes(table(rows))
    assert classes["label_class"].to_dict() == {"cen": "centrist", "flat": "unclassified",
                                                "rad": "radical", "tie": "unclassified"}
    assert classes.loc["rad", "share_extreme"] == pytest.approx(0.8)  # 3s ignored


def test_split_groups_follow_shared_sentences():
    pairs = pd.DataFrame({"pair_id": ["a", "b", "c", "d", "e"],
                          "sentence1": ["One .", "two", "Three", "one .", "five"],
                          "sentence2": ["two", "x", "y", "z", "six"]})
    groups = split_groups(pairs)
    assert groups.tolist() == ["a", "a", "c", "a", "e"]  # a-b share "two", d repeats "one ."


def test_test_mask_is_order_free():
    pairs = pd.DataFrame({"pair_id": [f"h{i}" for i in range(200)],
                          "sentence1": [f"s{i // 2}" for i in range(200)],
                          "sentence2": [f"t{i}" for i in range(200)]})
    mask = pd.Series(holdout_mask(split_groups(pairs)), index=pairs["pair_id"])
    shuffled = pairs.sample(frac=1.0, random_state=0).reset_index(drop=True)
    again = pd.Series(holdout_mask(split_groups(shuffled)), index=shuffled["pair_id"])
    assert mask.equals(again.reindex(mask.index)) and 30 <= mask.sum() <= 50


def test_filter_study_combinations_on_known_data():
    assert [paper_key(c) for c in combinations_of(["high_random", "slow"])] == [(1,), (3,), (1, 3)]
    t = table(DISAGREE)
    measures = pd.DataFrame({"m": [1.0, 2.0, 3.0, 4.0, 5.0]},
                            index=pd.Index(["p1", "p2", "p3", "p4", "p5"], name="pair_id"))
    study = filter_study(t, measures, {"slow": frozenset(), "disagreeable": frozenset({"z"})})
    assert list(study.r.index) == ["baseline", "[1]", "[4]", "[1, 4]"]
    score = t.groupby("pair_id")["label"].mean()
    assert study.r.at["baseline", "m"] == pytest.approx(np.corrcoef(measures["m"], score)[0, 1])
    kept = t[t["worker_id"] != "z"].groupby("pair_id")["label"].mean()
    assert study.r.at["[4]", "m"] == pytest.approx(np.corrcoef(measures["m"], kept)[0, 1])
    assert study.change.at["[1]", "m"] == 0 and study.n_workers_dropped["[1, 4]"] == 1

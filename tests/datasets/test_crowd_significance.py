"""crowd-sts filter effects against their interval: Zou's interval of r_filtered − r_base
per combination and measure, and the report's marks; the point estimates are the plain correlations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from semrel.dataset_scripts.crowd_sts.report import significance_note, table3
from semrel.dataset_scripts.crowd_sts.study import correlations, filter_study
from semrel.metrics.compare import zou_interval


def annotations(n_pairs=200, seed=0):
    """Workers a, b label a pair by its measure plus a little noise; worker z labels at random."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1, 5, n_pairs)
    rows = [(f"p{i}", w, float(np.clip(np.rint(truth[i] + rng.normal(0, 0.7)), 1, 5)) if w != "z"
             else float(rng.integers(1, 6))) for i in range(n_pairs) for w in ("a", "b", "z")]
    table = pd.DataFrame(rows, columns=["pair_id", "worker_id", "label"])
    measures = pd.DataFrame({"rouge1": truth + rng.normal(0, 0.5, n_pairs), "bleu": rng.normal(size=n_pairs)},
                            index=pd.Index([f"p{i}" for i in range(n_pairs)], name="pair_id"))
    return table, measures


def test_intervals_are_zous_on_the_kept_pairs_and_keep_the_point_estimates():
    table, measures = annotations()
    study = filter_study(table, measures, {"slow": frozenset(), "disagreeable": frozenset({"z"})})
    assert study.r.at["[4]", "rouge1"] == correlations(table, measures, {"z"})["rouge1"]
    base = table.groupby("pair_id")["label"].mean()
    kept = table[table["worker_id"] != "z"].groupby("pair_id")["label"].mean()
    x = measures["rouge1"].reindex(kept.index)
    expected = zou_interval(x.corr(kept), x.corr(base.reindex(kept.index)), base.corr(kept), len(kept))
    assert (study.low.at["[4]", "rouge1"], study.high.at["[4]", "rouge1"]) == pytest.approx(
        (expected.low, expected.high), abs=1e-12)
    # dropping the random worker helps the real measure beyond noise; the unrelated one does not move reliably
    assert study.significant.at["[4]", "rouge1"] and not study.significant.at["[4]", "bleu"]
    assert not study.significant.loc["[1]"].any()  # nobody dropped: a zero-width interval at 0
    assert study.low.at["baseline", "rouge1"] == study.high.at["baseline", "rouge1"] == 0


def test_report_marks_the_effects_beyond_their_interval():
    table, measures = annotations()
    study = filter_study(table, measures, {"slow": frozenset(), "disagreeable": frozenset({"z"})})
    t3 = table3(study)
    assert "* ours exceeds its 95 % interval" in t3
    change = study.change.at["[4]", "rouge1"]
    assert f"({change:+.1f}* / " in t3 and f"({study.change.at['[4]', 'bleu']:+.1f} / " in t3
    note = significance_note(study)  # [4] and [1, 4] move both measures; only rouge1's moves are beyond noise
    assert note.startswith("2 of 4 filter effects that move r") and note.endswith("not: [4], [1, 4]")

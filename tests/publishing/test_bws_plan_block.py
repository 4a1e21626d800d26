"""The "know when to stop annotating" block of the report for raw BWS annotations (SemRel-2024 arb
and arq): its figures are bws_plan()'s, with the report's settings, and both pictures are drawn."""

from __future__ import annotations

import pytest

from semrel.dataset_scripts.semrel_2024 import bws
from semrel.metrics.bws.plan import bws_plan
from semrel.publishing.bws_plan import REPORT, TARGET, interval, plan_block
from semrel.publishing.datasets.semrel_2024 import bws_plans


@pytest.mark.slow  # plans the real raw files of the mirror
@pytest.mark.parametrize("lang", ["arb", "arq"])
def test_the_block_shows_bws_plans_figures_and_both_pictures(lang, mirror, tmp_path):
    ann = bws.pooled(bws.annotations(lang, mirror))
    text = plan_block(ann, tmp_path, name=f"{lang} (pooled items)", prefix=f"bws_plan_{lang}")
    p = bws_plan(ann, target=TARGET, **REPORT)
    now, sb, rs = p.now, p.spearman_brown, p.resampling
    lines = " ".join(text.split())
    for expected in (f"**{lang} (pooled items)**: {now.annotations:,} annotations of {now.tuples:,} tuples "
                     f"({now.per_tuple:.2f} per tuple), {len(ann.items):,} items.",
                     f"SHR now {interval(now.shr, now.low, now.high)} (Spearman–Brown {now.corrected:.3f})",
                     f"projected at {sb.per_tuple:.2f} per tuple: Spearman–Brown {interval(sb.shr, sb.low, sb.high)}, "
                     f"resampling {interval(rs.shr, rs.low, rs.high)}; {p.trust}.",
                     f"Widest item interval (counting, bootstrap): {p.bootstrap.width[p.least_certain[0]]:.3f}"):
        assert expected in lines, (expected, lines)
    # SHR now is the SHR table's pooled figure (same 1,000 splits, same seed)
    assert f"{bws.reliability(lang, mirror=mirror).spearman:.3f}" == f"{now.shr:.3f}"
    for name in (f"bws_plan_{lang}_reliability.png", f"bws_plan_{lang}_items.png"):
        assert f"(images/{name})" in text and (tmp_path / name).stat().st_size > 5_000


@pytest.mark.parametrize("real", [pytest.param(True, marks=pytest.mark.slow), False], ids=["mirror", "fixture"])
def test_the_report_section_plans_both_languages(real, request, tmp_path):
    text = bws_plans(tmp_path, request.getfixturevalue("mirror" if real else "fixture_mirror"))
    assert text.startswith("### Know when to stop annotating\n")
    assert [line.split("**")[1] for line in text.splitlines() if line.startswith("**")] == \
        ["arb (pooled items)", "arq (pooled items)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bws_plan_arb_items.png", "bws_plan_arb_reliability.png", "bws_plan_arq_items.png",
        "bws_plan_arq_reliability.png"]


def test_without_the_raw_files_the_section_says_so(tmp_path):
    empty = tmp_path / "mirror"
    empty.mkdir()
    text = bws_plans(tmp_path, empty)
    assert text.startswith("### Know when to stop annotating\n")
    assert text.splitlines()[-1] == (
        f"The raw BWS files could not be read here ({bws.BWS['arb'].source.file_name} of 'semrel-2024' not found; "
        f"looked at: {empty / 'semrel-2024' / bws.BWS['arb'].source.file_name}. Download it from "
        f"{bws.BWS['arb'].source.url} (sha256 {bws.BWS['arb'].source.sha256}) into one of them.): no plan.")
    assert not any(tmp_path.glob("*.png"))

"""The "know when to stop annotating" pictures in the report of every dataset whose raw ratings
are read: Czech News STS (its card, which its report shows) and crowd-sts (its report section)."""

from __future__ import annotations

import re

import pytest

from semrel.dataset_scripts import load
from semrel.publishing.datasets.czech_news_sts import card_body
from semrel.publishing.rating_plan import plan_block

pytestmark = pytest.mark.slow  # builds datasets from the mirror


def _check(text: str, folder, raters: int, projected_to: int) -> None:
    assert re.search(rf"Reliability of the item means with {raters} raters per item: 0\.\d{{3}} \[0\.\d{{3}}, "
                     rf"0\.\d{{3}}\] \(split-half,\nSpearman–Brown; Krippendorff's α .*projected with "
                     rf"{projected_to}: 0\.\d{{3}}", text, flags=re.S), text
    for name in ("plan_reliability.png", "plan_item_means.png"):
        assert f"(images/{name})" in text and (folder / name).stat().st_size > 5_000


def test_czech_news_sts_card_shows_the_plan(mirror, cache_dir, tmp_path):
    free = load("czech-news-sts", "free", mirror=mirror, cache_dir=cache_dir)
    _check(card_body({"free": free}, tmp_path), tmp_path, 9, 18)


def test_crowd_sts_report_block_shows_the_plan(mirror, cache_dir, tmp_path):
    ann = load("crowd-sts", "annotations", mirror=mirror, cache_dir=cache_dir)["train"].to_pandas()
    text = plan_block(ann["pair_id"], ann["worker_id"], ann["label"].astype(float), tmp_path, scale=(1, 5),
                      raters=6, prefix="plan")
    _check(text, tmp_path, 3, 6)

"""The reliability report (build/report/index.html): structure without a browser, then headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

import toy_dataset
from semrel.dataset_scripts import REGISTRY
from semrel.dataset_scripts.str_2021.dice import PAPER_PER_SOURCE, fold_correlations
from semrel.metrics.bws.readers import read_semeval_2024
from semrel.metrics.split_half.split_half import split_half_bws
from semrel.publishing.export import build_dataset
from semrel.publishing.report import (
    FOLD_ROWS,
    RESULTS,
    Figure,
    build_report,
    dataset_section,
    fine_tuned_figure,
    render,
    report_hook,
)
from semrel.publishing.spaces import build_space, metric_names


class Page(HTMLParser):
    """Sections (id -> text), image sources, nav links and table rows of the report."""

    def __init__(self, html: str):
        super().__init__()
        self.sections, self.images, self.links, self.rows = {}, [], [], []
        self._section, self._row = None, None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self._section = attrs.get("id")
            self.sections[self._section] = ""
        elif tag == "img":
            self.images.append((self._section, attrs["src"]))
        elif tag == "a" and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._row.append("")

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None:
            self.rows.append((self._section, self._row))
            self._row = None

    def handle_data(self, data):
        if self._section is not None:
            self.sections[self._section] += data
        if self._row:
            self._row[-1] += data.strip()


@pytest.fixture(scope="module")
def report(mirror, cache_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    toy_dataset.register()
    try:
        build_dataset("str-2021", out / "hub", mirror=mirror, cache_dir=cache_dir)
        build_dataset("toy-sts", out / "hub", mirror=toy_dataset.MIRROR, cache_dir=cache_dir)
        for name in metric_names():
            build_space(name, out / "hub")
        others = sorted(set(REGISTRY) - {"str-2021", "toy-sts"})  # not built here: a note each
        page = build_report(out, ["str-2021", "toy-sts", *others], metric_names(), mirror=mirror,
                            cache_dir=cache_dir)
    finally:
        REGISTRY.pop("toy-sts")
    return page


@pytest.mark.slow  # builds the report of every dataset and metric
def test_every_dataset_and_metric_has_a_linked_section(report):
    page = Page(report.read_text(encoding="utf-8"))
    expected = {"overview", "dataset-str-2021", "dataset-toy-sts",
                *(f"dataset-{d}" for d in REGISTRY if d != "str-2021"),
                *(f"metric-{m.replace('_', '-')}" for m in metric_names())}
    assert set(page.sections) == expected
    assert set(page.links) == expected - {"overview"}
    overview = {row[0]: row for section, row in page.rows if section == "overview"}
    assert overview["dataset"] == ["dataset", "size", "reliability", "baseline", "best fine-tuned"]
    size, reliability, baseline, fine_tuned = overview["str-2021"][1:]
    assert size == "5,500 pairssemrel build --only str-2021"
    assert reliability.startswith("SHR 0.84 (paper §4")
    assert baseline.startswith("Dice ρ 0.5") and baseline.endswith("python scripts/reproduce_str_dice.py")
    figure = fine_tuned_figure("str-2021")  # benchmarks/results.json, not a copy in the code
    assert fine_tuned == figure.text + figure.command and fine_tuned.startswith("ρ 0.878, 5-fold CV mean: ")
    assert overview["toy-sts"][1] == "32 rowssemrel build --only toy-sts"
    assert set(overview) == {"dataset", "str-2021", "toy-sts", *(set(REGISTRY) - {"str-2021"})}


def test_fine_tuned_figures_come_from_the_results_file(tmp_path):
    """The checkout's benchmarks/results.json is found; an installed package without it points to
    RESULTS.md; a dataset the file does not list says so; an edit of the file shows in the report."""
    assert RESULTS.is_file() and RESULTS.parent.name == "benchmarks"
    assert fine_tuned_figure("str-2021", tmp_path / "absent.json").text == \
        "see benchmarks/RESULTS.md in the source repository"
    results = tmp_path / "results.json"
    results.write_text('{"fine_tuned": {"toy-sts": {"spearman": 0.51234, "model": "bi@minilm", '
                       '"protocol": "test split", "machine": "laptop", "command": "semrel fit"}}}')
    assert fine_tuned_figure("toy-sts", results) == Figure(
        "ρ 0.512, test split: bi@minilm (benchmarks/RESULTS.md)", "semrel fit")
    assert fine_tuned_figure("str-2021", results) == Figure("not measured")


@pytest.mark.slow  # builds the report of every dataset and metric
def test_images_exist_beside_the_page(report):
    page = Page(report.read_text(encoding="utf-8"))
    sources = {src for _, src in page.images}
    assert {"images/str-2021/score_hist_by_source.png", "images/str-2021/dice_by_source.png",
            "images/str-2021/semeval_bws_scores.png",
            "images/toy-sts/scores.png"} <= sources  # toy-sts: no hook, its card body and plots
    for src in sources:
        path = report.parent / src
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5_000, src


@pytest.mark.slow  # builds the report of every dataset and metric
def test_str_section_has_distributions_and_the_dice_baseline(report, mirror, cache_dir):
    assert report_hook("str-2021") is not None
    page = Page(report.read_text(encoding="utf-8"))
    rows = {row[0]: row[1:] for section, row in page.rows if section == "dataset-str-2021"}
    overall, per_source = fold_correlations(mirror, cache_dir)
    for source, values in per_source.items():
        paper, ours = rows[source][0], rows[source][1]
        assert (paper, ours) == (f"{PAPER_PER_SOURCE[source]:.3f}", f"{np.mean(values):.3f}")
    assert rows["overall"][:2] == ["0.570", f"{np.mean(overall):.3f}"]
    assert rows["all"][:2] == ["5500", "0.500"]  # pairs, mean score
    text = page.sections["dataset-str-2021"]
    assert "raw BWS annotations of STR-2021 are not public" in text and "0.84" in text


@pytest.mark.slow  # builds the report of every dataset and metric
def test_str_section_has_split_half_reliability_of_the_semeval_2024_files(report, mirror):
    page = Page(report.read_text(encoding="utf-8"))
    rows = {row[0]: row[1:] for section, row in page.rows if section == "dataset-str-2021"}
    for name, n_annotations, skipped, items in (("arq_bws.csv", "7,358", "2", "3,991"),
                                              ("arb_bws.csv", "2,710", "1", "1,800")):
        ann = read_semeval_2024(mirror / "semrel-2024" / "BWS_annotations" / name, on_invalid="omit")
        shr = split_half_bws(ann, trials=1000, seed=0, spearman_brown=True)
        assert rows[name][:2] + rows[name][3:4] == [n_annotations, skipped, items]
        assert rows[name][5:] == [f"{shr.spearman:.3f}", f"{shr.spearman_std:.3f}",
                                  f"{shr.pearson:.3f}", f"{shr.corrected_spearman:.3f}"]


def test_unbuilt_dataset_gets_a_note(tmp_path):
    section = dataset_section("str-2021", tmp_path / "absent", tmp_path / "images")
    assert section.summary == "not built: not built in this run" and "Not built" in section.html


@pytest.mark.slow  # builds the report of every dataset and metric
def test_sections_fold_and_no_card_is_pasted_whole(report, tmp_path):
    html = report.read_text(encoding="utf-8")
    assert html.count('<details class="section">') == html.count("<section id=") - 1  # not overview
    assert "<details open" not in html
    assert "## Citation" not in html and "@inproceedings" not in html  # cards stay in the repos
    long = "| a | b |\n|---|---|\n" + "".join(f"| {i} | x |\n" for i in range(FOLD_ROWS + 1))
    assert render(long, "images").startswith(f"<details><summary>table, {FOLD_ROWS + 1} rows")
    assert render(long.rsplit("|", 4)[0].rsplit("\n", 1)[0], "images").startswith("<table>")


def _browser():
    return shutil.which("chromium") or shutil.which("chromium-browser")


CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars")


def _screenshot(page: Path, tmp_path: Path, height: int) -> np.ndarray:
    shot = tmp_path / "report.png"
    subprocess.run([_browser(), *CHROMIUM_FLAGS, f"--user-data-dir={tempfile.mkdtemp()}",
                    f"--screenshot={shot}", f"--window-size=1280,{height}", page.resolve().as_uri()],
                   capture_output=True, timeout=120, check=True)
    return mpimg.imread(shot)


MEASURE = """<script>
window.addEventListener("load", () => {  // after the images: their size is part of the layout
  document.body.dataset.height = document.documentElement.scrollHeight;
  document.body.dataset.overview = document.getElementById("overview").getBoundingClientRect().bottom;
});
</script></body>"""


def _measure(report: Path, html: str) -> tuple[float, float]:
    """(page height, overview bottom) in px as Chromium lays ``html`` out at 1280 x 800."""
    measured = report.with_name("measure.html")
    measured.write_text(html.replace("</body>", MEASURE), encoding="utf-8")
    dom = subprocess.run([_browser(), *CHROMIUM_FLAGS, f"--user-data-dir={tempfile.mkdtemp()}",
                          "--window-size=1280,800", "--virtual-time-budget=10000", "--dump-dom",
                          measured.resolve().as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return (float(re.search(r'data-height="([\d.]+)"', dom)[1]),
            float(re.search(r'data-overview="([\d.]+)"', dom)[1]))


@pytest.mark.slow  # builds the report, renders it in Chromium
def test_report_renders_folded_within_the_first_screen(report):
    """Rendered at 1280 x 800 with every section folded: the page height and the overview's
    bottom edge, read back from the DOM Chromium laid out (a copy of the page with a measuring
    script, beside it so its images load)."""
    if _browser() is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    height, overview = _measure(report, report.read_text(encoding="utf-8"))
    print(f"report at 1280 px, everything folded: page {height:.0f} px, overview ends at {overview:.0f} px")
    assert overview <= 800  # the overview fits the first screen
    # and the folded page is about one and a half screens: 6 datasets and 7 metrics, a line or two each
    assert height <= 1250


@pytest.mark.slow  # builds the report, renders it in Chromium
def test_report_renders_open_sections_in_headless_chromium(report, tmp_path):
    if _browser() is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    opened = report.read_text(encoding="utf-8").replace("<details", "<details open")
    height, _ = _measure(report, opened)
    print(f"report at 1280 px, everything open: page {height:.0f} px")
    assert height > 3000  # the folded sections hold the tables and plots
    report.with_name("opened.html").write_text(opened, encoding="utf-8")
    pixels = _screenshot(report.with_name("opened.html"), tmp_path, 3000)
    ink = (pixels[..., :3].mean(axis=2) < 0.9).mean()
    assert ink > 0.05  # text, tables and plots drew (a blank or failed page is white)

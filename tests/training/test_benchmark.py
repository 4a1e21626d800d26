"""``semrel benchmark``: cells with intervals, refusals of pairs a model trained on, paired
comparisons corrected across sets, the outputs and the model-card section; mistakes in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from semrel.cli import main
from semrel.dataset_scripts.benchmark_sets import BenchmarkSet, benchmark_sets, select_sets
from semrel.trainers.benchmark import load_sets, run_benchmark
from semrel.trainers.benchmark.api import NothingScored
from semrel.trainers.benchmark.report import CARD_HEADING, card_section, table, write_outputs
from semrel.trainers.benchmark.run import LoadedSet
from semrel.trainers.card import write_section
from semrel.trainers.run_folder import pair_hashes, write_seen_pairs
from semrel.trainers.scoring import load_scorer
from trainer_fixtures import saved_runs, toy_conditional_pairs, toy_pairs


@pytest.fixture
def run(saved, tmp_path):
    """A copy of the saved bi-encoder run (its card, metrics and weights) to change."""
    return Path(shutil.copytree(saved / "run", tmp_path / "run"))


def toy_set(rows, name="toy", dataset="str-2021") -> LoadedSet:
    """A loaded set of toy rows, named as a set of ``dataset``."""
    return LoadedSet(BenchmarkSet(dataset, name, "test", (0.0, 1.0), ("en",)), rows)


def test_two_models_get_cells_with_intervals_and_a_corrected_comparison(kinds, tmp_path):
    rows = toy_pairs()
    sets = [toy_set(rows.select(range(60)), "a"), toy_set(rows.select(range(60, 120)), "b")]
    scorers = [load_scorer(str(kinds[k]), cache_dir=None) for k in ("bi-encoder", "transformer")]
    result = run_benchmark(scorers, sets, n_resamples=200, log=lambda line: None)
    cell = result.cell(str(kinds["bi-encoder"]), "str-2021/a/test")
    assert cell.status == "scored" and cell.n == 60
    assert cell.spearman_ci[0] < cell.spearman < cell.spearman_ci[1]
    assert cell.pearson_ci[0] < cell.pearson < cell.pearson_ci[1]
    tests = result.comparisons
    assert [t["set"] for t in tests] == ["str-2021/a/test", "str-2021/b/test"]
    p, holm = [t["spearman_p_value"] for t in tests], [t["spearman_p_holm"] for t in tests]
    assert sorted(holm) == pytest.approx(sorted([min(1, 2 * min(p)), max(min(1, 2 * min(p)), max(p))]))
    assert "Holm (1979)" in result.correction
    text = table(result)
    assert "str-2021/a/test" in text and "Paired comparison per set" in text
    assert "too few resamples" not in text  # Holm over 2 sets can reach 4 / 201 = 0.020
    three = [toy_set(rows.select(range(k, k + 40)), name) for k, name in ((0, "a"), (40, "b"), (80, "c"))]
    few = run_benchmark(scorers, three, n_resamples=100, log=lambda line: None)
    assert [t["spearman_p_holm_floor"] for t in few.comparisons] == [pytest.approx(6 / 101)] * 3
    assert (f"too few resamples: {scorers[0].spec} vs {scorers[1].spec} over 3 sets cannot reach a "
            "Holm p below 0.059; --resamples 1199 lets it reach 0.005") in table(few)
    written = write_outputs(result, tmp_path / "out")
    assert [p.name for p in written] == ["benchmark.json", "benchmark.md", "benchmark.png"]
    record = json.loads(written[0].read_text())
    assert {c["status"] for c in record["cells"]} == {"scored"} and len(record["comparisons"]) == 2
    assert "| str-2021/b/test | 60 |" in written[1].read_text()
    rho = [f"{c.spearman:.3f} [{c.spearman_ci[0]:.3f}, {c.spearman_ci[1]:.3f}]"
           for c in (result.cell(s.spec, "str-2021/a/test") for s in scorers)]
    assert f"| str-2021/a/test | 60 | — | {rho[0]} | {rho[1]} |" in written[1].read_text()
    assert written[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pairs_a_run_trained_on_are_refused(run):
    rows = toy_pairs()
    write_seen_pairs(run, [{"role": "train", "data": "toy-cv/cv-fold-0", "split": "train",
                                     "pairs": pair_hashes(rows["sentence1"][:10], rows["sentence2"][:10])}])
    sets = [toy_set(rows.select(range(40)), "seen"), toy_set(rows.select(range(40, 80)), "unseen")]
    result = run_benchmark([load_scorer(str(run), cache_dir=None)], sets, n_resamples=200,
                           log=lambda line: None)
    refused, scored = result.cells
    assert (refused.status, refused.spearman) == ("refused", None)
    assert refused.reason == "trained on these pairs: 10 of 40 (10 in train toy-cv/cv-fold-0/train)"
    assert scored.status == "scored"
    assert result.models[0]["training_on_record"] is True


def test_a_run_that_recorded_no_pairs_is_refused_its_dataset(run):
    metrics = json.loads((run / "metrics.json").read_text())
    (run / "metrics.json").write_text(json.dumps({**metrics, "data": "str-2021/cv-fold-0"}))
    rows = toy_pairs().select(range(30))
    sets = [toy_set(rows, "x", dataset="str-2021"), toy_set(rows, "x", dataset="crowd-sts")]
    result = run_benchmark([load_scorer(str(run), cache_dir=None)], sets, n_resamples=200,
                           log=lambda line: None)
    assert [c.status for c in result.cells] == ["refused", "scored"]
    assert "trained on str-2021/cv-fold-0, whose pairs the run did not record" in result.cells[0].reason


def test_conditions_a_model_cannot_take_are_refused(kinds):
    rows = toy_conditional_pairs().select(range(30))
    result = run_benchmark([load_scorer(str(kinds["bi-encoder"]), cache_dir=None)],
                           [toy_set(rows, "c", dataset="c-sts")], n_resamples=200, log=lambda line: None)
    assert result.cells[0].status == "refused"
    assert result.cells[0].reason == "an unconditional model: it would ignore the conditions of these pairs"
    tri = run_benchmark([load_scorer(str(kinds["semrel-tri"]), cache_dir=None)],
                        [toy_set(rows, "c", dataset="c-sts"), toy_set(toy_pairs().select(range(30)))],
                        n_resamples=200, log=lambda line: None)
    assert [c.status for c in tri.cells] == ["scored", "refused"]


def test_annotated_sets_get_the_mse_beside_its_lower_bound(kinds):
    rows = toy_pairs().select(range(40))
    rng = np.random.default_rng(0)
    annotations = [list(np.clip(s * 6 + rng.normal(0, 1, 9), 0, 6)) for s in rows["score"]]
    rows = rows.add_column("annotations", annotations).map(
        lambda r: {"score": float(np.mean(r["annotations"]))})
    entry = LoadedSet(BenchmarkSet("czech-news-sts", "free", "test", (0.0, 6.0), ("cs",)), rows)
    cell = run_benchmark([load_scorer(str(kinds["bi-encoder"]), cache_dir=None)], [entry],
                         n_resamples=200, log=lambda line: None).cells[0]
    assert cell.mse is not None and 0 < cell.mse_lower_bound < 1


def test_truncated_pairs_are_marked_in_the_cell(kinds):
    rows = toy_pairs().select(range(30))
    cell = run_benchmark([load_scorer(str(kinds["bi-encoder"]), cache_dir=None, max_length=4)],
                         [toy_set(rows)], n_resamples=200, log=lambda line: None).cells[0]
    assert (cell.status, cell.truncated, cell.mark) == ("scored", 30, "cut 30")


def test_unlabelled_and_user_data_sets_are_marked_not_scored(kinds, fixture_mirror, cache_dir):
    sets = [s for s in benchmark_sets(fixture_mirror, cache_dir=cache_dir, only=("semrel-2024", "c-sts"))
            if s.name in ("semrel-2024/esp/test", "c-sts/default/train")]
    loaded = load_sets(sets, mirror=fixture_mirror)
    result = run_benchmark([load_scorer(str(kinds["bi-encoder"]), cache_dir=None)], loaded,
                           log=lambda line: None)
    assert [(c.status, c.reason) for c in result.cells] == [
        ("skipped", "semrel-2024/esp/test: no labels (Spanish test scores were never published)"),
        ("skipped", "c-sts/default needs user-supplied data (--data-dir c-sts=DIR)")]


def test_the_card_gets_one_benchmark_section(run):
    rows = toy_pairs().select(range(30))
    result = run_benchmark([load_scorer(str(run), cache_dir=None)], [toy_set(rows)], n_resamples=200,
                           log=lambda line: None)
    before = (run / "README.md").read_text()
    for _ in range(2):  # a second run replaces the section
        write_section(run, CARD_HEADING, card_section(result, str(run)))
    card = (run / "README.md").read_text()
    assert card.count(CARD_HEADING + "\n") == 1 and "| str-2021/toy/test | 30 |" in card
    assert card.index(CARD_HEADING) < card.index("## Citation")
    assert card.split("---")[1] == before.split("---")[1]  # metadata untouched


@pytest.mark.slow  # it trains
def test_fit_records_the_pairs_it_trained_and_chose_on(tmp_path):
    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.trainers.run_folder import seen_pairs
    from trainer_fixtures import toy_folder

    folder = toy_folder(tmp_path / "toy", 8, 8)
    data = load_pairs(str(folder), score_range=(0, 1))
    train = data.splits["train"]
    from semrel.trainers.fitting import fit
    from trainer_fixtures import small_args, tiny_encoder

    fit(data, tiny_encoder(tmp_path / "base"), small_args(tmp_path / "run", max_steps=1))
    [part] = seen_pairs(tmp_path / "run")
    assert (part["role"], part["split"]) == ("train", "train")
    assert part["pairs"] == pair_hashes(train["sentence1"], train["sentence2"])


def test_a_pair_and_its_swap_hash_alike():
    assert pair_hashes(["a  b", "x"], ["c", "y"]) == pair_hashes(["c"], [" a b"]) + pair_hashes(["y"], ["x"])
    assert pair_hashes(["a"], ["b"], ["colour"]) != pair_hashes(["a"], ["b"], ["shape"])


TYPOS = [  # (argv after "benchmark", the one line after "semrel benchmark: error: "); more in REFUSED
    (["--model", "{tmp}/nope"], "--model {tmp}/nope: no such model folder, and neither a packaged "
                                "model name (e5-small, minilm, mpnet) nor a Hub model id "
                                "(namespace/name[@revision])"),
    (["--model", "{bi}", "--only", "sts-b"], "--only sts-b: is not a benchmarked dataset (str-2021, "
                                             "semrel-2024, crowd-sts, czech-news-sts, c-sts)"),
    (["--model", "{bi}", "--data-dir", "c-sts"], "--data-dir c-sts: must be DATASET=DIR (e.g. c-sts=~/csts)"),
    (["--model", "{bi}", "--model-kind", "quad"], "argument --model-kind: invalid choice: 'quad' (choose from "
                                                  "'semrel', 'ensemble', 'bi-encoder', 'cross-encoder', "
                                                  "'transformer')"),
]


@pytest.mark.parametrize("argv,line", TYPOS, ids=[t[1].split(":")[0] + " " + str(i) for i, t in enumerate(TYPOS)])
def test_a_mistake_is_one_line(kinds, tmp_path, capsys, argv, line):
    fill = {"{tmp}": str(tmp_path), "{bi}": str(kinds["bi-encoder"])}
    for key, value in fill.items():
        argv, line = [a.replace(key, value) for a in argv], line.replace(key, value)
    try:
        status = main(["benchmark", *argv])
    except SystemExit as exc:  # argparse's own mistakes
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(f"semrel benchmark: error: {line}") and err.count("\n") == 1


@pytest.mark.slow  # a subprocess over the fixture mirror
def test_the_command_scores_writes_its_files_and_the_card(kinds, tmp_path, fixture_mirror):
    import subprocess
    import sys

    root = saved_runs(tmp_path / "runs")
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "semrel", "benchmark", "--model", str(kinds["bi-encoder"]),
            "--model", str(root / "run"), "--only", "semrel-2024/eng", "--mirror", str(fixture_mirror),
            "--cache-dir", str(tmp_path / "hf"), "--score-cache", str(tmp_path / "scores"),
            "--resamples", "200", "--output", str(out), "--card", str(root / "run")]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=root, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "semrel-2024/eng/validation" in done.stdout and "skipped" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == ["benchmark.json", "benchmark.md", "benchmark.png"]
    assert CARD_HEADING in (root / "run" / "README.md").read_text()
    again = subprocess.run(argv, capture_output=True, text=True, cwd=root, timeout=600)
    assert again.returncode == 0 and ": 0 text units computed" in again.stderr


def test_a_conditional_toy_set_uses_its_conditions(kinds):
    rows = toy_conditional_pairs().select(range(24))
    scorer = load_scorer(str(kinds["semrel-tri"]), cache_dir=None)
    cell = run_benchmark([scorer], [toy_set(rows, "c", dataset="c-sts")], n_resamples=200,
                         log=lambda line: None).cells[0]
    expected = scorer.score(rows["sentence1"], rows["sentence2"], rows["condition"])
    np.testing.assert_array_equal(cell.predictions, expected)



@pytest.mark.slow  # MiniLM encodes 500 texts
def test_minilm_zero_shot_on_semrel_2024_english_dev_is_mtebs_figure(mirror, cache_dir):
    """0.82453: MTEB's figure for all-MiniLM-L6-v2 on this split, and semrel's zeroshot@minilm
    (benchmarks/results/benchmark.md)."""
    sets = select_sets(["semrel-2024/eng/validation"], mirror=mirror, cache_dir=cache_dir)
    result = run_benchmark([load_scorer("minilm", cache_dir=None)], load_sets(sets, mirror=mirror),
                           log=lambda line: None)
    cell = result.cells[0]
    assert (cell.n, round(cell.spearman, 5), cell.truncated) == (250, 0.82453, 0)


# ---- semrel.benchmark: the command in one call ------------------------------------------------


def _options(fixture_mirror, cache_dir, **changes) -> dict:
    """semrel-2024/eng of the fixture mirror (validation scored, test skipped), quietly."""
    return {"only": ["semrel-2024/eng"], "mirror": str(fixture_mirror), "cache_dir": str(cache_dir),
            "score_cache": False, "n_resamples": 100, "log": lambda line: None, **changes}


def test_the_call_gives_what_the_command_gives(kinds, run, fixture_mirror, cache_dir, tmp_path, capsys):
    import semrel

    models = [str(kinds["bi-encoder"]), str(run)]
    argv = ["benchmark", "--model", models[0], "--model", models[1], "--only", "semrel-2024/eng", "--mirror",
            str(fixture_mirror), "--cache-dir", str(cache_dir), "--no-score-cache", "--resamples", "100",
            "--output", str(tmp_path / "cli"), "--card", str(run)]
    assert main(argv) == 0
    printed, card_text = capsys.readouterr().out, (run / "README.md").read_text()
    result = semrel.benchmark(models, **_options(fixture_mirror, cache_dir, output=tmp_path / "api", card=str(run)))
    names = ["benchmark.json", "benchmark.md", "benchmark.png"]
    assert result.written == [tmp_path / "api" / n for n in names] + [run / "README.md"]
    assert printed == table(result) + "\n" + "".join(f"-> {tmp_path / 'cli' / n}\n" for n in names) + (
        f"-> {run / 'README.md'}\n")
    assert (run / "README.md").read_text() == card_text and CARD_HEADING in card_text
    assert (tmp_path / "api" / names[1]).read_text() == (tmp_path / "cli" / names[1]).read_text()
    records = [json.loads((tmp_path / side / names[0]).read_text()) for side in ("cli", "api")]
    for record in records:  # every figure but the times
        for entry in record["models"] + record["cells"]:
            entry.pop("seconds"), entry.pop("encode_seconds", None)
    assert records[0] == records[1]
    assert [c["status"] for c in records[1]["cells"]] == ["scored", "skipped"] * len(models)


REFUSED = [  # (options, str() of the ParameterError, the command's line for the same mistake, or None)
    ({"models": ["{bi}", "{bi}"]}, "models='{bi}': is {bi} again: give each model once",
     "--model {bi}: is {bi} again: give each model once"),
    ({"card": "{tmp}"}, "card='{tmp}': must be one of the models folders: its results are what the card gets",
     "--card {tmp}: must be one of the --model folders: its results are what the card gets"),
    ({"card": "{bi}"}, "card='{bi}': is a bi-encoder model, not a run or ensemble saved by semrel (whose card "
     "semrel writes)", "--card {bi}: is a bi-encoder model, not a run or ensemble saved by semrel (whose card "
     "semrel writes)"),
    ({"mirror": "{tmp}/none"}, "mirror='{tmp}/none': no such directory (expected <mirror>/<dataset-id>/<file>)",
     "--mirror {tmp}/none: no such directory (expected <mirror>/<dataset-id>/<file>)"),
    ({"data_dirs": {"c-sts": "{tmp}/none"}}, "data_dirs='c-sts={tmp}/none': {tmp}/none is not a folder",
     "--data-dir c-sts={tmp}/none: {tmp}/none is not a folder"),
    ({"only": ["semrel-2024/xyz"]}, "only='semrel-2024/xyz': names no benchmark set (e.g. "
     "semrel-2024/afr/validation)", "--only semrel-2024/xyz: names no benchmark set (e.g. semrel-2024/afr/validation)"),
    ({"model_kind": "quad"}, "model_kind='quad': not one of semrel, ensemble, bi-encoder, cross-encoder, transformer",
     None),
    ({"models": "{bi}"}, "models='{bi}': must be a list (e.g. ['minilm'])", None),
    ({"models": []}, "models=[]: names no model: give at least one", None),
    ({"only": "semrel-2024"}, "only='semrel-2024': must be a list (e.g. ['semrel-2024/eng'])", None),
    ({"batch_size": 0}, "batch_size=0: must be an integer >= 1", None),
    ({"max_length": 2.5}, "max_length=2.5: must be an integer >= 1", None),
    ({"n_resamples": 99}, "n_resamples=99: must be an integer from 100 to 100000 (about 0.1 s per 1,000 resamples "
     "and 1,000 pairs in each cell and comparison; 3 min per 1,000 for every set and three models)", None),
    ({"score_cache": None}, "score_cache=None: must be a folder, True (the default folder: $SEMREL_CACHE/scores, "
     "else ~/.cache/semrel/scores) or False (keep nothing on disk)", None),
    ({"progress": "yes"}, "progress='yes': must be True, False or None (when stderr is a terminal)", None),
]


def _filled(value, fill: dict):
    """``value`` (a string, or a list or dict of them) with each key of ``fill`` replaced."""
    if isinstance(value, dict):
        return {k: _filled(v, fill) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, fill) for v in value]
    for key, text in fill.items():
        value = value.replace(key, text) if isinstance(value, str) else value
    return value


def _flags(name: str, value) -> list[str]:
    """An option of ``semrel.benchmark`` as the command's flags."""
    if name == "data_dirs":
        return [a for dataset, folder in value.items() for a in ("--data-dir", f"{dataset}={folder}")]
    flag = {"models": "--model", "only": "--only"}.get(name, f"--{name}")
    return [a for v in (value if isinstance(value, list) else [value]) for a in (flag, v)]


@pytest.mark.parametrize("options,message,line", REFUSED, ids=[f"{i} {r[1].split('=')[0]}"
                                                                for i, r in enumerate(REFUSED)])
def test_a_bad_option_is_the_commands_refusal(options, message, line, kinds, tmp_path, capsys):
    import semrel
    from semrel.metrics.errors import ParameterError

    fill = {"{bi}": str(kinds["bi-encoder"]), "{tmp}": str(tmp_path)}
    options = _filled({"models": ["{bi}"], **options}, fill)
    with pytest.raises(ParameterError) as caught:
        semrel.benchmark(**options)
    assert str(caught.value) == _filled(message, fill)
    if line is not None:  # the command says the same mistake in its flags
        assert main(["benchmark", *(a for name, value in options.items() for a in _flags(name, value))]) == 2
        assert capsys.readouterr().err == f"semrel benchmark: error: {_filled(line, fill)}\n"


CLOSED = [  # (what goes wrong, what the call raises, how many scorers it opened)
    (None, None, 2),
    ("interrupted", KeyboardInterrupt, 2),
    ("nothing scored", NothingScored, 2),
    ("second model fails to load", OSError, 1),
]


@pytest.mark.parametrize("fault,raised,opened", CLOSED, ids=[c[0] or "scored" for c in CLOSED])
def test_every_scorer_it_opens_it_closes_and_a_failed_call_writes_nothing(fault, raised, opened, kinds, run,
                                                                          fixture_mirror, cache_dir, tmp_path,
                                                                          monkeypatch):
    from semrel.trainers.benchmark import api

    loaded, closed = [], []

    def spy(ref, **options):  # load_scorer, counting what it opened and what was closed
        if fault == "second model fails to load" and loaded:
            raise OSError("disk gone")
        scorer = load_scorer(ref, **options)
        close = scorer.close
        scorer.close = lambda: (closed.append(scorer.spec), close())
        loaded.append(scorer.spec)
        return scorer

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "load_scorer", spy)
    if fault == "interrupted":
        monkeypatch.setattr(api, "run_benchmark", interrupted)
    mirror = tmp_path / "empty" if fault == "nothing scored" else fixture_mirror  # no set loads from an empty one
    if fault == "nothing scored":
        mirror.mkdir()
    options = _options(mirror, cache_dir, output=tmp_path / "out", card=str(run))
    before = (run / "README.md").read_text()
    if raised is None:
        assert len(api.benchmark([str(kinds["bi-encoder"]), str(run)], **options).written) == 4
    else:
        with pytest.raises(raised):
            api.benchmark([str(kinds["bi-encoder"]), str(run)], **options)
        assert not (tmp_path / "out").exists() and (run / "README.md").read_text() == before
    assert len(loaded) == opened and closed == loaded

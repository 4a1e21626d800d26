"""``scripts/train_semrel_2024_languages.py --all-languages``: its choices on dev (the member per
encoder, the longer schedule, the final among the families), the paired test difference and the
table, on made-up records; and a smoke run with a tiny model on kin (slow)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import spearmanr
from test_languages_script import commands, smoke_run, study_env

from scripts.semrel_2024_languages.all_table import goals, markdown_all, paired_difference
from scripts.semrel_2024_languages.choices import best_per_encoder, final_choice, longer_siblings, prefer_longer


def member(encoder: str, dev: float | None, epochs: int = 4, last: bool = False) -> dict:
    return {"encoder": encoder, "dev_kept": dev, "epochs": epochs, "kept_last": last}


GRID = {"bi-lr2e-5": member("bi", 0.61, last=True), "bi-lr5e-5": member("bi", 0.64),
        "cross-lr2e-5": member("cross", 0.70, last=True), "cross-lr5e-5": member("cross", 0.70)}


@pytest.mark.parametrize("grid, chosen", [
    (GRID, {"bi": "bi-lr5e-5", "cross": "cross-lr2e-5"}),  # a tie keeps the first
    ({"bi-a": member("bi", None), "bi-b": member("bi", -0.1), "cross-a": member("cross", None)},
     {"bi": "bi-b", "cross": "cross-a"}),  # an undefined dev figure loses to any
])
def test_the_member_per_encoder_is_the_best_on_dev(grid, chosen):
    assert best_per_encoder(grid) == chosen


@pytest.mark.parametrize("chosen, siblings", [
    ({"bi": "bi-lr5e-5", "cross": "cross-lr2e-5"}, {"cross-lr2e-5": ("cross-lr2e-5-ep8", 8)}),
    ({"bi": "bi-lr2e-5", "cross": "cross-lr5e-5"}, {"bi-lr2e-5": ("bi-lr2e-5-ep8", 8)}),
    ({"bi": "bi-lr5e-5", "cross": "cross-lr5e-5"}, {}),  # kept epochs before the last: none
])
def test_a_chosen_member_whose_kept_epoch_was_its_last_gets_a_sibling_twice_as_long(chosen, siblings):
    assert longer_siblings(GRID, chosen) == siblings


@pytest.mark.parametrize("sibling_dev, kept", [
    (0.71, "cross-lr2e-5-ep8"), (0.70, "cross-lr2e-5"), (0.69, "cross-lr2e-5"), (None, "cross-lr2e-5")])
def test_the_sibling_replaces_its_member_only_when_better_on_dev(sibling_dev, kept):
    chosen = {"bi": "bi-lr5e-5", "cross": "cross-lr2e-5"}
    trained = {"cross-lr2e-5-ep8": member("cross", sibling_dev, 8)}
    assert prefer_longer(chosen, GRID, longer_siblings(GRID, chosen), trained) == {"bi": "bi-lr5e-5", "cross": kept}


@pytest.mark.parametrize("candidates, final", [
    ({"per-language-rank": 0.6, "per-language-ridge": 0.62, "all-rank": 0.55, "from-all-rank": 0.66,
      "from-all-ridge": 0.65}, "from-all-rank"),
    ({"per-language-rank": 0.6, "per-language-ridge": 0.66, "all-rank": 0.55, "from-all-rank": 0.66,
      "from-all-ridge": None}, "per-language-ridge"),  # a tie keeps the per-language study's
    ({"per-language-rank": None, "per-language-ridge": None, "all-rank": -0.1}, "all-rank"),
])
def test_the_final_is_the_best_candidate_on_dev(candidates, final):
    assert final_choice(candidates) == final


def test_the_paired_difference_aligns_both_files_by_pair_id(tmp_path):
    from semrel.metrics.compare import compare_correlations
    from semrel.metrics.submission import write_predictions

    rng = np.random.default_rng(0)
    ids, gold = [f"kin_test_{i}" for i in range(30)], rng.random(30)
    new, today = gold + rng.normal(0, 0.2, 30), gold + rng.normal(0, 0.4, 30)
    order = rng.permutation(30)  # each file in another order than the split
    write_predictions(tmp_path / "new.csv", [ids[i] for i in order], new[order])
    write_predictions(tmp_path / "today.csv", [ids[i] for i in order[::-1]], today[order[::-1]])
    got = paired_difference(tmp_path / "new.csv", tmp_path / "today.csv", {"pair_id": ids, "score": gold})
    expected = compare_correlations(new, today, gold, seed=0)
    assert got == {"difference": round(spearmanr(new, gold)[0] - spearmanr(today, gold)[0], 4),
                   "ci": [round(expected.spearman_difference.interval.low, 4),
                          round(expected.spearman_difference.interval.high, 4)],
                   "p_value": round(expected.spearman_p_value, 4), "n": 30, "same_predictions": False}
    assert paired_difference(tmp_path / "new.csv", tmp_path / "new.csv", {"pair_id": ids, "score": gold}) == {
        "difference": 0.0, "ci": [0.0, 0.0], "p_value": 1.0, "n": 30, "same_predictions": True}


def made_up(final: str, new: float | None, today_final: str, today: float | None, paired, labse, best,
            labelled: bool = True) -> dict:
    """A language's ``--all-languages`` result, as much of it as the tables read."""
    tuned = {"from-all-bi-lr1e-5": {"learning_rate": 1e-5, "kept_epoch": 2.0},
             "from-all-cross-lr2e-5": {"learning_rate": 2e-5, "kept_epoch": 1.0}}
    longer = {"from-all-bi-lr1e-5-ep4": {"learning_rate": 1e-5, "kept_epoch": 3.0, "dev_kept": 0.7,
                                         "longer_of": "from-all-bi-lr1e-5", "longer_of_dev": 0.65}}
    return {"pairs": {"test": 222}, "test_labelled": labelled,
            "per_language": {"longer": {"bi-lr2e-5-ep8": {"dev_kept": 0.61, "longer_of": "bi-lr2e-5",
                                                          "longer_of_dev": 0.6}}},
            "from_all": {"grid": tuned, "chosen": {"bi": "from-all-bi-lr1e-5-ep4", "cross": "from-all-cross-lr2e-5"},
                         "longer": longer},
            "candidates_dev": {"per-language-rank": 0.6, "per-language-ridge": 0.62, "all-rank": 0.55,
                               "from-all-rank": 0.66, "from-all-ridge": 0.68},
            "final": final, "test": {} if new is None else {final: new},
            "today": {"final": today_final, "test": today}, "paired": paired,
            "official": {"labse": labse, "best": best}}


LANGUAGES = {
    "amh": made_up("per-language-rank", 0.83, "rank", 0.83,
                   {"difference": 0.0, "ci": [0.0, 0.0], "p_value": 1.0, "n": 222, "same_predictions": True},
                   0.85, 0.889),
    "kin": made_up("from-all-ridge", 0.79, "ridge", 0.76,
                   {"difference": 0.03, "ci": [-0.01, 0.07], "p_value": 0.2, "n": 222, "same_predictions": False},
                   0.72, 0.817),
    "eng": made_up("all-rank", None, "rank", None, None, 0.83, 0.86, labelled=False),
}


def test_the_goals_are_counted_over_the_labelled_languages_done():
    assert goals(LANGUAGES) == {"languages": ["amh", "kin"], "of": 7, "mean": 0.81, "today_mean": 0.795,
                                "below_labse": ["amh"], "at_least_best": [], "mean_above_goal": True}


def test_the_table_sets_each_final_beside_the_per_language_one():
    table = markdown_all(LANGUAGES).splitlines()
    assert table[2:6] == [
        "| amh | 222 | rank | 0.830 | per-language-rank | per language | **0.830** | 0 (the same model) | 0.85 | "
        "0.889 | -0.020 | -0.059 |",
        "| kin | 222 | ridge | 0.760 | from-all-ridge | all, fine-tuned | **0.790** | +0.030 [-0.010, +0.070] | "
        "0.72 | 0.817 | +0.070 | -0.027 |",
        "| eng | no labels | rank |  | all-rank | all, as it is |  |  | 0.83 | 0.860 |  |  |",
        "| mean of 2 | | | 0.795 | | | **0.810** | +0.015 | 0.785 | 0.853 | +0.025 | -0.043 |"]
    assert table[7] == ("Goals, over 2 of the 7 labelled languages: every language at or above LaBSE: no "
                        "(below: amh); the mean above 0.80: yes (0.810); at least one at or above its best "
                        "submission: no.")
    assert table[12] == ("| kin | 0.600 / 0.620 | 0.550 | 0.660 / 0.680 | from-all-ridge | 1e-05, 3 | 2e-05, 1 | "
                         "bi-lr2e-5-ep8 0.610 (bi-lr2e-5 0.600); from-all-bi-lr1e-5-ep4 0.700 "
                         "(from-all-bi-lr1e-5 0.650) |")


@pytest.mark.slow
def test_all_languages_on_kin_train_from_the_all_members_choose_on_dev_and_keep_on_a_rerun(mirror, tmp_path):
    """kin with a tiny model, 2 steps a member: the fine-tuned members start from the all
    members and record what those saw; every choice is the dev figures'; the final alone predicts
    test; its paired difference is in the table; a rerun trains nothing."""
    from semrel.trainers.run_folder import seen_pairs

    out = tmp_path / "study"
    run, done = smoke_run(mirror, tmp_path, out, "--track", "a", "--all-languages")
    fits = [c for c in commands(done.stdout) if c.split()[2] == "fit"]
    tuned = [f for f in fits if "all-languages/kin/from-all-" in f]
    for encoder, rate in [("bi", "1e-5"), ("bi", "2e-5"), ("cross", "1e-5"), ("cross", "2e-5")]:
        [fit] = [f for f in tuned if f"--output {out}/all-languages/kin/from-all-{encoder}-lr{rate} " in f + " "]
        assert f"--model {out}/track-c/train-all/{encoder} --encoder {encoder} --epochs 2 --learning-rate {rate}" in fit
        assert "--eval-config kin --eval-split validation" in fit and "--selection-overlap omit" in fit
    shared = [f.split("--output ")[1].split()[0] for f in fits if "--config all " in f]
    assert shared == [f"{out}/track-c/train-all/bi", f"{out}/track-c/train-all/cross"]  # trained once

    study = json.loads((out / "study.json").read_text())
    assert (study["all_languages"]["grid_from_all"], study["all_languages"]["epochs_from_all"],
            study["all_languages"]["longer"]) == ({"bi": ["1e-5", "2e-5"], "cross": ["1e-5", "2e-5"]}, 2, 2)
    kin, today = study["all_languages"]["languages"]["kin"], study["track_a"]["kin"]
    started = seen_pairs(out / "all-languages" / "kin" / kin["from_all"]["chosen"]["bi"])
    assert [(p["role"], p["data"], p["split"]) for p in started] == [
        ("train", "semrel-2024/all", "train"), ("train", "semrel-2024/kin", "train"),
        ("selection", "semrel-2024/kin", "validation")]  # what the all member saw, then its own
    grid = kin["from_all"]["grid"]
    for encoder, name in kin["from_all"]["chosen"].items():  # the rate per encoder, then the longer rule
        best = max((n for n in grid if grid[n]["encoder"] == encoder), key=lambda n: grid[n]["dev_kept"])
        assert name in (best, f"{best}-ep4") and (name == best or grid[best]["kept_last"])
        assert (f"{best}-ep4" in kin["from_all"]["longer"]) is grid[best]["kept_last"]
    assert kin["final"] == max(kin["candidates_dev"], key=kin["candidates_dev"].get)
    assert kin["today"] == {"final": today["final"], "test": today["test"][today["final"]]}
    tests = [c for c in commands(done.stdout) if " predict " in c and "--split test" in c and "all-languages" in c]
    ensembles = {f"{f}-{m}" for f in ("per-language", "all", "from-all") for m in ("rank", "ridge")}
    predicted = {c.split("--output ")[1].rsplit("/", 1)[1].removesuffix(".test.csv") for c in tests}
    assert predicted & ensembles <= {kin["final"]}  # of the candidates, the final alone sees test
    final = out / kin["final_file"]
    evaluated = subprocess.run([sys.executable, "-m", "semrel", "evaluate", str(final), "--language", "kin",
                                "--split", "test", "--json"], cwd=tmp_path, env=study_env(mirror, tmp_path),
                               capture_output=True, text=True, timeout=600)
    [row] = json.loads(evaluated.stdout)
    assert round(row["spearman"], 4) == kin["test"][kin["final"]]
    assert kin["paired"]["n"] == 222  # the two files' Spearman on test, less the rounding of each
    assert abs(kin["paired"]["difference"] - (kin["test"][kin["final"]] - kin["today"]["test"])) <= 1.5e-4
    tables = (out / "tables.md").read_text()
    assert f"| kin | 222 | {today['final']} | " in tables and "Goals, over 1 of the 7 labelled languages" in tables

    again = run("--publish", str(tmp_path / "benchmarks"))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "$ semrel" not in again.stdout and again.stdout.count(" is finished") == 2  # kin's two units
    assert json.loads((out / "study.json").read_text())["all_languages"] == study["all_languages"]
    published = tmp_path / "benchmarks" / "predictions" / "semrel-2024" / "e5-small-all-languages" / "pred_kin.csv"
    assert published.read_bytes() == final.read_bytes()


def test_jobs_schedule_each_fine_tuned_member_after_the_all_member_it_starts_from(tmp_path, monkeypatch):
    """``--jobs``: the task graph of kin's two units with nothing trained yet (no process runs)."""
    from argparse import Namespace

    import semrel.trainers.side_by_side as side_by_side
    from scripts.semrel_2024_languages.from_all import from_all_units
    from scripts.semrel_2024_languages.jobs import run_side_by_side
    from scripts.semrel_2024_languages.members import Study
    from scripts.semrel_2024_languages.units import units

    out, graphs = tmp_path / "study", []
    monkeypatch.setattr(side_by_side, "side_by_side", lambda tasks, jobs, ended, say: graphs.append(tasks))
    args = Namespace(output=out, precision="fp32", model=[], max_steps=2, jobs=2)
    chosen = units(out, ["a"], {"kin"})
    run_side_by_side(tmp_path / "script.py", args, Study(args), chosen, None, from_all_units(out, chosen))
    [tasks] = graphs
    names = [str(t.log.relative_to(out)) for t in tasks]
    assert names == ["track-a/kin/bi-lr2e-5.log", "track-a/kin/bi-lr5e-5.log", "track-a/kin/cross-lr2e-5.log",
                     "track-a/kin/cross-lr5e-5.log", "track-a/kin/score.log", "track-c/train-all/bi.log",
                     "track-c/train-all/cross.log", "track-c/train-all/rank.log",
                     "all-languages/kin/from-all-bi-lr1e-5.log", "all-languages/kin/from-all-bi-lr2e-5.log",
                     "all-languages/kin/from-all-cross-lr1e-5.log", "all-languages/kin/from-all-cross-lr2e-5.log",
                     "all-languages/kin/score.log"]
    assert [t.after for t in tasks[8:]] == [(5,), (5,), (6,), (6,), (7, 8, 9, 10, 11, 4)]
    assert f"--model {out}/track-c/train-all/cross --encoder cross" in " ".join(tasks[10].argv)
    assert tasks[12].argv[2:] == ("--track", "a", "--language", "kin", "--all-languages", "--output", str(out),
                                  "--precision", "fp32", "--max-steps", "2")

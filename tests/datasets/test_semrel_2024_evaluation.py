"""``semrel evaluate`` and the gold of a semrel-2024 split: the official SemEval-2024 Task 1
evaluation run as a user runs it, on the real mirrored files."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from project import REPO
from semrel.cli import main
from semrel.metrics.errors import DataValidationError
from semrel.metrics.overlap import dice
from semrel.metrics.submission import read_gold, write_predictions

AMH_TEST = "semrel-2024/Track A/amh/amh_test_with_labels.csv"


@pytest.fixture(scope="module")
def amh(upstream, cache_dir):
    import semrel.dataset_scripts

    return semrel.dataset_scripts.load("semrel-2024", "amh", mirror=upstream, cache_dir=cache_dir)


@pytest.fixture
def submission(amh, tmp_path):
    """Dice predictions for amh test, rows reversed, named as the task's scorer wants them."""
    test = amh["test"]
    predicted = dice(test["sentence1"], test["sentence2"])
    path = write_predictions(tmp_path / "pred_amh.csv", test["pair_id"][::-1], predicted[::-1])
    return path, stats.spearmanr(predicted, np.asarray(test["score"])).statistic


def test_split_gold_and_gold_file_agree(submission, mirror, cache_dir, capsys):
    path, expected = submission
    assert main(["evaluate", str(path), "--split", "test", "--mirror", str(mirror), "--cache-dir",
                 str(cache_dir), "--json"]) == 0
    (from_split,) = json.loads(capsys.readouterr().out)
    assert from_split == {"predictions": str(path), "gold": "semrel-2024/amh/test", "language": "amh",
                          "pairs": 171, "spearman": pytest.approx(expected, abs=1e-12)}
    assert main(["evaluate", str(path), "--gold", str(mirror / AMH_TEST)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["predictions", "gold", "language", "pairs", "spearman"]
    assert table[1].split()[-3:] == ["amh", "171", f"{expected:.4f}"]


def test_unpublished_labels_are_an_error_naming_the_split(mirror, cache_dir):
    from semrel.dataset_scripts.semrel_2024.evaluation import gold

    with pytest.raises(DataValidationError, match=r"semrel-2024/esp/test: row 1: no gold score.*\(ESP-test-0000\)"):
        gold("esp", "test", mirror=mirror, cache_dir=cache_dir)
    reference, languages = gold("esp", "dev", mirror=mirror, cache_dir=cache_dir)  # dev is validation
    assert len(reference.ids) == 140 and set(languages) == {"esp"}


@pytest.mark.parametrize("args, words", [
    (["--gold", "G", "--gold", "G"], "--gold: 2 files for 1 predictions files"),
    (["--split", "test", "--language", "amh", "--language", "hau"], "--language: 2 given for 1"),
    (["--gold", "G", "--mirror", "M"], "--mirror and --cache-dir are for --split"),
    (["--gold", "G", "--language", "amh", "--json"], "G: no such file"),
], ids=["gold count", "language count", "mirror with gold", "missing gold"])
def test_usage_mistakes_exit_2_in_one_line(args, words, submission, tmp_path, capsys):
    path, _ = submission
    args = [str(tmp_path / a) if a in ("G", "M") else a for a in args]
    assert main(["evaluate", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_unnamed_file_needs_a_language(tmp_path, capsys):
    path = write_predictions(tmp_path / "mine.csv", ["a"], [0.5])
    assert main(["evaluate", str(path), "--split", "test"]) == 2
    assert "mine.csv: name it pred_<lang>.csv or give --language" in capsys.readouterr().err


def semrel(*args, cwd):
    return subprocess.run([sys.executable, "-m", "semrel", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "SEMREL_MIRROR": str(REPO.parent / "x")})


def test_a_typo_in_a_flag_exits_2_in_one_line(tmp_path):
    typo = semrel("evaluate", "pred_amh.csv", "--split", "test", "--langauge", "amh", cwd=tmp_path)
    assert typo.returncode == 2 and typo.stdout == ""
    assert typo.stderr.strip() == "semrel: error: unrecognized arguments: --langauge amh (see semrel --help)"


@pytest.mark.slow  # two subprocesses
def test_command_as_a_user_runs_it(submission, mirror, tmp_path):
    path, expected = submission
    bad = tmp_path / "pred_bad.csv"
    bad.write_text(path.read_text(encoding="utf-8") + "Pair_ID_amh_test_1,0.5\n", encoding="utf-8")
    done = semrel("evaluate", path, bad, "--gold", mirror / AMH_TEST, "--gold", mirror / AMH_TEST, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.strip() == (f"semrel evaluate: error: {bad}: row 172: repeated PairID (first at row "
                                   "171) (Pair_ID_amh_test_1)")
    done = semrel("evaluate", path, "--gold", mirror / AMH_TEST, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["spearman"] == pytest.approx(expected, abs=1e-12)
    assert len(read_gold(mirror / AMH_TEST).ids) == 171


def test_results_page_shows_the_baselines_of_results_json():
    """benchmarks/results/baselines.md's SemRel-2024 baseline table is the one results.json holds, as the
    benchmark renders it; LaBSE and best are the task's figures on test (Track A languages)."""
    from benchmarks.bench_semrel_2024_baselines import RESULTS_KEY, markdown
    from semrel.dataset_scripts.semrel_2024.official import BEST, LABSE

    stored = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))[RESULTS_KEY]
    text = (REPO / "benchmarks" / "results" / "baselines.md").read_text(encoding="utf-8")
    section = text.split("\n## SemRel-2024 baselines", 1)[1].split("\n## ", 1)[0]
    assert markdown(stored["table"]) in section and f"`{stored['command']}`" in section
    for language, by_split in stored["table"].items():
        assert by_split.get("test", {}).get("labse") == LABSE.get(language if "test" in by_split else None)
        assert by_split.get("test", {}).get("best") == BEST.get(language if "test" in by_split else None)


# --- every input of `semrel evaluate`: a file it cannot read, a flag that cannot serve ------------

def deny(monkeypatch, *paths):
    """Reading ``paths`` (or anything under them) fails as a file without read permission does (the
    tests run as root, whom chmod does not stop)."""
    import builtins
    import io

    def guarded(real):
        def open_(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and any(
                    str(file) == str(p) or str(file).startswith(f"{p}{os.sep}") for p in paths):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
            return real(file, *args, **kwargs)
        return open_
    monkeypatch.setattr(io, "open", guarded(io.open))
    monkeypatch.setattr(builtins, "open", guarded(builtins.open))


def read_only(monkeypatch, folder):
    """Making folders in ``folder`` fails as on a read-only file system."""
    real = os.makedirs

    def makedirs(name, *args, **kwargs):
        if str(name).startswith(str(folder)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(name))
        return real(name, *args, **kwargs)
    monkeypatch.setattr(os, "makedirs", makedirs)


def full_disk_check(monkeypatch, folder):
    import datasets.builder

    monkeypatch.setattr(datasets.builder, "has_sufficient_disk_space", lambda *args, **kwargs: False)


def full_disk_while_writing(monkeypatch, folder):
    import datasets.arrow_writer

    def finalize(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(datasets.arrow_writer.ArrowWriter, "finalize", finalize)


def latin1(path):
    path.write_bytes(path.read_bytes() + "Pair_\xe9,0.5\n".encode("latin-1"))


INPUTS = [  # (id, arguments after "evaluate", a change to the files or the process, the one line or None: a
    # result; every file and flag in its own words, so paths with spaces stay whole)
    ("predictions through a link", "{link} --gold {gold} --language amh --json", None, None),
    ("predictions a dangling link", "{dangling} --gold {gold} --language amh", None, "{dangling}: no such file"),
    ("predictions a folder", "{folder} --gold {gold} --language amh", None,
     "{folder}: file cannot be read (Is a directory)"),
    ("gold a folder", "{pred} --gold {folder}", None, "{folder}: file cannot be read (Is a directory)"),
    ("predictions unreadable", "{pred} --gold {gold}", lambda mp, d: deny(mp, d["pred"]),
     "{pred}: file cannot be read (Permission denied)"),
    ("gold unreadable", "{pred} --gold {gold}", lambda mp, d: deny(mp, d["gold"]),
     "{gold}: file cannot be read (Permission denied)"),
    ("predictions not UTF-8", "{pred} --gold {gold}", lambda mp, d: latin1(d["pred"]),
     "{pred}: row 172: file is not UTF-8 text (byte b'\\xe9' at offset {offset})"),
    ("a field over the csv module's limit", "{pred} --gold {gold}",
     lambda mp, d: d["pred"].write_text("PairID,Pred_Score\n" + "x" * 131_073 + ",1\n"),
     "{pred}: row 1: a field is longer than 131,072 characters (an unclosed quote?)"),
    ("--mirror missing", "{pred} --split test --mirror {missing}", None,
     "--mirror {missing}: no such directory (expected <mirror>/<dataset-id>/<file>)"),
    ("--mirror a file", "{pred} --split test --mirror {gold}", None,
     "--mirror {gold}: is a file, not a directory (expected <mirror>/<dataset-id>/<file>)"),
    ("--cache-dir a file", "{pred} --split test --mirror {mirror} --cache-dir {gold}", None,
     "--cache-dir {gold}: is a file, not a folder"),
    ("--cache-dir read-only", "{pred} --split test --mirror {mirror} --cache-dir {cache}",
     lambda mp, d: read_only(mp, d["cache"]), "--cache-dir {cache}: cannot be written (Read-only file system)"),
    ("--cache-dir full", "{pred} --split test --mirror {mirror} --cache-dir {cache}",
     lambda mp, d: full_disk_check(mp, d["cache"]), "--cache-dir {cache}: cannot be written (Not enough disk space)"),
    ("--cache-dir full while writing", "{pred} --split test --mirror {mirror} --cache-dir {cache}",
     lambda mp, d: full_disk_while_writing(mp, d["cache"]),
     "--cache-dir {cache}: cannot be written (No space left on device)"),
    ("a mirror file unreadable", "{pred} --split test --mirror {mirror} --cache-dir {cache}",
     lambda mp, d: deny(mp, d["mirror"] / "semrel-2024"),
     "{mirror}/semrel-2024/Track A/amh/amh_train.csv: cannot be read (Permission denied)"),
]


@pytest.mark.parametrize("argv, change, line", [c[1:] for c in INPUTS], ids=[c[0] for c in INPUTS])
def test_every_input_is_answered_in_one_line(submission, mirror, tmp_path, monkeypatch, capsys, argv, change, line):
    """Exit status 2 and, after any progress bars of the datasets build, one line naming the file or
    flag and the cause; a link to a good file is read as the file."""
    pred, _ = submission
    places = {"pred": pred, "gold": mirror / AMH_TEST, "folder": tmp_path / "folder", "link": tmp_path / "link.csv",
              "dangling": tmp_path / "dangling.csv", "missing": tmp_path / "missing", "mirror": mirror,
              "cache": tmp_path / "cache"}
    places["folder"].mkdir()
    places["link"].symlink_to(pred)
    places["dangling"].symlink_to(tmp_path / "gone.csv")
    offset = len(pred.read_bytes())  # where a byte appended to the predictions file is
    if change is not None:
        change(monkeypatch, places)
    code = main(["evaluate", *(word.format(**places) for word in argv.split(" "))])
    out, err = capsys.readouterr()
    if line is None:
        assert code == 0, err
        assert json.loads(out)[0]["pairs"] == 171
        return
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == f"semrel evaluate: error: {line.format(**places, offset=offset + 5)}"
    assert err.count("error") == 1

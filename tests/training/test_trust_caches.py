"""Caches that cannot lie or make the tool unusable (issue 48, §2 and §4): a model whose files
change is hashed again even when size and mtime are set back; every score cache file
(a model's ``.sqlite``: its vectors and its facts; ``hashes.sqlite``) x {garbage, a damaged page,
a damaged value, truncated to half, truncated to 0 bytes} gives the true figures with one warning
naming the file, and the file is made anew; a folder that cannot hold the cache (a file, under a
file, read-only) is refused in one line naming the flag and the folder, before any work.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from semrel.cli import main
from semrel.dataset_scripts import sources
from semrel.metrics.errors import ParameterError
from semrel.trainers.model_ref import content_hash
from semrel.trainers.scoring import load_scorer
from semrel.trainers.scoring.cache import HASHES_FILE, remembered_hash
from trainer_fixtures import tiny_sentence_transformer, toy_pairs

TOY = toy_pairs()
S1, S2 = TOY["sentence1"][:30], TOY["sentence2"][:30]
UNITS = len(set(S1) | set(S2))
WEIGHTS = "model.safetensors"
READ_ONLY = "/sys/c"  # no file can be created in /sys, not even by root


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Two tiny bi-encoders of one architecture (weights of the same size, other values) and
    each one's true figures on the toy pairs, computed without a cache."""
    root = tmp_path_factory.mktemp("models")
    found = {name: tiny_sentence_transformer(root / name, seed=seed) for name, seed in (("a", 0), ("b", 1))}
    assert (found["a"] / WEIGHTS).stat().st_size == (found["b"] / WEIGHTS).stat().st_size
    assert (found["a"] / WEIGHTS).read_bytes() != (found["b"] / WEIGHTS).read_bytes()
    figures = {name: load_scorer(str(path), cache_dir=None).score(S1, S2) for name, path in found.items()}
    assert not np.allclose(figures["a"], figures["b"])
    return found, figures


@pytest.fixture
def warned():
    """The lines the score cache logs while a test runs."""
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.getLogger("semrel.trainers.scoring.cache")
    logger.addHandler(handler)
    yield lines
    logger.removeHandler(handler)


@pytest.fixture
def settled(monkeypatch):
    """Files count as settled at once (a model copied a moment ago gets its signature)."""
    monkeypatch.setattr(sources, "SETTLED_NS", 0)


def _set_back(file: Path, stat: os.stat_result) -> None:
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _rewrite(model: Path, other: Path) -> None:
    """The weights overwritten in place by ``other``'s (same size), mtime set back."""
    stat = (model / WEIGHTS).stat()
    (model / WEIGHTS).write_bytes((other / WEIGHTS).read_bytes())
    _set_back(model / WEIGHTS, stat)


def _replace(model: Path, other: Path) -> None:
    """The weights replaced by a copy of ``other``'s (a new inode), mtime set back."""
    stat = (model / WEIGHTS).stat()
    shutil.copyfile(other / WEIGHTS, model / "new")
    os.replace(model / "new", model / WEIGHTS)
    _set_back(model / WEIGHTS, stat)


def _touch(model: Path, other: Path) -> None:
    """Only the mtime of the weights changed."""
    os.utime(model / WEIGHTS, ns=(0, 10**18))


def _grow_config(model: Path, other: Path) -> None:
    """config.json one line longer (its size and mtime change)."""
    (model / "config.json").write_text((model / "config.json").read_text() + "\n")


HASH_CASES = [  # (case, change between two hashes, hashed again, the hash's model after it: None, a new one)
    ("unchanged", lambda model, other: None, False, "a"),
    ("weights rewritten, same size, mtime set back", _rewrite, True, "b"),
    ("weights replaced by another file, same size, mtime set back", _replace, True, "b"),
    ("weights touched", _touch, True, "a"),
    ("config.json grows", _grow_config, True, None),
]


@pytest.mark.parametrize("change,again,owner", [c[1:] for c in HASH_CASES], ids=[c[0] for c in HASH_CASES])
def test_a_model_is_hashed_again_whenever_a_file_changed(models, tmp_path, settled, change, again, owner):
    found, _ = models
    model = Path(shutil.copytree(found["a"], tmp_path / "model"))
    calls = []

    def counted(folder):
        calls.append(folder)
        return content_hash(folder)

    first = remembered_hash(tmp_path / "cache", model, counted)
    assert remembered_hash(tmp_path / "cache", model, counted) == first and len(calls) == 1
    change(model, found["b"])
    got = remembered_hash(tmp_path / "cache", model, counted)
    assert got == (content_hash(found[owner]) if owner else content_hash(model)) and (owner or got != first)
    assert len(calls) == 1 + again


def test_a_model_changed_a_moment_ago_is_hashed_and_not_remembered(models, tmp_path):
    found, _ = models
    model = Path(shutil.copytree(found["a"], tmp_path / "model"))  # written just now: not settled
    calls = []
    for _ in range(2):
        remembered_hash(tmp_path / "cache", model, lambda folder: calls.append(folder) or content_hash(folder))
    assert len(calls) == 2


@pytest.mark.parametrize("swap", [_rewrite, _replace], ids=["rewritten", "replaced"])
def test_swapped_weights_with_their_mtime_set_back_get_their_true_figures(models, tmp_path, settled, swap):
    found, figures = models
    model = Path(shutil.copytree(found["a"], tmp_path / "model"))
    first = load_scorer(str(model), cache_dir=tmp_path / "cache")
    np.testing.assert_allclose(first.score(S1, S2), figures["a"], atol=1e-6)
    first.close()
    swap(model, found["b"])
    again = load_scorer(str(model), cache_dir=tmp_path / "cache")
    np.testing.assert_allclose(again.score(S1, S2), figures["b"], atol=1e-6)
    assert again.computed == UNITS


# ---- damaged cache files --------------------------------------------------------------------

def _page_of(file: Path, table: str) -> int:
    """Where the root page of ``table`` starts in ``file``."""
    with sqlite3.connect(file) as db:
        page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    return (page - 1) * size


def _stored(file: Path, query: str) -> bytes:
    with sqlite3.connect(file) as db:
        value = db.execute(query).fetchone()[0]
    db.close()
    return value if isinstance(value, bytes) else value.encode()


def _overwrite(file: Path, offset: int, data: bytes) -> None:
    with open(file, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def _garbage(file: Path, table: str, query: str) -> None:
    file.write_bytes(bytes(range(256)) * (file.stat().st_size // 256))


def _damaged_page(file: Path, table: str, query: str) -> None:
    _overwrite(file, _page_of(file, table), b"\xff" * 8)  # the page header: no valid page type


def _damaged_value(file: Path, table: str, query: str) -> None:
    value = _stored(file, query)
    at = file.read_bytes().index(value) + len(value) // 8 * 4 + 3  # a float's sign and exponent byte
    _overwrite(file, at, bytes([file.read_bytes()[at] ^ 0x40]))  # one bit of a stored value


def _truncated(fraction: float):
    def cut(file: Path, table: str, query: str) -> None:
        os.truncate(file, int(file.stat().st_size * fraction))
    return cut


MALFORMED, NOT_A_DATABASE, CHECKSUM = ("database disk image is malformed", "file is not a database",
                                       "a row fails its checksum")
MODEL, HASHES = "{key}.sqlite", HASHES_FILE
VECTOR, FACTS = "SELECT value FROM units LIMIT 1", "SELECT value FROM about WHERE name = 'facts'"
HASH = "SELECT hash FROM hashes"
DAMAGES = [  # (case, file, damage, its table, a stored value's query, the reason the warning gives
    # (None: no warning), units computed by the run after the damage and by the run after that)
    ("model file: garbage", MODEL, _garbage, "units", VECTOR, NOT_A_DATABASE, UNITS, 0),
    ("model file: a damaged page of its vectors", MODEL, _damaged_page, "units", VECTOR, MALFORMED, UNITS, 0),
    ("model file: a damaged page of its facts", MODEL, _damaged_page, "about", FACTS, MALFORMED, UNITS, 0),
    ("model file: a damaged vector", MODEL, _damaged_value, "units", VECTOR, CHECKSUM, UNITS, 0),
    # the vectors are read (and checked) before the facts: the run uses them, the next computes them
    ("model file: damaged facts", MODEL, _damaged_value, "about", FACTS, CHECKSUM, 0, UNITS),
    ("model file: truncated to half", MODEL, _truncated(0.5), "units", VECTOR, MALFORMED, UNITS, 0),
    ("model file: truncated to 0 bytes", MODEL, _truncated(0), "units", VECTOR, None, UNITS, 0),
    ("hashes.sqlite: garbage", HASHES, _garbage, "hashes", HASH, NOT_A_DATABASE, 0, 0),
    ("hashes.sqlite: a damaged page", HASHES, _damaged_page, "hashes", HASH, MALFORMED, 0, 0),
    ("hashes.sqlite: a damaged hash", HASHES, _damaged_value, "hashes", HASH, CHECKSUM, 0, 0),
    ("hashes.sqlite: truncated to half", HASHES, _truncated(0.5), "hashes", HASH, MALFORMED, 0, 0),
    ("hashes.sqlite: truncated to 0 bytes", HASHES, _truncated(0), "hashes", HASH, None, 0, 0),
]


def _run(model: Path, cache: Path):
    """One scoring of the toy pairs with ``cache``: (figures, units computed)."""
    scorer = load_scorer(str(model), cache_dir=cache)
    try:
        return scorer.score(S1, S2), scorer.computed
    finally:
        scorer.close()


@pytest.mark.parametrize("name,damage,table,query,reason,computed,next_computed", [c[1:] for c in DAMAGES],
                         ids=[c[0] for c in DAMAGES])
def test_a_damaged_cache_file_is_named_made_anew_and_the_figures_stay_true(
        models, tmp_path, settled, warned, name, damage, table, query, reason, computed, next_computed):
    found, figures = models
    model, cache = found["a"], tmp_path / "cache"
    assert _run(model, cache)[1] == UNITS
    file = cache / name.format(key=load_scorer(str(model), cache_dir=None).key)
    damage(file, table, query)
    values, count = _run(model, cache)
    np.testing.assert_allclose(values, figures["a"], atol=1e-6)
    assert warned == ([] if reason is None else
                      [f"{file}: a damaged score cache file ({reason}): deleted and made anew; what it "
                       "held is computed again"])
    assert count == computed
    warned.clear()
    values, count = _run(model, cache)  # the file made anew serves the next run
    np.testing.assert_allclose(values, figures["a"], atol=1e-6)
    assert (warned, count) == ([], next_computed)


# ---- folders that cannot hold a cache ---------------------------------------------------------

FOLDERS = [  # (case, the folder, the rule broken)
    ("a file", "{file}", "is a file, not a folder"),
    ("under a file", "{file}/c", "cannot be created: {file} is a file, not a folder"),
    ("read-only", READ_ONLY, "cannot be written: no file can be created in /sys (Permission denied)"),
]


@pytest.mark.parametrize("folder,rule", [c[1:] for c in FOLDERS], ids=[c[0] for c in FOLDERS])
def test_a_score_cache_folder_that_cannot_hold_it_is_refused_before_any_work(models, tmp_path, folder, rule):
    (tmp_path / "file").write_text("not a folder")
    folder, rule = (text.replace("{file}", str(tmp_path / "file")) for text in (folder, rule))
    with pytest.raises(ParameterError) as caught:
        load_scorer(str(models[0]["a"]), cache_dir=folder)
    assert str(caught.value) == f"cache_dir={folder!r}: {rule}"


def _semrel(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "semrel", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env={**os.environ, **env})


BENCHMARK = ["benchmark", "--model", "{model}", "--only", "semrel-2024/eng", "--mirror", "{mirror}",
             "--output", "{tmp}/out"]
AUGMENT = ["augment", "--dataset", "str-2021", "--mirror", "{mirror}", "--teacher", "{model}",
           "--embed-model", "{model}", "--output", "{tmp}/out"]
DEFAULT = "; it is the default ($SEMREL_CACHE/scores, else ~/.cache/semrel/scores)"
FLAGS = [  # (case, argv, $SEMREL_CACHE or None, the one line after "semrel <command>: error: ")
    *[(f"{command[0]} {flag} {case}", [*command, flag, folder], None, f"{flag} {folder}: {rule}")
      for command, flags in ((BENCHMARK, ("--score-cache", "--cache-dir")), (AUGMENT, ("--score-cache",
                                                                                        "--cache-dir")))
      for flag in flags for case, folder, rule in FOLDERS],
    *[(f"{command[0]} $SEMREL_CACHE {case}", command, folder, f"--score-cache {folder}/scores: {rule}{DEFAULT}")
      for command in (BENCHMARK, AUGMENT)
      for case, folder, rule in [("a file", "{file}", "cannot be created: {file} is a file, not a folder"),
                                 *FOLDERS[2:]]],
]


def _filled(text: str, models, tmp_path: Path, mirror: Path) -> str:
    fill = {"{model}": str(models[0]["a"]), "{mirror}": str(mirror), "{tmp}": str(tmp_path),
            "{file}": str(tmp_path / "file")}
    for key, value in fill.items():
        text = text.replace(key, value)
    return text


@pytest.mark.parametrize("argv,semrel_cache,line", [c[1:] for c in FLAGS], ids=[c[0] for c in FLAGS])
def test_a_cache_flag_on_a_place_that_cannot_hold_it_is_one_line(models, tmp_path, fixture_mirror, monkeypatch,
                                                                 capsys, argv, semrel_cache, line):
    (tmp_path / "file").write_text("not a folder")
    if semrel_cache is not None:
        monkeypatch.setenv("SEMREL_CACHE", _filled(semrel_cache, models, tmp_path, fixture_mirror))
    assert main([_filled(a, models, tmp_path, fixture_mirror) for a in argv]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"semrel {argv[0]}: error: "
                                                f"{_filled(line, models, tmp_path, fixture_mirror)}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # nothing made, nothing cached


@pytest.mark.parametrize("command", [BENCHMARK, AUGMENT], ids=["benchmark", "augment"])
@pytest.mark.parametrize("first,second", [("--no-score-cache", "--score-cache"), ("--score-cache", "--no-score-cache")])
def test_no_score_cache_beside_a_score_cache_is_one_line(models, tmp_path, fixture_mirror, capsys, command, first,
                                                         second):
    given = {"--score-cache": ["--score-cache", str(tmp_path / "c")], "--no-score-cache": ["--no-score-cache"]}
    argv = [_filled(a, models, tmp_path, fixture_mirror) for a in command] + given[first] + given[second]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    captured = capsys.readouterr()
    assert (exited.value.code, captured.out) == (2, "")
    assert captured.err == (f"semrel {command[0]}: error: argument {second}: not allowed with argument {first} "
                            f"(see semrel {command[0]} --help)\n")
    assert list(tmp_path.iterdir()) == []


REAL = [c for c in FLAGS if c[0] in ("benchmark --score-cache a file", "benchmark --cache-dir a file",
                                     "benchmark $SEMREL_CACHE read-only")]


@pytest.mark.parametrize("argv,semrel_cache,line", [c[1:] for c in REAL], ids=[c[0] for c in REAL])
def test_the_semrel_command_refuses_them_so(models, tmp_path, fixture_mirror, argv, semrel_cache, line):
    (tmp_path / "file").write_text("not a folder")
    env = {} if semrel_cache is None else {"SEMREL_CACHE": semrel_cache}
    done = _semrel(*[_filled(a, models, tmp_path, fixture_mirror) for a in argv], cwd=tmp_path, **env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"semrel {argv[0]}: error: {_filled(line, models, tmp_path, fixture_mirror)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


TWICE = """
import json, sys
sys.path.insert(0, {tests!r})
from semrel.trainers.scoring import load_scorer
from trainer_fixtures import toy_pairs
rows = toy_pairs()
scorer = load_scorer({model!r}, cache_dir={cache!r}, batch_size=2)
print(json.dumps(scorer.score(rows["sentence1"], rows["sentence2"]).tolist()))
"""


@pytest.mark.slow  # two subprocesses
def test_two_runs_on_one_cache_at_once_both_get_the_true_figures(models, tmp_path):
    found, _ = models
    code = TWICE.format(tests=str(Path(__file__).parents[1]), model=str(found["a"]), cache=str(tmp_path))
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=600) for run in runs]
    truth = load_scorer(str(found["a"]), cache_dir=None).score(TOY["sentence1"], TOY["sentence2"])
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0 and "damaged" not in err, err
        np.testing.assert_allclose(np.array(json.loads(out)), truth, atol=1e-6)
    again = load_scorer(str(found["a"]), cache_dir=tmp_path)
    np.testing.assert_allclose(again.score(TOY["sentence1"], TOY["sentence2"]), truth, atol=1e-6)
    assert again.computed == 0

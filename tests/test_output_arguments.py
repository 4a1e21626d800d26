"""Every output argument of every command is refused, in one line naming it, with exit status 2,
before anything is read, trained or written, where it is a symbolic link (to a file, to a folder,
dangling, to /dev/null as /dev/stdout is), a FIFO, a folder where a file is written or a file
where a folder is, or where it would replace one of the command's inputs: the same file or folder
(also spelt otherwise, through a link or a hard link), a place inside a model or member folder,
an existing file or folder inside a data folder or mirror, or (a folder) one that holds an input.
Nothing on disk changes: a link stays a link to what it named."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from semrel.cli import build_parser, main
from semrel.metrics.output_files import LINK
from trainer_fixtures import tiny_encoder, toy_folder

NEVER = "an output never replaces an input; give another path"
OUT = "{out}"
COMMANDS = {  # command -> (its arguments, OUT where the output goes; whether the output is a folder)
    "bws score": (["bws", "score", "{bws}", "--csv", OUT], False),
    "bws design": (["bws", "design", "{items}", "--csv", OUT], False),
    "ratings plan": (["ratings", "plan", "{ratings}", "--output", OUT], True),
    "bws plan": (["bws", "plan", "{bws}", "--output", OUT], True),
    "predict": (["predict", "--dataset", "{data}", "--score-range", "0", "1", "--model", "{run}",
                 "--output", OUT], False),
    "ensemble": (["ensemble", "--member", "{run}", "--member", "{run2}", "--output", OUT], True),
    "fit": (["fit", "--dataset", "{data}", "--score-range", "0", "1", "--max-steps", "1",
             "--model", "{base}", "--output", OUT], True),
    "cv": (["cv", "--dataset", "{data}", "--score-range", "0", "1", "--max-steps", "1",
            "--model", "{base}", "--output", OUT], True),
    "build": (["build", "--only", "str-2021", "--mirror", "{mirror}", "--no-report", "--out", OUT],
              True),
    "push": (["push", "--namespace", "someone", "--dry-run", "--model", "{run}", "--out", OUT], True),
    "benchmark": (["benchmark", "--model", "{base}", "--only", "czech-news-sts", "--output", OUT], True),
    "augment": (["augment", "--dataset", "{data}", "--score-range", "0", "1", "--embed-model", "{base}",
                 "--teacher", "{run}", "--no-score-cache", "--output", OUT], True),
    "pairs": (["pairs", "{corpus}", "--n", "2", "--output", OUT], False),
    "annotate pull": (["annotate", "pull", "--project", "1", "--tuples", "{tuples}", "--pairs", "{pairs}",
                       "--url", "http://127.0.0.1:9", "--token", "t", "--output", OUT], False),  # nothing listens
    "annotate crowd": (["annotate", "crowd", "{results}", "--tuples", "{tuples}", "--pairs", "{pairs}",
                        "--output", OUT], False),
    "annotate potato": (["annotate", "potato", "{tuples}", "--pairs", "{pairs}", "--output", OUT], True),
    "annotate potato-pull": (["annotate", "potato-pull", "{potato}", "--output", OUT], False),
    "annotate dataset": (["annotate", "dataset", "{annotations}", "--pairs", "{pairs}", "--license", "mit",
                          "--language", "en", "--output", OUT], True),
    "annotate status": (["annotate", "status", "--project", "1", "--tuples", "{tuples}", "--pairs", "{pairs}",
                         "--url", "http://127.0.0.1:9", "--token", "t", "--output", OUT], True),  # nothing listens
}
NOT_OUTPUTS = {("verify", "--out")}  # verify reads the build folder, it writes nothing there


def _shape(folder: bool) -> list[tuple[str, str, str]]:
    """(case, where the output goes, what is said of it) for every output of this shape."""
    what = "folder" if folder else "file"
    return [("a link to a file", "{link-to-file}", LINK),
            ("a link to a folder", "{link-to-folder}", LINK),
            ("a dangling link", "{dangling}", LINK),
            ("a link to /dev/null", "{devnull}", LINK),
            ("a FIFO", "{fifo}", f"is not a regular file (a device, FIFO or socket); give the path of "
                                 f"a {what} to write"),
            *([("a file", "{a-file}", "is a file, not a folder")] if folder else
              [("a folder", "{a-folder}", "is a folder; give the name of the file to write")])]


def _same(case: str, where: str, argument: str, kind: str = "file") -> tuple[str, str, str]:
    """The output is the input ``argument`` names (``{name}`` in ``where``) itself."""
    return case, where, f"is the same {kind} as {argument} {where}: {NEVER}"


def _lies(case: str, where: str, argument: str) -> tuple[str, str, str]:
    """The output lies in the folder ``argument`` names (the first part of ``where``)."""
    return case, where, f"lies in {argument} {where.split('/')[0]}, which this command reads: {NEVER}"


def _holds(case: str, argument: str, read: str) -> tuple[str, str, str]:
    """The output folder ``{tmp}`` holds the input ``argument`` names (``read``)."""
    return case, "{tmp}", f"holds {argument} {read}, which this command reads: {NEVER}"


OWN_INPUTS = {  # command -> (case, where the output goes, what is said of it)
    "bws score": [_same("its input", "{bws}", "FILE"),
                  ("its input spelt otherwise", "{tmp}/sub/../f.csv", f"is the same file as FILE {{bws}}: {NEVER}"),
                  ("a hard link to its input", "{hard-link}", f"is the same file as FILE {{bws}}: {NEVER}")],
    "bws design": [_same("its input", "{items}", "ITEMS_FILE")],
    "ratings plan": [_holds("holding its input", "FILE", "{ratings}")],
    "bws plan": [_holds("holding its input", "FILE", "{bws}")],
    "predict": [_lies("a file of its model", "{run}/metrics.json", "--model"),
                _lies("a file of its data", "{data}/dataset_dict.json", "--dataset")],
    "ensemble": [_same("its member", "{run}", "--member", "folder"), _lies("in its member", "{run}/ens", "--member"),
                 _holds("holding its members", "--member", "{run}")],
    "fit": [_same("its model", "{base}", "--model", "folder"),
            _lies("a folder of its data", "{data}/train", "--dataset")],
    "cv": [_same("its model", "{base}", "--model", "folder")],
    "build": [_same("its mirror", "{mirror}", "--mirror", "folder"),
              _lies("a folder of its mirror", "{mirror}/str-2021", "--mirror")],
    "push": [_same("its model", "{run}", "--model", "folder")],
    "benchmark": [_same("its model", "{base}", "--model", "folder"), _lies("in its model", "{base}/out", "--model")],
    "augment": [_same("its teacher", "{run}", "--teacher", "folder"),
                _lies("in its embedding model", "{base}/nn", "--embed-model"),
                _lies("a folder of its data", "{data}/train", "--dataset")],
    "pairs": [_same("its corpus", "{corpus}", "CORPUS")],
    "annotate pull": [_same("its tuples", "{tuples}", "--tuples"), _same("its pairs", "{pairs}", "--pairs")],
    "annotate crowd": [_same("its results", "{results}", "RESULTS"), _same("its tuples", "{tuples}", "--tuples"),
                       _same("its pairs", "{pairs}", "--pairs")],
    "annotate potato": [_holds("holding its tuples", "TUPLES", "{tuples}")],
    "annotate potato-pull": [_lies("a file of its task folder", "{potato}/semrel-task.json", "DIR")],
    "annotate dataset": [_holds("holding its annotations", "ANNOTATIONS", "{annotations}")],
    "annotate status": [_holds("holding its tuples", "--tuples", "{tuples}")],
}
CASES = [(f"{command} {case}", command, where, said)
         for command, (_, folder) in COMMANDS.items()
         for case, where, said in [*_shape(folder), *OWN_INPUTS[command]]]
CASES.append(("bws score its input through a link", "bws score", "{bws}",
              f"is the same file as FILE {{link-to-file}}: {NEVER}"))  # FILE is the link


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    """The inputs of every command (a tiny BERT, a saved cross-encoder run and its copy, a toy
    dataset folder, a BWS file, an items file, a mirror) and the outputs that are refused."""
    from semrel.trainers.models import build_model

    root = tmp_path_factory.mktemp("outputs")
    p = {"tmp": root, "base": tiny_encoder(root / "base"), "data": toy_folder(root / "data", 32, 16)}
    p["run"] = build_model("cross", p["base"]).save_pretrained(root / "run")
    (p["run"] / "metrics.json").write_text(json.dumps({"data": str(p["data"]), "score_range": [0.0, 1.0]}))
    (p["run"] / "eval_predictions.json").write_text(json.dumps({
        "data": str(p["data"]), "split": "test", "score_range": [0.0, 1.0], "encoder": "cross",
        "conditional": False, "ids": [0, 1, 2], "predictions": [0.1, 0.5, 0.9],
        "labels": [0.0, 0.5, 1.0], "sources": None}))
    p["run2"] = Path(shutil.copytree(p["run"], root / "run2"))
    p["bws"] = root / "f.csv"
    p["bws"].write_text("Item1,Item2,Item3,Item4,BestItem,WorstItem\na,b,c,d,a,d\nb,c,d,a,b,a\n")
    p["ratings"] = root / "ratings.csv"
    p["ratings"].write_text("item,annotator,score\n" + "".join(f"i{i},a{a},{(i + a) % 5 + 1}\n" for i in range(8)
                                                                for a in range(3)))
    p["items"] = root / "items.txt"
    p["items"].write_text("a\nb\nc\nd\n")
    p.update(_annotation_inputs(root))
    p["mirror"] = root / "mirror"
    (p["mirror"] / "str-2021").mkdir(parents=True)
    p["a-file"], p["a-folder"] = root / "a-file", root / "a-folder"
    p["a-file"].write_text("a user's file\n")
    (p["a-folder"] / "mine.txt").parent.mkdir()
    (p["a-folder"] / "mine.txt").write_text("a user's file in a folder\n")
    for name, target in {"link-to-file": p["bws"], "link-to-folder": p["a-folder"],
                         "dangling": root / "nowhere", "devnull": Path(os.devnull)}.items():
        p[name] = root / name
        p[name].symlink_to(target)
    p["fifo"] = root / "fifo"
    os.mkfifo(p["fifo"])
    p["hard-link"] = root / "hard-link.csv"
    os.link(p["bws"], p["hard-link"])
    return p


def _annotation_inputs(root: Path) -> dict[str, Path]:
    """The inputs of making a dataset: a corpus, a pairs file, its tuples, a crowd results CSV, a
    Potato task folder and a BWS file of pair ids."""
    from semrel.annotation.bws_file import read_design
    from semrel.annotation.potato import write_task

    p = {name: root / file for name, file in (("corpus", "corpus.txt"), ("pairs", "pairs.csv"),
                                              ("tuples", "tuples.csv"), ("results", "results.csv"),
                                              ("annotations", "annotations.csv"))}
    p["corpus"].write_text("".join(f"sentence number {i} of a small corpus\n" for i in range(8)))
    p["pairs"].write_text("pair_id,sentence1,sentence2\n" + "".join(f"p{i},a {i},b {i}\n" for i in range(4)))
    p["tuples"].write_text("tuple_id,Item1,Item2,Item3,Item4\nt0,p0,p1,p2,p3\n")
    p["results"].write_text("WorkerId,AssignmentStatus,Input.tuple_id,Answer.best,Answer.worst\n"
                            "W1,Submitted,t0,p0,p3\n")
    p["annotations"].write_text("Item1,Item2,Item3,Item4,BestItem,WorstItem\np0,p1,p2,p3,p0,p3\n")
    p["potato"] = root / "potato"
    write_task(*read_design(p["tuples"], p["pairs"]), p["potato"])
    return p


def state(root: Path) -> dict:
    """Every entry under ``root`` (links not followed): what it is, a link's target, a file's digest."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            entry = Path(folder) / name
            key = str(entry.relative_to(root))
            if entry.is_symlink():
                out[key] = ("link", os.readlink(entry))
            elif entry.is_dir():
                out[key] = ("folder",)
            elif entry.is_file():
                out[key] = ("file", hashlib.sha256(entry.read_bytes()).hexdigest())
            else:
                out[key] = ("special",)
    return out


def _fill(text: str, paths: dict) -> str:
    return text.format_map({k: str(v) for k, v in paths.items()})


@pytest.mark.parametrize("command, where, said", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_output_that_is_a_link_a_fifo_or_an_input_is_refused(paths, command, where, said, capsys):
    argv, _ = COMMANDS[command]
    if command == "bws score" and said.startswith("is the same file as FILE {link-to-file}"):
        argv = [a.replace("{bws}", "{link-to-file}") if a != OUT else a for a in argv]
    argv = [_fill(where if a == OUT else a, paths) for a in argv]
    before = state(paths["tmp"])
    assert main(argv) == 2
    flag = argv[-2]
    assert capsys.readouterr().err == f"semrel {command}: error: {flag} {_fill(where, paths)}: {_fill(said, paths)}\n"
    assert state(paths["tmp"]) == before  # the link, the input, the folder: as they were


def test_a_regular_path_is_written(paths, tmp_path, capsys):
    """The same commands write a new file beside their inputs (the refusals above are no rule
    that refuses everything)."""
    assert main(["bws", "score", str(paths["bws"]), "--csv", str(tmp_path / "scores.csv")]) == 0
    assert (tmp_path / "scores.csv").read_text().startswith("file,item,")
    assert main(["bws", "score", str(paths["bws"]), "--csv", "-"]) == 0
    assert "file,item," in capsys.readouterr().out


def test_every_output_argument_is_in_the_table():
    """Each flag of a command that names a file or folder to write is swept (a new one must join)."""
    def commands(parser, prefix=()):
        for action in parser._subparsers._group_actions if parser._subparsers else ():
            for name, sub in action.choices.items():
                if sub._subparsers:
                    yield from commands(sub, (*prefix, name))
                else:
                    yield " ".join((*prefix, name)), sub

    outputs = {(name, option) for name, sub in commands(build_parser()) for action in sub._actions
               for option in action.option_strings if option in ("--output", "--out", "--csv")}
    swept = {(command, argv[-2]) for command, (argv, _) in COMMANDS.items()}
    assert outputs - NOT_OUTPUTS == swept

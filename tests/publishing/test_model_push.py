"""What a model push carries: an allow-list of what a model repo needs decides what leaves
(publishing.staging.model_files); every other file stays here whatever it is called or holds; the
files that leave are searched for paths of this machine and for the gold labels and sentences of
data that may not be redistributed, each refusal naming the data the file records; the dry run
and the push run one check (publishing.publish.check), repo ids included. Fast, in-process, on
run folders laid out as `semrel fit --eval-dataset` writes them; the push of a real run to the
local Hub is in test_publish_model_guard.py (slow)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from semrel.cli import main
from semrel.publishing.staging import model_files, stage_model

NS = "ORG"
TEST_LABELS = [0.1234, 0.8765, 0.4321, 0.5678, 0.2468, 0.1357, 0.9753, 0.3579, 0.6543, 0.0864]
DEV_LABELS = [0.61, 0.12, 0.93, 0.44, 0.27, 0.85, 0.39, 0.72, 0.05, 0.58]
DEV_SENTENCES = [f"The {w} sat quietly on the old wooden bench." for w in
                 ("cat", "dog", "man", "girl", "bird", "child", "woman", "boy", "fox", "owl")]
CARD = """---
license: apache-2.0
language:
- en
library_name: sentence-transformers
pipeline_tag: sentence-similarity
datasets:
- ORG/str-2021
metrics:
- spearmanr
---

# bi-encoder fine-tuned on str-2021/cv-fold-0

Spearman 0.5 on the test split; checkpoint chosen on `semrel-2024/eng/validation`.
"""
CARD_LINES = CARD.count("\n")


def write(folder: Path, rel: str, content) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")


def eval_run(folder: Path) -> Path:
    """A run folder as `semrel fit --dataset str-2021 --config cv-fold-0 --eval-dataset semrel-2024
    --eval-config eng` writes it (a bi-encoder; weights are 8 floats)."""
    folder.mkdir(parents=True)
    save_file({"w": np.arange(8, dtype=np.float32)}, str(folder / "model.safetensors"))
    files = {
        "config.json": {"model_type": "bert", "hidden_size": 4},
        "tokenizer.json": {"model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "gold": 1, "labels": 2}}},
        "tokenizer_config.json": {"tokenizer_class": "BertTokenizer", "model_max_length": 64},
        "modules.json": [{"idx": 0, "name": "0", "path": "", "type": "Transformer"},
                         {"idx": 1, "name": "1", "path": "1_Pooling", "type": "Pooling"}],
        "1_Pooling/config.json": {"word_embedding_dimension": 4, "pooling_mode_mean_tokens": True},
        "sentence_bert_config.json": {"max_seq_length": 256, "do_lower_case": False},
        "config_sentence_transformers.json": {"model_type": "SentenceTransformer"},
        "semrel_encoder.json": {"kind": "bi", "pooling": "mean", "conditional": False, "max_length": 256},
        "metrics.json": {"output_dir": str(folder), "data": "str-2021/cv-fold-0", "eval_split": "test",
                         "spearman": 0.5, "score_range": [0.0, 1.0],
                         "selection": {"data": "semrel-2024/eng/validation", "metric": "spearman",
                                       "curve": [{"epoch": 1.0, "step": 2, "spearman": 0.4}]}},
        "eval_predictions.json": {"data": "str-2021/cv-fold-0", "split": "test", "ids": list(range(10)),
                                  "predictions": [0.5] * 10, "labels": TEST_LABELS},
        "selection_predictions.json": {"data": "semrel-2024/eng", "split": "validation",
                                       "ids": [f"eng_dev_{i}" for i in range(10)], "predictions": [0.5] * 10,
                                       "labels": DEV_LABELS, "sentence1": DEV_SENTENCES,
                                       "sentence2": DEV_SENTENCES[::-1]},
        "checkpoints/semrel_run.json": {"data": "str-2021/cv-fold-0", "model": "/tmp/tiny-bert"},
        "checkpoints/checkpoint-2/trainer_state.json": {"global_step": 2, "log_history": []},
        "checkpoints/checkpoint-2/optimizer.pt": b"\0" * 64,
        "README.md": CARD,
    }
    for rel, content in files.items():
        write(folder, rel, content)
    return folder


SENT = ["1_Pooling/config.json", "README.md", "config.json", "config_sentence_transformers.json",
        "metrics.json", "model.safetensors", "modules.json", "semrel_encoder.json",
        "sentence_bert_config.json", "tokenizer.json", "tokenizer_config.json"]
KEPT = ["checkpoints/checkpoint-2/optimizer.pt", "checkpoints/checkpoint-2/trainer_state.json",
        "checkpoints/semrel_run.json", "eval_predictions.json", "selection_predictions.json"]


def staged_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_a_run_trained_with_eval_dataset_sends_the_model_and_its_figures(tmp_path):
    run = eval_run(tmp_path / "run")
    staged = stage_model(run, tmp_path / "staged", repo_id=f"{NS}/run", dataset_repo=f"{NS}/str-2021")
    assert staged_files(tmp_path / "staged") == SENT == model_files(run)
    assert list(staged.kept) == KEPT
    assert staged.changed == {"metrics.json": "figures only; output_dir stays here"}
    assert json.loads((tmp_path / "staged" / "metrics.json").read_text()) == {
        "data": "str-2021/cv-fold-0", "eval_split": "test", "score_range": [0.0, 1.0], "spearman": 0.5,
        "selection": {"data": "semrel-2024/eng/validation", "metric": "spearman",
                      "curve": [{"epoch": 1.0, "step": 2, "spearman": 0.4}]}}
    assert (tmp_path / "staged" / "README.md").read_text() == CARD  # it names its dataset repo already


ALLOW = [  # (a file added to the run folder, whether it is sent): the allow-list, file by file
    *((name, True) for name in ("vocab.txt", "vocab.json", "merges.txt", "special_tokens_map.json",
                                "added_tokens.json", "sentencepiece.bpe.model", "spiece.model", "spm.model",
                                "tokenizer.model", "semrel_head.safetensors", "pytorch_model.bin")),
    *((name, False) for name in (
        "trainer_state.json", "training_args.bin", "optimizer.pt", "scheduler.pt", "rng_state.pth",
        "predictions.csv", "gold.CSV", "test.tsv", "notes.txt", "notes.md", "folds.json", "labels.json",
        "train.log", "data.parquet", "runs/events.out.tfevents.1", "checkpoint-3/config.json",
        "2_Dense/config.json", "1_Pooling/notes.txt", "extra/config.json", "members/0-a/config.json",
        "images/loss.png", ".env", "README.md.bak", "metrics.json.old", "model.onnx",
        "model-00002-of-00002.safetensors", "model.safetensors.index.json.bak")),
]


@pytest.mark.parametrize("name, sent", ALLOW, ids=[n for n, _ in ALLOW])
def test_the_allow_list_decides_what_leaves(tmp_path, name, sent):
    run = eval_run(tmp_path / "run")
    write(run, name, b"\x00binary" if name.endswith((".bin", ".pt", ".pth", ".model", ".png")) else "x,1\n")
    staged = stage_model(run, tmp_path / "staged")
    assert staged_files(tmp_path / "staged") == sorted([*SENT, name] if sent else SENT)
    assert list(staged.kept) == sorted(KEPT if sent else [*KEPT, name])


def test_the_shards_an_index_names_go_and_module_folders_stay_inside(tmp_path):
    run = eval_run(tmp_path / "run")
    (run / "model.safetensors").unlink()
    for shard in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                  "model-00003-of-00003.safetensors"):
        write(run, shard, b"\x00")
    write(run, "model.safetensors.index.json", {"weight_map": {
        "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
        "c": "../model.safetensors", "d": "/etc/passwd"}})
    write(run, "modules.json", [{"path": ""}, {"path": "1_Pooling"}, {"path": "../outside"},
                                {"path": "/tmp"}, {"path": 3}])
    write(tmp_path / "outside", "config.json", {"secret": 1})
    assert model_files(run) == sorted([*(f for f in SENT if f != "model.safetensors"),
                                       "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                                       "model.safetensors.index.json"])


def test_an_ensemble_sends_its_file_card_and_the_same_files_of_each_member(tmp_path):
    ens = tmp_path / "ens"
    eval_run(ens / "members" / "0-bi")
    eval_run(ens / "members" / "1-cross")
    eval_run(ens / "members" / "2-not-a-member")
    write(ens, "semrel_ensemble.json", {"method": "rank", "members": ["members/0-bi", "members/1-cross",
                                                                      "../escape", 7]})
    write(ens, "README.md", CARD)
    write(ens, "scores.csv", "id,score\n")
    staged = stage_model(ens, tmp_path / "staged")
    assert staged_files(tmp_path / "staged") == sorted(
        ["README.md", "semrel_ensemble.json", *(f"members/{m}/{f}" for m in ("0-bi", "1-cross") for f in SENT)])
    assert staged.changed == {f"members/{m}/metrics.json": "figures only; output_dir stays here"
                              for m in ("0-bi", "1-cross")}
    assert list(staged.kept) == sorted([*(f"members/{m}/{f}" for m in ("0-bi", "1-cross") for f in KEPT),
                                        *(f"members/2-not-a-member/{f}" for f in SENT + KEPT), "scores.csv"])


def dry_run(run: Path, out: Path, upstream: Path, namespace: str = NS) -> int:
    return main(["push", "--namespace", namespace, "--model", str(run), "--out", str(out),
                 "--mirror", str(upstream), "--dry-run"])


def refusals(err: str) -> list[str]:
    """The problems a refused push lists (one per line, after the first)."""
    lines = err.splitlines()
    start = lines.index("error: refusing to push, nothing was uploaded:")
    return [line.strip() for line in lines[start + 1:]]


LEAK = ("; the labels of data that may not be redistributed stay here")
TEXTS = ("; the texts of data that may not be redistributed stay here")
DEV_TABLE = "\n".join(f"| eng_dev_{i} | {y:.4f} | 0.5000 |" for i, y in enumerate(DEV_LABELS))  # id, gold, prediction
CASES = [  # (id, file, content (None: appended to the card), the problems, or None: it stays here)
    # paths of this machine, in a file that goes
    ("file URL in the card", "README.md", "see file:///work/runs/x\n", [
        f"README.md:{CARD_LINES + 1}: names a path of this machine ('file:///work/runs/x')",
        "README.md: names a path of the build machine ('/work/')"]),
    ("file URL in JSON", "config.json", {"model_type": "bert", "_name_or_path": "file:///work/enc"}, [
        "config.json: names a path of this machine ('file:///work/enc' at _name_or_path)"]),
    ("dir: in the card", "README.md", "cached in dir:/work/main/cache\n", [
        f"README.md:{CARD_LINES + 1}: names a path of this machine ('dir:/work/main/cache')",
        "README.md: names a path of the build machine ('/work/')"]),
    ("dir: in JSON", "tokenizer_config.json", {"name_or_path": "dir:/work/enc"}, [
        "tokenizer_config.json: names a path of this machine ('dir:/work/enc' at name_or_path)"]),
    ("a folder as data in the figures", "metrics.json", {"output_dir": "/work/x", "data": "/work/my-pairs"}, [
        "metrics.json: names a path of this machine ('/work/my-pairs' at data)"]),
    # gold labels under a gold key, in a file that goes, named by the record that holds them
    ("label in a record", "semrel_encoder.json", {"kind": "bi", "rows": [{"id": "a", "label": 0.5}]}, [
        "semrel_encoder.json: holds 1 gold label(s) of str-2021/cv-fold-0 (key 'rows[0].label')" + LEAK]),
    ("gold_scores", "semrel_encoder.json", {"kind": "bi", "gold_scores": [0.5, 0.25]}, [
        "semrel_encoder.json: holds 2 gold label(s) of str-2021/cv-fold-0 (key 'gold_scores')" + LEAK]),
    ("scores", "semrel_encoder.json", {"kind": "bi", "scores": [0.5, 0.25]}, [
        "semrel_encoder.json: holds 2 gold label(s) of str-2021/cv-fold-0 (key 'scores')" + LEAK]),
    ("y_true", "semrel_encoder.json", {"kind": "bi", "y_true": [1, 0, 1]}, [
        "semrel_encoder.json: holds 3 gold label(s) of str-2021/cv-fold-0 (key 'y_true')" + LEAK]),
    ("numbers written as strings", "semrel_encoder.json", {"kind": "bi", "labels": ["0.5", "0.25"]}, [
        "semrel_encoder.json: holds 2 gold label(s) of str-2021/cv-fold-0 (key 'labels')" + LEAK]),
    ("nested lists", "semrel_encoder.json", {"kind": "bi", "references": [[0.5], [0.25, 1]]}, [
        "semrel_encoder.json: holds 3 gold label(s) of str-2021/cv-fold-0 (key 'references')" + LEAK]),
    ("the dev data's record names it", "config.json",
     {"model_type": "bert", "dev": {"data": "semrel-2024/eng", "split": "validation", "gold": [0.5, 0.25]}}, [
         "config.json: holds 2 gold label(s) of semrel-2024/eng/validation (key 'dev.gold')" + LEAK]),
    # what the run folder records of the data, found by value under any key or none
    ("dev labels as a table in the card", "README.md", DEV_TABLE + "\n", [
        "README.md: holds 10 gold labels of semrel-2024/eng/validation in their recorded order" + LEAK]),
    ("test labels as strings under any key", "config.json",
     {"model_type": "bert", "extra": [f"{y}" for y in TEST_LABELS[:8]]}, [
         "config.json: holds 8 gold labels of str-2021/cv-fold-0/test in their recorded order" + LEAK]),
    ("a dev sentence in the card", "README.md", f"Example: {DEV_SENTENCES[3]}\n", [
        f"README.md: quotes 1 sentence(s) of semrel-2024/eng/validation (e.g. {DEV_SENTENCES[3][:30]!r}…)"
        + TEXTS]),
    ("a dev sentence in JSON", "tokenizer_config.json", {"chat_template": f"x {DEV_SENTENCES[0]} y"}, [
        "tokenizer_config.json: quotes 1 sentence(s) of semrel-2024/eng/validation (e.g. 'The cat sat "
        "quietly on the old'…)" + TEXTS]),
    # the same, in files no model repo needs: they never leave
    ("label in a record, elsewhere", "rows.json", [{"id": "a", "label": 0.5}], None),
    ("gold_scores, elsewhere", "gold.json", {"gold_scores": [0.5, 0.25]}, None),
    ("scores, elsewhere", "scores.json", {"scores": [0.5]}, None),
    ("y_true, elsewhere", "y.json", {"y_true": [1, 0]}, None),
    ("strings, elsewhere", "labels.json", {"labels": ["0.5"]}, None),
    ("a CSV", "predictions.csv", "id,label\n" + "".join(f"{i},{y}\n" for i, y in enumerate(DEV_LABELS)), None),
    ("a CSV, upper case", "DEV.CSV", "\n".join(DEV_SENTENCES), None),
    ("a path in notes", "notes.txt", "trained in /home/me/runs, file:///work/x\n", None),
]


@pytest.mark.parametrize("rel, content, problems", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_what_leaves_is_searched_and_what_stays_never_leaves(tmp_path, upstream, capsys, rel, content,
                                                             problems):
    run = eval_run(tmp_path / "run")
    if rel == "README.md":
        write(run, rel, CARD + content)
    elif rel == "metrics.json":
        write(run, rel, {**json.loads((run / rel).read_text()), **content})
    else:
        write(run, rel, content)
    code = dry_run(run, tmp_path / "out", upstream)
    out, err = capsys.readouterr()
    if problems is None:
        assert code == 0, err
        kept = re.search(r"^  stays here: (.*)$", out, re.M)[1].split(", ")
        assert rel in kept and f"    {rel}" not in out
    else:
        assert code == 1
        assert refusals(err) == [f"model run: {p}" for p in problems]


NAMESPACES = [  # (namespace, model folder, the one problem): the dry run and the push agree
    ("probe org/x", "run", "namespace 'probe org/x' is not a Hub user or organisation name (it holds a '/')"),
    ("probe org", "run", "namespace 'probe org' is not a Hub user or organisation name (Repo id must use "
                         "alphanumeric chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' and "
                         "the maximum length is 96)"),
    ("a--b", "run", "namespace 'a--b' is not a Hub user or organisation name (Cannot have -- or .. in repo_id)"),
    ("org.git", "run", "namespace 'org.git' is not a Hub user or organisation name (Repo_id cannot end by "
                       "'.git')"),
    ("-org", "run", "namespace '-org' is not a Hub user or organisation name (Repo id must use alphanumeric "
                    "chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' and the maximum "
                    "length is 96)"),
    (NS, "my--model", "model my--model: ORG/my--model is not a Hub repo id (Cannot have -- or .. in repo_id)"),
    (NS, "run.git", "model run.git: ORG/run.git is not a Hub repo id (Repo_id cannot end by '.git')"),
]


@pytest.mark.parametrize("namespace, name, problem", NAMESPACES, ids=[f"{n} {m}" for n, m, _ in NAMESPACES])
def test_dry_run_and_push_check_the_same_repo_ids(tmp_path, upstream, capsys, monkeypatch, namespace, name,
                                                  problem):
    run = eval_run(tmp_path / name)
    argv = ["push", f"--namespace={namespace}", "--model", str(run), "--out", str(tmp_path / "out"),
            "--mirror", str(upstream)]
    assert main([*argv, "--dry-run"]) == 1
    dry = refusals(capsys.readouterr().err)
    monkeypatch.setenv("HF_TOKEN", "hf_dummy")  # the real push gets as far as its checks: no network
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert main(argv) == 1
    assert refusals(capsys.readouterr().err) == dry == [problem]


def test_a_valid_namespace_passes_the_dry_run(tmp_path, upstream, capsys):
    assert dry_run(eval_run(tmp_path / "run"), tmp_path / "out", upstream, "my-org.lab_2") == 0
    out = capsys.readouterr().out
    assert out.endswith("  stays here: checkpoints/ (3 files), eval_predictions.json, selection_predictions.json\n"
                        "dry run: every check passed; nothing was sent\n")


def test_a_dry_run_without_the_upstream_files_says_what_it_did_not_check(tmp_path, capsys, monkeypatch):
    """No mirror, no network: the real WorkerIds are not known, and the last line says so."""
    monkeypatch.delenv("SEMREL_MIRROR", raising=False)
    monkeypatch.chdir(tmp_path)  # no ../shared/upstream beside it
    assert main(["push", "--namespace", NS, "--model", str(eval_run(tmp_path / "run")), "--out",
                 str(tmp_path / "out"), "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "dry run: every check passed but the real WorkerIds (their pattern was checked), which need the "
        "upstream files (pass --mirror); nothing was sent")

"""semrel annotate dataset: scored pairs as a dataset folder that stock load_dataset, semrel fit and
semrel benchmark take, with its card's reliability figures and the human ceiling read from them."""

from __future__ import annotations

import csv

import datasets
import numpy as np
import pytest
from huggingface_hub import DatasetCard
from test_potato import semrel, write_pairs

from semrel.annotation.answers import pseudonym
from semrel.cli import main
from semrel.dataset_scripts.benchmark_sets import select_sets
from semrel.dataset_scripts.ceilings import human_ceiling
from semrel.metrics.bws.readers import read_nrc
from semrel.metrics.bws.scoring import bws_scores
from semrel.metrics.ceiling import bws_ceiling
from semrel.publishing.hub_vocabulary import check_card
from trainer_fixtures import COLOURS, SHAPES, tiny_encoder, tiny_sentence_transformer

HEADER = ["annotator", "tuple_id", "Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"]


def simulate(tuples_file, latent: dict, out, annotators=3, seed=0) -> None:
    """A BWS annotation file of ``annotators`` noisy annotators answering every tuple."""
    rng = np.random.default_rng(seed)
    rows = list(csv.DictReader(tuples_file.open(encoding="utf-8")))
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for a in range(annotators):
            for r in rows:
                items = [r[f"Item{j}"] for j in range(1, 5)]
                v = np.array([latent[i] for i in items]) + rng.gumbel(size=4) * 0.15
                best, worst = items[int(v.argmax())], items[int(v.argmin())]
                w.writerow([pseudonym(f"w{a}", ""), r["tuple_id"], *items, best, worst])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """(folder, pairs file, annotation file, latent scores, the command's stdout): 60 pairs whose sentences use
    the tiny models' vocabulary, 3 annotators, written by `semrel annotate dataset`."""
    root = tmp_path_factory.mktemp("dataset")
    latent = write_pairs(root / "raw.csv", 60)
    rng = np.random.default_rng(2)
    words = [*COLOURS, *SHAPES]
    with (root / "raw.csv").open(encoding="utf-8") as f, (root / "pairs.csv").open("w", newline="") as out:
        w = csv.writer(out)
        for i, row in enumerate(csv.reader(f)):
            if i:  # sentences the tiny encoder reads word by word
                row[1:3] = [f"the {' '.join(rng.choice(words, 3))} {i}", f"a {' '.join(rng.choice(words, 3))} {i}"]
            w.writerow(row)
    done = semrel("bws", "design", "--pairs", root / "pairs.csv", "--designs", "5", "--csv", root / "t.csv")
    assert done.returncode == 0, done.stderr
    simulate(root / "t.csv", latent, root / "ann.csv")
    done = semrel("annotate", "dataset", root / "ann.csv", "--pairs", root / "pairs.csv", "--output", root / "ds",
                  "--license", "cc-by-4.0", "--language", "en", "--name", "Toy relatedness", "--trials", "200")
    assert done.returncode == 0, done.stderr
    return root / "ds", root / "pairs.csv", root / "ann.csv", latent, done.stdout


def test_the_folder_loads_with_stock_load_dataset_and_holds_the_scores(made, tmp_path):
    folder, pairs, annotations, latent, stdout = made
    rows = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "cache"))["train"]
    assert rows.column_names == ["pair_id", "sentence1", "sentence2", "score", "source", "appearances"]
    assert rows.features["score"].dtype == "float32"
    with pairs.open(encoding="utf-8") as f:
        expected = list(csv.DictReader(f))
    assert rows["pair_id"] == [r["pair_id"] for r in expected]  # the pairs file's order, every pair
    assert rows["sentence1"] == [r["sentence1"] for r in expected] and set(rows["source"]) == {"toy"}
    ann = read_nrc(annotations)
    scores = bws_scores(ann)
    at = {item: i for i, item in enumerate(scores.items.tolist())}
    assert rows["score"] == pytest.approx([scores.score_01[at[p]] for p in rows["pair_id"]], abs=1e-6)
    assert rows["appearances"] == [int(scores.appearances[at[p]]) for p in rows["pair_id"]]
    assert sum(rows["appearances"]) == 4 * len(ann.best)  # 3 annotators x 120 tuples x 4 pairs
    ceiling = bws_ceiling(ann, trials=200, seed=0).spearman
    lines = stdout.splitlines()
    assert lines[0].startswith(f"60 pairs, 360 annotations; SHR {ceiling.split_half:.4f} [")
    assert lines[0].endswith(f"], human ceiling {ceiling.value:.4f}")
    assert lines[1:] == [f"-> {folder}/{next(folder.glob('default/*.parquet')).relative_to(folder)}",
                         f"-> {folder}/README.md"]


def test_the_card_passes_the_card_check_and_records_the_reliability(made):
    folder, _, annotations, _, _ = made
    assert check_card(folder / "README.md") == []
    card = DatasetCard.load(folder / "README.md")
    ceiling = bws_ceiling(read_nrc(annotations), trials=200, seed=0).spearman
    figures = card.data["semrel_reliability"]
    assert figures["split_half"] == round(ceiling.split_half, 4) and figures["ceiling"] == round(ceiling.value, 4)
    assert figures["ceiling_interval"] == [round(ceiling.interval.low, 4), round(ceiling.interval.high, 4)]
    low, high = figures["split_half_interval"]
    assert low <= figures["split_half"] <= high  # the SHR's interval, mapped back from the ceiling's
    assert (figures["annotations"], figures["tuples"], figures["annotators"], figures["trials"]) == (360, 120, 3, 200)
    assert (card.data["license"], card.data["language"], card.data["score_range"]) == ("cc-by-4.0", ["en"], [0.0, 1.0])
    assert card.data["pretty_name"] == "Toy relatedness"
    assert f"**{figures['split_half']:.4f}**" in card.text


def test_the_human_ceiling_of_the_folder_is_its_cards(made, tmp_path):
    folder = made[0]
    ceiling = human_ceiling(str(folder), "default", "train")
    figures = DatasetCard.load(folder / "README.md").data["semrel_reliability"]
    assert (ceiling.value, ceiling.interval, ceiling.split_half) == (
        figures["ceiling"], tuple(figures["ceiling_interval"]), figures["split_half"])
    bare = tmp_path / "bare"  # a folder whose card records no reliability
    bare.mkdir()
    (bare / "README.md").write_text("---\nlicense: mit\n---\n")
    assert human_ceiling(str(bare), "default", "train").note == (
        "not available: bare records no reliability of its annotations in its card (semrel_reliability, as "
        "semrel annotate dataset writes it)")


def test_benchmark_sets_take_the_folder(made):
    folder = made[0]
    (only,) = select_sets([str(folder)])
    assert (only.dataset, only.config, only.split, only.score_range, only.languages) == (
        str(folder), "default", "train", (0.0, 1.0), ("en",))
    assert len(only.load()) == 60


@pytest.mark.slow  # trains a tiny model one step, and scores one
def test_fit_and_benchmark_take_the_folder(made, tmp_path, monkeypatch, capsys):
    folder = made[0]
    monkeypatch.chdir(tmp_path)
    tiny_encoder(tmp_path / "base")
    assert main(["fit", "--dataset", str(folder), "--model", "base", "--max-steps", "1", "--batch-size", "8",
                 "--output", "run"]) == 0
    assert (tmp_path / "run" / "metrics.json").is_file()
    assert f"{folder}/default: trained on 60 pairs" in capsys.readouterr().out
    tiny_sentence_transformer(tmp_path / "tiny")
    assert main(["benchmark", "--model", "tiny", "--only", str(folder), "--resamples", "100"]) == 0
    figures = DatasetCard.load(folder / "README.md").data["semrel_reliability"]
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(f"{folder}/default/train"))
    assert row.split()[1:3] == ["60", f"{figures['ceiling']:.3f}"]  # n, and the ceiling from the folder's own SHR


@pytest.mark.parametrize("args, message", [
    (["{ann}", "--pairs", "{pairs}", "--output", "{out}", "--language", "en", "--license", "cc-by"],
     "--license cc-by: must be one of cc0-1.0, cc-by-4.0, cc-by-sa-4.0, cc-by-nc-4.0, cc-by-nc-sa-4.0, "
     "apache-2.0, mit"),
    (["{ann}", "--pairs", "{pairs}", "--output", "{out}", "--language", "English", "--license", "mit"],
     "--language English: is a language's name: its ISO 639 code is 'en'"),
    (["{ann}", "--pairs", "{pairs}", "--output", "{out}", "--language", "EN", "--license", "mit"],
     "--language EN: is not lower case: the ISO 639 code is 'en'"),
    (["{ann}", "--pairs", "{pairs}", "--output", "{out}", "--language", "en", "--language", "xx", "--license", "mit"],
     "--language xx: is not an ISO 639-1, 639-2 or 639-3 language code (e.g. en, deu, gsw)"),
    (["{ann}", "--pairs", "{pairs}", "--output", "{out}", "--license", "mit"],
     "the following arguments are required: --language (see semrel annotate dataset --help)"),
    (["{ann}", "--pairs", "{pairs}", "--output", "{pairs}", "--language", "en", "--license", "mit"],
     "--output {pairs}: is a file, not a folder"),
    (["{missing}", "--pairs", "{pairs}", "--output", "{out}", "--language", "en", "--license", "mit"],
     "{missing}: no such file"),
    (["{ann}", "--pairs", "{few}", "--output", "{out}", "--language", "en", "--license", "mit"],
     "{ann}: an annotated item is no pair id of the pairs file ('p002' not in {few} (58 such items))"),
    (["{one}", "--pairs", "{pairs}", "--output", "{out}", "--language", "en", "--license", "mit"],
     "{pairs}: pairs without any annotation cannot be scored (56 of 60, first 'p000'; annotate them, or "
     "write a pairs file of the annotated pairs)"),
])
def test_bad_input_is_one_line_and_writes_nothing(made, tmp_path, args, message):
    _, pairs, annotations, _, _ = made
    lines = pairs.read_text(encoding="utf-8").splitlines()
    (tmp_path / "few.csv").write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")  # p000, p001
    ann = annotations.read_text(encoding="utf-8").splitlines()
    (tmp_path / "one.csv").write_text("\n".join(ann[:2]) + "\n", encoding="utf-8")  # one tuple
    names = {"ann": annotations, "pairs": pairs, "out": tmp_path / "out", "missing": tmp_path / "missing.csv",
             "few": tmp_path / "few.csv", "one": tmp_path / "one.csv"}
    done = semrel("annotate", "dataset", *[a.format(**names) for a in args])
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"semrel annotate dataset: error: {message.format(**names)}\n"
    assert not names["out"].exists() and pairs.read_text(encoding="utf-8").splitlines() == lines

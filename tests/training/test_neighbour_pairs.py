"""``semrel augment``: nearest-neighbour train pairs labelled by a teacher. The neighbours are the
brute-force cosine top K, no dev or test sentence and no existing pair appears, the labels are the
teacher's ``semrel predict`` scores, and ``semrel fit`` trains on the folder it writes; on a toy
set and on the real SemRel-2024 English train file."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace

import datasets
import numpy as np
import pytest

from semrel.dataset_scripts.pairs import load_pairs
from semrel.metrics.errors import ParameterError
from semrel.trainers.neighbour_pairs import RECORD, augment, nearest_neighbours, train_sentences
from semrel.trainers.prediction import predict
from semrel.trainers.run_folder import pair_hashes, seen_part, write_seen_pairs
from semrel.trainers.scoring import load_scorer
from trainer_fixtures import COLOURS, SHAPES, model_kinds, saved_runs, tiny_encoder, tiny_sentence_transformer

FEATURES = datasets.Features({"pair_id": datasets.Value("string"), "sentence1": datasets.Value("string"),
                              "sentence2": datasets.Value("string"), "score": datasets.Value("float32")})


def _norm(text: str) -> str:
    return " ".join(text.split())


def _rows(pairs, prefix: str) -> datasets.Dataset:
    """Rows of ``pairs`` ((thing, thing) of (colour, shape)): "a <thing>" / "the <thing>", the
    score the share of attributes they have in common."""
    return datasets.Dataset.from_dict({
        "pair_id": [f"{prefix}{i}" for i in range(len(pairs))],
        "sentence1": [f"a {c} {s}" for (c, s), _ in pairs],
        "sentence2": [f"the {c} {s}" for _, (c, s) in pairs],
        "score": [((a[0] == b[0]) + (a[1] == b[1])) / 2 for a, b in pairs]}, features=FEATURES)


def toy_splits() -> datasets.DatasetDict:
    """Train: pairs among the first 10 of the 16 (colour, shape) things; validation and test:
    among the last 6, and one test pair holds the train sentence "a red circle"."""
    things = list(itertools.product(COLOURS, SHAPES))
    train = list(itertools.combinations(things[:10], 2))
    rest = list(itertools.combinations(things[10:], 2))
    test = rest[5:] + [(things[0], things[15])]
    return datasets.DatasetDict({"train": _rows(train, "tr"), "validation": _rows(rest[:5], "dev"),
                                 "test": _rows(test, "te")})


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The embedder (a tiny BERT), the teacher (a tiny sentence-transformers model), every other
    kind (model_kinds) and a CrossEncoder whose raw logits leave [0, 1]."""
    import torch
    from sentence_transformers import CrossEncoder

    root = tmp_path_factory.mktemp("models")
    paths = model_kinds(root / "kinds")
    paths["embed"] = tiny_encoder(root / "embed", seed=5)
    paths["teacher"] = tiny_sentence_transformer(root / "teacher", seed=3)
    logits = CrossEncoder(str(paths["transformer"]), num_labels=1, max_length=32,
                          activation_fn=torch.nn.Identity())
    with torch.no_grad():
        logits.model.classifier.bias.fill_(-3.0)  # raw scores near -3: below any label
    logits.save(str(root / "logits"))
    paths["logits"] = root / "logits"
    return paths


@pytest.fixture(scope="module")
def toy():
    return load_pairs(toy_splits(), score_range=(0, 1))


def brute_force(embeddings, k, excluded):
    """Each row's k nearest others by the rounded cosine, ties to the lower index, and how many
    excluded rows ranked before the last one taken: one full product, one sort per row."""
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    sims = np.round(unit @ unit.T, 12)
    index, passed = [], []
    for i, row in enumerate(sims):
        order = sorted(range(len(row)), key=lambda j: (-row[j], j))
        allowed = [j for j in order if j != i and j not in excluded[i]][:k]
        index.append(allowed + [-1] * (k - len(allowed)))
        before = order[:order.index(allowed[-1])] if len(allowed) == k else order
        passed.append(sum(j in excluded[i] for j in before))
    return np.array(index), np.array(passed)


@pytest.mark.parametrize("k", [1, 3, 8])
def test_neighbours_are_the_brute_force_top_k_ties_to_the_lower_index(k):
    rng = np.random.default_rng(k)
    ties = np.zeros((120, 12))  # 4 ones of 12 each: cosines 0, 1/4, ... 1, many exact ties
    for row in ties:
        row[rng.choice(12, 4, replace=False)] = 1.0
    spread = rng.normal(size=(150, 16))  # no ties: the order is the cosines'
    for embeddings in (ties, spread):
        excluded = [set(rng.choice(len(embeddings), 3, replace=False).tolist()) - {i}
                    for i in range(len(embeddings))]
        expected, passed = brute_force(embeddings, k, excluded)
        for block_rows in (1, 17, 512):
            found = nearest_neighbours(embeddings, k, excluded, block_rows=block_rows)
            np.testing.assert_array_equal(found.index, expected)
            np.testing.assert_array_equal(found.passed, passed)
        unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
        cosines = (unit[:, None, :] * unit[found.index]).sum(-1)
        np.testing.assert_allclose(found.cosine, cosines, atol=1e-11)
    assert nearest_neighbours(np.eye(3), 5).index.tolist() == [[1, 2, -1, -1, -1], [0, 2, -1, -1, -1],
                                                               [0, 1, -1, -1, -1]]


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_k_below_one_or_not_an_integer_is_refused(k, toy, models):
    with pytest.raises(ParameterError, match=r"neighbours=.*: must be an integer >= 1"):
        augment(toy, neighbours=k, teacher=str(models["teacher"]), embed_model=str(models["embed"]))


def test_new_pairs_are_the_nearest_train_neighbours_labelled_by_the_teacher(toy, models, tmp_path):
    augmented = augment(toy, neighbours=3, teacher=str(models["teacher"]),
                        embed_model=str(models["embed"]), cache_dir=None)
    record, n = augmented.record, len(toy.splits["train"])
    new = augmented.splits["train"].select(range(n, len(augmented.splits["train"])))
    assert record["train_rows"] == {"original": [0, n], "neighbours": [n, n + len(new)]}
    # the neighbours: the brute-force top 3 of the embedder's vectors, each pair once
    sentences, held_out, _ = train_sentences(toy)
    assert held_out == ["a red circle"]  # in a test pair too: never in a new one
    existing = {frozenset(map(_norm, p)) for p in zip(toy.splits["train"]["sentence1"],
                                                       toy.splits["train"]["sentence2"], strict=True)}
    excluded = [{j for j, t in enumerate(sentences) if frozenset((_norm(s), _norm(t))) in existing}
                for s in sentences]
    embeddings = load_scorer(str(models["embed"]), cache_dir=None).encode(sentences)
    index, passed = brute_force(embeddings, 3, excluded)
    expected = {frozenset((sentences[i], sentences[j])) for i, row in enumerate(index) for j in row}
    found = [frozenset(p) for p in zip(new["sentence1"], new["sentence2"], strict=True)]
    assert len(found) == len(set(found)) and set(found) == expected
    counts = record["counts"]
    assert counts == {"original_pairs": n, "sentences": len(sentences), "held_out_sentences": 1,
                      "candidates": 3 * len(sentences), "existing_passed": int(passed.sum()),
                      "duplicates": 3 * len(sentences) - len(found), "new_pairs": len(found)}
    # no dev or test sentence, no pair already in train, no pair of one text
    elsewhere = {_norm(t) for s in ("validation", "test") for c in ("sentence1", "sentence2")
                 for t in toy.splits[s][c]}
    assert not elsewhere & {_norm(t) for p in found for t in p}
    assert not existing & {frozenset(map(_norm, p)) for p in found}
    assert all(len(p) == 2 for p in found)
    # the originals first and unchanged, the other splits unchanged, new rows' other columns null
    assert augmented.splits["train"].select(range(n)).to_list() == toy.splits["train"].to_list()
    for split in ("validation", "test"):
        assert augmented.splits[split].to_list() == toy.splits[split].to_list()
    assert set(new["pair_id"]) == {None}
    # the labels: what predict gives the teacher on those rows, on the data's scale
    folder = augmented.save(tmp_path / "augmented")
    saved = load_pairs(str(folder))
    assert saved.score_range == (0.0, 1.0) and set(saved.splits) == {"train", "validation", "test"}
    scores = predict(models["teacher"], saved, "train")[n:]
    np.testing.assert_allclose(new["score"], scores, atol=1e-6)
    assert json.loads((folder / RECORD).read_text()) == record
    assert record["teacher"]["scale"] == "cosine" and record["clipped"] == 0
    assert len(record["teacher"]["content_hash"]) == 64 and record["embed_model"]["kind"] == "transformer"
    assert record["neighbour_rank"] and set(record["neighbour_rank"]) <= {1, 2, 3}


def test_a_failed_save_leaves_the_earlier_folder_and_no_staging(toy, models, tmp_path, monkeypatch):
    from semrel.trainers import neighbour_pairs

    augmented = augment(toy, neighbours=1, teacher=str(models["teacher"]),
                        embed_model=str(models["embed"]), cache_dir=None)
    folder = augmented.save(tmp_path / "out")
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    def broken(self, files):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(neighbour_pairs.Augmented, "card", broken)
    with pytest.raises(OSError, match="No space left"):
        augmented.save(folder)
    assert {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ParameterError, match="not empty and holds no augmented dataset"):
        neighbour_pairs.Augmented.save(augmented, tmp_path / "other")


def test_the_models_and_data_are_checked_before_anything_is_embedded(toy, models):
    def refused(match, data=toy, **changes):
        options = {"neighbours": 1, "teacher": str(models["teacher"]), "embed_model": str(models["embed"]),
                   "cache_dir": None, **changes}
        with pytest.raises(ParameterError, match=match):
            augment(data, **options)

    refused(r"dataset='DatasetDict': has no train split \(its splits: test\)",
            load_pairs(datasets.DatasetDict({"test": toy.splits["test"]}), score_range=(0, 1)))
    refused(r"embed_model=.*: is a cross-encoder model, which embeds no sentence alone",
            embed_model=str(models["cross-encoder"]))
    refused(r"embed_model=.*: is a conditional semrel model", embed_model=str(models["semrel-tri"]))
    refused(r"teacher=.*: is a conditional semrel model, which cannot score .* no condition column",
            teacher=str(models["semrel-tri"]))
    refused(r"teacher=.*no such model folder", teacher="no-such-teacher")
    conditional = load_pairs(datasets.DatasetDict({"train": toy_conditional()}), score_range=(1, 5))
    refused(r"teacher=.*: is an unconditional bi-encoder model, which cannot score .* conditions",
            conditional)
    refused(r"dataset=.*: has conditions: a new pair would need one", conditional,
            teacher=str(models["semrel-tri"]))


def toy_conditional() -> datasets.Dataset:
    from trainer_fixtures import toy_conditional_pairs

    return toy_conditional_pairs()


def test_a_teacher_that_saw_dev_or_test_pairs_is_refused(toy, models, tmp_path):
    teacher = tmp_path / "teacher"
    shutil.copytree(models["semrel-bi"], teacher)
    train = seen_part("train", toy.name, "train", toy.splits["train"])
    write_seen_pairs(teacher, [train])  # trained on this train split: a teacher as it should be
    augmented = augment(toy, neighbours=1, teacher=str(teacher), embed_model=str(models["embed"]),
                        cache_dir=None)
    assert augmented.record["teacher"]["kind"] == "semrel"
    for role, split in (("selection", "validation"), ("train", "test")):
        write_seen_pairs(teacher, [train, seen_part(role, toy.name, split, toy.splits[split])])
        n = len(toy.splits[split])
        with pytest.raises(ParameterError, match=rf"teacher=.*: saw DatasetDict/{split} \(trained on these "
                                                 rf"pairs: {n} of {n} \({n} in {role} DatasetDict/{split}\)\)"):
            augment(toy, neighbours=1, teacher=str(teacher), embed_model=str(models["embed"]), cache_dir=None)


def test_an_unrecorded_run_or_a_stack_fit_on_test_pairs_is_refused_as_a_teacher(models, tmp_path, monkeypatch):
    root = saved_runs(tmp_path / "saved")
    monkeypatch.chdir(root)
    data = load_pairs("toy-cv", "cv-fold-0")  # the data the ensemble's members trained on
    options = {"neighbours": 1, "teacher": "ensemble-ridge", "embed_model": str(models["embed"]),
               "cache_dir": None}
    with pytest.raises(ParameterError, match=r"teacher='ensemble-ridge': saw toy-cv/cv-fold-0/test \(trained "
                                             r"on toy-cv/cv-fold-0, whose pairs the run did not record"):
        augment(data, **options)
    for member in (root / "ensemble-ridge" / "members").iterdir():
        write_seen_pairs(member, [seen_part("train", data.name, "train", data.splits["train"])])
    with pytest.raises(ParameterError, match=r"teacher='ensemble-ridge': saw toy-cv/cv-fold-0/test \(the "
                                             r"learned stack was fit on toy-cv/cv-fold-0/test"):
        augment(data, **options)


def test_a_score_outside_the_range_is_refused_or_clipped_when_asked(toy, models):
    options = {"neighbours": 1, "teacher": str(models["logits"]), "embed_model": str(models["embed"]),
               "cache_dir": None}
    with pytest.raises(ParameterError, match=r"teacher=.*: scored \d+ of \d+ new pairs outside the score "
                                             r"range \[0, 1\] .*logits .*clip_labels puts each on the nearer end"):
        augment(toy, **options)
    clipped = augment(toy, clip_labels=True, **options)
    n = len(toy.splits["train"])
    labels = np.array(clipped.splits["train"]["score"][n:])
    assert clipped.record["clipped"] == int((labels == 0).sum()) > 0 and labels.min() >= 0
    assert clipped.record["teacher"]["scale"] == "logit"


# ---- the command, as a user runs it ----------------------------------------------------------

def semrel(*args, cwd):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "SEMREL_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "semrel", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def toy_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("toy") / "toy"
    toy_splits().save_to_disk(str(folder))
    return folder


@pytest.mark.slow  # a subprocess per case
@pytest.mark.parametrize("change, words", [
    ({"--neighbours": "0"}, "argument --neighbours: must be an integer >= 1, not '0'"),
    ({"--neighbors": "2"}, "unrecognized arguments: --neighbors 2"),
    ({"--teacher": "no-such-teacher"}, "--teacher no-such-teacher: no such model folder"),
    ({"--embed-model": "cross-encoder"}, "--embed-model cross-encoder: is a cross-encoder model, which "
                                         "embeds no sentence alone"),
    ({"--teacher": "semrel-tri"}, "--teacher semrel-tri: is a conditional semrel model, which cannot "
                                  "score"),
    ({"--dataset": "no-train"}, "--dataset no-train: has no train split (its splits: test)"),
    ({"--teacher": "dev-teacher"}, "--teacher dev-teacher: saw "),
    ({"--output": "taken"}, "--output taken: not empty and holds no augmented dataset"),
])
def test_mistakes_are_one_line_naming_the_flag(change, words, models, toy_folder, tmp_path):
    for name in ("cross-encoder", "semrel-tri", "teacher", "embed"):
        os.symlink(models[name], tmp_path / name)
    datasets.DatasetDict({"test": toy_splits()["test"]}).save_to_disk(str(tmp_path / "no-train"))
    shutil.copytree(models["semrel-bi"], tmp_path / "dev-teacher")
    toy = load_pairs(str(toy_folder), score_range=(0, 1))
    write_seen_pairs(tmp_path / "dev-teacher", [seen_part("selection", "x", "validation",
                                                          toy.splits["validation"])])
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    flags = {"--dataset": str(toy_folder), "--score-range": "0 1", "--teacher": "teacher",
             "--embed-model": "embed", "--output": "out", **change}
    argv = [part for flag, value in flags.items() for part in (flag, *value.split())]
    done = semrel("augment", *argv, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("semrel"), done.stderr
    assert " error: " in lines[0] and done.stdout == ""
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


@pytest.mark.slow  # subprocesses, and a training run
def test_augment_then_predict_and_fit_on_the_folder(models, toy_folder, tmp_path):
    done = semrel("augment", "--dataset", toy_folder, "--score-range", "0", "1", "--neighbours", "2",
                  "--teacher", models["teacher"], "--embed-model", models["embed"], "--output", "aug",
                  cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "aug" / RECORD).read_text())
    counts, (n, end) = record["counts"], record["train_rows"]["neighbours"]
    assert f"{counts['new_pairs']} new pairs from {counts['sentences']} train sentences (K = 2;" in done.stdout
    assert f"train {n} + {counts['new_pairs']} pairs, validation 5, test 11 -> aug" in done.stdout
    # the labels are the teacher's `semrel predict` scores
    done = semrel("predict", "--dataset", "aug", "--split", "train", "--model", models["teacher"],
                  "--output", "train.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    predicted = json.loads((tmp_path / "train.json").read_text())
    train = datasets.load_dataset(str(tmp_path / "aug"), split="train", cache_dir=str(tmp_path / "hf"))
    np.testing.assert_allclose(train["score"][n:], [predicted[str(i)] for i in range(n, end)], atol=1e-6)
    # fit trains on all of train and chooses on the real dev; its run records the pairs it saw
    done = semrel("fit", "--dataset", "aug", "--model", models["embed"], "--max-steps", "1",
                  "--batch-size", "8", "--eval-dataset", "aug", "--eval-split", "validation",
                  "--output", "run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["data"] == "aug/default" and metrics["train_pairs"] == end
    parts = json.loads((tmp_path / "run" / "seen_pairs.json").read_text())["parts"]
    assert parts[0]["role"] == "train" and parts[0]["data"] == "aug/default"
    assert parts[0]["pairs"][n:] == pair_hashes(train["sentence1"][n:], train["sentence2"][n:])


@pytest.mark.slow  # embeds a few hundred real sentences
def test_on_the_real_semrel_2024_english_train_file(mirror, cache_dir, tmp_path):
    eng = load_pairs("semrel-2024", "eng", mirror=mirror, cache_dir=cache_dir)
    elsewhere = {_norm(t) for s in ("validation", "test") for c in ("sentence1", "sentence2")
                 for t in eng.splits[s][c]}
    train = eng.splits["train"]
    shared = [i for i, p in enumerate(zip(train["sentence1"], train["sentence2"], strict=True))
              if elsewhere & {_norm(t) for t in p}]
    assert len(shared) >= 10  # STR-2021 sentences that SemRel-2024's dev or test pairs hold too
    rows = sorted(set(range(150)) | set(shared[:10]))
    data = replace(eng, splits=datasets.DatasetDict({**eng.splits, "train": train.select(rows)}))
    texts = [t for s in data.splits.values() for c in ("sentence1", "sentence2") for t in s[c]]
    embed = tiny_encoder(tmp_path / "embed", seed=11, texts=texts, positions=512)
    teacher = tiny_encoder(tmp_path / "teacher", seed=12, texts=texts, positions=512)
    augmented = augment(data, neighbours=2, teacher=str(teacher), embed_model=str(embed), cache_dir=None,
                        clip_labels=True)
    n = len(rows)
    new = augmented.splits["train"].select(range(n, len(augmented.splits["train"])))
    found = [frozenset(map(_norm, p)) for p in zip(new["sentence1"], new["sentence2"], strict=True)]
    sentences, held_out, _ = train_sentences(data)
    assert len(held_out) >= 10 and not elsewhere & {t for p in found for t in p}
    existing = {frozenset(map(_norm, p)) for p in zip(data.splits["train"]["sentence1"],
                                                       data.splits["train"]["sentence2"], strict=True)}
    assert not existing & set(found) and len(found) == len(set(found))
    excluded = [{j for j, t in enumerate(sentences) if frozenset((_norm(s), _norm(t))) in existing}
                for s in sentences]
    index, _ = brute_force(load_scorer(str(embed), cache_dir=None).encode(sentences), 2, excluded)
    assert set(found) == {frozenset((_norm(sentences[i]), _norm(sentences[j]))) for i, row in enumerate(index)
                          for j in row}
    folder = augmented.save(tmp_path / "eng-nn")
    saved = load_pairs(str(folder))
    np.testing.assert_allclose(new["score"], predict(teacher, saved, "train")[n:].clip(0, 1), atol=1e-6)
    assert saved.splits["validation"].to_list() == eng.splits["validation"].to_list()
    assert augmented.record["data"] == "semrel-2024/eng" and saved.language == data.language
    assert "@inproceedings" in data.citation and saved.citation == data.citation.strip()


@pytest.mark.parametrize("spelling", ["A Red Circle", "A RED CIRCLE", "a red circle\u200b", "a\u00a0red  circle"])
def test_a_train_sentence_an_uncased_tokenizer_reads_as_a_test_sentence_is_held_out(spelling):
    splits = toy_splits()
    train = splits["train"].to_dict()
    train["sentence1"] = [spelling if s == "a red circle" else s for s in train["sentence1"]]
    splits["train"] = datasets.Dataset.from_dict(train, features=FEATURES)
    sentences, held_out, _ = train_sentences(load_pairs(splits, score_range=(0, 1)))
    assert held_out == ["a red circle"] and spelling not in sentences

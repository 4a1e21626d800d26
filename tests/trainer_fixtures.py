"""Tiny random BERTs and learnable toy pair sets, for tests and smoke runs (CPU, seconds)."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import datasets
import torch
from transformers import BertConfig, BertModel, BertTokenizer

COLOURS = ("red", "blue", "green", "yellow")
SHAPES = ("circle", "square", "triangle", "star")
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
SAVED_RUNS = Path(__file__).parent / "fixtures" / "saved_runs"


def tiny_encoder(path: str | Path, *, hidden: int = 32, layers: int = 2, seed: int = 0,
                 dropout: float = 0.0, texts=(), positions: int = 64) -> Path:
    """Save a random BERT (``hidden`` wide, ``layers`` deep, ``positions`` tokens long) and its
    word-level tokenizer at ``path``, with every character of ``texts`` (and its ``##``
    continuation) in the vocabulary, so real texts are read character by character rather than
    as [UNK]; dropout 0 by default so runs are deterministic across process counts."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = path / "vocab.txt"
    words = [*SPECIAL, "a", "the", "is", "and", "colour", "shape", *COLOURS, *SHAPES]
    characters = sorted({c for text in texts for c in text if not c.isspace()} - set(words))
    words += characters + [f"##{c}" for c in characters]
    vocab.write_text("\n".join(words) + "\n")
    BertTokenizer(vocab=str(vocab)).save_pretrained(path)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(words), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=2, intermediate_size=2 * hidden,
                        max_position_embeddings=positions, hidden_dropout_prob=dropout,
                        attention_probs_dropout_prob=dropout)
    BertModel(config).save_pretrained(path)
    return path


def tiny_sentence_transformer(path: str | Path, *, pooling: str = "mean", seed: int = 0) -> Path:
    """A sentence-transformers bi-encoder (Transformer + Pooling by ``pooling``) over a
    :func:`tiny_encoder`, saved at ``path`` by sentence-transformers itself."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    path = Path(path)
    base = tiny_encoder(path.parent / f".{path.name}-base", seed=seed)
    transformer = Transformer(str(base), max_seq_length=32)
    SentenceTransformer(modules=[transformer, Pooling(transformer.get_embedding_dimension(),
                                                      pooling_mode=pooling)]).save(str(path))
    shutil.rmtree(base)
    return path


def tiny_cross_encoder(path: str | Path, *, num_labels: int = 1, seed: int = 0) -> Path:
    """A sentence-transformers ``CrossEncoder`` (a sequence-classification head of
    ``num_labels``) over a :func:`tiny_encoder`, saved at ``path`` by sentence-transformers."""
    from sentence_transformers import CrossEncoder

    path = Path(path)
    base = tiny_encoder(path.parent / f".{path.name}-base", seed=seed)
    torch.manual_seed(seed)
    CrossEncoder(str(base), num_labels=num_labels, max_length=32).save(str(path))
    shutil.rmtree(base)
    return path


def toy_pairs(score_range: tuple[float, float] = (0.0, 1.0),
              condition: str | None = None) -> datasets.Dataset:
    """All pairs of "a <colour> <shape>" objects; score = shared attributes / 2 on ``score_range``
    (with ``condition``: the same rows plus a constant ``condition`` column)."""
    lo, hi = score_range
    things = list(itertools.product(COLOURS, SHAPES))
    rows = {"sentence1": [], "sentence2": [], "score": []}
    for (c1, s1), (c2, s2) in itertools.combinations(things, 2):
        rows["sentence1"].append(f"a {c1} {s1}")
        rows["sentence2"].append(f"the {c2} {s2}")
        rows["score"].append(lo + (hi - lo) * ((c1 == c2) + (s1 == s2)) / 2)
    pairs = datasets.Dataset.from_dict(rows, features=datasets.Features({
        "sentence1": datasets.Value("string"), "sentence2": datasets.Value("string"),
        "score": datasets.Value("float32")}))
    return pairs if condition is None else pairs.add_column("condition", [condition] * len(pairs))


def toy_conditional_pairs(score_range: tuple[float, float] = (1.0, 5.0)) -> datasets.Dataset:
    """C-STS-shaped toy: pairs sharing exactly one attribute, each twice -- under the condition
    naming the shared attribute (high score) and under the other one (low score)."""
    lo, hi = score_range
    rows = {"sentence1": [], "sentence2": [], "condition": [], "score": []}
    things = list(itertools.product(COLOURS, SHAPES))
    for (c1, s1), (c2, s2) in itertools.combinations(things, 2):
        if (c1 == c2) == (s1 == s2):
            continue
        shared = "colour" if c1 == c2 else "shape"
        for condition in ("colour", "shape"):
            rows["sentence1"].append(f"a {c1} {s1}")
            rows["sentence2"].append(f"a {c2} {s2}")
            rows["condition"].append(f"the {condition}")
            rows["score"].append(hi if condition == shared else lo)
    return datasets.Dataset.from_dict(rows, features=datasets.Features({
        "sentence1": datasets.Value("string"), "sentence2": datasets.Value("string"),
        "condition": datasets.Value("string"), "score": datasets.Value("float32")}))


def toy_folder(folder: str | Path, n_train: int, n_test: int) -> Path:
    """A ``DatasetDict.save_to_disk`` folder of shuffled :func:`toy_pairs` (scores in [0, 1]):
    ``n_train`` train rows, the next ``n_test`` as test."""
    toy = toy_pairs().shuffle(seed=0)
    test = toy.select(range(n_train, n_train + n_test))
    datasets.DatasetDict({"train": toy.select(range(n_train)), "test": test}).save_to_disk(folder)
    return Path(folder)


def small_args(output_dir: str | Path, **changes):
    """``PairTrainingArguments`` for a quick run: 2 steps of 8 pairs at a high learning rate,
    no warm-up; ``changes`` win."""
    from semrel.trainers.arguments import PairTrainingArguments

    return PairTrainingArguments(**{"output_dir": str(output_dir), "max_steps": 2,
                                    "per_device_train_batch_size": 8, "learning_rate": 3e-3,
                                    "warmup_steps": 0.0, **changes})


def toy_cv(folder: str | Path) -> Path:
    """The Hub-layout folder the saved runs were trained on: 80 shuffled toy pairs with ids, two
    folds of 16 test rows, the card recording the score range [0, 1]."""
    folder = Path(folder)
    toy = toy_pairs().shuffle(seed=0)
    toy = toy.add_column("pair_id", [f"p{i}" for i in range(len(toy))])
    folds, rest = [toy.select(range(0, 16)), toy.select(range(16, 32))], toy.select(range(32, 80))
    lines = ["---", "configs:"]
    for k in range(2):
        train = datasets.concatenate_datasets([rest, folds[1 - k]])
        for split, rows in (("train", train), ("test", folds[k])):
            (folder / f"cv-fold-{k}").mkdir(parents=True, exist_ok=True)
            rows.to_parquet(str(folder / f"cv-fold-{k}" / f"{split}.parquet"))
        lines += [f"- config_name: cv-fold-{k}", "  data_files:",
                  "  - split: train", f"    path: cv-fold-{k}/train.parquet",
                  "  - split: test", f"    path: cv-fold-{k}/test.parquet"]
    (folder / "README.md").write_text("\n".join([*lines, "score_range:", "- 0", "- 1", "---", "",
                                                 "toy folds", ""]))
    return folder


def _rebuild_weights(root: Path) -> None:
    """Weights beside every saved model (``save_pretrained``'s) and checkpoint (the Trainer's
    state dict), from a fresh model of the saved kind."""
    import safetensors.torch

    from semrel.trainers.models import build_model

    for config in sorted(root.rglob("semrel_encoder.json")):
        options = json.loads(config.read_text())
        model = build_model(options.pop("kind"), root / "base", **options)
        staging = root / ".weights"
        model.encoder.save_pretrained(staging)
        shutil.copy(staging / "model.safetensors", config.parent / "model.safetensors")
        shutil.rmtree(staging)
        for state in config.parent.glob("checkpoints/checkpoint-*/trainer_state.json"):
            safetensors.torch.save_file({k: v.contiguous() for k, v in model.state_dict().items()},
                                        state.parent / "model.safetensors",
                                        metadata={"format": "pt"})


def saved_runs(root: str | Path) -> Path:
    """``tests/fixtures/saved_runs`` copied into ``root`` with what it names, relative to
    ``root``: the tiny BERT ``base``, the data ``toy-cv`` and every weights file (a fresh model
    of the kind each ``semrel_encoder.json`` names)."""
    root = Path(root)
    shutil.copytree(SAVED_RUNS, root, dirs_exist_ok=True)
    tiny_encoder(root / "base")
    toy_cv(root / "toy-cv")
    _rebuild_weights(root)
    return root
def fake_member(folder, weights, data: str, dev: dict | None = None, kind: str = "bi",
                held_out: dict | None = None) -> Path:
    """A run folder as `semrel fit` leaves it, with the untrained ``weights`` (a
    :func:`tiny_encoder` folder): what ``Ensemble.build`` reads; ``dev`` and ``held_out``: its
    ``selection_predictions.json`` and ``eval_predictions.json`` records."""
    folder = Path(folder)
    shutil.copytree(weights, folder)
    (folder / "semrel_encoder.json").write_text(json.dumps({"kind": kind}))
    (folder / "metrics.json").write_text(json.dumps({"data": data, "score_range": [0.0, 1.0]}))
    for name, record in (("selection_predictions.json", dev), ("eval_predictions.json", held_out)):
        if record is not None:
            (folder / name).write_text(json.dumps(record))
    return folder


def model_kinds(root: str | Path) -> dict[str, Path]:
    """A tiny model folder of every kind a scorer reads, under ``root``: ``transformer`` (a
    plain BERT), ``bi-encoder`` (sentence-transformers, mean pooling), ``cross-encoder`` (a
    sentence-transformers CrossEncoder: sequence classification, one label, sigmoid), and semrel
    runs ``semrel-bi``, ``semrel-cross``, ``semrel-tri`` (conditional), all untrained."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    from semrel.trainers.models import build_model

    root = Path(root)
    paths = {"transformer": tiny_encoder(root / "transformer")}
    st = SentenceTransformer(modules=[Transformer(str(paths["transformer"])), Pooling(32, pooling_mode="mean")])
    st.save(str(root / "bi-encoder"), create_model_card=False)
    paths["bi-encoder"] = root / "bi-encoder"
    for kind, options in (("bi", {}), ("cross", {}), ("tri", {"conditional": True})):
        paths[f"semrel-{kind}"] = build_model(kind, paths["transformer"], seed=1, **options
                                              ).save_pretrained(root / f"semrel-{kind}")
    shutil.copytree(paths["semrel-cross"], root / "cross-encoder")
    (root / "cross-encoder" / "semrel_encoder.json").unlink()
    paths["cross-encoder"] = root / "cross-encoder"
    return paths


def split_toy_folders(root: Path) -> Path:
    """train 64, validation 24 and test 32 toy pairs on [0, 1], saved under ``root``: ``labelled``
    with every score, ``held-back`` with the test scores null (as SemRel-2024's eng test)."""
    toy = toy_pairs().shuffle(seed=0)
    splits = {"train": toy.select(range(64)), "validation": toy.select(range(64, 88)),
              "test": toy.select(range(88, 120))}
    datasets.DatasetDict(splits).save_to_disk(root / "labelled")
    test = splits["test"].remove_columns("score").add_column("score", [None] * 32)
    datasets.DatasetDict({**splits, "test": test}).save_to_disk(root / "held-back")
    return root

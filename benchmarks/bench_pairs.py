"""``semrel pairs``: speed and peak memory on a synthetic corpus, and the STR-2021 shape check.

    .venv/bin/python benchmarks/bench_pairs.py                 # 1M sentences, then the shape check
    .venv/bin/python benchmarks/bench_pairs.py --sentences 100000 --no-shape
    .venv/bin/python benchmarks/bench_pairs.py --write         # also store the figures in results.json

Speed: a corpus of ``--sentences`` lines of 3-28 words drawn from a 50,000-word vocabulary by a Zipf
law (s = 1.1), written to a temporary folder; ``semrel pairs CORPUS --n 1000 --seed 0`` runs as a
subprocess; its wall seconds and its peak resident memory (``getrusage`` of the child) are printed
with the machine's load average.

Shape: STR-2021's Goodreads pairs were drawn by IDF-weighted Dice buckets and the exponential draw
(appendix A.1.3). Their 2,000 sentences are pooled and ``sample_pairs`` draws 1,000 pairs from them
per setting; the plain Dice (Figure 2's x axis) of the drawn pairs is compared with that of the
1,000 real Goodreads pairs: the two-sample Kolmogorov–Smirnov statistic and the share of pairs per
Dice band, beside plain random pairs of the same sentences.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
KEY = "pairs"
BANDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.6, 1.0001)


def synthetic_corpus(path: Path, sentences: int, seed: int = 0, vocabulary: int = 50_000) -> None:
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, vocabulary + 1)
    p = ranks ** -1.1
    lengths = rng.integers(3, 29, sentences)
    words = rng.choice(vocabulary, int(lengths.sum()), p=p / p.sum())
    names = np.array([f"w{i}" for i in range(vocabulary)])
    with open(path, "w", encoding="utf-8") as file:
        start = 0
        for length in lengths.tolist():
            file.write(" ".join(names[words[start:start + length]]) + "\n")
            start += length


def speed(sentences: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / "corpus.txt"
        start = time.perf_counter()
        synthetic_corpus(corpus, sentences)
        made = time.perf_counter() - start
        argv = [sys.executable, "-m", "semrel", "pairs", str(corpus), "--n", "1000", "--seed", "0",
                "--output", str(Path(folder) / "pairs.csv")]
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode:
            raise SystemExit(done.stderr)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB -> MB (Linux)
        return {"sentences": sentences, "corpus_mb": round(corpus.stat().st_size / 1e6, 1),
                "corpus_seconds": round(made, 1), "seconds": round(seconds, 1), "peak_mb": round(peak),
                "load_average": round(os.getloadavg()[0], 1), "summary": done.stderr.strip().splitlines(),
                "command": "semrel pairs corpus.txt --n 1000 --seed 0 --output pairs.csv"}


def bands(dice: np.ndarray) -> list[float]:
    return [round(float(x), 3) for x in np.histogram(dice, bins=BANDS)[0] / len(dice)]


def shape(mirror: str | None) -> dict:
    from scipy.stats import ks_2samp

    from semrel.annotation.pairs import sample_pairs
    from semrel.dataset_scripts import load
    from semrel.metrics.overlap import dice

    rows = load("str-2021", mirror=mirror)["train"].filter(lambda r: r["source"] == "Goodreads")
    first, second = list(rows["sentence1"]), list(rows["sentence2"])
    real = dice(first, second)
    pooled = list(dict.fromkeys(first + second))
    out = {"pairs": len(rows), "sentences": len(pooled), "real_bands": bands(real), "settings": {}}
    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / "goodreads.txt"
        corpus.write_text("".join(" ".join(s.split()) + "\n" for s in pooled), encoding="utf-8")
        settings = {"random pairs": {"draw": "uniform", "buckets": 1}, "uniform": {"draw": "uniform"},
                    **{f"exponential {g}": {"growth": g} for g in (1.05, 1.1, 1.2, 1.3, 1.5)}}
        for name, options in settings.items():
            drawn = sample_pairs(corpus, len(rows), seed=0, min_tokens=1, max_tokens=1000, **options).pairs
            got = dice(list(drawn["sentence1"]), list(drawn["sentence2"]))
            ks = ks_2samp(got, real)
            out["settings"][name] = {"ks": round(float(ks.statistic), 3), "p": float(f"{ks.pvalue:.2g}"),
                                     "mean_dice": round(float(got.mean()), 3), "bands": bands(got)}
    out["real_mean_dice"] = round(float(real.mean()), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=1_000_000)
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--no-shape", action="store_true")
    parser.add_argument("--mirror", default=None)
    parser.add_argument("--write", action="store_true", help=f"store the figures under {KEY!r} in results.json")
    args = parser.parse_args()
    results = {"machine": f"{os.cpu_count()}-core CPU, shared", "command": "python benchmarks/bench_pairs.py"}
    if not args.no_speed:
        results["speed"] = speed(args.sentences)
    if not args.no_shape:
        results["shape"] = shape(args.mirror)
    print(json.dumps(results, indent=2, ensure_ascii=False))
    if args.write:
        from semrel.publishing.results import update

        update(KEY, results)


if __name__ == "__main__":
    main()

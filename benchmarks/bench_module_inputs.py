"""Time of ``evaluate.load(...).compute`` on simulated inputs given as Python lists: bws_scores
(string ids, positions) and annotator_agreement (int items, string annotators). Run it at two
commits to compare how inputs get into evaluate's cache (semrel's StrictInputs: pyarrow per
column, instead of evaluate's per-value ``Features.encode_batch``).

    .venv/bin/python benchmarks/bench_module_inputs.py --rows 1000000
"""

from __future__ import annotations

import argparse
import resource
import time
import uuid

import evaluate
import numpy as np

from semrel.metrics import module_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    n = parser.parse_args().rows
    rng = np.random.default_rng(0)
    ids = np.array([f"item{i}" for i in range(20_000)], dtype=object)
    tuples = ids[rng.integers(0, 20_000, (n, 4))].tolist()
    best, worst = rng.integers(1, 3, n).tolist(), rng.integers(3, 5, n).tolist()
    bws = evaluate.load(module_path("bws_scores"), experiment_id=uuid.uuid4().hex)
    start = time.perf_counter()
    out = bws.compute(tuples=tuples, best=best, worst=worst, choice="position", on_invalid="omit")
    print(f"bws_scores, {n:,} rows: {time.perf_counter() - start:.2f} s ({out['n_annotations']:,} used)")
    items, ratings = rng.integers(0, n // 5, n).tolist(), rng.integers(0, 6, n).astype(float).tolist()
    annotators = [f"w{i}" for i in rng.integers(0, 500, n)]
    agreement = evaluate.load(module_path("annotator_agreement"), experiment_id=uuid.uuid4().hex)
    start = time.perf_counter()
    agreement.compute(items=items, annotators=annotators, ratings=ratings, on_invalid="omit")
    print(f"annotator_agreement, {n:,} rows: {time.perf_counter() - start:.2f} s")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()

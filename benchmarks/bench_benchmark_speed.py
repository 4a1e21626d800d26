"""`semrel benchmark` against MTEB on the same local tasks and model, in one process: the same
Spearman (to 1e-6), and the wall time of MTEB cold, semrel cold (an empty score cache) and semrel
warm (the cache the cold run left).

Each benchmark set (``--only``, as ``semrel benchmark --only`` takes it) becomes a local MTEB
``AbsTaskSTS`` over the same rows (``load_data`` sets the ``DatasetDict``; no Hub access), scored
by ``mteb.evaluate(SentenceTransformer(path), tasks, cache=None)``; semrel scores the same sets
with the functions ``semrel benchmark`` runs (:func:`semrel.trainers.benchmark.run_benchmark`:
every distinct text encoded once over all sets, Spearman and Pearson with bootstrap intervals).
Each timing includes loading the model; neither includes importing the libraries or loading
the data, which both share. Wall and CPU seconds of this process are printed: on a shared machine
the CPU seconds (both threads' work) say more than the wall clock.

    nice -n 10 .venv/bin/python benchmarks/bench_benchmark_speed.py                 # eng dev
    nice -n 10 .venv/bin/python benchmarks/bench_benchmark_speed.py --only crowd-sts/pairs/test \\
        --only crowd-sts/pairs-filtered-all/test --only semrel-2024/eng
    nice -n 10 .venv/bin/python benchmarks/bench_benchmark_speed.py --all --no-mteb  # every set

Needs ``mteb`` (``pip install -e '.[mteb]'``) unless ``--no-mteb``. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time

# BCP-47 tag of a benchmark set -> MTEB's ISO 639-3 + script
MTEB_LANGUAGES = {"af": "afr-Latn", "am": "amh-Ethi", "ar": "arb-Arab", "arq": "arq-Arab",
                  "ary": "ary-Arab", "cs": "ces-Latn", "en": "eng-Latn", "es": "spa-Latn",
                  "ha": "hau-Latn", "hi": "hin-Deva", "id": "ind-Latn", "mr": "mar-Deva",
                  "pa": "pan-Guru", "rw": "kin-Latn", "te": "tel-Telu"}


def mteb_task(entry):
    """A local MTEB STS task over a loaded benchmark set's rows (split ``test``)."""
    import datasets
    from mteb.abstasks.sts import AbsTaskSTS
    from mteb.abstasks.task_metadata import TaskMetadata

    bset = entry.bset
    rows = datasets.Dataset.from_dict({c: entry.rows[c] for c in ("sentence1", "sentence2", "score")})

    class SemrelSet(AbsTaskSTS):
        metadata = TaskMetadata(
            name=bset.name.replace("/", "_"), description=f"semrel benchmark set {bset.name}",
            dataset={"path": "na", "revision": "na"}, type="STS", category="t2t", modalities=["text"],
            eval_splits=["test"], eval_langs=[MTEB_LANGUAGES[t] for t in bset.languages],
            main_score="cosine_spearman")
        min_score, max_score = bset.score_range

        def load_data(self, **kwargs):
            self.dataset = datasets.DatasetDict({"test": rows})
            self.data_loaded = True

    return SemrelSet()


def run_mteb(path: str, loaded) -> tuple[dict[str, float], float, float]:
    """MTEB's cosine Spearman per set, the seconds (model load + evaluate) and the CPU seconds."""
    import mteb
    from sentence_transformers import SentenceTransformer

    tasks = [mteb_task(e) for e in loaded]
    start, cpu = time.perf_counter(), time.process_time()
    model = SentenceTransformer(path, device="cpu")
    result = mteb.evaluate(model, tasks=tasks, cache=None, show_progress_bar=False)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    scores = {}
    for task_result in result.task_results:
        name = next(e.bset.name for e in loaded if e.bset.name.replace("/", "_") == task_result.task_name)
        scores[name] = float(task_result.scores["test"][0]["cosine_spearman"])
    return scores, seconds, cpu


def run_semrel(model: str, loaded, cache_dir) -> tuple[dict[str, float], float, float, int]:
    """semrel's Spearman per set, the seconds (model load + every cell), the CPU seconds and the
    units computed."""
    from semrel.trainers.benchmark import run_benchmark
    from semrel.trainers.scoring import load_scorer

    start, cpu = time.perf_counter(), time.process_time()
    scorer = load_scorer(model, cache_dir=cache_dir)
    result = run_benchmark([scorer], loaded, log=lambda line: None)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    scorer.close()
    return ({c.set: c.spearman for c in result.cells if c.status == "scored"}, seconds, cpu,
            result.models[0]["computed"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="minilm", help="a packaged name or a sentence-transformers folder")
    ap.add_argument("--only", action="append", help="benchmark sets (default: semrel-2024/eng/validation)")
    ap.add_argument("--all", action="store_true", help="every benchmark set")
    ap.add_argument("--no-mteb", action="store_true", help="semrel cold and warm only")
    ap.add_argument("--mirror", help="mirror of the upstream files")
    ap.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    args = ap.parse_args(argv)
    import torch

    from semrel.dataset_scripts.benchmark_sets import select_sets
    from semrel.trainers.benchmark import load_sets
    from semrel.trainers.model_ref import resolve_model_ref

    if args.threads:
        torch.set_num_threads(args.threads)
    only = None if args.all else (args.only or ["semrel-2024/eng/validation"])
    loaded = [e for e in load_sets(select_sets(only, mirror=args.mirror), mirror=args.mirror)
              if e.rows is not None and "condition" not in e.rows.column_names]
    pairs = sum(len(e.rows) for e in loaded)
    texts = {t for e in loaded for column in ("sentence1", "sentence2") for t in e.rows[column]}
    path = str(resolve_model_ref(args.model).path)
    print(f"{args.model} on {len(loaded)} sets: {pairs} pairs, {len(texts)} distinct texts; "
          f"{platform.node()}, {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as cache:  # semrel cold first: MTEB finds the weights in the OS cache
        cold, cold_seconds, cold_cpu, computed = run_semrel(args.model, loaded, cache)
        mteb_scores, mteb_seconds, mteb_cpu = ({}, None, None) if args.no_mteb else run_mteb(path, loaded)
        warm, warm_seconds, warm_cpu, recomputed = run_semrel(args.model, loaded, cache)
    print(f"semrel cold: {cold_seconds:.1f} s wall, {cold_cpu:.1f} s CPU ({computed} texts encoded)")
    print(f"semrel warm: {warm_seconds:.1f} s wall, {warm_cpu:.1f} s CPU ({recomputed} texts encoded)")
    if mteb_seconds is not None:
        worst = max(abs(mteb_scores[s] - cold[s]) for s in cold)
        print(f"MTEB cold:   {mteb_seconds:.1f} s wall, {mteb_cpu:.1f} s CPU")
        print(f"Spearman, largest |MTEB - semrel| over {len(cold)} sets: {worst:.2e} "
              f"({'agree to 1e-6' if worst <= 1e-6 else 'DISAGREE beyond 1e-6'})")
        for name in cold:
            print(f"    {name:<45} MTEB {mteb_scores[name]:.6f}  semrel {cold[name]:.6f}")
        print(f"MTEB cold / semrel cold: {mteb_seconds / cold_seconds:.1f}x wall, "
              f"{mteb_cpu / cold_cpu:.1f}x CPU; MTEB cold / semrel warm: "
              f"{mteb_seconds / warm_seconds:.1f}x wall, {mteb_cpu / warm_cpu:.1f}x CPU")
    print(f"semrel cold / semrel warm: {cold_seconds / warm_seconds:.1f}x wall, "
          f"{cold_cpu / warm_cpu:.1f}x CPU")
    assert cold == warm, "a warm run must give the cold run's figures"


if __name__ == "__main__":
    main()

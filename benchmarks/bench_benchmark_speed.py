"""`semrel benchmark` against `mteb.evaluate` on the same local tasks and model: cold against cold,
warm against warm, each run in a process of its own, alternating, with the same Spearman (to 1e-6).

The runs (``--modes``; each repeated ``--repeats`` times, the modes taking turns):

- ``semrel-cold``: an empty score cache; ``semrel-warm``: the cache the first cold run left (no model
  is loaded: every embedding is read from it; the human ceilings are read back too);
- ``mteb-cold``: ``mteb.evaluate(SentenceTransformer(path), tasks, cache=ResultCache(empty))``, MTEB's
  default (it stores its results); ``mteb-warm-results``: the result cache the first cold run left
  (``overwrite_strategy="only-missing"``, MTEB's default: nothing is encoded);
  ``mteb-warm-embeddings``: ``CachedEmbeddingWrapper``'s embedding cache, filled by one untimed run,
  with no result cache (every task is scored again from the stored embeddings). MTEB's warm runs
  load the model too: ``mteb.evaluate`` takes a local folder as a loaded ``SentenceTransformer``.

Each benchmark set (``--only``, as ``semrel benchmark --only`` takes it; ``--all``: every set without
conditions) becomes a local MTEB ``AbsTaskSTS`` over the same rows
(:func:`semrel.trainers.benchmark.mteb_tasks.mteb_task`; no Hub access). For each run: the wall
and CPU seconds of the timed part (loading the model where the run loads one, and scoring every
set; not importing torch, sentence-transformers and mteb, nor loading the data, which both
share), the CPU seconds of the whole process (user + system, every thread and child,
``os.wait4``), CPU seconds per wall second of the timed part (cores kept busy), the process's
peak resident memory (``ru_maxrss``), and beside them what a user of ``semrel benchmark`` waits
for besides: semrel's loading of the sets with their human ceilings, and the whole process's wall
clock, imports included. The first timed cold run of a tool fills its warm result cache (a
separate untimed run fills MTEB's embedding cache). Min and median per mode; run it on an idle
machine (the load average is printed): on a shared one, neither is a figure.

    python benchmarks/bench_benchmark_speed.py --only semrel-2024 --repeats 3      # every SemRel-2024 set
    python benchmarks/bench_benchmark_speed.py --all --repeats 2 --record benchmarks/results.json
    python benchmarks/bench_benchmark_speed.py --only semrel-2024/eng/validation --repeats 1   # a smoke run

Needs ``mteb`` (``pip install -e '.[mteb]'``) unless ``--modes`` names semrel runs only. Not part
of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("semrel-cold", "mteb-cold", "semrel-warm", "mteb-warm-results", "mteb-warm-embeddings")
KEY = "benchmark_speed"  # --all: KEY_ALL
KEY_ALL = "benchmark_speed_all"


# ---- one run, in a child process -------------------------------------------------------------
def _loaded(only, mirror):
    """The sets without conditions that load; SystemExit naming the first that fails to."""
    from semrel.dataset_scripts.benchmark_sets import select_sets
    from semrel.trainers.benchmark import load_sets

    entries = load_sets(select_sets(only, mirror=mirror), mirror=mirror)
    if failed := [e for e in entries if e.status == "failed"]:
        raise SystemExit(f"{len(failed)} of {len(entries)} sets failed to load; the first: {failed[0].reason}")
    return [e for e in entries if e.rows is not None and "condition" not in e.rows.column_names]


def _semrel(model: str, loaded, cache: str) -> dict:
    from semrel.trainers.benchmark import run_benchmark
    from semrel.trainers.scoring import load_scorer

    scorer = load_scorer(model, cache_dir=cache)
    try:
        result = run_benchmark([scorer], loaded, log=lambda line: None)
    finally:
        scorer.close()
    return {"spearman": {c.set: c.spearman for c in result.cells if c.status == "scored"},
            "computed": result.models[0]["computed"]}


def _mteb(path: str, loaded, mode: str, cache: str) -> dict:
    import mteb
    from sentence_transformers import SentenceTransformer

    from semrel.trainers.benchmark.mteb_tasks import mteb_task, spearman_by_set

    tasks = [mteb_task(e.bset, e.rows) for e in loaded]
    model = SentenceTransformer(path, device=None)
    if mode.endswith("embeddings"):
        model = mteb.models.CachedEmbeddingWrapper(mteb.SentenceTransformerEncoderWrapper(model), cache)
        results = None
    else:
        results = mteb.ResultCache(cache)
    result = mteb.evaluate(model, tasks=tasks, cache=results, show_progress_bar=False)
    return {"spearman": spearman_by_set(result, tasks)}


def child(args) -> None:
    """One run of ``args.run``; its figures as one JSON line on stdout."""
    import sentence_transformers  # noqa: F401  the libraries, imported before the clock starts
    import torch

    if args.run.startswith("mteb"):
        import mteb  # noqa: F401
    if args.threads:
        torch.set_num_threads(args.threads)
    start, cpu = time.perf_counter(), time.process_time()
    loaded = _loaded(args.only, args.mirror)
    load_wall, load_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    if args.run.startswith("semrel"):
        out = _semrel(args.model, loaded, args.cache)
    else:
        out = _mteb(args.path, loaded, args.run, args.cache)
    out.update(wall=time.perf_counter() - start, cpu=time.process_time() - cpu, threads=torch.get_num_threads(),
               load_wall=load_wall, load_cpu=load_cpu)
    print("RESULT " + json.dumps(out), flush=True)


# ---- the driver ----------------------------------------------------------------------------------
def run_child(run: str, cache: Path, args, argv: list[str]) -> dict:
    """``run`` in a child process: its figures, with the whole process's wall and CPU seconds and
    peak memory. A semrel run keeps its human ceilings in its cache folder (``$SEMREL_CACHE``: cold
    computes them, warm reads them); MTEB's runs share one folder of them, outside their timing."""
    command = [sys.executable, __file__, *argv, "--run", run, "--cache", str(cache), "--path", args.path]
    ceilings = cache if run.startswith("semrel") else cache.parent / "mteb-runs-ceilings"
    wall = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "SEMREL_CACHE": str(ceilings)})
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    if process.returncode or not lines:
        raise SystemExit(f"{run} failed (exit {process.returncode}): {shlex.join(command)}")
    record = json.loads(lines[-1][len("RESULT "):])
    record.update(process_wall=time.perf_counter() - wall, process_cpu=usage.ru_utime + usage.ru_stime,
                  peak_mb=usage.ru_maxrss / 1024)
    return record


def summary(runs: list[dict]) -> dict:
    """Min and median of each figure over a mode's runs."""
    out = {"runs": len(runs)}
    for name in ("wall", "cpu", "load_wall", "process_wall", "process_cpu", "peak_mb"):
        if not all(name in r for r in runs):  # a script of its own times less
            continue
        values = [r[name] for r in runs]
        out[name] = {"min": round(min(values), 2), "median": round(statistics.median(values), 2)}
    out["cores_busy"] = round(statistics.median(r["cpu"] / r["wall"] for r in runs), 2)
    return out


def table(summaries: dict[str, dict]) -> str:
    lines = ["| run | n | wall s (min / median) | CPU s, timed (min / median) | CPU s, process | cores busy "
             "| peak MB | loading the sets, s | wall s, process |", "|---|---|---|---|---|---|---|---|---|"]
    for mode, s in summaries.items():
        load = f"{s['load_wall']['median']:.1f}" if mode.startswith("semrel") else "—"
        lines.append(f"| {mode} | {s['runs']} | {s['wall']['min']:.1f} / {s['wall']['median']:.1f} "
                     f"| {s['cpu']['min']:.1f} / {s['cpu']['median']:.1f} | {s['process_cpu']['median']:.1f} "
                     f"| {s['cores_busy']:.2f} | {s['peak_mb']['median']:.0f} | {load} "
                     f"| {s['process_wall']['median']:.1f} |")
    return "\n".join(lines)


def ratios(summaries: dict[str, dict]) -> dict[str, dict]:
    """MTEB / semrel, median wall and timed CPU, cold against cold and warm against warm."""
    pairs = {"cold": ("mteb-cold", "semrel-cold"), "warm, MTEB's result cache": ("mteb-warm-results", "semrel-warm"),
             "warm, MTEB's embedding cache": ("mteb-warm-embeddings", "semrel-warm")}
    return {name: {figure: round(summaries[a][figure]["median"] / summaries[b][figure]["median"], 2)
                   for figure in ("wall", "cpu")}
            for name, (a, b) in pairs.items() if a in summaries and b in summaries}


def agreement(runs: dict[str, list[dict]]) -> dict[str, float]:
    """The largest Spearman difference over the sets: MTEB's cold figures against semrel's, and
    each run against the first cold run of its tool (semrel's warm runs must give its cold
    figures exactly: asserted)."""
    first = {tool: next((r[0]["spearman"] for m, r in runs.items() if m.startswith(tool + "-")), None)
             for tool in ("semrel", "mteb")}
    out = {}
    if first["semrel"] is not None and first["mteb"] is not None:
        assert set(first["semrel"]) == set(first["mteb"]), "the tools scored different sets"
        gaps = {s: abs(first["mteb"][s] - first["semrel"][s]) for s in first["semrel"]}
        out["mteb - semrel"] = max(gaps.values())
        worst = max(gaps, key=gaps.get)
        print(f"mteb - semrel, the largest |difference|: {worst} (semrel {first['semrel'][worst]:.6f}, "
              f"MTEB {first['mteb'][worst]:.6f}); above 1e-6: "
              + ", ".join(f"{s} {g:.1e}" for s, g in sorted(gaps.items(), key=lambda x: -x[1]) if g > 1e-6), flush=True)
    for mode, records in runs.items():
        cold = first[mode.split("-")[0]]
        out[f"{mode} - its tool's first cold run"] = max(abs(r["spearman"][s] - cold[s]) for r in records for s in cold)
    assert all(v == 0 for k, v in out.items() if k.startswith("semrel")), "a semrel run changed a figure"
    return out


def add_set_flags(ap: argparse.ArgumentParser, model_help: str) -> None:
    """``--model``, ``--only``, ``--all``, ``--mirror``: the model and the sets a speed script runs."""
    ap.add_argument("--model", default="minilm", help=model_help)
    ap.add_argument("--only", action="append", help="benchmark sets (default: semrel-2024/eng/validation)")
    ap.add_argument("--all", action="store_true", help="every benchmark set without conditions")
    ap.add_argument("--mirror", help="mirror of the upstream files")


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_set_flags(ap, "a packaged name or a sentence-transformers folder")
    ap.add_argument("--modes", default=",".join(MODES), help=f"runs, comma-separated (default: {','.join(MODES)})")
    ap.add_argument("--no-mteb", action="store_true", help="semrel's runs only: --modes semrel-cold,semrel-warm")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each mode, alternating (default: 3)")
    ap.add_argument("--threads", type=int, help="torch threads in each run (default: torch's)")
    ap.add_argument("--record", help=f"store the figures under {KEY} ({KEY_ALL} with --all) in this results.json")
    ap.add_argument("--run", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.only = None if args.all else (args.only or ["semrel-2024/eng/validation"])
    if args.run:
        return child(args)
    modes = [m.strip() for m in args.modes.split(",") if m.strip() and not (args.no_mteb and m.startswith("mteb"))]
    if unknown := [m for m in modes if m not in MODES]:
        ap.error(f"--modes: {', '.join(unknown)} is not one of {', '.join(MODES)}")
    if args.repeats < 1:
        ap.error(f"--repeats: {args.repeats} runs; give 1 or more")
    from semrel.trainers.model_ref import resolve_model_ref

    args.path = str(resolve_model_ref(args.model).path)
    loaded = _loaded(args.only, args.mirror)
    pairs = sum(len(e.rows) for e in loaded)
    texts = {t for e in loaded for column in ("sentence1", "sentence2") for t in e.rows[column]}
    print(f"{args.model} on {len(loaded)} sets: {pairs} pairs, {len(texts)} distinct texts; {platform.node()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as root:
        root = Path(root)
        warm = {"semrel-warm": root / "semrel-warm", "mteb-warm-results": root / "mteb-warm-results",
                "mteb-warm-embeddings": root / "mteb-warm-embeddings"}
        fills = {"semrel-warm": "semrel-cold", "mteb-warm-results": "mteb-cold",
                 "mteb-warm-embeddings": "mteb-warm-embeddings"}
        filling = {fills[m]: warm[m] for m in modes if m in warm and fills[m] in modes and fills[m] != m}
        for mode in modes:  # each warm cache filled once: by the first timed cold run, else untimed
            if mode in warm and fills[mode] not in filling:
                filled = run_child(fills[mode], warm[mode], args, argv)
                print(f"  filled {mode}'s cache: {filled['wall']:.1f} s", flush=True)
        for repeat in range(args.repeats):
            for mode in modes:
                cache = warm.get(mode) or (filling[mode] if repeat == 0 and mode in filling
                                           else root / f"{mode}-{repeat}")
                record = run_child(mode, cache, args, argv)
                runs[mode].append(record)
                print(f"  {mode} #{repeat + 1}: {record['wall']:.1f} s wall, {record['cpu']:.1f} s CPU, "
                      f"{record['process_cpu']:.1f} s process CPU, {record['peak_mb']:.0f} MB, load average "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
    summaries = {m: summary(r) for m, r in runs.items()}
    differences = agreement(runs)
    print(table(summaries))
    for name, ratio in ratios(summaries).items():
        print(f"MTEB / semrel, {name}: {ratio['wall']:.2f}x wall, {ratio['cpu']:.2f}x CPU (medians)")
    for name, worst in differences.items():
        print(f"Spearman, largest |{name}| over {len(loaded)} sets: {worst:.2e} "
              f"({'agree to 1e-6' if worst <= 1e-6 else 'DISAGREE beyond 1e-6'})")
    if args.record:
        from semrel.publishing.results import store

        command = shlex.join(["python", "benchmarks/bench_benchmark_speed.py", *argv])
        store(KEY_ALL if args.all else KEY, {
                    "command": command, "machine": f"{platform.node()} ({os.cpu_count()} CPUs)", "model": args.model,
                    "sets": len(loaded), "pairs": pairs, "distinct_texts": len(texts),
                    "torch_threads": runs[modes[0]][0]["threads"], "spearman_largest_differences": differences,
                    "runs": summaries, "ratios": ratios(summaries)}, args.record)


if __name__ == "__main__":
    main()

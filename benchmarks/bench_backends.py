"""`semrel benchmark` on each backend (torch, onnx, openvino, onnx with int8 weights): the largest
Spearman difference from torch over every set, the speed-up cold, CPU seconds, cores kept busy
and peak memory, each run in a process of its own, the backends taking turns.

A cold run starts from an empty score cache holding only the backend's export (made once per
backend by an untimed run on semrel-2024/eng/validation, whose seconds, the export's cost
with it, are printed): it encodes
every distinct text of the sets. Timed as ``bench_benchmark_speed.py`` times ``semrel-cold``
(loading the model and scoring every set; not the imports nor loading the sets), so its torch
row is that script's ``semrel-cold``. The goal (issue 53): every set of the suite, MiniLM, cold,
within 300 CPU seconds on a backend whose Spearman agrees with torch's to 1e-4, both cores busy.

    python benchmarks/bench_backends.py --all --repeats 1 --record benchmarks/results.json
    python benchmarks/bench_backends.py --model mpnet --only semrel-2024/eng --repeats 1
    python benchmarks/bench_backends.py --only semrel-2024/eng/validation --backends torch,onnx   # a smoke run

Needs the backends extra (``pip install -e '.[backends]'``). Run it on an idle machine (the load
average is printed). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_benchmark_speed import _loaded, add_set_flags, summary

BACKENDS = {"torch": ("torch", None), "onnx": ("onnx", None), "openvino": ("openvino", None),
            "onnx-int8": ("onnx", "int8")}
KEY = "benchmark_backends"
AGREE = 1e-4


def child(args) -> None:
    """One cold run of ``args.run``; its figures as one JSON line on stdout."""
    import torch

    from semrel.trainers.benchmark import run_benchmark
    from semrel.trainers.scoring import load_scorer

    loaded = _loaded(["semrel-2024/eng/validation"] if args.fill else args.only, args.mirror)
    backend, quantize = BACKENDS[args.run]
    start, cpu = time.perf_counter(), time.process_time()
    scorer = load_scorer(args.model, cache_dir=args.cache, backend=backend, quantize=quantize)
    try:
        result = run_benchmark([scorer], loaded, log=lambda line: None)
    finally:
        scorer.close()
    print("RESULT " + json.dumps({
        "spearman": {c.set: c.spearman for c in result.cells if c.status == "scored"},
        "computed": result.models[0]["computed"], "wall": time.perf_counter() - start,
        "cpu": time.process_time() - cpu, "threads": torch.get_num_threads()}), flush=True)


def run_child(run: str, cache: Path, argv: list[str], fill: bool = False) -> dict:
    """``run`` in a child process (``fill``: on one small set, to make the export): its figures,
    with the whole process's CPU seconds and peak memory."""
    command = [sys.executable, __file__, *argv, "--run", run, "--cache", str(cache), *(["--fill"] if fill else [])]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    if os.waitstatus_to_exitcode(status) or not lines:
        raise SystemExit(f"{run} failed: {shlex.join(command)}")
    record = json.loads(lines[-1][len("RESULT "):])
    record.update(process_cpu=usage.ru_utime + usage.ru_stime, peak_mb=usage.ru_maxrss / 1024)
    return record


def cold_cache(root: Path, run: str, exports: Path) -> Path:
    """An empty score cache whose exports/ is the backend's shared export folder."""
    cache = Path(tempfile.mkdtemp(prefix=f"{run}-", dir=root))
    (cache / "exports").symlink_to(exports, target_is_directory=True)
    return cache


def backend_table(summaries: dict, differences: dict, exports: dict) -> str:
    torch = summaries.get("torch")
    lines = ["| backend | runs | wall s (min / median) | CPU s (median) | cores busy | peak MB | speed-up, wall "
             "(CPU) | largest Spearman difference from torch | export s |", "|---|---|---|---|---|---|---|---|---|"]
    for run, s in summaries.items():
        speed = (f"{torch['wall']['median'] / s['wall']['median']:.2f}x "
                 f"({torch['cpu']['median'] / s['cpu']['median']:.2f}x)") if torch else "-"
        lines.append(f"| {run} | {s['runs']} | {s['wall']['min']:.1f} / {s['wall']['median']:.1f} "
                     f"| {s['cpu']['median']:.1f} | {s['cores_busy']:.2f} | {s['peak_mb']['median']:.0f} | {speed} "
                     f"| {differences[run]:.1e} | {exports.get(run, '-')} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_set_flags(ap, "any model semrel benchmark takes (default: minilm)")
    ap.add_argument("--backends", default=",".join(BACKENDS), help=f"comma-separated (default: {','.join(BACKENDS)})")
    ap.add_argument("--repeats", type=int, default=1, help="cold runs of each backend, taking turns (default: 1)")
    ap.add_argument("--record", help=f"store the figures under {KEY}/<model> in this results.json")
    ap.add_argument("--run", choices=BACKENDS, help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    ap.add_argument("--fill", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.only = None if args.all else (args.only or ["semrel-2024/eng/validation"])
    if args.run:
        return child(args)
    runs = [b.strip() for b in args.backends.split(",") if b.strip()]
    if unknown := [b for b in runs if b not in BACKENDS]:
        ap.error(f"--backends: {', '.join(unknown)} is not one of {', '.join(BACKENDS)}")
    if args.repeats < 1:
        ap.error(f"--repeats: {args.repeats} runs; give 1 or more")
    loaded = _loaded(args.only, args.mirror)
    texts = {t for e in loaded for column in ("sentence1", "sentence2") for t in e.rows[column]}
    print(f"{args.model} on {len(loaded)} sets, {len(texts)} distinct texts; {platform.node()}, {os.cpu_count()} "
          f"CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    records: dict[str, list[dict]] = {b: [] for b in runs}
    exports: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as root:
        root = Path(root)
        shared = {b: root / f"exports-{BACKENDS[b][0]}" for b in runs}
        for run in runs:  # each export made once, on one small set, untimed (its seconds printed)
            shared[run].mkdir(exist_ok=True)
            if run != "torch":
                first = run_child(run, cold_cache(root, run, shared[run]), argv, fill=True)
                exports[run] = round(first["wall"], 1)
                print(f"  {run}: the export and semrel-2024/eng/validation, {first['wall']:.1f} s", flush=True)
        for repeat in range(args.repeats):
            for run in runs:
                record = run_child(run, cold_cache(root, run, shared[run]), argv)
                records[run].append(record)
                print(f"  {run} #{repeat + 1}: {record['wall']:.1f} s wall, {record['cpu']:.1f} s CPU, "
                      f"{record['peak_mb']:.0f} MB, load average {os.getloadavg()[0]:.1f}", flush=True)
    reference = records["torch"][0]["spearman"] if "torch" in records else {}
    worst = {b: max(((abs(r["spearman"][s] - reference[s]), s) for r in rs for s in reference),
                    default=(float("nan"), None)) for b, rs in records.items()}
    differences = {b: w[0] for b, w in worst.items()}
    summaries = {b: summary(rs) for b, rs in records.items()}
    print(backend_table(summaries, differences, exports))
    for run, (largest, where) in worst.items():
        print(f"{run}: largest Spearman difference from torch over {len(loaded)} sets {largest:.1e}, on {where} "
              f"({'agrees' if largest <= AGREE else 'differs'} to {AGREE:g})")
    if args.record:
        from semrel.publishing.results import update

        update(KEY, {args.model: {
            "command": shlex.join(["python", "benchmarks/bench_backends.py", *argv]),
            "machine": f"{platform.node()} ({os.cpu_count()} CPUs)", "sets": len(loaded),
            "distinct_texts": len(texts), "runs": summaries, "export_seconds": exports,
            "spearman_largest_difference_from_torch": differences,
            "spearman_largest_difference_set": {b: w[1] for b, w in worst.items()}}}, args.record)


if __name__ == "__main__":
    main()

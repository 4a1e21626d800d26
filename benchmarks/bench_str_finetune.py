"""STR-2021 5-fold CV fine-tuning benchmark: any set of runs (model x encoder x objective x
hyperparameters) and their ensembles, beside sentence-transformers' own trainer.

A run is ``ENCODER@MODEL[,option=value...]`` (the ``semrel cv --member`` syntax; the
flags give the defaults), or ``st@MODEL`` for sentence-transformers' trainer
(CosineSimilarityLoss, same folds and hyperparameters). ``--ensemble A+B[+C]`` combines runs (by
their spec) per fold: a rank average against, and a linear stack fit on, the other folds'
out-of-fold predictions (:mod:`trainers.ensemble`), never the test fold's.

Prints per-fold and mean Spearman, the per-source table (paper Table 6, RoBERTa-base CV column
beside it), training throughput (pairs/s = train pairs x epochs / training seconds, the whole run)
and peak memory (GPU: max allocated; CPU: the process's max RSS so far), each fold with the
device and precision it ran under (``--precision``, or ``precision=`` in a spec: see
``semrel fit --help``). Each finished (fold, run) is stored in ``OUT/results.json``
and reused on the next call when its settings are the same (``--force`` re-runs);
``--report`` prints the stored results of ``--folds``/``--run`` without training anything.
Not part of the test suite.

    nice -n 10 .venv/bin/python benchmarks/bench_str_finetune.py --folds 0 \
        --run bi@minilm --run cross@minilm --run st@minilm --ensemble bi@minilm+cross@minilm
    # throughput only: 40 steps per run and batch size, interleaved 3 times
    .venv/bin/python benchmarks/bench_str_finetune.py --throughput-steps 40 --batch-sizes 16,64,256 \
        --run bi@minilm --run bi@minilm,compile=reduce-overhead,pad_to_multiple_of=16 --run st@minilm
    # a CPU with AVX512-BF16 or AMX: mpnet folds in bf16 autocast, about 1.7x faster
    nice -n 10 .venv/bin/python benchmarks/bench_str_finetune.py --folds 2 --precision bf16 \
        --run bi@mpnet --run cross@mpnet,learning_rate=4e-5
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from semrel.dataset_scripts.pairs import load_pairs
from semrel.trainers.arguments import (
    PairTrainingArguments,
    device_kwargs,
    precision_used,
    recorded_options,
    stored_options,
)
from semrel.trainers.combination import cv_ensemble, rank_average, spearman
from semrel.trainers.cross_validation import parse_member
from semrel.trainers.data import prepare_pairs, pretokenize_pairs
from semrel.trainers.fitting import fit
from semrel.trainers.model_ref import resolve_model_ref
from semrel.trainers.models import build_model
from semrel.trainers.options import PRECISIONS
from semrel.trainers.run_folder import check_same_rows, load_run
from semrel.trainers.summaries import per_source_spearman
from semrel.trainers.trainer import EpochClock, PairTrainer, similarity_scores

PAPER_CV = {"STS": 0.79, "SNLI": 0.80, "Stance": 0.49, "Goodreads": 0.73, "Wikipedia": 0.79,
            "Formality": 0.86, "ParaNMT": 0.80}  # Abdalla et al., Table 6, SBERT(RoBERTa) CV


def run_options(spec: str, args, output_dir=None, **changes) -> tuple[str, PairTrainingArguments]:
    """(model name or path, arguments) of a run spec; ``st@MODEL`` keeps the flag defaults
    (its encoder ``st`` stands in as a bi-encoder: the arguments only carry its settings)."""
    _, model, values = parse_member(spec)
    st = values.get("encoder") == "st"
    kwargs = {"num_train_epochs": args.epochs, "per_device_train_batch_size": args.batch_size,
              "learning_rate": args.lr, "warmup_steps": args.warmup,
              "weight_decay": args.weight_decay, "seed": args.seed, "precision": args.precision,
              **values, **changes, "output_dir": None if output_dir is None else str(output_dir)}
    if st:
        kwargs["encoder"] = "bi"
    kwargs["dataloader_persistent_workers"] = kwargs.get("dataloader_num_workers", 0) > 0
    return model, PairTrainingArguments(**kwargs)


def is_st(spec: str) -> bool:
    return spec.startswith("st@")


def peak_memory_gib() -> float:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def train_sentence_transformers(train, model: str, out: Path, options: PairTrainingArguments,
                                max_steps: int = -1):
    """The reference: SentenceTransformerTrainer + CosineSimilarityLoss, same data and settings.
    Returns the trained model, the training seconds, the precision (``precision_used``) and
    the seconds of each epoch."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    st, clock = SentenceTransformer(model), EpochClock()
    st_args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"), num_train_epochs=options.num_train_epochs,
        max_steps=max_steps, per_device_train_batch_size=options.per_device_train_batch_size,
        learning_rate=options.learning_rate, warmup_steps=options.warmup_steps,
        weight_decay=options.weight_decay, seed=options.seed,
        data_seed=options.seed, save_strategy="no", logging_strategy="epoch", report_to="none",
        disable_tqdm=True, **device_kwargs(options.precision))
    trainer = SentenceTransformerTrainer(model=st, args=st_args,
                                         train_dataset=train.select_columns(
                                             ["sentence1", "sentence2", "labels"]),
                                         loss=CosineSimilarityLoss(st), callbacks=[clock])
    seconds = float(trainer.train().metrics["train_runtime"])
    return st, seconds, precision_used(st_args), clock.seconds


def run_sentence_transformers(data, model: str, out: Path, options: PairTrainingArguments) -> dict:
    train = prepare_pairs(data.splits["train"], data.score_range, where=f"{data.name}/train")
    test = prepare_pairs(data.splits["test"], data.score_range, where=f"{data.name}/test")
    st, seconds, precision, epochs = train_sentence_transformers(train, model, out, options)
    e1 = st.encode(test["sentence1"], convert_to_tensor=True, batch_size=64)
    e2 = st.encode(test["sentence2"], convert_to_tensor=True, batch_size=64)
    predictions = torch.nn.functional.cosine_similarity(e1, e2).float().cpu().numpy()
    labels = np.asarray(test["labels"], dtype=np.float64)
    scores = similarity_scores(predictions, labels)
    return {"spearman": scores.spearman, "pearson": scores.pearson,
            "per_source": per_source_spearman(data.splits["test"], predictions, labels),
            "train_seconds": seconds,
            "pairs_per_second": len(train) * options.num_train_epochs / seconds,
            "precision": precision,
            "epoch_seconds": epochs, "train_pairs": len(train)}


def run_ours(data, model: str, options: PairTrainingArguments) -> dict:
    result = fit(data, model, options, overwrite=True)  # the benchmark owns its run folders
    return {"spearman": result.spearman, "pearson": result.pearson,
            "per_source": result.per_source, "train_seconds": result.train_seconds,
            "pairs_per_second": result.pairs_per_second, "output_dir": result.output_dir,
            "precision": result.precision, "epoch_seconds": result.epoch_seconds,
            "train_pairs": result.train_pairs}


def throughput(data, runs: list[str], out: Path, args) -> None:
    """Training pairs/s of each run over the same ``--throughput-steps`` steps, per batch size,
    interleaved ``--repeats`` times so that load from other processes hits all runs alike. The
    ms per step at the smallest batch is the per-step overhead (arithmetic is negligible)."""
    train = prepare_pairs(data.splits["train"], data.score_range, where=f"{data.name}/train")
    steps = args.throughput_steps
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    measured = {(run, b): [] for b in sizes for run in runs}
    for repeat in range(args.repeats):
        for (run, batch), values in measured.items():
            model, options = run_options(run, args, out / "tp", per_device_train_batch_size=batch,
                                         max_steps=steps, logging_strategy="no")
            if is_st(run):
                _, seconds, _, _ = train_sentence_transformers(train, str(resolve_model_ref(model).path),
                                                               out / "tp", options, steps)
            else:  # PairTrainer compiles the encoder when options.compile asks for it
                encoder = build_model(options.encoder, str(resolve_model_ref(model).path), seed=options.seed,
                                      **options.model_options())
                seconds = float(PairTrainer(
                    encoder, options, train_dataset=pretokenize_pairs(train, encoder)).train()
                    .metrics["train_runtime"])
            values.append(steps * batch / seconds)
            print(f"repeat {repeat} batch {batch} {run}: {steps * batch / seconds:.1f} pairs/s, "
                  f"{1000 * seconds / steps:.1f} ms/step", flush=True)
    print(f"\ntraining throughput over {steps} steps (whole train() call), median of "
          f"{args.repeats} interleaved repeats")
    for batch in sizes:
        reference = [r for r in runs if r.startswith("st@")]
        st = np.median(measured[(reference[0], batch)]) if reference else float("nan")
        for run in runs:
            rate = np.median(measured[(run, batch)])
            print(f"batch {batch:>4} {run:<52} {rate:9.1f} pairs/s {1000 * batch / rate:7.1f} "
                  f"ms/step  (x{rate / st:.2f} of ST's trainer)")


def epoch_summary(result: dict) -> str:
    """Seconds per epoch, and pairs/s of the epochs after the first (the steady state: the first
    pays for workers, first kernels and compilation); empty for results stored without them."""
    epochs = result.get("epoch_seconds") or []
    if len(epochs) < 2 or not result.get("train_pairs"):
        return ""
    steady = result["train_pairs"] / float(np.median(epochs[1:]))
    return (f"  epochs {' / '.join(f'{e:.1f}' for e in epochs)} s, after the first "
            f"{steady:.1f} pairs/s")


def print_tables(results: dict, runs: list[str], folds: list[int]) -> None:
    done = [f for f in folds if all(f"{f}/{r}" in results for r in runs)]
    print("\nSpearman (test fold) | training pairs/s | peak memory GiB")
    for run in runs:
        print(f"  {run}")
        for f in done:
            c = results[f"{f}/{run}"]
            print(f"    fold {f}: {c['spearman']:.4f} | {c['pairs_per_second']:8.1f}/s | "
                  f"{c.get('peak_memory_gib', float('nan')):.2f}  ({c.get('device', '?')}, "
                  f"{c.get('precision', 'fp32' if 'CPU' in c.get('device', '') else 'bf16/tf32')})"
                  + epoch_summary(c))
        if done:
            print(f"    mean over {len(done)} fold(s): "
                  f"{np.mean([results[f'{f}/{run}']['spearman'] for f in done]):.4f}")
    if not done:
        return
    print("\nper source, mean over folds (paper Table 6: SBERT RoBERTa-base CV)")
    print(f"{'source':<10} {'paper':>6} " + " ".join(f"{r[:14]:>15}" for r in runs))
    for source in sorted(PAPER_CV):
        vals = [np.mean([results[f"{f}/{r}"]["per_source"][source] for f in done]) for r in runs]
        print(f"{source:<10} {PAPER_CV[source]:>6.2f} " + " ".join(f"{v:>15.4f}" for v in vals))


def print_rank_average(ensemble: str, runs: list) -> None:
    """One fold: each member's Spearman and their (equal-weight) rank average's, ranked among
    the fold's pairs (no other fold's predictions to rank against)."""
    check_same_rows(runs)
    matrix = np.column_stack([run.predictions for run in runs])
    members = "  ".join(f"{m[:18]} {spearman(r.predictions, r.labels):.4f}"
                        for m, r in zip(ensemble.split("+"), runs, strict=True))
    print(f"\nensemble {ensemble} on one fold (a stack or rank reference needs >= 2 folds): "
          f"{members}  rank among the fold's pairs "
          f"{spearman(rank_average(matrix), runs[0].labels):.4f}")


def print_ensembles(results: dict, ensembles: list[str], folds: list[int]) -> dict:
    """Per ensemble ``A+B[+C]``: per fold Spearman of each member, rank average and OOF stack."""
    summary = {}
    for ensemble in ensembles:
        members = ensemble.split("+")
        if not all(f"{f}/{m}" in results for f in folds for m in members):
            print(f"\nensemble {ensemble}: not every member ran on folds {folds}")
            continue
        runs = {m: {f"cv-fold-{f}": load_run(results[f"{f}/{m}"]["output_dir"]) for f in folds}
                for m in members}
        if len(folds) == 1:  # no other fold to fit a stack on: the rank average alone
            print_rank_average(ensemble, [runs[m][f"cv-fold-{folds[0]}"] for m in members])
            continue
        cv = cv_ensemble(runs)
        names = list(next(iter(cv.folds.values())))
        print(f"\nensemble {ensemble}: Spearman per fold")
        for fold, scores in cv.folds.items():
            weights = cv.stack_weights[fold]
            print(f"  {fold}: " + "  ".join(f"{n[:18]} {scores[n]:.4f}" for n in names)
                  + f"  (stack weights {[round(w, 3) for w in weights.weights]})")
        mean = cv.mean()
        print("  mean:      " + "  ".join(f"{n[:18]} {mean[n]:.4f}" for n in names))
        sources = sorted({s for f in cv.per_source.values() for s in f})
        for source in sources:
            vals = {n: np.mean([cv.per_source[f][source][n] for f in cv.per_source])
                    for n in names}
            print(f"  {source:<10} " + "  ".join(f"{n[:18]} {v:.4f}" for n, v in vals.items()))
        print("  ensemble - member on the pooled out-of-fold predictions (semrel.metrics.compare): "
              "Spearman difference [95% CI], paired bootstrap p, Williams p")
        for method, members_vs in cv.comparisons.items():
            for member, c in members_vs.items():
                print(f"    {method} - {member[:18]}: " + (f"not tested ({c['error']})" if "error" in c else
                      f"{c['spearman_difference']:+.4f} [{c['spearman_difference_ci'][0]:+.4f}, "
                      f"{c['spearman_difference_ci'][1]:+.4f}]  p {c['spearman_p_value']:.4f}  "
                      f"Williams p {c['williams_p_value']:.4f}  n {c['n']}"))
        summary[ensemble] = {"folds": cv.folds, "mean": mean, "comparisons": cv.comparisons,
                             "stack_weights": {f: asdict(w) for f, w in cv.stack_weights.items()}}
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folds", default="0,1,2,3,4", help="comma-separated fold numbers")
    parser.add_argument("--run", action="append", help="ENCODER@MODEL[,opt=value...] or st@MODEL "
                        "(repeat; default: bi@minilm, cross@minilm, st@minilm)")
    parser.add_argument("--ensemble", action="append", default=[],
                        help="RUN+RUN[+RUN]: their rank average and out-of-fold stack (repeat)")
    parser.add_argument("--epochs", type=float, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--warmup", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                        help="auto: bf16 on a GPU, fp32 on CPU; bf16: also on CPU; fp32")
    parser.add_argument("--report", action="store_true",
                        help="print the stored results of --folds and --run; train nothing")
    parser.add_argument("--mirror", help="upstream mirror ($SEMREL_MIRROR)")
    parser.add_argument("--out", default="build/bench")
    parser.add_argument("--force", action="store_true", help="re-run finished (fold, run)s")
    parser.add_argument("--throughput-steps", type=int, default=0,
                        help="instead of CV: time this many training steps per run (fold 0)")
    parser.add_argument("--batch-sizes", default="16,64", help="throughput: batch sizes")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved throughput repeats")
    args = parser.parse_args()
    folds = [int(f) for f in args.folds.split(",")]
    runs = args.run or ["bi@minilm", "cross@minilm", "st@minilm"]
    for run in runs + [m for e in args.ensemble for m in e.split("+")]:
        try:
            run_options(run, args)
        except ValueError as exc:
            parser.error(str(exc))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = out / "results.json"
    results = json.loads(store.read_text()) if store.is_file() else {}
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else \
        f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    print(f"{device}; runs {runs}")
    if args.throughput_steps:
        throughput(load_pairs("str-2021", f"cv-fold-{folds[0]}", mirror=args.mirror), runs,
                   out, args)
        return
    for fold in [] if args.report else folds:
        data = load_pairs("str-2021", f"cv-fold-{fold}", mirror=args.mirror)
        for run in runs:
            key = f"{fold}/{run}"
            # <out>/<run>/cv-fold-<f>: the layout of `semrel cv`, so `semrel ensemble
            # --cv-dir <out>/<run>` takes a run's folds for the stack or the rank reference
            run_dir = out / parse_member(run)[0] / f"cv-fold-{fold}"
            model, options = run_options(run, args, run_dir)
            settings = recorded_options(options) | ({"encoder": "st"} if is_st(run) else {})
            if not args.force and key in results and \
                    stored_options(results[key].get("settings", {})) == settings:
                print(f"fold {fold} {run}: stored result reused")
                continue
            start = time.perf_counter()
            if torch.cuda.is_available():
                torch.cuda.reset_peak_memory_stats()
            measured = (run_sentence_transformers(data, str(resolve_model_ref(model).path), run_dir, options)
                        if is_st(run) else run_ours(data, str(resolve_model_ref(model).path), options))
            measured["wall_seconds"] = time.perf_counter() - start
            measured["peak_memory_gib"] = peak_memory_gib()
            results[key] = {**measured, "settings": settings, "device": device}
            store.write_text(json.dumps(results, indent=2))
            print(f"fold {fold} {run}: Spearman {measured['spearman']:.4f}, "
                  f"{measured['pairs_per_second']:.1f} pairs/s, "
                  f"train {measured['train_seconds']:.0f} s, wall {measured['wall_seconds']:.0f} s, "
                  f"peak memory {measured['peak_memory_gib']:.2f} GiB", flush=True)
    missing = [f"{fold}/{run}" for fold in folds for run in runs if f"{fold}/{run}" not in results]
    if args.report and missing:
        parser.error(f"--report: {store} holds no result for {', '.join(missing)} "
                     "(run the benchmark without --report first, or point --out at its folder)")
    print_tables(results, runs, folds)
    summary = print_ensembles(results, args.ensemble, folds)
    if summary:
        (out / "ensembles.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

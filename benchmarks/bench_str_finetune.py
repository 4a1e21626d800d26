"""STR-2021 5-fold CV fine-tuning of the packaged MiniLM: our cross- and bi-encoder beside
sentence-transformers' own trainer (CosineSimilarityLoss) on identical folds and hyperparameters.

Prints per-fold and mean Spearman, the per-source table (paper Table 6, RoBERTa-base CV column
beside it), training throughput (pairs/s = train pairs x epochs / training seconds) and wall time.
Each finished (fold, run) is stored in ``OUT/results.json`` and reused on the next call, so a long
CV can be run a fold at a time (``--force`` re-runs). Not part of the test suite.

    nice -n 10 .venv/bin/python benchmarks/bench_str_finetune.py --folds 0 --runs cross,bi,st \
        --epochs 4 --batch-size 16 --lr 2e-5 --out build/bench 2>&1 | tee build/bench/fold0.log
    # throughput only: 40 steps per run, interleaved 3 times
    nice -n 10 .venv/bin/python benchmarks/bench_str_finetune.py --throughput-steps 40 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from trainers.data import prepare_pairs
from trainers.losses import OBJECTIVES
from trainers.models import build_model
from dataset_scripts.pretrained import minilm_path
from trainers.trainer import PairTrainer, device_kwargs, similarity_scores, training_arguments
from trainers.training import FitOptions, fit, load_pairs, per_source_spearman

PAPER_CV = {"STS": 0.79, "SNLI": 0.80, "Stance": 0.49, "Goodreads": 0.73, "Wikipedia": 0.79,
            "Formality": 0.86, "ParaNMT": 0.80}  # Abdalla et al., Table 6, SBERT(RoBERTa) CV
RUNS = ("cross", "bi", "st")
HYPERPARAMETERS = ("epochs", "batch_size", "lr", "warmup", "weight_decay", "seed")
OURS_ONLY = ("group_by_length",)  # sentence-transformers' trainer has no length grouping


def run_ours(run: str, data, model: Path, out: Path, args) -> dict:
    """``run`` is ``<encoder>`` or ``<encoder>:<objective>`` (default objective mse)."""
    encoder, _, objective = run.partition(":")
    options = FitOptions(encoder=encoder, objective=objective or "mse", epochs=args.epochs,
                         batch_size=args.batch_size, learning_rate=args.lr, warmup=args.warmup,
                         weight_decay=args.weight_decay, seed=args.seed,
                         group_by_length=args.group_by_length)
    result = fit(data, model, out, options)
    return {"spearman": result.spearman, "pearson": result.pearson,
            "per_source": result.per_source, "train_seconds": result.train_seconds,
            "pairs_per_second": result.pairs_per_second}


def train_sentence_transformers(train, model: Path, out: Path, args, max_steps: int = -1):
    """The reference: SentenceTransformerTrainer + CosineSimilarityLoss, same data and settings.
    Returns the trained model and the training seconds."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer import SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    st = SentenceTransformer(str(model))
    st_args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"), num_train_epochs=args.epochs, max_steps=max_steps,
        per_device_train_batch_size=args.batch_size, learning_rate=args.lr,
        warmup_steps=args.warmup, weight_decay=args.weight_decay, seed=args.seed,
        data_seed=args.seed, save_strategy="no", logging_strategy="epoch", report_to="none",
        disable_tqdm=True, **device_kwargs())
    trainer = SentenceTransformerTrainer(model=st, args=st_args, train_dataset=train,
                                         loss=CosineSimilarityLoss(st))
    return st, float(trainer.train().metrics["train_runtime"])


def run_sentence_transformers(data, model: Path, out: Path, args) -> dict:
    train = prepare_pairs(data.splits["train"], data.score_range, where=f"{data.name}/train")
    test = prepare_pairs(data.splits["test"], data.score_range, where=f"{data.name}/test")
    st, seconds = train_sentence_transformers(train, model, out, args)
    e1 = st.encode(test["sentence1"], convert_to_tensor=True, batch_size=64)
    e2 = st.encode(test["sentence2"], convert_to_tensor=True, batch_size=64)
    predictions = torch.nn.functional.cosine_similarity(e1, e2).cpu().numpy()
    labels = np.asarray(test["labels"], dtype=np.float64)
    scores = similarity_scores(predictions, labels)
    return {"spearman": scores.spearman, "pearson": scores.pearson,
            "per_source": per_source_spearman(data.splits["test"], predictions, labels),
            "train_seconds": seconds, "pairs_per_second": len(train) * args.epochs / seconds}


def throughput(data, model: Path, out: Path, args) -> None:
    """Training pairs/s of each run over the same ``--throughput-steps`` steps (same batches),
    interleaved ``--repeats`` times so that load from other processes hits all runs alike."""
    train = prepare_pairs(data.splits["train"], data.score_range, where=f"{data.name}/train")
    steps, pairs = args.throughput_steps, args.throughput_steps * args.batch_size
    measured = {run: [] for run in args.runs.split(",")}
    for repeat in range(args.repeats):
        for run in measured:
            if run == "st":
                _, seconds = train_sentence_transformers(train, model, out / "tp", args, steps)
            else:
                encoder = build_model(run.partition(":")[0], model, seed=args.seed)
                training = training_arguments(str(out / "tp"), epochs=args.epochs,
                                              batch_size=args.batch_size, learning_rate=args.lr,
                                              warmup=args.warmup, weight_decay=args.weight_decay,
                                              seed=args.seed, max_steps=steps,
                                              logging_strategy="no")
                result = PairTrainer(encoder, training, objective=run.partition(":")[2] or "mse",
                                     group_by_length=args.group_by_length,
                                     train_dataset=train).train()
                seconds = float(result.metrics["train_runtime"])
            measured[run].append(pairs / seconds)
            print(f"repeat {repeat} {run}: {pairs / seconds:.1f} pairs/s", flush=True)
    print(f"\ntraining throughput over {steps} steps x batch {args.batch_size}, "
          f"median of {args.repeats} interleaved repeats")
    for run, values in measured.items():
        ratio = np.median(values) / np.median(measured["st"]) if "st" in measured else float("nan")
        print(f"{run:>6}: {np.median(values):7.1f} pairs/s  (x{ratio:.2f} of ST's trainer)  "
              f"all: {[round(v, 1) for v in values]}")


def print_tables(results: dict, runs: list[str], folds: list[int]) -> None:
    names = {r: "ST trainer" if r == "st" else f"ours {r}" for r in runs}
    done = [f for f in folds if all(f"{f}/{r}" in results for r in runs)]
    print("\nSpearman (test fold), training pairs/s, training seconds")
    print("fold  " + "  ".join(f"{names[r]:>28}" for r in runs))
    for f in done:
        cells = [results[f"{f}/{r}"] for r in runs]
        print(f"{f:>4}  " + "  ".join(
            f"{c['spearman']:>8.4f} {c['pairs_per_second']:>7.1f}/s {c['train_seconds']:>7.0f}s"
            for c in cells))
    if not done:
        return
    means = {r: np.mean([results[f"{f}/{r}"]["spearman"] for f in done]) for r in runs}
    print(f"mean  " + "  ".join(f"{means[r]:>8.4f}{'':>20}" for r in runs)
          + f"   ({len(done)} fold(s): {done})")
    print("\nper source, mean over folds (paper Table 6: SBERT RoBERTa-base CV)")
    print(f"{'source':<10} {'paper':>6} " + " ".join(f"{names[r]:>11}" for r in runs))
    for source in sorted(PAPER_CV):
        vals = [np.mean([results[f"{f}/{r}"]["per_source"][source] for f in done]) for r in runs]
        print(f"{source:<10} {PAPER_CV[source]:>6.2f} " + " ".join(f"{v:>11.4f}" for v in vals))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folds", default="0,1,2,3,4", help="comma-separated fold numbers")
    parser.add_argument("--runs", default=",".join(RUNS),
                        help=f"comma-separated of {RUNS}; ours may name an objective: bi:cosent")
    parser.add_argument("--epochs", type=float, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--warmup", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--group-by-length", action=argparse.BooleanOptionalAction, default=True,
                        help="ours: batch pairs of similar token length (less padding)")
    parser.add_argument("--mirror", help="upstream mirror ($SEMREL_MIRROR)")
    parser.add_argument("--out", default="build/bench")
    parser.add_argument("--force", action="store_true", help="re-run finished (fold, run)s")
    parser.add_argument("--throughput-steps", type=int, default=0,
                        help="instead of CV: time this many training steps per run (fold 0)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved throughput repeats")
    args = parser.parse_args()
    folds = [int(f) for f in args.folds.split(",")]
    runs = [r for r in args.runs.split(",")]
    unknown = {r for r in runs if r.partition(":")[0] not in RUNS
               or r.partition(":")[2] not in ("", *OBJECTIVES)}
    if unknown:
        parser.error(f"unknown runs {sorted(unknown)}; choose from {RUNS}, optionally with "
                     f":<objective> for ours, objectives {OBJECTIVES}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = out / "results.json"
    results = json.loads(store.read_text()) if store.is_file() else {}
    model = minilm_path()  # sha256-verified
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else \
        f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    settings = {k: getattr(args, k) for k in HYPERPARAMETERS + OURS_ONLY}
    print(f"MiniLM {model} (sha256 verified); {device}; {settings}")
    if args.throughput_steps:
        throughput(load_pairs("str-2021", f"cv-fold-{folds[0]}", mirror=args.mirror), model,
                   out, args)
        return
    for fold in folds:
        data = load_pairs("str-2021", f"cv-fold-{fold}", mirror=args.mirror)
        for run in runs:
            key = f"{fold}/{run}"
            stored = results.get(key, {}).get("settings", {})
            keys = HYPERPARAMETERS if run == "st" else HYPERPARAMETERS + OURS_ONLY
            run_settings = {k: settings[k] for k in keys}
            if not args.force and {k: stored.get(k) for k in keys} == run_settings:
                print(f"fold {fold} {run}: stored result reused")
                continue
            start = time.perf_counter()
            run_dir = out / f"fold{fold}-{run}"
            if torch.cuda.is_available():
                torch.cuda.reset_peak_memory_stats()
            measured = (run_sentence_transformers(data, model, run_dir, args) if run == "st"
                        else run_ours(run, data, model, run_dir, args))
            measured["wall_seconds"] = time.perf_counter() - start
            if torch.cuda.is_available():
                measured["peak_gpu_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
            results[key] = {**measured, "settings": run_settings, "device": device}
            store.write_text(json.dumps(results, indent=2))
            print(f"fold {fold} {run}: Spearman {measured['spearman']:.4f}, "
                  f"{measured['pairs_per_second']:.1f} pairs/s, "
                  f"train {measured['train_seconds']:.0f} s, "
                  f"wall {measured['wall_seconds']:.0f} s"
                  + (f", peak GPU memory {measured['peak_gpu_memory_gib']:.2f} GiB"
                     if "peak_gpu_memory_gib" in measured else ""), flush=True)
    print_tables(results, runs, folds)


if __name__ == "__main__":
    main()

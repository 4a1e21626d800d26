"""C-STS on the open re-annotation: the paper's encoders (Deshpande et al. 2023, §4.1: cross-,
bi- and tri-encoder; objectives MSE, quadruplet, quadruplet + MSE) trained on the re-annotated
train split, each run's epoch kept on a dev split carved from train, then scored on the
re-annotated validation split (Tu et al. 2024's human labels, 2,620 rows; the 214 rows labelled
-1, ``validation_invalid``, are never scored).

Data: c-sts config ``reannotated-dev`` (docs/datasets.md): ``train`` 10,206 rows, ``dev`` 1,136
rows (568 sentence pairs, both conditions of a pair on one side), ``validation`` as in
``reannotated``. Nothing is chosen on validation: epochs on dev (``--eval-split dev``), the
ensembles' members and method on dev.

A candidate is one of

- ``zeroshot@MODEL``: the pretrained encoder's cosine of the two sentences, the condition ignored;
- ``zeroshot-prefix@MODEL``: the same with the condition prefixed to each sentence
  (``"<condition>: <sentence>"``);
- ``zeroshot-pair@MODEL``: each sentence paired with the condition as a text pair, the input of
  the conditional bi-encoder (C-STS §4.1) before any training;
- ``ENCODER@MODEL[,option=value...]`` (the ``semrel cv --member`` syntax, e.g.
  ``bi@minilm,epochs=2,objective=quad+mse,on_invalid=omit``): one ``semrel fit`` on
  ``reannotated-dev`` train, evaluated on dev after each epoch, the best epoch by dev Spearman
  kept, then scored on validation.

Zero-shot candidates are scored here with the trainers' encoder classes (no command scores an
untrained model); every trained step is a ``semrel`` command, printed before it runs. Ensembles
over the finished trained members: the member set whose rank average scores best on dev, then
``semrel ensemble --method rank`` and ``--method ridge`` (a stack fit on the members' dev
predictions; its dev figure is out-of-fold, 5 folds by sentence pair) over that set, each
scored on validation with ``semrel predict``.

Per run the record holds dev Spearman by epoch, the kept epoch, validation Spearman and Pearson
with 95 % intervals (:func:`semrel.metrics.correlation_intervals.correlation_intervals`: paired
bootstrap, 1,000 resamples, seed 0; Fisher z) and training seconds. Resumable: each finished
candidate is stored in ``OUT/results.json`` under a key of its settings and kept next time; a
run cut off mid-way resumes from its last complete checkpoint (``--resume last``).
``--record FILE`` writes the study's entry (:data:`KEY`) into a results file
(``benchmarks/results.json``) after each candidate; :func:`markdown` renders that entry as the
table of benchmarks/RESULTS.md. ``--publish``: :func:`publish` (``--report --publish``: the stored
study's file, nothing run). Not part of the test suite.

    nice -n 5 python benchmarks/bench_c_sts.py --group screen --record benchmarks/results.json
    python benchmarks/bench_c_sts.py --group screen --report          # the stored table
    python benchmarks/bench_c_sts.py --only zeroshot@minilm --model minilm=tiny-bert --max-steps 2
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import platform
import re
import shlex
import time
from pathlib import Path

import numpy as np

from semrel import cli
from semrel.publishing.prediction_files import Prediction, add_publish_flag, publish_problem, this_machine
from semrel.publishing.prediction_files import publish_or_exit as publish_files
from semrel.publishing.results import store

KEY = "c_sts_study"  # the study's entry in benchmarks/results.json
DATASET, CONFIG = "c-sts", "reannotated-dev"
DATA = ["--dataset", DATASET, "--config", CONFIG]
CHOOSE = ["--eval-dataset", DATASET, "--eval-config", CONFIG, "--eval-split", "dev",
          "--metric-for-best", "spearman"]
SCORED = "validation"  # the only split scored; validation_invalid never is
QUAD = "on_invalid=omit"  # the quadruplet losses drop the train pairs whose two labels tie
GROUPS = {  # named candidate lists (--group), run in this order
    "screen": ["zeroshot@minilm", "zeroshot-prefix@minilm", "zeroshot-pair@minilm",
               "bi@minilm,epochs=2", "cross@minilm,epochs=2", "tri@minilm,epochs=2",
               f"bi@minilm,epochs=2,objective=quad+mse,{QUAD}"],
    "minilm": [f"tri@minilm,epochs=2,objective=quad+mse,{QUAD}",
               f"bi@minilm,epochs=2,objective=quad,{QUAD}", "tri@minilm,epochs=2,combine=concat",
               # the paper's grid (Table 7): batch 32, 3 epochs, lr 1e-5 or 3e-5, warm-up 0.1
               "bi@minilm,epochs=3,batch_size=32,learning_rate=3e-5",
               "cross@minilm,epochs=3,batch_size=32,learning_rate=3e-5"],
    "mpnet": ["zeroshot@mpnet", "zeroshot-prefix@mpnet", "zeroshot-pair@mpnet",
              "bi@mpnet,epochs=3", "cross@mpnet,epochs=3,learning_rate=3e-5"],
}
ZERO_SHOT = {"zeroshot": "condition ignored", "zeroshot-prefix": "condition prefixed",
             "zeroshot-pair": "sentence and condition as a text pair"}
ANCHORS = [  # published figures beside ours: other labels or splits, so not comparable one to one
    ("C-STS paper: bi-encoder SimCSE-large, fine-tuned", 0.475,
     "original labels, hidden test (Deshpande et al. 2023)"),
    ("C-STS paper: cross-encoder, fine-tuned", 0.432, "original labels, hidden test"),
    ("C-STS paper: GPT-4, few-shot", 0.436, "original labels, hidden test"),
    ("Hyper-CL (ACL 2024): tri-encoder", 0.396, "original labels, hidden test"),
    ("Tu et al. 2024: SimCSE-large", 0.717, "their re-annotated validation slice"),
    ("Tu et al. 2024: QA-SimCSE-large", 0.759, "their re-annotated validation slice"),
    ("Zhang et al. 2025: models trained on this release", 0.739, "their evaluation"),
]
TARGET = 0.74
MAX_MEMBERS = 4  # the largest ensemble tried


def canonical(spec: str) -> str:
    """A candidate with its options sorted, so the same settings get the same key."""
    head, *options = spec.split(",")
    return ",".join([head, *sorted(options)])


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text)[:150]


def semrel(*argv: str) -> float:
    """Run ``semrel ARGV`` in this process (torch loads once); its seconds, or SystemExit."""
    print("$ semrel " + shlex.join(argv), flush=True)
    start = time.perf_counter()
    status = cli.main(list(argv))
    if status:
        raise SystemExit(f"semrel {argv[0]} failed with exit status {status}")
    return time.perf_counter() - start


def fit_flags(spec: str) -> tuple[str, list[str]]:
    """(model name, ``semrel fit`` flags) of ``ENCODER@MODEL[,option=value...]``, checked by
    the ``--member`` parser (a wrong option is a ParameterError naming it)."""
    from semrel.trainers.cross_validation import parse_member
    from semrel.trainers.options import OPTIONS

    _, model, _ = parse_member(spec)  # checks the spec
    head, *options = spec.split(",")
    flags = ["--encoder", head.split("@", 1)[0]]
    kinds = {o.name: o for o in OPTIONS}
    for item in options:
        name, _, value = item.partition("=")
        option = kinds[name]
        if option.type is bool:
            flags.append(option.flag if value.lower() in ("true", "1", "yes") else
                         "--no-" + option.flag[2:])
        else:
            flags += [option.flag, value]
    return model, flags


def interval_record(predictions, labels) -> dict:
    """Spearman and Pearson with their 95 % intervals (paired bootstrap / Fisher z); all None
    where they are undefined (constant predictions, as a smoke run's tiny model may give)."""
    from semrel.metrics.correlation_intervals import correlation_intervals

    try:
        found = correlation_intervals(np.asarray(predictions, dtype=np.float64),
                                      np.asarray(labels, dtype=np.float64), 0.95,
                                      n_resamples=1000, seed=0)
    except ValueError as exc:
        print(f"    correlations undefined: {exc}", flush=True)
        return dict.fromkeys(("spearman", "spearman_ci", "pearson", "pearson_ci"), None) | {
            "n": len(labels)}
    return {"spearman": found.spearman.value,
            "spearman_ci": [found.spearman.interval.low, found.spearman.interval.high],
            "pearson": found.pearson.value,
            "pearson_ci": [found.pearson.interval.low, found.pearson.interval.high],
            "n": int(found.n)}


def spearman(predictions, labels) -> float | None:
    """Spearman's rho; None where it is undefined (constant predictions)."""
    from semrel.trainers.combination import spearman as rho

    value = rho(predictions, labels)
    return value if np.isfinite(value) else None


class Study:
    """The candidates' runs in ``out``, their stored records, the data they are scored on."""

    def __init__(self, out: Path, precision: str, max_steps: int | None, models: dict[str, str],
                 eval_steps: int | None = None):
        self.out, self.precision, self.max_steps, self.models = out, precision, max_steps, models
        self.eval_steps = 1 if max_steps else eval_steps
        self.cache_file = out / "results.json"
        self.cache = json.loads(self.cache_file.read_text()) if self.cache_file.is_file() else {}
        self._data = None

    @property
    def data(self):
        if self._data is None:
            from semrel.dataset_scripts.pairs import load_pairs

            self._data = load_pairs(DATASET, CONFIG)
        return self._data

    def key(self, spec: str) -> str:
        """The stored record's key: every setting that changes it."""
        model = spec.split(",")[0].split("@", 1)[1]
        return "|".join([canonical(spec), self.precision]
                         + ([f"max_steps={self.max_steps}"] if self.max_steps else [])
                         + ([f"eval_steps={self.eval_steps}"] if self.eval_steps and not self.max_steps
                            and not spec.startswith("zeroshot") else [])
                         + ([f"model={self.models[model]}"] if model in self.models else []))

    def save(self, key: str, record: dict) -> None:
        """Adds one record to the file as it is now, written whole (a run killed while writing
        leaves the previous file)."""
        from semrel.metrics.output_files import write_whole

        self.cache[key] = record
        stored = json.loads(self.cache_file.read_text()) if self.cache_file.is_file() else {}
        self.out.mkdir(parents=True, exist_ok=True)
        write_whole(self.cache_file, json.dumps({**stored, key: record}, indent=1, sort_keys=True),
                    "results")

    def run(self, spec: str) -> dict:
        key = self.key(spec)
        if key in self.cache:
            print(f"kept: {spec} (stored in {self.cache_file})", flush=True)
            return self.cache[key]
        folder = self.out / "runs" / slug(key)
        print(f"--- {spec}", flush=True)
        record = (self.zero_shot(spec) if spec.startswith("zeroshot") else
                  self.trained(spec, folder))
        record.update(candidate=canonical(spec), key=key, folder=str(folder),
                      machine=f"{platform.node()} ({os.cpu_count()} CPUs)")
        self.save(key, record)
        print(f"    dev {fmt(record['dev'])} (epoch {record['kept_epoch']})  validation "
              f"{fmt(record['validation']['spearman'])} {fmt_ci(record['validation']['spearman_ci'])}",
              flush=True)
        return record

    def model_path(self, name: str) -> str:
        from semrel.trainers.model_ref import resolve_model_ref

        return self.models.get(name) or str(resolve_model_ref(name, parameter="--model").path)

    def zero_shot(self, spec: str) -> dict:
        """The pretrained encoder's cosine on dev and validation (see module docstring)."""
        from semrel.trainers.models import build_model

        how, model = spec.split("@", 1)
        if how not in ZERO_SHOT:
            raise SystemExit(f"unknown zero-shot candidate {spec!r}: one of "
                             f"{', '.join(f'{h}@MODEL' for h in ZERO_SHOT)}")
        import torch

        encoder = build_model("bi", self.model_path(model), conditional=how == "zeroshot-pair")
        encoder.to("cuda" if torch.cuda.is_available() else "cpu").eval()
        start = time.perf_counter()
        scored = {}
        for split in ("dev", SCORED):
            rows = self.data.splits[split]
            s1, s2, c = list(rows["sentence1"]), list(rows["sentence2"]), list(rows["condition"])
            if how == "zeroshot-prefix":
                s1, s2 = [f"{x}: {s}" for x, s in zip(c, s1, strict=True)], \
                         [f"{x}: {s}" for x, s in zip(c, s2, strict=True)]
            scores = encoder.predict(s1, s2, c if encoder.conditional else None, batch_size=32)
            scored[split] = (scores, np.asarray(rows["score"], dtype=np.float64))
        return {"kind": "zero-shot", "dev": spearman(*scored["dev"]), "dev_by_epoch": [],
                "kept_epoch": None, "validation": interval_record(*scored[SCORED]),
                "train_seconds": 0.0, "score_seconds": time.perf_counter() - start}

    def trained(self, spec: str, folder: Path) -> dict:
        """One ``semrel fit`` (resumed from its last checkpoint where one is there; a finished
        run's folder is read, not trained again), then its record."""
        from semrel.trainers.run_folder import METRICS, PREDICTIONS, load_run, read_metrics

        model, flags = fit_flags(spec)
        seconds = None
        if not (folder / METRICS).is_file():
            argv = ["fit", *DATA, "--model", self.models.get(model, model), *flags, *CHOOSE,
                    "--precision", self.precision, "--output", str(folder)]
            if self.max_steps:
                argv += ["--max-steps", str(self.max_steps)]
            if self.eval_steps:
                argv += ["--eval-steps", str(self.eval_steps)]
            if any((folder / "checkpoints").glob("checkpoint-*/trainer_state.json")):
                argv += ["--resume", "last"]
            seconds = semrel(*argv)
        else:
            print(f"kept: {folder} holds a finished run", flush=True)
        metrics = read_metrics(folder)
        run = load_run(folder, PREDICTIONS)
        if run.split != SCORED or len(run.labels) != len(self.data.splits[SCORED]):
            raise SystemExit(f"{folder}: scored {run.split} ({len(run.labels)} rows), not {SCORED}")
        selection = metrics["selection"]
        return {"kind": spec.split("@", 1)[0], "dev": selection["kept"]["spearman"],
                "dev_by_epoch": [[e["epoch"], e["spearman"]] for e in selection["curve"]],
                "kept_epoch": selection["kept"]["epoch"],
                "validation": interval_record(run.predictions, run.labels),
                "train_seconds": metrics["train_seconds"], "fit_seconds": seconds,
                "omitted_groups": metrics["n_omitted_groups"], "precision": metrics["precision"]}

    def ensembles(self, records: list[dict], build: bool = True) -> list[dict]:
        """The set of 2 to :data:`MAX_MEMBERS` finished trained runs whose rank average scores
        best on dev (ties: fewer members); its rank average and ridge stack, built, predicted on
        validation and scored (module docstring). ``build=False``: the stored ones only."""
        from semrel.trainers.combination import rank_average
        from semrel.trainers.run_folder import SELECTION, check_same_rows, load_run

        trained = [r for r in records if r["kind"] != "zero-shot"]
        if len(trained) < 2:
            return []
        dev = {r["candidate"]: load_run(r["folder"], SELECTION) for r in trained}
        check_same_rows(list(dev.values()))
        labels = next(iter(dev.values())).labels
        sets = [s for k in range(2, min(len(trained), MAX_MEMBERS) + 1)
                for s in itertools.combinations([r["candidate"] for r in trained], k)]
        scored = {s: spearman(rank_average(np.column_stack([dev[m].predictions for m in s])), labels)
                  for s in sets}
        best = max(sets, key=lambda s: (-np.inf if scored[s] is None else scored[s], -len(s)))
        by_name = {r["candidate"]: r for r in trained}
        out = []
        for method in ("rank", "ridge"):
            key = f"ensemble|{method}|" + "+".join(by_name[m]["key"] for m in best)
            if key in self.cache:
                print(f"kept: {method} ensemble of {' + '.join(best)}", flush=True)
            elif build:
                self.save(key, self.ensemble(method, [by_name[m] for m in best], key, scored[best], dev))
            if key in self.cache:
                out.append(self.cache[key])
        return out

    def ensemble(self, method: str, members: list[dict], key: str, dev_rank: float, dev) -> dict:
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        folder = self.out / "ensembles" / f"{method}-{len(members)}-{digest}"
        if folder.exists():
            import shutil

            shutil.rmtree(folder)  # no record of it: a cut-off build, made again (seconds)
        seconds = semrel("ensemble", "--method", method,
                         *[a for m in members for a in ("--member", m["folder"])],
                         "--output", str(folder / "ensemble"))
        file = folder / f"{SCORED}.json"
        seconds += semrel("predict", *DATA, "--split", SCORED, "--model", str(folder / "ensemble"),
                          "--output", str(file))
        predicted = json.loads(file.read_text())
        labels = np.asarray(self.data.splits[SCORED]["score"], dtype=np.float64)
        predictions = np.array([predicted[str(i)] for i in range(len(labels))], dtype=np.float64)
        names = [m["candidate"] for m in members]
        dev_figure = dev_rank if method == "rank" else out_of_fold_stack(
            [dev[n] for n in names], self.data.splits["dev"])
        return {"kind": "ensemble", "method": method, "candidate": f"{method} of " + " + ".join(names),
                "members": names, "dev": dev_figure, "dev_by_epoch": [], "kept_epoch": None,
                "validation": interval_record(predictions, labels), "train_seconds": 0.0,
                "build_seconds": seconds, "key": key, "folder": str(folder)}


def out_of_fold_stack(runs, dev_rows, k: int = 5) -> float:
    """Dev Spearman of a ridge stack scored only on rows it was not fit on: ``k`` folds of
    dev's sentence pairs (both conditions of a pair in one fold), each predicted by the stack
    fit on the others (:func:`semrel.trainers.stacking.fit_learned_stack`)."""
    from semrel.dataset_scripts.splits import stratified_folds
    from semrel.trainers.stacking import fit_learned_stack

    x = np.column_stack([r.predictions for r in runs])
    y = runs[0].labels
    pairs = [json.dumps(p) for p in zip(dev_rows["sentence1"], dev_rows["sentence2"], strict=True)]
    unique = sorted(set(pairs))
    fold_of = dict(zip(unique, stratified_folds(unique, None, k, salt="c-sts-stack"), strict=True))
    folds = np.array([fold_of[p] for p in pairs])
    predicted = np.empty_like(y)
    for fold in range(k):
        test = folds == fold
        ids = [str(i) for i in np.flatnonzero(~test)]
        stack = fit_learned_stack(x[~test], y[~test], learner="ridge",
                                  fit_on=[{"data": "dev", "split": f"not fold {fold}", "ids": ids}])
        predicted[test] = stack.predict(x[test])
    return spearman(predicted, y)


def fmt(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def fmt_ci(ci) -> str:
    return "" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def entry(records: list[dict], ensembles: list[dict], command: str, precision: str,
          not_run: list[str]) -> dict:
    """The study's entry of benchmarks/results.json (:func:`markdown` renders it)."""
    def rounded(value, digits=4):
        if isinstance(value, list):
            return [rounded(v, 3) for v in value]
        return None if value is None else round(value, digits)

    def row(r):
        v = r["validation"]
        return {"candidate": r["candidate"], "kind": r["kind"],
                "dev_by_epoch": [[round(e, 2), rounded(s)] for e, s in r["dev_by_epoch"]],
                "kept_epoch": r["kept_epoch"], "dev": rounded(r["dev"]),
                "validation_spearman": rounded(v["spearman"]),
                "validation_spearman_ci": rounded(v["spearman_ci"]),
                "validation_pearson": rounded(v["pearson"]),
                "validation_pearson_ci": rounded(v["pearson_ci"]),
                "train_seconds": round(r["train_seconds"]),
                **({"omitted_tied_pairs": r["omitted_groups"]} if r.get("omitted_groups") else {})}

    return {"about": "C-STS on the open re-annotation (issue 35): trained on c-sts/reannotated-dev "
                     "train (10,206 rows), epoch and ensemble chosen on its dev split (1,136 rows, "
                     "568 sentence pairs carved from train), scored on the re-annotated validation "
                     "(2,620 rows; validation_invalid never scored); benchmarks/RESULTS.md shows "
                     "the same table.",
            "machine": "2-core CPU", "precision": precision, "command": command,
            "rows": [row(r) for r in records + ensembles],
            "anchors": [{"what": a, "spearman": s, "on": on} for a, s, on in ANCHORS],
            "not_run": not_run}


def markdown(study: dict) -> str:
    """The RESULTS.md table of a results.json entry: our rows, then the published anchors."""
    head = ["candidate", "dev by epoch", "kept epoch", "dev (kept)", "validation Spearman [95 %]",
            "validation Pearson [95 %]", "training s"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in study["rows"]:
        epochs = ", ".join(f"{e:g}: {fmt(s)}" for e, s in r["dev_by_epoch"])
        kept = "—" if r["kept_epoch"] is None else f"{r['kept_epoch']:g}"
        omitted = f" ({r['omitted_tied_pairs']} tied pairs omitted)" if r.get("omitted_tied_pairs") else ""
        lines.append(f"| `{r['candidate']}`{omitted} | {epochs} | {kept} | {fmt(r['dev'])} | "
                     f"{fmt(r['validation_spearman'])} {fmt_ci(r['validation_spearman_ci'])} | "
                     f"{fmt(r['validation_pearson'])} {fmt_ci(r['validation_pearson_ci'])} | "
                     f"{r['train_seconds']:,} |")
    for a in study["anchors"]:
        lines.append(f"| {a['what']} — published, {a['on']} | | | | {a['spearman']:.3f} | | |")
    return "\n".join(lines)


def publish(ensembles: list[dict], command: str, machine: str, into: Path) -> None:
    """``--publish``: the validation file (``{"0": score, ...}``) of the ensemble best on dev (a tie: the
    rank average, built first) into ``benchmarks/predictions/c-sts/<method>-<members>/`` and results.json."""
    if not ensembles:
        raise SystemExit("--publish: no ensemble to publish (it needs 2 finished trained candidates)")
    best = max(ensembles, key=lambda r: -np.inf if r["dev"] is None else r["dev"])
    recipe = best["method"] + "-" + "+".join(m.split(",")[0].replace("@", "-") for m in best["members"])
    rho = best["validation"]["spearman"]  # None: undefined (constant predictions)
    print("published:", *publish_files([Prediction(Path(best["folder"]) / f"{SCORED}.json", DATASET, CONFIG, SCORED,
                                                   recipe, {"spearman": rho and round(rho, 4)})],
                                       command=command, machine=machine, into=into))


def model_override(text: str) -> tuple[str, str]:
    """An argparse type: ``NAME=DIR``."""
    name, sep, folder = text.partition("=")
    if not sep or not name or not folder:
        raise argparse.ArgumentTypeError(f"must be NAME=DIR (e.g. minilm=tiny-bert), not {text!r}")
    return name, folder


def study_command(groups: list[str], only: list[str], eval_steps: int | None) -> str:
    """The command that reruns the study's candidates (what an entry records)."""
    flags = [a for s in only for a in ("--only", s)] or [a for g in groups for a in ("--group", g)]
    flags += ["--eval-steps", str(eval_steps)] if eval_steps else []
    return "python benchmarks/bench_c_sts.py " + shlex.join(flags)


def main(argv=None) -> None:
    ap = cli.Parser(prog="bench_c_sts.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--group", action="append", choices=sorted(GROUPS), default=[],
                    help="named candidate lists (repeat; default: screen)")
    ap.add_argument("--only", action="append", default=[], metavar="CANDIDATE",
                    help="run only these candidates (repeat; any candidate, see the docstring)")
    ap.add_argument("--out", type=Path, default=Path("build/bench/c-sts"))
    ap.add_argument("--model", action="append", default=[], type=model_override, metavar="NAME=DIR",
                    help="use this model folder for a model name (smoke runs)")
    ap.add_argument("--precision", choices=("bf16", "fp32", "auto"), default="auto",
                    help="semrel fit --precision (auto: bf16 on a GPU, float32 on a CPU; bf16 on "
                         "a CPU only where it has AVX512-BF16 or AMX, else it is emulated, slowly)")
    ap.add_argument("--max-steps", type=cli.at_least(1), help="smoke runs: stop each fit after N "
                                                              "steps, evaluating every step")
    ap.add_argument("--eval-steps", type=cli.at_least(1),
                    help="evaluate on dev (and checkpoint) every N steps instead of each epoch: "
                         "a finer choice, and a cut-off fit loses at most N steps")
    ap.add_argument("--no-ensembles", action="store_true", help="members only")
    ap.add_argument("--report", action="store_true", help="print the stored results, run nothing")
    ap.add_argument("--record", type=Path, metavar="FILE",
                    help=f"write the study's entry ({KEY}) into this results file after each "
                         "candidate (benchmarks/results.json)")
    add_publish_flag(ap, "the validation predictions of the ensemble best on dev")
    ap.add_argument("--machine", help="the machine results.json names for --publish (default: this one)")
    args = ap.parse_args(argv)
    if args.publish and (problem := "--publish: drop --no-ensembles (an ensemble's file is published)"
                         if args.no_ensembles else publish_problem(args.publish, bool(args.max_steps or args.model))):
        ap.error(problem)
    specs = args.only or [s for g in (args.group or ["screen"]) for s in GROUPS[g]]
    for spec in specs:
        if not spec.startswith("zeroshot"):
            try:
                fit_flags(spec)
            except Exception as exc:  # ParameterError: the member syntax's own words
                ap.error(f"argument --only: {exc}")
        elif spec.split("@", 1)[0] not in ZERO_SHOT or "@" not in spec:
            ap.error(f"argument --only: {spec!r} is not one of "
                     f"{', '.join(f'{h}@MODEL' for h in ZERO_SHOT)}")
    study = Study(args.out, args.precision, args.max_steps, dict(args.model), args.eval_steps)
    command = study_command(args.group or ["screen"], args.only, args.eval_steps)
    records, not_run = [], []
    for n, spec in enumerate(specs):
        stored = study.cache.get(study.key(spec))
        if args.report:
            records += [stored] if stored else []
            not_run += [] if stored else [canonical(spec)]
            continue
        records.append(study.run(spec))
        if args.record:
            store(KEY, entry(records, [], command, args.precision, [canonical(s) for s in specs[n + 1:]]), args.record)
    ensembles = [] if args.no_ensembles else study.ensembles(records, build=not args.report)
    result = entry(records, ensembles, command, args.precision, not_run)
    if args.record:
        store(KEY, result, args.record)
    print(markdown(result))
    if args.publish:
        publish(ensembles, command, args.machine or this_machine(), args.publish)


if __name__ == "__main__":
    main()

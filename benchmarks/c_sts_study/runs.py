"""Each candidate's run (zero-shot scored here, trained through ``semrel fit``), kept in
``OUT/results.json`` under a key of its settings, and the ensembles of the trained ones."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from semrel import cli

from .candidates import (
    CHOOSE,
    CONFIG,
    DATA,
    DATASET,
    MAX_MEMBERS,
    SCORED,
    ZERO_SHOT,
    canonical,
    fit_flags,
    interval_record,
    slug,
    spearman,
)
from .tables import fmt, fmt_ci


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
            seconds = cli.run_logged(*argv, *cli.resume_flags(folder))
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
        seconds = cli.run_logged("ensemble", "--method", method,
                                 *[a for m in members for a in ("--member", m["folder"])],
                                 "--output", str(folder / "ensemble"))
        file = folder / f"{SCORED}.json"
        seconds += cli.run_logged("predict", *DATA, "--split", SCORED, "--model", str(folder / "ensemble"),
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

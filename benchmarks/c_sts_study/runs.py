"""Each candidate's run (zero-shot scored here, trained through ``semrel fit``), kept in
``OUT/results.json`` under a key of its settings (or stood for by its published files), and the
ensembles of the trained ones, made from their prediction files."""

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
from .published import SPLITS, columns, publish_member, standing, write_member_files
from .tables import fmt, fmt_ci


class Study:
    """The candidates' runs in ``out``, their stored records, the data they are scored on;
    ``publish``: the folder each trained candidate's files are published into (``reuse``: and
    where published ones stand for their runs), by ``command`` on ``machine``."""

    def __init__(self, out: Path, precision: str, max_steps: int | None, models: dict[str, str],
                 eval_steps: int | None = None, *, publish: Path | None = None, reuse: bool = False,
                 command: str = "", machine: str = ""):
        self.out, self.precision, self.max_steps, self.models = out, precision, max_steps, models
        self.eval_steps = 1 if max_steps else eval_steps
        self.publish, self.reuse, self.command, self.machine = publish, reuse, command, machine
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
        """The candidate's record: stored, else (``reuse``) stood for by its published files,
        else run; a trained one's files published (``publish``) unless they came from there."""
        key, trained = self.key(spec), not spec.startswith("zeroshot")
        if key in self.cache:
            print(f"kept: {spec} (stored in {self.cache_file})", flush=True)
            record = self.cache[key]
        elif trained and self.reuse and (record := standing(spec, key, self.publish)) is not None:
            print(f"kept: {record['files'][SPLITS[1]]} is published and stands for {spec}", flush=True)
            self.save(key, record)
        else:
            folder = self.out / "runs" / slug(key)
            print(f"--- {spec}", flush=True)
            record = self.trained(spec, folder) if trained else self.zero_shot(spec)
            record.update(candidate=canonical(spec), key=key, folder=str(folder),
                          machine=f"{platform.node()} ({os.cpu_count()} CPUs)")
            if trained:
                record["files"] = write_member_files(folder, self.data.score_range)
            self.save(key, record)
            print(f"    dev {fmt(record['dev'])} (epoch {record['kept_epoch']})  validation "
                  f"{fmt(record['validation']['spearman'])} {fmt_ci(record['validation']['spearman_ci'])}",
                  flush=True)
        if trained and "files" not in record:  # stored before its files were written
            record["files"] = write_member_files(Path(record["folder"]), self.data.score_range)
            self.save(key, record)
        if trained and self.publish is not None and record["folder"] is not None:
            publish_member(record, self.command, self.machine, self.publish)
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

    def labels(self, split: str) -> np.ndarray:
        """The split's labels on the scale ``semrel fit`` records them (score range to [0, 1])."""
        from semrel.trainers.data import scale_scores

        return scale_scores(np.asarray(self.data.splits[split]["score"], dtype=np.float64),
                            self.data.score_range, where=f"{DATASET}/{CONFIG}/{split}").astype(np.float64)

    def ensembles(self, records: list[dict], build: bool = True) -> list[dict]:
        """The set of 2 to :data:`MAX_MEMBERS` finished trained runs whose rank average scores
        best on dev (ties: fewer members); its rank average and ridge stack, made from the members'
        prediction files and scored on validation (module docstring). ``build=False``: the
        stored ones only."""
        from semrel.trainers.combination import rank_average

        trained = [r for r in records if r["kind"] != "zero-shot"]
        if len(trained) < 2:
            return []
        rows = {split: len(self.data.splits[split]) for split in SPLITS}
        scores = {r["candidate"]: columns(r, self.data.score_range, rows) for r in trained}
        dev = self.labels("dev")
        sets = [s for k in range(2, min(len(trained), MAX_MEMBERS) + 1)
                for s in itertools.combinations([r["candidate"] for r in trained], k)]
        scored = {s: spearman(rank_average(np.column_stack([scores[m]["dev"] for m in s])), dev)
                  for s in sets}
        best = max(sets, key=lambda s: (-np.inf if scored[s] is None else scored[s], -len(s)))
        by_name = {r["candidate"]: r for r in trained}
        out = []
        for method in ("rank", "ridge"):
            key = f"ensemble|{method}|" + "+".join(by_name[m]["key"] for m in best)
            if key in self.cache:
                print(f"kept: {method} ensemble of {' + '.join(best)}", flush=True)
            elif build:
                self.save(key, self.ensemble(method, best, key, scored[best], scores, dev))
            if key in self.cache:
                out.append(self.cache[key])
        return out

    def ensemble(self, method: str, names: tuple[str, ...], key: str, dev_rank: float, scores: dict,
                 dev: np.ndarray) -> dict:
        """The members' validation scores combined as ``semrel ensemble --method METHOD`` over
        their runs combines them: ``rank``, each member's quantile among its own validation
        scores, averaged; ``ridge``, a ridge stack fit on their dev scores and the ``dev`` labels. Written as
        ``validation.json`` in the ensemble's folder, on the dataset's scale as ``semrel predict``
        writes it."""
        from semrel.trainers.combination import rank_average
        from semrel.trainers.data import unscale
        from semrel.trainers.prediction import write_submission
        from semrel.trainers.stacking import fit_learned_stack

        start = time.perf_counter()
        dev_x = np.column_stack([scores[n]["dev"] for n in names])
        x = np.column_stack([scores[n][SCORED] for n in names])
        if method == "rank":
            predictions, dev_figure = rank_average(x, reference=list(x.T)), dev_rank
        else:
            fit_on = [{"data": f"{DATASET}/{CONFIG}", "split": "dev", "ids": [str(i) for i in range(len(dev_x))],
                       "global_ids": False}]
            stack = fit_learned_stack(dev_x, dev, learner=method, fit_on=fit_on)
            predictions = stack.predict(x)
            dev_figure = out_of_fold_stack(dev_x, dev, self.data.splits["dev"])
        folder = self.out / "ensembles" / f"{method}-{len(names)}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
        write_submission(unscale(predictions, self.data.score_range), folder / f"{SCORED}.json")
        labels = np.asarray(self.data.splits[SCORED]["score"], dtype=np.float64)
        print(f"    {method} of {' + '.join(names)}: {folder / f'{SCORED}.json'}", flush=True)
        return {"kind": "ensemble", "method": method, "candidate": f"{method} of " + " + ".join(names),
                "members": list(names), "dev": dev_figure, "dev_by_epoch": [], "kept_epoch": None,
                "validation": interval_record(predictions, labels), "train_seconds": 0.0,
                "build_seconds": time.perf_counter() - start, "key": key, "folder": str(folder)}


def out_of_fold_stack(x: np.ndarray, y: np.ndarray, dev_rows, k: int = 5) -> float:
    """Dev Spearman of a ridge stack of the members' dev scores ``x`` scored only on rows it was
    not fit on: ``k`` folds of dev's sentence pairs (both conditions of a pair in one fold), each
    predicted by the stack fit on the others (:func:`semrel.trainers.stacking.fit_learned_stack`)."""
    from semrel.dataset_scripts.splits import stratified_folds
    from semrel.trainers.stacking import fit_learned_stack

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

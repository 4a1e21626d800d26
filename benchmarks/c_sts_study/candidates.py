"""The study's candidates: the named lists (``--group``), the zero-shot kinds, a trained
candidate's ``semrel fit`` flags, and the figures each is scored by."""

from __future__ import annotations

import re

import numpy as np

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
MAX_MEMBERS = 4  # the largest ensemble tried


def canonical(spec: str) -> str:
    """A candidate with its options sorted, so the same settings get the same key."""
    head, *options = spec.split(",")
    return ",".join([head, *sorted(options)])


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text)[:150]


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

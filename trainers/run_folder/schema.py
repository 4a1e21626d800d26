"""What each JSON file of a run or an ensemble folder holds: one small declared schema per file
(its keys, which are required, what each value must be, rules across keys), checked whenever the
file is read (:func:`~trainers.run_folder.files.read_checked`).

A check answers the first fault it finds as the end of a sentence that starts with the file's
name, or ``None`` when there is none::

    has no 'kind'; it must be one of cross, bi, tri
    has max_length 'abc'; it must be an integer >= 1
    has an unknown key 'pooler'; its keys are kind, pooling, conditional, max_length, combine
    has 15 predictions for 16 ids; ids, predictions, labels, ... hold one entry per row

A nested key is named by its path (``stack.weights``, ``learned.fit_on[0].ids``). What every
earlier semrel wrote is valid: keys it no longer writes stay known (``n_skipped_ties``) and keys
added since are optional. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..kinds import kinds
from ..options import (
    CV_FAMILIES,
    ENCODER_KINDS,
    ENSEMBLE_METHODS,
    OPTIONS,
    POOLINGS,
    STACK_FEATURES,
    STACK_LEARNERS,
    TRI_COMBINES,
)

Fault = str | None  # the end of "<file> ...", or None


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Rule:
    """What a value must be: ``says`` in words, ``fault(value, where)`` the first fault of a
    value at ``where`` (its key path)."""

    says: str
    fault: Callable[[object, str], Fault]

    def __call__(self, value, where: str) -> Fault:
        return self.fault(value, where)


def _wrong(value, where: str, says: str) -> str:
    return f"has {where} {_short(value)}; it must be {says}"


def value(test: Callable[[object], bool], says: str) -> Rule:
    """A value that passes ``test``."""
    return Rule(says, lambda v, where: None if test(v) else _wrong(v, where, says))


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_integer(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


STRING = value(lambda v: isinstance(v, str), "a string")
NUMBER = value(_is_number, "a number")
BOOLEAN = value(lambda v: isinstance(v, bool), "true or false")
COUNT = value(lambda v: _is_integer(v) and v >= 0, "an integer >= 0")
ANY = value(lambda v: True, "any JSON value")


def one_of(values) -> Rule:
    return value(lambda v: isinstance(v, str) and v in values, f"one of {', '.join(values)}")


def nullable(rule: Rule) -> Rule:
    """``null`` or what ``rule`` takes (a fault inside the value, e.g. of a list's item, is
    that fault)."""
    says = f"null or {rule.says}"

    def fault(v, where):
        found = None if v is None else rule(v, where)
        return _wrong(v, where, says) if found and found.startswith(f"has {where} ") else found
    return Rule(says, fault)


def list_of(item: Rule, says: str | None = None, *, length: int | None = None,
            least: int = 0) -> Rule:
    """A list of values that ``item`` takes (``length`` of them, or at least ``least``); an item's
    fault is named by its index."""
    says = says or f"a list of {item.says}"

    def fault(v, where):
        if not isinstance(v, list) or (length is not None and len(v) != length) or len(v) < least:
            return _wrong(v, where, says)
        for i, x in enumerate(v):
            found = item(x, f"{where}[{i}]")
            if found:
                return found
        return None
    return Rule(says, fault)


NUMBERS = list_of(NUMBER, "a list of numbers")
RANGE = list_of(NUMBER, "two numbers [lo, hi]", length=2)


def mapping(item: Rule, says: str) -> Rule:
    """An object whose every value ``item`` takes."""
    def fault(v, where):
        if not isinstance(v, dict):
            return _wrong(v, where, says)
        for key, x in v.items():
            found = item(x, f"{where}.{key}")
            if found:
                return found
        return None
    return Rule(says, fault)


@dataclass(frozen=True)
class Schema:
    """A JSON object: ``fields`` (key -> its rule), the ``required`` keys, other keys refused
    unless ``open`` (a file another library writes); ``check``: rules across keys, run once each
    key passed (``check(record, where)`` -> fault)."""

    fields: dict[str, Rule]
    required: tuple[str, ...] = ()
    says: str = "an object"
    open: bool = False
    check: Callable[[dict, str], Fault] | None = None
    rule: Rule = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "rule", Rule(self.says, self.fault))

    def fault(self, record, where: str = "") -> Fault:
        if not isinstance(record, dict):
            return _wrong(record, where, self.says)
        prefix = f"{where}." if where else ""
        for key in self.required:
            if key not in record:
                return f"has no {prefix + key!r}; it must be {self.fields[key].says}"
        for key, rule in self.fields.items():
            if key in record:
                found = rule(record[key], prefix + key)
                if found:
                    return found
        if not self.open:
            for key in record:
                if key not in self.fields:
                    return (f"has an unknown key {prefix + key!r}; its keys are "
                            f"{', '.join(self.fields)}")
        return self.check(record, where) if self.check else None


def _option_rule(default) -> Rule:
    if isinstance(default, bool):
        return BOOLEAN
    if isinstance(default, int):
        return value(_is_integer, "an integer")
    return NUMBER if isinstance(default, float) else STRING


# the options a run records (trainers.arguments.recorded_options): every option of OPTIONS by its
# type; other TrainingArguments set away from their defaults under their own names
OPTIONS_SCHEMA = Schema({o.name: _option_rule(o.default) for o in OPTIONS}, open=True,
                        says="an object of the run's options")

# semrel_encoder.json: the model's kind and the options its class takes (PairEncoder.options)
ENCODER_KEYS = {"cross": ("kind", "conditional", "max_length", "prompt"),
                "bi": ("kind", "pooling", "conditional", "max_length", "prompt"),
                "tri": ("kind", "pooling", "conditional", "max_length", "combine", "prompt")}


def _encoder_keys(record: dict, where: str) -> Fault:
    keys = ENCODER_KEYS[record["kind"]]
    other = next((k for k in record if k not in keys), None)
    return None if other is None else (f"has an unknown key {other!r} for a {record['kind']}-"
                                       f"encoder; its keys are {', '.join(keys)}")


ENCODER_SCHEMA = Schema({
    "kind": one_of(ENCODER_KINDS),
    "pooling": one_of(POOLINGS),
    "conditional": BOOLEAN,
    "max_length": value(lambda v: _is_integer(v) and v >= 1, "an integer >= 1"),
    "combine": one_of(TRI_COMBINES),
    "prompt": STRING,
}, required=("kind",), check=_encoder_keys)

FIGURE = nullable(NUMBER)
FIGURES = mapping(FIGURE, "an object of figures (numbers or null)")
INTERVAL = nullable(list_of(NUMBER, "two numbers [low, high]", length=2))


def model_kind(member: bool = False) -> Rule:  # a name of trainers.kinds (member: one a member may be)
    def fault(v, where):
        known = [name for name, kind in kinds().items() if not member or kind.member_words]
        return None if isinstance(v, str) and v in known else _wrong(v, where, f"one of {', '.join(known)}")
    return Rule("one of the model kinds", fault)


# metrics.json's start_model: trainers.model_ref.ModelRef.record (Hub id and commit of a Hub model)
START_MODEL_SCHEMA = Schema({"spec": STRING, "kind": model_kind(), "hub_id": nullable(STRING),
                             "revision": nullable(STRING)}, required=("spec", "kind"))

# metrics.json: trainers.fitting.FitResult as a record; data and score_range are what readers use
METRICS_SCHEMA = Schema({
    "output_dir": STRING,
    "eval_split": nullable(STRING),
    "pearson": FIGURE,
    "spearman": FIGURE,
    "mse": FIGURE,
    "per_source": FIGURES,
    "per_language": FIGURES,
    "train_pairs": COUNT,
    "train_seconds": NUMBER,
    "pairs_per_second": NUMBER,
    "n_omitted_groups": COUNT,
    "n_skipped_ties": COUNT,  # n_omitted_groups' earlier name
    "data": STRING,
    "score_range": RANGE,
    "precision": STRING,
    "epoch_seconds": NUMBERS,
    "options": OPTIONS_SCHEMA.rule,
    "selection": Schema({}, open=True).rule,
    "spearman_ci": INTERVAL,
    "pearson_ci": INTERVAL,
    "start_model": START_MODEL_SCHEMA.rule,
}, required=("data", "score_range"))

ROWS = ("ids", "predictions", "labels", "sources", "sentence1", "sentence2")  # one entry per row


def _one_per_row(record: dict, where: str) -> Fault:
    n = len(record["ids"])
    for key in ROWS[1:]:
        if isinstance(record.get(key), list) and len(record[key]) != n:
            return (f"has {len(record[key])} {key} for {n} ids; {', '.join(ROWS)} hold one entry "
                    "per row")
    return None


# eval_predictions.json, selection_predictions.json (trainers.run_folder.predictions)
PREDICTIONS_SCHEMA = Schema({
    "data": STRING,
    "split": STRING,
    "score_range": RANGE,
    "encoder": one_of(ENCODER_KINDS),
    "conditional": BOOLEAN,
    "ids": list_of(value(lambda v: isinstance(v, str) or _is_integer(v), "a string or an "
                         "integer"), "a list of row ids (strings or integers)"),
    "predictions": NUMBERS,
    "labels": NUMBERS,
    "sources": nullable(list_of(nullable(STRING), "a list of sources (strings or null)")),
    "sentence1": list_of(STRING, "a list of strings"),
    "sentence2": list_of(STRING, "a list of strings"),
}, required=("data", "split", "score_range", "encoder", "conditional", "ids", "predictions",
             "labels"), check=_one_per_row)

# checkpoints/semrel_run.json: the run's fingerprint (trainers.run_folder.output); a CV's names
# its family; `incomplete` while the run has not finished
FINGERPRINT_SCHEMA = Schema({
    "cv": one_of(tuple(CV_FAMILIES)),
    "data": STRING,
    "model": STRING,
    "options": OPTIONS_SCHEMA.rule,
    "eval_data": STRING,
    "incomplete": BOOLEAN,
}, required=("data", "model", "options"))

# a Trainer checkpoint's trainer_state.json (transformers' file: only what semrel reads)
TRAINER_STATE_SCHEMA = Schema({"global_step": COUNT}, required=("global_step",), open=True)

# model.safetensors.index.json (transformers' file: only what semrel reads)
SAFETENSORS_INDEX_SCHEMA = Schema({"weight_map": mapping(STRING, "an object of tensor -> shard file")},
                                  required=("weight_map",), open=True)

_STACK = Schema({"weights": NUMBERS, "intercept": NUMBER, "n_rows": COUNT},
                required=("weights", "intercept", "n_rows"), says="an object (weights, "
                "intercept, n_rows)")
_STATES = {"ridge": Schema({"coef": NUMBERS, "intercept": NUMBER, "alpha": NUMBER},
                           required=("coef", "intercept", "alpha")),
           "gbm": Schema({"model": STRING, "params": Schema({}, open=True).rule},
                         required=("model",))}
_FIT_ROWS = Schema({"data": STRING, "split": STRING, "ids": list_of(STRING, "a list of strings"),
                    "global_ids": BOOLEAN}, required=("data", "split", "ids"),
                   says="an object (data, split, ids)")


def _char_ridge_sizes(record: dict, where: str) -> Fault:
    n = len(record["ngrams"])
    if len(record["idf"]) != n or len(record["coef"]) != 2 * n + 2:
        return (f"has {n} {where}.ngrams, {len(record['idf'])} idf and {len(record['coef'])} coef; "
                "one idf per n-gram and 2 × n-grams + 2 coefficients (u∘v, |u − v|, cosine, Dice)")
    return None


# trainers.lexical.CharNgramRidge.to_json, and the training pairs it was fit on
_CHAR_RIDGE = Schema({"data": STRING, "split": STRING, "pairs": COUNT,
                      "ngrams": list_of(STRING, "a list of strings"), "idf": NUMBERS,
                      "coef": NUMBERS, "intercept": NUMBER},
                     required=("data", "split", "pairs", "ngrams", "idf", "coef", "intercept"),
                     says="an object (data, split, pairs, ngrams, idf, coef, intercept)",
                     check=_char_ridge_sizes)


def _learned_state(record: dict, where: str) -> Fault:
    if ("char-ridge" in record["features"]) != ("char_ridge" in record):
        return (f"has {where}.features {record['features']} and "
                f"{'a' if 'char_ridge' in record else 'no'} {where}.char_ridge; the char-ridge "
                "feature and its fitted model go together")
    return _STATES[record["learner"]].fault(record["state"], f"{where}.state")


_LEARNED = Schema({
    "learner": one_of(STACK_LEARNERS),
    "features": list_of(one_of(STACK_FEATURES), f"a list of features ({', '.join(STACK_FEATURES)})"),
    "n_members": value(lambda v: _is_integer(v) and v >= 1, "an integer >= 1"),
    "state": Schema({}, open=True).rule,
    "fit_on": list_of(_FIT_ROWS.rule, "a list of the rows it was fit on"),
    "char_ridge": _CHAR_RIDGE.rule,
}, required=("learner", "features", "n_members", "state", "fit_on"),
    says="an object (learner, features, n_members, state, fit_on)", check=_learned_state)


def _ensemble_parts(record: dict, where: str) -> Fault:
    """The parts a method needs, one weight and reference per member."""
    method, k = record["method"], len(record["members"])
    needs = {"stack": "stack", "ridge": "learned", "gbm": "learned"}.get(method)
    if needs and record.get(needs) is None:
        return f"has method {method!r} and no {needs}; a {method} ensemble records its {needs}"
    learned = record.get("learned")
    if learned is not None and learned["learner"] != method:
        return f"has method {method!r} and a learned {learned['learner']!r} stack"
    per_member = {"weights": record.get("weights"), "reference": record.get("reference"),
                  "stack.weights": (record.get("stack") or {}).get("weights")}
    per_member["models"] = record.get("models")
    counts = {key: len(items) for key, items in per_member.items() if items is not None}
    if learned is not None:
        counts["learned.n_members"] = learned["n_members"]
    for key, n in counts.items():
        if n != k:
            return f"has {n} {key} for {k} members; one per member"
    return None


MEMBER_SOURCES = ("packaged", "hub", "folder")  # a member semrel did not train: how the folder holds it


def _member_source(record: dict, where: str) -> Fault:
    hub = record["source"] == "hub"
    if hub != (record.get("hub_id") is not None) or (hub and record.get("revision") is None):
        return (f"has {where}.source {record['source']!r} with hub_id {record.get('hub_id')!r} and "
                f"revision {record.get('revision')!r}; a Hub member (and only one) records both")
    return None


# a member semrel did not train (trainers.ensemble.Ensemble.models): the model argument given, its
# kind, and its source: a packaged name or a Hub model at a commit (the member entry names it, resolved
# again on loading) or a folder (the member entry is its copy in the ensemble folder)
_MEMBER_MODEL = Schema({"spec": STRING, "kind": model_kind(member=True), "source": one_of(MEMBER_SOURCES),
                        "hub_id": nullable(STRING), "revision": nullable(STRING)},
                       required=("spec", "kind", "source"), says="an object (spec, kind, source)",
                       check=_member_source)

# semrel_ensemble.json (trainers.ensemble.Ensemble.save); `models`: per member, null for a run of
# `semrel fit`, else what the model is (files before it have none: every member a fit run)
ENSEMBLE_SCHEMA = Schema({
    "method": one_of(ENSEMBLE_METHODS),
    "members": list_of(STRING, "a list of member folders (strings), at least one", least=1),
    "score_range": RANGE,
    "conditional": BOOLEAN,
    "weights": nullable(NUMBERS),
    "stack": nullable(_STACK.rule),
    "reference": nullable(list_of(NUMBERS, "a list of each member's reference scores")),
    "learned": _LEARNED.rule,
    "models": list_of(nullable(_MEMBER_MODEL.rule), "a list of null (a fit run) or a member model "
                      "(spec, kind, source) per member"),
}, required=("method", "members", "score_range", "conditional", "weights"),
    check=_ensemble_parts)


# seen_pairs.json (trainers.run_folder.seen): the pairs a run trained and chose its checkpoint on
PAIR_HASH = value(lambda v: isinstance(v, str) and len(v) == 16 and all(c in "0123456789abcdef" for c in v),
                  "16 lower-case hex digits")
_SEEN_PART = Schema({"role": one_of(("train", "selection")), "data": STRING, "split": STRING,
                     "pairs": list_of(PAIR_HASH, "a list of pair hashes")},
                    required=("role", "data", "split", "pairs"),
                    says="an object (role, data, split, pairs)")
SEEN_SCHEMA = Schema({"hash": STRING, "parts": list_of(_SEEN_PART.rule, "a list of the splits seen")},
                     required=("hash", "parts"))

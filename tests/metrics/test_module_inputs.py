"""Every metric module through ``evaluate.load``: bad inputs are one-line ValueErrors naming the module,
the input and the index (never a TypeError/KeyError/IndexError/OverflowError from inside evaluate or
pyarrow, never a value silently cast), and a failed call leaves the module as it was.

The cases are a table and a generated sweep: for every module of
``semrel.metrics.names()`` and each of its configs, every input left out, None, not a list or of
another length, and every option with a value of the wrong type.
"""

from __future__ import annotations

import inspect
import os
import re
import uuid

import evaluate
import pytest

from semrel.metrics import module_path, names

T2 = [["a", "b", "c", "d"], ["a", "b", "c", "e"]]
T8 = [["a", "b", "c", "d"]] * 4 + [["a", "b", "c", "e"]] * 4
W8 = ["d", "c", "d", "d", "e", "e", "c", "e"]

# (module, config) -> inputs of a valid call (small: each call takes milliseconds)
VALID = {
    ("bws_scores", None): dict(tuples=T2, best=["a", "b"], worst=["d", "a"]),
    ("split_half_reliability", None): dict(tuples=T8, best=["a"] * 8, worst=W8),
    ("split_half_reliability", "ratings"): dict(items=["x", "x", "y", "y", "z", "z"], ratings=[1, 2, 3, 4, 5, 5]),
    ("annotator_agreement", None): dict(items=["a", "a", "b", "b", "c", "c"], annotators=["x", "y"] * 3,
                                        ratings=[1, 2, 4, 4, 5, 6]),
    ("lexical_overlap", None): dict(sentence1=["a cat sat", "dogs bark", "a b"],
                                    sentence2=["a cat ran", "birds sing", "a b"], references=[0.6, 0.1, 1.0]),
    ("mse_lower_bound", None): dict(annotations=[[1, 2, 2, 3], [0, 0, 1, 1]], predictions=[2.0, 0.5]),
}
OPTIONS = {"split_half_reliability": dict(trials=10)}  # keeps the valid calls quick
OPTIONAL = {("mse_lower_bound", None): {"predictions"}}  # may be left out: the bound alone
_LOADED: dict = {}


def module(name, config=None):
    """One loaded module per (name, config) for the whole file: every case after the first runs
    on a module that has already failed, so state left by a failure would show."""
    if (name, config) not in _LOADED:
        args = (module_path(name),) + ((config,) if config else ())
        _LOADED[name, config] = evaluate.load(*args, experiment_id=uuid.uuid4().hex)
    return _LOADED[name, config]


def test_the_table_covers_the_modules():
    """The five modules of the table (the correlation modules have theirs in
    test_correlation_modules.py); a new module belongs in VALID too, and its class takes
    ``StrictInputs`` first: see metrics/module_inputs.py."""
    assert {name for name, _ in VALID} == {"annotator_agreement", "bws_scores", "lexical_overlap",
                                           "mse_lower_bound", "split_half_reliability"} <= set(names())


# --- the table of cases -------------------------------------------------------------------------

BWS = ("bws_scores", None)
SHR, RATINGS = ("split_half_reliability", None), ("split_half_reliability", "ratings")
AGREE, LEX, MSE = ("annotator_agreement", None), ("lexical_overlap", None), ("mse_lower_bound", None)

CASES = [  # (id, module, inputs and options, words of the ValueError)
    ("position 1.5 is not truncated", BWS, dict(tuples=T2, best=[1.5, 2], worst=[4, 1], choice="position"),
     "bws_scores: best[0] is 1.5 (float); best takes int or str"),
    ("float ids are not truncated", BWS, dict(tuples=[[1.5, 2.5, 3.5, 4.5]], best=[1.5], worst=[2.5]),
     "bws_scores: tuples[0][0] is 1.5 (float); tuples takes lists of int or lists of str"),
    ("best left out", BWS, dict(tuples=T2, worst=["d", "a"]),
     "bws_scores: best left out or None; compute needs tuples, best, worst, one value per row"),
    ("worst None", BWS, dict(tuples=T2, best=["a", "b"], worst=None), "bws_scores: worst left out or None"),
    ("tuples None", BWS, dict(tuples=None, best=["a", "b"], worst=["d", "a"]), "bws_scores: tuples left out or None"),
    ("nothing given", BWS, dict(), "bws_scores: no inputs given; compute needs tuples, best, worst"),
    ("empty lists", BWS, dict(tuples=[], best=[], worst=[]), "bws_scores: tuples, best, worst are empty: no rows"),
    ("id of 2**70", BWS, dict(tuples=[[1, 2, 3, 2**70]], best=[1], worst=[2]),
     "bws_scores: tuples[0][3] is 1180591620717411303424, beyond the int64 range"),
    ("mixed str/int ids in a tuple", BWS, dict(tuples=[["a", 2, "c", "d"]], best=["a"], worst=["d"]),
     "bws_scores: tuples[0][1] is 2 (int) but tuples[0][0] is 'a' (str): use one type per input"),
    ("mixed str/int ids in best", BWS, dict(tuples=T2, best=["a", 2], worst=["d", "a"]),
     "bws_scores: best[1] is 2 (int) but best[0] is 'a' (str)"),
    ("int tuples, str choices", BWS, dict(tuples=[[1, 2, 3, 4]], best=["1"], worst=["2"]),
     "bws_scores: inputs of types tuples lists of int, best str, worst str do not go together"),
    ("best a string", BWS, dict(tuples=T2, best="ab", worst=["d", "a"]),
     "bws_scores: best must be a list with one value per row, got str 'ab'"),
    ("lengths differ", BWS, dict(tuples=T2, best=["a"], worst=["d", "a"]),
     "bws_scores: inputs of different lengths (tuples 2, best 1, worst 2)"),
    ("a bool among ids", BWS, dict(tuples=T2, best=[True, False], worst=["d", "a"]),
     "bws_scores: best[0] is True (bool); best takes int or str"),
    ("trials '10'", SHR, dict(VALID[SHR], trials="10"), "trials must be an integer >= 1, not '10'"),
    ("trials 2.5", SHR, dict(VALID[SHR], trials=2.5), "trials must be an integer >= 1, not 2.5"),
    ("trials 0", SHR, dict(VALID[SHR], trials=0), "trials must be an integer >= 1, not 0"),
    ("seed -1", SHR, dict(VALID[SHR], seed=-1), "seed must be an integer >= 0 or None (fresh randomness), not -1"),
    ("seed 1.5", RATINGS, dict(VALID[RATINGS], seed=1.5), "seed must be an integer >= 0 or None"),
    ("spearman_brown 'yes'", SHR, dict(VALID[SHR], spearman_brown="yes"), "spearman_brown must be True or False"),
    ("a word for a rating", RATINGS, dict(items=["x", "x", "y", "y"], ratings=[1, "high", 3, 4]),
     "split_half_reliability: ratings[1] is 'high' (str); ratings takes numbers"),
    ("a word as the first rating", AGREE, dict(items=["a", "a"], annotators=["x", "y"], ratings=["hi", 1]),
     "annotator_agreement: ratings[0] is 'hi' (str); ratings takes numbers"),
    ("int items for ratings", RATINGS, dict(items=[1, 1, 2, 2], ratings=[1, 2, 3, 4]),
     "split_half_reliability: items[0] is 1 (int); items takes str"),
    ("annotators None", AGREE, dict(items=["a", "a"], annotators=None, ratings=[1, 2]),
     "annotator_agreement: annotators left out or None"),
    ("empty ratings", AGREE, dict(items=[], annotators=[], ratings=[]), "annotator_agreement: items, annotators, "
     "ratings are empty"),
    ("references left out", LEX, dict(sentence1=["a"], sentence2=["b"]), "lexical_overlap: references left out"),
    ("a word for a reference", LEX, dict(sentence1=["a", "b"], sentence2=["b", "c"], references=[1, "x"]),
     "lexical_overlap: references[1] is 'x' (str); references takes numbers"),
    ("a number for a sentence", LEX, dict(sentence1=["a", 2], sentence2=["b", "c"], references=[1, 0]),
     "lexical_overlap: sentence1[1] is 2 (int); sentence1 takes str"),
    ("annotations left out", MSE, dict(predictions=[1.0]), "mse_lower_bound: annotations left out or None"),
    ("a word among annotations", MSE, dict(annotations=[[1, 2, "x", 3]]),
     "mse_lower_bound: annotations[0][2] is 'x' (str); annotations takes numbers"),
    ("an int beyond 2**53 as a float", MSE, dict(annotations=[[1, 2, 2**60 + 1, 3]]),
     "mse_lower_bound: annotations[0][2] cannot be a float64 exactly"),
    ("the README's too_few='skip' of old", MSE, dict(VALID[MSE], too_few="skip"),
     "mse_lower_bound: unknown argument(s) 'too_few'; inputs are annotations, predictions, options model, "
     "on_invalid"),
    ("a misspelt option", SHR, dict(VALID[SHR], trails=10), "split_half_reliability: unknown argument(s) 'trails'"),
]


@pytest.mark.parametrize("which, kwargs, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_value_error(which, kwargs, words):
    with pytest.raises(ValueError, match=re.escape(words)) as info:
        module(*which).compute(**kwargs)
    assert type(info.value).__name__ in ("InputError", "ValueError", "DataValidationError")
    assert "\n" not in str(info.value)


def test_positions_and_ids_keep_their_values():
    """What evaluate's features would cast (an int64 beyond float precision, positions) comes through
    unchanged or is refused above."""
    bws = module(*BWS)
    out = bws.compute(tuples=[[10, 20, 30, 2**40]], best=[2**40], worst=[10])
    assert out["items"] == [10, 20, 30, 2**40] and out["score"] == [-1.0, 0.0, 0.0, 1.0]
    out = bws.compute(tuples=[["a", "b", "c", "d"]], best=[1], worst=[4], choice="position")
    assert out["score_01"] == [1.0, 0.5, 0.5, 0.0]


# --- state after a failure ----------------------------------------------------------------------

def test_a_failed_call_leaves_the_module_as_it_was():
    """int ids, then failures of every kind (refused input, refused option, bad rows inside the
    computation), then str ids and int ids again: each valid call equals a fresh module's."""
    bws = evaluate.load(module_path("bws_scores"), experiment_id=uuid.uuid4().hex)
    fresh = evaluate.load(module_path("bws_scores"), experiment_id=uuid.uuid4().hex)
    ints = dict(tuples=[[1, 2, 3, 4], [1, 2, 3, 5]], best=[1, 2], worst=[4, 1])
    strs = dict(VALID[BWS])
    expected = {"ints": fresh.compute(**ints), "strs": fresh.compute(**strs)}
    assert bws.compute(**ints) == expected["ints"]
    failures = [dict(tuples=[[1.5, 2.5, 3.5, 4.5]], best=[1.5], worst=[2.5]),  # float ids
                dict(strs, choice="rank"),  # an option, refused inside _compute
                dict(tuples=[["a", "b", "c", "d"]], best=["a"], worst=["a"]),  # a bad row, inside _compute
                dict(tuples=[[1, 2, 3, 4]], best=["a"], worst=[2])]  # mixed types
    for bad in failures:
        with pytest.raises(ValueError):
            bws.compute(**bad)
        assert bws.compute(**strs) == expected["strs"]
        with pytest.raises(ValueError):
            bws.compute(**bad)
        assert bws.compute(**ints) == expected["ints"]


STICKY = [  # (module, config, a valid call, a valid call of other input types, failing calls)
    ("split_half_reliability", None, dict(tuples=[[1, 2, 3, 4]] * 4 + [[1, 2, 3, 5]] * 4, best=[1] * 8,
                                          worst=[4, 3, 4, 4, 5, 5, 3, 5], trials=10),
     dict(VALID[SHR], trials=10), [dict(VALID[SHR], trials=2.5), dict(tuples=[[1.5, 2, 3, 4]], best=[1], worst=[2]),
                                   dict(VALID[SHR], best=["a"] * 7 + ["z"], trials=10)]),
    ("split_half_reliability", "ratings", dict(VALID[RATINGS], trials=10),
     dict(items=["x", "x", "y", "y", "z", "z"], ratings=[1.5, 2.5, 3.0, 4.0, 5.0, 5.5], trials=10),
     [dict(items=[1, 1], ratings=[1, 2]), dict(VALID[RATINGS], trials=10, seed=-1),
      dict(items=["x", "x"], ratings=[1, 2], trials=10)]),
    ("annotator_agreement", None, dict(VALID[AGREE]),
     dict(items=[1, 1, 2, 2, 3, 3], annotators=[7, 8] * 3, ratings=[1, 2, 4, 4, 5, 6]),
     [dict(items=[1.5, 1], annotators=["x", "y"], ratings=[1, 2]), dict(VALID[AGREE], on_invalid="skip"),
      dict(items=["a", "a", "b"], annotators=["x", "y", "x"], ratings=[1, 2, 3])]),
    ("lexical_overlap", None, dict(VALID[LEX]), dict(VALID[LEX], references=[3, 1, 5]),
     [dict(VALID[LEX], references=["x", 1, 2]), dict(VALID[LEX], references=[0.1, float("nan"), 0.3])]),
    ("mse_lower_bound", None, dict(VALID[MSE]), dict(annotations=[[1.5, 2, 2, 3], [0, 0, 1, 1]]),
     [dict(annotations=[[1, 2, "x", 3]]), dict(VALID[MSE], model="z"), dict(annotations=[[1, 2]])]),
]


@pytest.mark.parametrize("name, config, first, other, failures", STICKY,
                         ids=[f"{n}{f'[{c}]' if c else ''}" for n, c, *_ in STICKY])
def test_every_module_is_as_it_was_after_a_failure(name, config, first, other, failures):
    """The other four modules: a failing call between two valid calls of different input types."""
    args = (module_path(name),) + ((config,) if config else ())
    mod = evaluate.load(*args, experiment_id=uuid.uuid4().hex)
    fresh = evaluate.load(*args, experiment_id=uuid.uuid4().hex)
    expected = [fresh.compute(**first), fresh.compute(**other)]
    assert mod.compute(**first) == expected[0]
    for bad in failures:
        with pytest.raises(ValueError):
            mod.compute(**bad)
        assert mod.compute(**other) == expected[1]
        with pytest.raises(ValueError):
            mod.compute(**bad)
        assert mod.compute(**first) == expected[0]


def test_a_refused_batch_keeps_the_earlier_batches():
    bws = evaluate.load(module_path("bws_scores"), experiment_id=uuid.uuid4().hex)
    bws.add_batch(tuples=T2[:1], best=["a"], worst=["d"])
    with pytest.raises(ValueError, match=r"bws_scores: best\[0\] is 1 \(int\); best takes str as in the earlier"):
        bws.add_batch(tuples=T2[1:], best=[1], worst=[2])
    with pytest.raises(ValueError, match=r"bws_scores: best\[0\] is 1.5 \(float\)"):
        bws.compute(tuples=T2[1:], best=[1.5], worst=[2])  # compute's own batch refused: the earlier stay
    bws.add_batch(tuples=T2[1:], best=["b"], worst=["a"])
    assert bws.compute() == module(*BWS).compute(**VALID[BWS])


# evaluate's private cache state that StrictInputs._discard resets (evaluate has no public reset)
EVALUATE_STATE = ("writer", "buf_writer", "data", "selected_feature_format", "cache_file_name", "filelock",
                  "filelocks", "file_paths")


def test_the_state_a_failure_resets_is_evaluates_own():
    """An evaluate upgrade that renames or changes what _discard resets fails here, by name: a fresh
    module holds every attribute unset, add_batch opens the writer, cache file and lock, compute's
    _finalize hands the file and lock to file_paths/filelocks, and _discard removes and releases them."""
    from datasets.arrow_writer import ArrowWriter

    where = f"evaluate {evaluate.__version__} changed EvaluationModule's state that StrictInputs._discard resets"
    bws = evaluate.load(module_path("bws_scores"), experiment_id=uuid.uuid4().hex)
    assert {a: getattr(bws, a, "missing") for a in EVALUATE_STATE} == dict.fromkeys(EVALUATE_STATE), where
    bws.add_batch(**VALID[BWS])
    file, lock = bws.cache_file_name, bws.filelock
    assert isinstance(bws.writer, ArrowWriter) and os.path.isfile(file) and lock.is_locked, where
    bws._finalize()  # compute's step before _compute, where a bad row fails
    assert bws.writer is None and bws.file_paths == [file] and bws.filelocks == [lock] and lock.is_locked, where
    bws._discard()
    assert not os.path.exists(file) and not lock.is_locked, where
    assert [getattr(bws, a) for a in EVALUATE_STATE] == [None] * 6 + [[], []], where
    assert bws.compute(**VALID[BWS]) == module(*BWS).compute(**VALID[BWS])


# --- the sweep over every module --------------------------------------------------------------

def _options(name, config):
    """{option: (default)} of a module's _compute, its inputs aside."""
    mod = module(name, config)
    params = inspect.signature(mod._compute).parameters
    return {p: v.default for p, v in params.items()
            if p not in mod._feature_names() and v.kind is not v.VAR_KEYWORD}


def _wrong_values(default):
    if isinstance(default, bool):
        return ["yes", 1]
    if isinstance(default, int):
        return ["10", 2.5, -1]
    if isinstance(default, str):
        return [1, None, "nonsense", ["item"]]
    return ["nonsense"]


def _sweep():
    cases = []
    for (name, config), inputs in VALID.items():
        label = name + (f"[{config}]" if config else "")
        for key in inputs:
            optional = key in OPTIONAL.get((name, config), set())
            left_out = {k: v for k, v in inputs.items() if k != key}
            cases.append((f"{label} {key} left out", name, config, left_out,
                          None if optional else f"{name}: {key} left out or None"))
            cases.append((f"{label} {key} None", name, config, dict(inputs, **{key: None}),
                          None if optional else f"{name}: {key} left out or None"))
            cases.append((f"{label} {key} a number", name, config, dict(inputs, **{key: 3}),
                          f"{name}: {key} must be a list with one value per row, got int"))
            cases.append((f"{label} {key} one row short", name, config, dict(inputs, **{key: inputs[key][:-1]}),
                          f"{name}: inputs of different lengths"))
            cases.append((f"{label} {key} of dicts", name, config, dict(inputs, **{key: [{}] * len(inputs[key])}),
                          f"{name}: {key}[0] is {{}} (dict); {key} takes"))
    return cases


SWEEP = _sweep()


@pytest.mark.parametrize("name, config, kwargs, words", [c[1:] for c in SWEEP], ids=[c[0] for c in SWEEP])
def test_sweep_every_input(name, config, kwargs, words):
    mod = module(name, config)
    options = OPTIONS.get(name, {})
    if words is None:
        assert isinstance(mod.compute(**kwargs, **options), dict)
        return
    with pytest.raises(ValueError, match=re.escape(words)):
        mod.compute(**kwargs, **options)


OPTION_SWEEP = [(f"{n}{f'[{c}]' if c else ''} {option}={value!r}", n, c, option, value)
                for (n, c) in VALID for option, default in _options(n, c).items()
                for value in _wrong_values(default)]


@pytest.mark.parametrize("name, config, option, value", [c[1:] for c in OPTION_SWEEP],
                         ids=[c[0] for c in OPTION_SWEEP])
def test_sweep_every_option(name, config, option, value):
    mod = module(name, config)
    kwargs = dict(VALID[name, config], **dict(OPTIONS.get(name, {}), **{option: value}))
    with pytest.raises(ValueError, match=re.escape(option)) as info:
        mod.compute(**kwargs)
    assert type(info.value).__name__ in ("InputError", "ValueError", "DataValidationError")
    assert mod.compute(**VALID[name, config], **OPTIONS.get(name, {}))  # and the module still works

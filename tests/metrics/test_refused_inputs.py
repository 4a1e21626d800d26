"""Inputs the metrics once answered silently (an argument ignored, two ids merged, NaN with an
interval, an infinite bound) or with a raw TypeError: each row is the exact one-line refusal, or
the exact answer now given.

- every evaluate module of ``semrel.metrics.names()`` (each config) against arguments it does not
  take, evaluate's ``predictions``/``references`` among them, through ``compute``, ``add_batch``
  and ``add``; and every module's plain function against the same arguments (Python's TypeError);
- blank ids, mixed-type or unhashable labels, an item that is no list, values near the float64 limit;
- the two BWS file layouts' item ids: whitespace-normalised alike.
"""

from __future__ import annotations

import dataclasses
import inspect
import uuid

import numpy as np
import pytest

from semrel.metrics import module_path, names
from semrel.metrics.agreement import annotator_agreement, krippendorff_alpha_interval
from semrel.metrics.bws.counting import bws_counting_scores
from semrel.metrics.bws.readers import read_nrc, read_semeval_2024
from semrel.metrics.bws.scoring import bws_scores
from semrel.metrics.compare import compare_correlations
from semrel.metrics.correlation import correlate
from semrel.metrics.human_correlation import correlation_with_humans
from semrel.metrics.lower_bound import mse_lower_bound
from semrel.metrics.overlap import dice_correlation
from semrel.metrics.split_half.split_half import split_half_bws, split_half_ratings

T2 = [["a", "b", "c", "d"], ["a", "b", "c", "e"]]
X = [0.1, 0.4, 0.2, 0.8, 0.5, 0.9, 0.3, 0.7, 0.6, 0.05]
Y = [0.0, 2.5, 1.0, 4.0, 3.5, 5.0, 1.5, 4.5, 3.0, 0.5]
ITEMS, RATERS, RATINGS = ["a", "a", "b", "b", "c", "c"], ["x", "y"] * 3, [1, 2, 4, 4, 5, 6]

# (module, config) -> (a valid call's inputs, what its unknown-argument refusal lists after "inputs are ")
MODULES = {
    ("annotator_agreement", None): (dict(items=ITEMS, annotators=RATERS, ratings=RATINGS),
                                    "items, annotators, ratings, options on_invalid"),
    ("bws_scores", None): (dict(tuples=T2, best=["a", "b"], worst=["d", "a"]),
                           "tuples, best, worst, options choice, on_invalid, method"),
    ("correlation_comparison", None): (dict(predictions1=X, predictions2=X[::-1], references=Y),
                                       "predictions1, predictions2, references, options ids1, ids2, confidence, "
                                       "n_resamples, method, seed, on_invalid"),
    ("correlation_with_humans", None): (dict(predictions=X, references=Y),
                                        "predictions, references, options aggregation, groups, confidence, "
                                        "n_resamples, method, seed, on_invalid"),
    ("lexical_overlap", None): (dict(sentence1=["a cat sat", "dogs bark", "a b"],
                                     sentence2=["a cat ran", "birds sing", "a b"], references=[0.6, 0.1, 1.0]),
                                "sentence1, sentence2, references"),
    ("mse_lower_bound", None): (dict(annotations=[[1, 2, 2, 3], [0, 0, 1, 1]], predictions=[2.0, 0.5]),
                                "annotations, predictions, options model, on_invalid"),
    ("split_half_reliability", None): (dict(tuples=T2[:1] * 4 + T2[1:] * 4, best=["a"] * 8,
                                            worst=["d", "c", "d", "d", "e", "e", "c", "e"]),
                                       "tuples, best, worst, options trials, seed, spearman_brown, on_invalid, "
                                       "choice, missing, method"),
    ("split_half_reliability", "ratings"): (dict(items=["x", "x", "y", "y", "z", "z"], ratings=[1, 2, 3, 4, 5, 5]),
                                            "items, ratings, options trials, seed, spearman_brown, on_invalid, "
                                            "choice, missing, method"),
}
UNKNOWN = ("predictions", "references", "weights")  # evaluate's two inputs where a module has neither, and a stray
UNKNOWN_CASES = [(name, config, arg) for (name, config), (valid, _) in MODULES.items() for arg in UNKNOWN
                 if arg not in valid]
_LOADED: dict = {}


def module(name, config=None):
    if (name, config) not in _LOADED:
        _LOADED[name, config] = evaluate_load(name, config)
    return _LOADED[name, config]


def evaluate_load(name, config=None):
    import evaluate

    return evaluate.load(module_path(name), *([config] if config else []), experiment_id=uuid.uuid4().hex,
                         **({"module_type": "comparison"} if name == "correlation_comparison" else {}))


def test_every_module_and_config_is_in_the_table():
    assert {name for name, _ in MODULES} == set(names())
    assert len(UNKNOWN_CASES) == 19


@pytest.mark.parametrize("name, config, arg", UNKNOWN_CASES, ids=[f"{n}{f'[{c}]' if c else ''} {a}"
                                                                  for n, c, a in UNKNOWN_CASES])
def test_an_argument_a_module_does_not_take_is_refused(name, config, arg):
    """compute, add_batch and add answer it in one line naming it and the module's inputs; nothing
    of the call is kept, and the module then computes as before."""
    valid, inputs = MODULES[name, config]
    words = f"{name}: unknown argument(s) '{arg}'; inputs are {inputs}"
    mod = module(name, config)
    expected = mod.compute(**valid)
    with pytest.raises(ValueError) as info:
        mod.compute(**valid, **{arg: [1.0] * len(next(iter(valid.values())))})
    assert str(info.value) == words
    with pytest.raises(ValueError) as info:
        mod.add_batch(**valid, **{arg: [1.0] * len(next(iter(valid.values())))})
    assert str(info.value) == words
    evaluates = ("predictions", "references")  # add() takes them one at a time: prediction, reference
    row = {k: v[0] for k, v in valid.items() if k not in evaluates}
    one = {k[:-1]: v[0] for k, v in valid.items() if k in evaluates}
    single = arg[:-1] if arg in evaluates else arg
    with pytest.raises(ValueError) as info:
        mod.add(**row, **one, **{single: 1.0})
    assert str(info.value) == words.replace(f"'{arg}'", f"'{single}'")
    assert mod.compute(**valid) == expected


FUNCTIONS = [  # the plain function of each module and a valid call's positional arguments
    (annotator_agreement, (ITEMS, RATERS, RATINGS)),
    (bws_scores, (T2, ["a", "b"], ["d", "a"])),
    (bws_counting_scores, (T2, ["a", "b"], ["d", "a"])),
    (compare_correlations, (X, X[::-1], Y)),
    (correlation_with_humans, (X, Y)),
    (dice_correlation, (["a b"], ["a"], [1.0])),
    (mse_lower_bound, ([[1, 2, 2, 3]],)),
    (split_half_bws, (T2[:1] * 4 + T2[1:] * 4, ["a"] * 8, ["d", "c", "d", "d", "e", "e", "c", "e"])),
    (split_half_ratings, (["x", "x"], [1, 2])),
]
FUNCTION_CASES = [(function, args, arg) for function, args in FUNCTIONS for arg in UNKNOWN
                  if arg not in inspect.signature(function).parameters]


@pytest.mark.parametrize("function, args, arg", FUNCTION_CASES,
                         ids=[f"{f.__name__} {a}" for f, _, a in FUNCTION_CASES])
def test_a_plain_function_refuses_an_argument_it_does_not_take(function, args, arg):
    with pytest.raises(TypeError) as info:
        function(*args, **{arg: [1.0]})
    assert str(info.value) == f"{function.__name__}() got an unexpected keyword argument '{arg}'"


# --- refusals of the math, through the plain functions and the modules ---------------------------

BIG = [x * 1e307 for x in X]  # Pearson's sums of squares overflow unless scaled first
REFUSED = [  # (id, call, exact message)
    ("a blank annotator", lambda: annotator_agreement(ITEMS, ["x", " "] * 3, RATINGS),
     "annotators[1] is empty (' '); every rating needs an item and an annotator"),
    ("two raters without ids", lambda: annotator_agreement(ITEMS, [""] * 6, RATINGS),
     "annotators[0] is empty (''); every rating needs an item and an annotator"),
    ("a blank item", lambda: annotator_agreement(["a", "a", "\t", "b", "c", "c"], RATERS, RATINGS),
     "items[2] is empty ('\\t'); every rating needs an item and an annotator"),
    ("a blank annotator, module", lambda: module("annotator_agreement").compute(items=ITEMS, annotators=["x", " "] * 3,
                                                                                 ratings=RATINGS),
     "annotators[1] is empty (' '); every rating needs an item and an annotator"),
    ("a blank item, module", lambda: module("annotator_agreement").compute(items=["a", "a", "", "b", "c", "c"],
                                                                            annotators=RATERS, ratings=RATINGS),
     "items[2] is empty (''); every rating needs an item and an annotator"),
    ("groups 1 and '1'", lambda: correlation_with_humans(X, Y, groups=[1] * 5 + ["1"] * 5),
     "groups[5] is '1' (str) but groups[0] is 1 (int): use one type for groups"),
    ("groups True and 1", lambda: correlation_with_humans(X, Y, groups=[True] * 5 + [1] * 5),
     "groups[5] is 1 (int) but groups[0] is True (bool): use one type for groups"),
    ("groups 1 and 1.0", lambda: correlation_with_humans(X, Y, groups=[1] * 5 + [1.0] * 5),
     "groups[5] is 1.0 (float) but groups[0] is 1 (int): use one type for groups"),
    ("groups 1 and '1', module", lambda: module("correlation_with_humans").compute(
        predictions=X, references=Y, groups=[1] * 5 + ["1"] * 5),
     "groups[5] is '1' (str) but groups[0] is 1 (int): use one type for groups"),
    ("unhashable groups", lambda: correlation_with_humans(X, Y, groups=[["a"]] * 10),
     "groups[0] is ['a'] (list); a group label is a str or a number (hashable)"),
    ("unhashable groups, module", lambda: module("correlation_with_humans").compute(
        predictions=X, references=Y, groups=["a"] * 9 + [{}]),
     "groups[9] is {} (dict); a group label is a str or a number (hashable)"),
    ("unhashable ids1", lambda: compare_correlations(X, X[::-1], Y, ids1=[[i] for i in range(10)],
                                                     ids2=list(range(10))),
     "ids1[0] is [0] (list); an item id is a str or a number (hashable)"),
    ("unhashable ids2, module", lambda: module("correlation_comparison").compute(
        predictions1=X, predictions2=X[::-1], references=Y, ids1=list(range(10)), ids2=[*range(9), {9}]),
     "ids2[9] is {9} (set); an item id is a str or a number (hashable)"),
    ("ids of two types", lambda: compare_correlations(X, X[::-1], Y, ids1=[*range(9), "9"], ids2=[*range(9), "9"]),
     "ids1[9] is '9' (str) but ids1[0] is 0 (int): use one type for ids1"),
    ("an item None", lambda: mse_lower_bound([[1, 2, 2, 3], None]),
     "annotations[1] is None, not a list: every item needs the list of its annotations (numbers)"),
    ("an item a number", lambda: mse_lower_bound([[1, 2, 2, 3], 4]),
     "annotations[1] is 4, not a list: every item needs the list of its annotations (numbers)"),
    ("an item None, module", lambda: module("mse_lower_bound").compute(annotations=[[1, 2, 2, 3], None]),
     "annotations[1] is None, not a list: every item needs the list of its annotations (numbers)"),
    ("annotations of ±1e200", lambda: mse_lower_bound([[0, 0, 1, 1], [1e200, -1e200, 1e200, -1e200]]),
     "the variance of item 1's annotations is beyond the float64 range (values up to 1e+200): rescale the "
     "annotations"),
    ("annotations of ±1e200, module", lambda: module("mse_lower_bound").compute(
        annotations=[[1e200, -1e200, 1e200, -1e200]]),
     "the variance of item 0's annotations is beyond the float64 range (values up to 1e+200): rescale the "
     "annotations"),
    ("predictions of ±1e308", lambda: mse_lower_bound([[1e308] * 4, [1, 2, 2, 3]], [-1e308, 2]),
     "the MSE of the predictions is beyond the float64 range: rescale predictions and annotations"),
    ("ratings of 1e200", lambda: annotator_agreement(ITEMS, RATERS, [r * 1e200 for r in RATINGS]),
     "the MSE of the ratings is beyond the float64 range: rescale the ratings"),
]


@pytest.mark.parametrize("call, words", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_in_one_line(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == words


ANSWERED = [  # (id, the call, what it equals): near the float64 limit, the answer of the same data scaled down
    ("Pearson of predictions near 1e308", lambda: correlation_with_humans(BIG, Y).overall.pearson,
     lambda: correlation_with_humans(X, Y).overall.pearson),
    ("Pearson near 1e308, module", lambda: [module("correlation_with_humans").compute(predictions=BIG, references=Y)[k]
                                            for k in ("pearson", "pearson_ci")],
     lambda: [module("correlation_with_humans").compute(predictions=X, references=Y)[k]
              for k in ("pearson", "pearson_ci")]),
    ("annotations near 1e308, mean", lambda: correlation_with_humans(
        X, [[y * 3e307, y * 3e307] for y in Y], aggregation="mean").overall.pearson.value,
     lambda: correlation_with_humans(X, [[y, y] for y in Y], aggregation="mean").overall.pearson.value),
    ("correlate near 1e308", lambda: correlate(BIG, [y * 2.0**1000 for y in Y]), lambda: correlate(X, Y)),
    ("Williams' test near 1e308", lambda: compare_correlations(BIG, BIG[::-1], Y).williams,
     lambda: compare_correlations(X, X[::-1], Y).williams),
    ("an item of 1e308s beside an ordinary one", lambda: mse_lower_bound([[1e308] * 4, [0, 0, 1, 1]]).bound,
     lambda: 0.125),
    ("annotations times 2**500", lambda: mse_lower_bound([[v * 2.0**500 for v in (1, 2, 2, 3)]]).bound,
     lambda: 0.5 * 2.0**1000),
    ("Krippendorff's alpha near 1e308",
     lambda: krippendorff_alpha_interval(np.repeat([0, 1, 2], 2), np.array(RATINGS) * 2.0**1020),
     lambda: annotator_agreement(ITEMS, RATERS, RATINGS).alpha),
]


@pytest.mark.parametrize("call, expected", [c[1:] for c in ANSWERED], ids=[c[0] for c in ANSWERED])
def test_answered_as_the_same_data_scaled_down(call, expected):
    got, want = _numbers(call()), _numbers(expected())
    assert np.isfinite(got).all() and np.allclose(got, want, rtol=1e-12, atol=0), (got, want)


def _numbers(value) -> list[float]:
    """The numbers of a result (a dataclass, a list, a number), in order; text left out."""
    if dataclasses.is_dataclass(value):
        value = dataclasses.astuple(value)
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _numbers(v)]
    return [] if isinstance(value, str) else [float(value)]


# --- BWS item ids: one whitespace rule for both file layouts -------------------------------------

NRC = "Item1,Item2,Item3,Item4,BestItem,WorstItem\n i1,i2,i3,i4,i1,i4\ni1 ,i2,i3,i5,i2 , i1\n"
SEMEVAL = ("p1,p2,p3,p4,Best,Worst\n"
           "\"[' s  one', 'x']\",\"['t', 'x']\",\"['u', 'x']\",\"['v', 'x']\",1,4\n"
           "\"['s one ', 'x']\",\"['t', 'x']\",\"['u', 'x']\",\"['w', 'x']\",2,1\n")
LAYOUTS = [  # (reader, file, items, scores)
    (read_nrc, NRC, ["i1", "i2", "i3", "i4", "i5"], [0.0, 0.5, 0.0, -1.0, 0.0]),
    (read_semeval_2024, SEMEVAL, ["s one\nx", "t\nx", "u\nx", "v\nx", "w\nx"], [0.0, 0.5, 0.0, -1.0, 0.0]),
]


@pytest.mark.parametrize("reader, text, items, scores", LAYOUTS, ids=["nrc", "semeval"])
def test_item_ids_differing_in_whitespace_are_one_item_in_both_layouts(tmp_path, reader, text, items, scores):
    path = tmp_path / "bws.csv"
    path.write_text(text, encoding="utf-8")
    result = bws_counting_scores(reader(path))
    assert result.items.tolist() == items and result.score.tolist() == scores

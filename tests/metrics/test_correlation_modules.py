"""The correlation_with_humans and correlation_comparison evaluate modules: Space folders whose cards,
examples and pages hold, and every bad input of the table below -> an error naming the argument
and the rule (table-driven, like test_metrics_bad_input.py), or the counted omission."""

from __future__ import annotations

import doctest
import json

import numpy as np
import pytest
import tomllib
from setuptools import find_namespace_packages

from project import REPO
from semrel.metrics import module_path, names
from semrel.metrics.compare import compare_correlations
from semrel.metrics.correlation_intervals import pearson_interval, spearman_interval
from semrel.metrics.human_correlation import correlation_with_humans

NAMES = ["correlation_comparison", "correlation_with_humans"]
CARD_SECTIONS = ["## Metric Description", "## How to Use", "### Inputs", "### Output Values", "### Examples",
                 "## Limitations and Bias", "## Citation", "## Further References"]


@pytest.mark.parametrize("name", NAMES)
def test_folder_is_a_space_and_its_examples_run(name, tmp_path, monkeypatch):
    import evaluate

    assert name in names()
    folder = REPO / "metrics" / name
    assert {p.name for p in folder.iterdir()} - {"__pycache__"} == {"README.md", "app.py", "requirements.txt",
                                                                    f"{name}.py"}
    card = (folder / "README.md").read_text(encoding="utf-8")
    for line in ("---\n", "sdk: gradio", "sdk_version: 6.31.0", "app_file: app.py", "- evaluate", "description:",
                 *CARD_SECTIONS, "pip install -r requirements.txt && python app.py",
                 f'evaluate.load(module_path("{name}"))', f'evaluate.load("<namespace>/{name}")'):
        assert line in card, f"{name}/README.md lacks {line!r}"
    setup = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert name in find_namespace_packages(REPO / setup["package-dir"]["semrel.metrics"])  # discovery ships it
    monkeypatch.chdir(tmp_path)
    module = evaluate.load(module_path(name))
    examples = doctest.DocTestParser().get_doctest(module.inputs_description, {}, name, None, 0)
    assert examples.examples and doctest.DocTestRunner().run(examples).failed == 0
    card_examples = doctest.DocTestParser().get_doctest(card.split("### Examples")[1].split("```")[1], {}, name,
                                                        None, 0)
    assert card_examples.examples and doctest.DocTestRunner().run(card_examples).failed == 0


def test_comparison_is_an_evaluate_comparison():
    import evaluate

    module = evaluate.load(module_path("correlation_comparison"), module_type="comparison")
    assert isinstance(module, evaluate.Comparison) and module.module_type == "comparison"
    assert list(module.features) == ["predictions1", "predictions2", "references"]


@pytest.mark.parametrize("name", NAMES)
def test_space_page_answers_like_the_module(name):
    pytest.importorskip("gradio")
    import evaluate

    from semrel.metrics.space_app import build, compute_json
    from semrel.publishing.spaces import space_example

    folder = REPO / "metrics" / name
    example = space_example(folder)["default"]
    page = build(folder / f"{name}.py", {"default": example})
    params = [p["parameter_name"] for p in page.get_api_info()["named_endpoints"]["/compute"]["parameters"]]
    assert params == [*example["inputs"], "options"]
    module = evaluate.load(module_path(name))
    texts = {k: json.dumps(v) for k, v in example["inputs"].items()}
    assert compute_json(module, texts, json.dumps(example["options"])) == module.compute(**example["inputs"],
                                                                                          **example["options"])


def test_module_takes_groups_and_annotation_lists():
    import evaluate

    metric = evaluate.load(module_path("correlation_with_humans"))
    preds = list(np.linspace(0, 1, 16))
    refs = [[p * 5, p * 5 + (i % 3) - 1] for i, p in enumerate(preds)]
    out = metric.compute(predictions=preds, references=refs, aggregation="mean", groups=["x", "y"] * 8,
                         n_resamples=100)
    assert set(out["groups"]) == {"x", "y"} and out["groups"]["x"]["n"] == 8 and out["n_annotations"] == 32


X = [0.1, 0.4, 0.2, 0.8, 0.5, 0.9, 0.3, 0.7, 0.6, 0.05]
Y = [0.0, 2.5, 1.0, 4.0, 3.5, 5.0, 1.5, 4.5, 3.0, 0.5]
NAN, INF = float("nan"), float("inf")

CALLS = [  # (call, words of the ValueError)
    (lambda: correlation_with_humans(X, Y[:-1]), "unequal lengths: predictions has 10, references has 9"),
    (lambda: pearson_interval(X[:4], Y[:4]), "4 items; a correlation interval needs >= 5 items"),
    (lambda: pearson_interval(X[:2], Y[:2]), "2 items; a correlation interval needs >= 5"),
    (lambda: spearman_interval(X[:6], Y[:6]), "6 items; a correlation interval needs >= 8"),
    (lambda: correlation_with_humans(X[:7], Y[:7]), "7 items; a correlation interval needs >= 8"),
    (lambda: correlation_with_humans([1.0] * 10, Y), r"predictions are constant \(all 1\)"),
    (lambda: correlation_with_humans(X, [2.0] * 10), r"references are constant \(all 2\)"),
    (lambda: correlation_with_humans([*X[:3], NAN, *X[4:]], Y), r"predictions\[3\] is nan"),
    (lambda: correlation_with_humans(X, [*Y[:9], INF]), r"references\[9\] is inf; values must be finite"),
    (lambda: correlation_with_humans(X, [[y, y] for y in Y[:9]] + [[1, NAN]], aggregation="mean"),
     r"references\[9\]\[1\] is nan"),
    (lambda: correlation_with_humans(X, [[y] for y in Y[:9]] + [[]], aggregation="mean"),
     r"references\[9\] has no annotations"),
    (lambda: correlation_with_humans(X, [[y] for y in Y]), "say how to combine them with aggregation="),
    (lambda: correlation_with_humans(X, Y, aggregation="mean"), "references hold one score per item"),
    (lambda: correlation_with_humans(X, Y, aggregation="max"), "aggregation must be one of mean, median"),
    (lambda: correlation_with_humans(X, [1.0, *[[y] for y in Y[1:]]], aggregation="mean"),
     r"references\[0\] is a single number"),
    (lambda: correlation_with_humans(X, [[y] for y in Y], aggregation="average_annotator"),
     r"references\[0\] has 1 annotation\(s\); the average annotator needs >= 2"),
    (lambda: correlation_with_humans(X, Y, groups=["a"] * 5 + [None] + ["b"] * 4),
     r"groups\[5\] is missing \(None\); every item needs a group label"),
    (lambda: correlation_with_humans(X, Y, groups=["a"] * 9 + [""]), r"groups\[9\] is missing"),
    (lambda: correlation_with_humans(X, Y, groups=["a"] * 9 + [NAN]), r"groups\[9\] is missing \(nan\)"),
    (lambda: correlation_with_humans(X, Y, groups=["a"] * 9), "groups has 9, predictions has 10"),
    (lambda: correlation_with_humans(X, Y, groups=["a"] * 8 + ["b"] * 2),
     "group 'b': 2 items; a correlation interval needs >= 5"),
    (lambda: correlation_with_humans(X, Y, on_invalid="skip"), "on_invalid must be 'raise' or 'omit'"),
    (lambda: correlation_with_humans(X, Y, n_resamples=10), "n_resamples must be an int >= 100"),
    (lambda: correlation_with_humans(X, Y, method="exact"), "method must be 'auto', 'BCa'"),
    (lambda: correlation_with_humans(X, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1], n_resamples=200),
     r"Spearman's rho is undefined in \d+ of 200 bootstrap resamples"),
    (lambda: correlation_with_humans(X, ["a"] * 10), "references: not a list of numbers"),
    (lambda: compare_correlations(X, X[:9], Y), "unequal lengths: predictions1 has 10, predictions2 has 9"),
    (lambda: compare_correlations(X[:7], X[:7], Y[:7]), "7 items; a correlation interval needs >= 8"),
    (lambda: compare_correlations(X, [1.0] * 10, Y), r"predictions2 are constant"),
    (lambda: compare_correlations(X, X, [*Y[:2], NAN, *Y[3:]]), r"references\[2\] is nan"),
    (lambda: compare_correlations(X, X, Y, ids1=list("abcdefghij"), ids2=list("abcdefghji")),
     r"ids1\[8\] = 'i' but ids2\[8\] = 'j': the same items in a different order"),
    (lambda: compare_correlations(X, X, Y, ids1=list("abcdefghij"), ids2=list("abcdefghik")),
     "the two systems were scored on different items"),
    (lambda: compare_correlations(X, X, Y, ids1=list("abcdefghij")), "ids1 and ids2 go together"),
    (lambda: compare_correlations(X, X, Y, ids1=list("abc"), ids2=list("abc")), "ids1 has 3, predictions1 has 10"),
    (lambda: compare_correlations([X, X], X, Y), "predictions1: a flat list of numbers"),
]


@pytest.mark.parametrize("call, words", CALLS)
def test_bad_input(call, words):
    with pytest.raises(ValueError, match=words):
        call()


@pytest.mark.parametrize("name, inputs, words", [
    ("correlation_with_humans", {"predictions": X, "references": Y[:-1]}, "9|10"),
    ("correlation_with_humans", {"predictions": X, "references": Y, "groups": ["a"] * 9 + [None]},
     r"groups\[9\] is missing"),
    ("correlation_comparison", {"predictions1": X, "predictions2": [1.0] * 10, "references": Y},
     "predictions2 are constant"),
])
def test_modules_pass_the_errors_on(erroring_module, name, inputs, words):
    with pytest.raises(ValueError, match=words):
        erroring_module(name).compute(**inputs)


def test_omit_with_annotation_lists_counts_items():
    refs = [[y, y + 1] for y in Y]
    refs[4] = [1.0, NAN]
    r = correlation_with_humans(X, refs, aggregation="median", on_invalid="omit", n_resamples=100)
    assert (r.n_items, r.n_omitted, r.n_annotations) == (9, 1, 18)


VALID = {"correlation_with_humans": dict(predictions=X, references=Y),
         "correlation_comparison": dict(predictions1=X, predictions2=X[::-1], references=Y)}
WRONG_OPTIONS = [("confidence", "nonsense"), ("confidence", 1.5), ("n_resamples", "10"), ("n_resamples", 2.5),
                 ("n_resamples", -1), ("seed", "10"), ("seed", 2.5), ("seed", -1), ("method", 1),
                 ("on_invalid", None)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("option, value", WRONG_OPTIONS)
def test_a_wrong_option_names_itself_and_the_module_still_works(erroring_module, name, option, value):
    """As tests/metrics/test_module_inputs.py sweeps the other modules (StrictInputs)."""
    module = erroring_module(name)
    with pytest.raises(ValueError, match=option):
        module.compute(**VALID[name], **{option: value}, n_resamples=100) if option != "n_resamples" else \
            module.compute(**VALID[name], **{option: value})
    assert module.compute(**VALID[name], n_resamples=100)["n"] == 10


@pytest.mark.parametrize("name", NAMES)
def test_inputs_left_out_or_of_another_length_are_one_line(erroring_module, name):
    module = erroring_module(name)
    first = next(iter(VALID[name]))
    with pytest.raises(ValueError, match=f"{name}: {first} left out or None"):
        module.compute(**{k: v for k, v in VALID[name].items() if k != first})
    with pytest.raises(ValueError, match=f"{name}: inputs of different lengths"):
        module.compute(**dict(VALID[name], **{first: VALID[name][first][:-1]}))
    with pytest.raises(ValueError, match=f"{name}: unknown argument"):
        module.compute(**VALID[name], grups=["a"] * 10)
    extra = {"groups": "abcdefghij"} if name == "correlation_with_humans" else {"ids1": "abcdefghij",
                                                                                 "ids2": "abcdefghij"}
    with pytest.raises(ValueError, match="must be a list"):
        module.compute(**VALID[name], **extra)

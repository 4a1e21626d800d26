"""The Space page (semrel.metrics.space_app), built in-process without serving it: API parameters
named after the module's inputs, one endpoint per config, optional inputs left out when empty."""

from __future__ import annotations

import json
from pathlib import Path

import evaluate
import pytest

from semrel.metrics import module_path, names
from semrel.metrics.space_app import build, compute_json, optional_inputs
from semrel.publishing.spaces import space_example

gr = pytest.importorskip("gradio")


def folder(name: str) -> Path:
    return Path(module_path(name))


@pytest.fixture(scope="module")
def api():
    """name -> the page's named endpoints: {"/compute": [parameter names], ...}."""
    endpoints = {}
    for name in names():
        page = build(folder(name) / f"{name}.py", space_example(folder(name)))
        endpoints[name] = {api: [p["parameter_name"] for p in info["parameters"]]
                           for api, info in page.get_api_info()["named_endpoints"].items()}
    return endpoints


@pytest.mark.parametrize("name", ["annotator_agreement", "bws_scores", "lexical_overlap", "mse_lower_bound",
                                  "split_half_reliability"])
def test_api_parameters_are_named_after_the_inputs(api, name):
    examples = space_example(folder(name))
    config = next(iter(examples))
    module = evaluate.load(module_path(name), None if config == "default" else config)
    features = module.features[0] if isinstance(module.features, list) else module.features
    assert api[name]["/compute"] == [*features, "options"]
    assert list(examples[config]["inputs"]) == list(features)  # the example fills every field


def test_every_config_of_split_half_reliability_has_an_endpoint(api):
    assert list(space_example(folder("split_half_reliability"))) == ["bws", "ratings"]
    assert api["split_half_reliability"] == {"/compute": ["tuples", "best", "worst", "options"],
                                             "/compute_ratings": ["items", "ratings", "options"]}
    assert all(list(endpoints) == ["/compute"] for name, endpoints in api.items()
               if name != "split_half_reliability")


def test_an_empty_optional_field_leaves_the_input_out():
    module = evaluate.load(module_path("mse_lower_bound"))
    assert optional_inputs(module) == {"predictions"}
    annotations = [[1, 2, 2, 3], [0, 0, 1, 1]]
    out = compute_json(module, {"annotations": json.dumps(annotations), "predictions": ""}, "{}")
    assert out == evaluate.load(module_path("mse_lower_bound")).compute(annotations=annotations)
    assert "mse" not in out
    with pytest.raises(gr.Error, match="annotations: missing input"):
        compute_json(module, {"annotations": " ", "predictions": "[1.0]"}, "{}")


def test_required_inputs_stay_required():
    for name in names():
        for config in space_example(folder(name)):
            module = evaluate.load(module_path(name), None if config == "default" else config)
            assert optional_inputs(module) == ({"predictions"} if name == "mse_lower_bound" else set()), name

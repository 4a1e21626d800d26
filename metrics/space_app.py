"""The page of a metric Space: a gradio form built from the evaluate module's declared inputs.

One text field per input Feature (a JSON list, one value per example), one for keyword options
(a JSON object), and the module's result as JSON. Bad input (a missing field, unequal lengths,
non-numbers, a rule the metric enforces) is answered with the module's own error message in the
page (``gradio.Error``), not a crash. Each metric folder links to this file as ``space_app.py``;
its ``app.py`` calls :func:`launch` with the module file and an example.
"""

from __future__ import annotations

import json
from pathlib import Path

import evaluate
import gradio as gr

API_NAME = "compute"


def input_names(module) -> list[str]:
    """The declared input names (the first format where the module accepts several)."""
    features = module.features
    return list((features[0] if isinstance(features, list) else features).keys())


def compute_json(module, texts: dict[str, str], options: str) -> dict:
    """``module.compute`` on JSON texts; any failure becomes a ``gradio.Error`` with its message."""
    try:
        inputs = {name: _parse(name, text) for name, text in texts.items()}
        kwargs = _parse("options", options or "{}")
        if not isinstance(kwargs, dict):
            raise ValueError("options: a JSON object, e.g. {\"seed\": 0}")
        lengths = {len(v) for v in inputs.values() if v is not None}
        inputs = {k: [None] * max(lengths, default=0) if v is None else v for k, v in inputs.items()}
        return module.compute(**inputs, **kwargs)
    except Exception as err:  # the page shows the message; the server keeps running
        raise gr.Error(f"{type(err).__name__}: {err}", print_exception=False) from None


def _parse(name: str, text: str):
    if not text or not text.strip():
        if name == "predictions":  # optional: None for every item
            return None
        raise ValueError(f"{name}: missing input (a JSON list, one value per example)")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{name}: not JSON ({err.msg} at character {err.pos})") from None
    if name != "options" and not isinstance(value, list):
        raise ValueError(f"{name}: a JSON list, one value per example, not {type(value).__name__}")
    return value


def build(module_file, example: dict, options: dict | None = None) -> gr.Blocks:
    """The page: title and description from the module, fields prefilled with ``example``."""
    module = evaluate.load(str(module_file))
    names = input_names(module)
    with gr.Blocks(title=module.name) as page:
        gr.Markdown(f"# {module.name}\n\n{module.description}")
        fields = [gr.Textbox(label=f"{name} (JSON list)", value=json.dumps(example.get(name)) if name in example else "",
                             lines=2) for name in names]
        extra = gr.Textbox(label="options (JSON object of keyword arguments)", value=json.dumps(options or {}))
        button = gr.Button("Compute", variant="primary")
        result = gr.JSON(label="result")
        button.click(lambda *texts: compute_json(module, dict(zip(names, texts[:-1])), texts[-1]),
                     inputs=[*fields, extra], outputs=result, api_name=API_NAME)
    return page


def launch(module_file, example: dict, options: dict | None = None) -> None:
    """Serve the page (gradio reads GRADIO_SERVER_NAME / GRADIO_SERVER_PORT from the environment)."""
    build(Path(module_file), example, options).launch()

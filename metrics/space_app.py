"""The page of a metric Space: a gradio form per config, built from the evaluate module's inputs.

A Space's ``app.py`` calls :func:`launch` with its module file and ``EXAMPLES``: for each config
of the module (``"default"`` when it has none; the first is the module's default), the inputs
the form is prefilled with and keyword options. Each config gets one text field per declared
input (a JSON list, one value per example), one for the options (a JSON object) and the result
as JSON; a module with several configs gets one tab per config. Its API endpoint is
``/compute`` for the first config and ``/compute_<config>`` for the others (:func:`api_name`),
and its parameters are named after the inputs, then ``options``
(``client.predict(tuples=..., best=..., worst=..., options="{}", api_name="/compute")``).

An input is optional when the module's ``_compute`` gives it a default (mse_lower_bound's
``predictions=None``): its field may be left empty and the input is then left out of the call.
Bad input (a missing field, unequal lengths, non-numbers, a rule the metric enforces) is answered
with the module's own error message in the page (``gradio.Error``), not a crash.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

OPTIONS = "options"  # the name of the keyword-options field and API parameter


def api_name(config: str, configs) -> str:
    """The API endpoint name of ``config``: ``compute`` for the first of ``configs``."""
    return "compute" if config == next(iter(configs)) else f"compute_{config}"


def input_names(module) -> list[str]:
    """The declared input names (the first format where the module accepts several)."""
    features = module.features
    return list((features[0] if isinstance(features, list) else features).keys())


def optional_inputs(module) -> set[str]:
    """Declared inputs that the module's ``_compute`` gives a default (it may be left out)."""
    parameters = inspect.signature(module._compute).parameters
    return {name for name in input_names(module)
            if name in parameters and parameters[name].default is not inspect.Parameter.empty}


def compute_json(module, texts: dict[str, str], options: str) -> dict:
    """``module.compute`` on JSON texts; any failure becomes a ``gradio.Error`` with its message."""
    import gradio as gr

    try:
        optional = optional_inputs(module)
        inputs = {name: _parse(name, text, optional=name in optional) for name, text in texts.items()}
        kwargs = _parse(OPTIONS, options or "{}")
        if not isinstance(kwargs, dict):
            raise ValueError(f'{OPTIONS}: a JSON object, e.g. {{"seed": 0}}')
        return module.compute(**{k: v for k, v in inputs.items() if v is not None}, **kwargs)
    except Exception as err:  # the page shows the message; the server keeps running
        raise gr.Error(f"{type(err).__name__}: {err}", print_exception=False) from None


def _parse(name: str, text: str, *, optional: bool = False):
    if not text or not text.strip():
        if optional:
            return None
        raise ValueError(f"{name}: missing input (a JSON list, one value per example)")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{name}: not JSON ({err.msg} at character {err.pos})") from None
    if name != OPTIONS and not isinstance(value, list):
        raise ValueError(f"{name}: a JSON list, one value per example, not {type(value).__name__}")
    return value


def handler(module, names: list[str]):
    """The click handler of a form: positional texts, its signature ``(<names>..., options)``.

    gradio names an endpoint's API parameters after the handler's parameters, so the handler
    carries a real signature rather than ``*texts`` (which gradio would call ``param_0``...).
    """
    def compute(*texts):
        return compute_json(module, dict(zip(names, texts[:-1], strict=True)), texts[-1])

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    compute.__signature__ = inspect.Signature([inspect.Parameter(n, kind) for n in [*names, OPTIONS]])
    return compute


def _form(gr, module, example: dict, api: str) -> None:
    names, optional = input_names(module), optional_inputs(module)
    if OPTIONS in names:
        raise ValueError(f"{module.name}: an input named {OPTIONS!r} would clash with the options field")
    fields = [gr.Textbox(label=f"{name} (JSON list{', optional' if name in optional else ''})", lines=2,
                         value=json.dumps(example["inputs"][name]) if name in example["inputs"] else "")
              for name in names]
    extra = gr.Textbox(label=f"{OPTIONS} (JSON object of keyword arguments)",
                       value=json.dumps(example.get("options") or {}))
    button = gr.Button("Compute", variant="primary")
    result = gr.JSON(label="result")
    button.click(handler(module, names), inputs=[*fields, extra], outputs=result, api_name=api)


def build(module_file, examples: dict[str, dict]):
    """The page: title and description from the module, a form (a tab each) per config."""
    import evaluate
    import gradio as gr

    modules = {config: evaluate.load(str(module_file), None if config == "default" else config)
               for config in examples}
    first = next(iter(modules.values()))
    with gr.Blocks(title=first.name) as page:
        gr.Markdown(f"# {first.name}\n\n{first.description}")
        for config, module in modules.items():
            if len(modules) == 1:
                _form(gr, module, examples[config], api_name(config, examples))
            else:
                with gr.Tab(f"config {config!r}"):
                    gr.Markdown(f'`evaluate.load(..., "{config}")`')
                    _form(gr, module, examples[config], api_name(config, examples))
    return page


def launch(module_file, examples: dict[str, dict]) -> None:
    """Serve the page (gradio reads GRADIO_SERVER_NAME / GRADIO_SERVER_PORT from the environment)."""
    build(Path(module_file), examples).launch()

"""Where a scorer's forward pass runs: ``torch`` (the reference), ``onnx`` (onnxruntime) or
``openvino`` (OpenVINO's runtime), the last two on an ONNX export of the very module torch runs
(:class:`Forward`).

A scorer of a torch model says what its forward pass is (:meth:`Forward.forward_module`: a
module whose ``forward(input_ids, attention_mask[, token_type_ids])`` returns a batch's (n, dim)
values) and what it is fed
(:meth:`Forward.forward_inputs`). ``torch`` runs that module. ``onnx`` and ``openvino`` export it
once with ``torch.onnx.export`` (the dynamo exporter; batch and sequence axes dynamic) into
``exports/<key>/`` of the score cache, keyed by the model's content hash, the scorer and the
torch and exporter versions, and run the file on CPU in float32. ``quantize="int8"`` (onnx only)
adds onnxruntime's dynamic int8 quantisation of the weights (``quantize_dynamic``, per tensor:
per channel scrambled an mpnet cross-encoder, Spearman 0.11 against its float32 scores):
faster, its figures differ from torch's and are reported as such, never the default.

sentence-transformers' own ``backend="onnx" | "openvino"`` load through optimum, which no
release supports beside transformers 5 (docs/benchmark.md#backends); this needs only
onnxruntime or openvino, onnx and onnxscript (``pip install 'semrel[backends]'``).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

import numpy as np

from semrel.metrics.errors import ParameterError

BACKENDS = ("torch", "onnx", "openvino")
QUANTIZATIONS = ("int8",)
_PACKAGES = {"onnx": ("onnxruntime", "onnx", "onnxscript"), "openvino": ("openvino", "onnx", "onnxscript")}
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")  # what the forward modules take
_EXPORT_FORMAT = 1  # raised when what an export holds changes: older exports are made anew


def check_backend(backend: str, quantize: str | None = None) -> None:
    """A ParameterError on ``backend`` or ``quantize`` unless the pair is one that runs here:
    a known backend whose packages are installed; int8 only on onnx."""
    if backend not in BACKENDS:
        near = difflib.get_close_matches(str(backend), BACKENDS, n=1)
        guess = f" (did you mean {near[0]}?)" if near else ""
        raise ParameterError("backend", backend, f"must be one of {', '.join(BACKENDS)}{guess}")
    if quantize is not None:
        if quantize not in QUANTIZATIONS:
            raise ParameterError("quantize", quantize, f"must be one of {', '.join(QUANTIZATIONS)}")
        if backend != "onnx":
            raise ParameterError("quantize", quantize, f"is onnxruntime's dynamic quantisation: it runs "
                                 f"with --backend onnx, not {backend}")
    missing = [p for p in _PACKAGES.get(backend, ()) if importlib.util.find_spec(p) is None]
    if missing:
        raise ParameterError("backend", backend, f"needs {', '.join(missing)}: pip install 'semrel[backends]'")


class Forward:
    """The forward pass of a scorer of a torch model, run on its ``backend`` (a mixin of
    :class:`~.base.Scorer`, whose ``backend``, ``quantize``, ``model_hash`` and ``exports`` it
    reads)."""

    def forward_module(self):
        """A torch module (:mod:`.modules`) whose forward returns a batch's (n, dim) float values."""
        raise NotImplementedError

    def forward_inputs(self, batch) -> dict:
        """The tokenizer's tensors of one batch (:meth:`tokenized`)."""
        return batch

    def finish(self, batch, values: np.ndarray) -> np.ndarray:
        """The batch's values as :meth:`compute` returns them (rows in the units' order)."""
        return values

    def compute(self, batch) -> np.ndarray:
        inputs = {k: v for k, v in self.forward_inputs(batch).items() if k in _INPUTS}
        if getattr(self, "_runner", None) is None:
            self._runner = self._make_runner(inputs)
        return self.finish(batch, self._runner(inputs))

    def _make_runner(self, sample: dict):
        if self.backend == "torch":
            return _TorchRunner(self.forward_module())
        path = self.exported(sample)
        return _OnnxRunner(path) if self.backend == "onnx" else _OpenVinoRunner(path)

    def exported(self, sample: dict) -> Path:
        """The ONNX file this scorer runs, exported (and quantised) on first use."""
        import torch

        key = hashlib.sha256(f"{self.model_hash}\n{type(self).__name__}\n{torch.__version__}\n"
                             f"{_exporter_version()}\n{_EXPORT_FORMAT}".encode()).hexdigest()[:32]
        folder = self.exports / key
        plain, wanted = folder / "model.onnx", folder / f"model-{self.quantize or 'float32'}.onnx"
        if not plain.is_file():
            try:
                _export(self.forward_module(), sample, plain)
            except Exception as exc:  # the exporter's errors have no common class
                why = (str(exc).strip().splitlines() or [""])[0][:200]
                raise ParameterError("backend", self.backend, f"cannot run {self.spec}: torch.onnx.export "
                                     f"failed on it ({type(exc).__name__}: {why}); use --backend torch"
                                     ) from exc
        if self.quantize and not wanted.is_file():
            _quantize(plain, wanted)
        return wanted if self.quantize else plain


def _exporter_version() -> str:
    from importlib.metadata import version

    return f"onnxscript {version('onnxscript')}, onnx {version('onnx')}"


def _written(path: Path, write) -> None:
    """``write(tmp)`` into a file beside ``path``, moved onto it whole: a failed or interrupted
    export leaves no file that looks finished."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".onnx.part")
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _export(module, sample: dict, path: Path) -> None:
    """``module`` as ONNX: batch and sequence axes dynamic (the sample's rows repeated to two,
    which torch.export would otherwise fix at one)."""
    import torch

    inputs = {k: (v.repeat(2, *([1] * (v.dim() - 1))) if v.shape[0] == 1 else v).cpu() for k, v in sample.items()}
    batch, length = torch.export.Dim("batch"), torch.export.Dim("sequence")
    shapes = {k: {0: batch, 1: length} if v.dim() == 2 else {0: batch} for k, v in inputs.items()}
    module = module.cpu().eval()

    def write(tmp: Path) -> None:
        torch.onnx.export(module, (), str(tmp), kwargs=inputs, dynamic_shapes=shapes, dynamo=True,
                          external_data=False, verbose=False)

    _written(path, write)


def _quantize(plain: Path, path: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    _written(path, lambda tmp: quantize_dynamic(str(plain), str(tmp), weight_type=QuantType.QInt8,
                                                per_channel=False))


class _TorchRunner:
    def __init__(self, module):
        self.module = module
        self.device = next(module.parameters()).device

    def __call__(self, inputs: dict) -> np.ndarray:
        import torch

        with torch.inference_mode():
            return self.module(**{k: v.to(self.device) for k, v in inputs.items()}).float().cpu().numpy()


class _OnnxRunner:
    def __init__(self, path: Path):
        import onnxruntime

        self.session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        self.names = [i.name for i in self.session.get_inputs()]

    def __call__(self, inputs: dict) -> np.ndarray:
        feed = {n: inputs[n].cpu().numpy() for n in self.names}
        return np.asarray(self.session.run(None, feed)[0], dtype=np.float32)


class _OpenVinoRunner:
    def __init__(self, path: Path):
        import openvino

        # float32 throughout: on a CPU with bf16 units OpenVINO would otherwise compute in bf16
        self.model = openvino.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        self.names = [i.get_any_name() for i in self.model.inputs]

    def __call__(self, inputs: dict) -> np.ndarray:
        feed = {n: inputs[n].cpu().numpy() for n in self.names}
        return np.asarray(self.model(feed)[0], dtype=np.float32)

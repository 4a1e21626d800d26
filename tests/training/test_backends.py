"""Backends: every kind of model scores on onnxruntime and OpenVINO as it does on torch (float32,
to 1e-5 on tiny random models), the export is made once and kept by model content, a failed
export leaves nothing that looks finished, int8 is named in the cache key and never passes for
float32, and a bad --backend is refused in one line, as a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from semrel.metrics.errors import ParameterError
from semrel.trainers.scoring import backends, load_scorer
from trainer_fixtures import tiny_encoder, toy_pairs

TOY = toy_pairs()
S1, S2 = TOY["sentence1"][:24], TOY["sentence2"][:24]
KINDS = ["transformer", "bi-encoder", "cross-encoder", "semrel-bi", "semrel-cross", "semrel-tri"]


def _scores(path, backend="torch", quantize=None, cache_dir=None, batch_size=8):
    condition = ["the colour"] * len(S1) if path.name == "semrel-tri" else None
    scorer = load_scorer(str(path), cache_dir=cache_dir, backend=backend, quantize=quantize, batch_size=batch_size)
    try:
        return scorer.score(S1, S2, condition)
    finally:
        scorer.close()


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """One score cache (with its exports/) shared by the module's tests."""
    return tmp_path_factory.mktemp("score-cache")


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_scores_on_the_backend_as_on_torch(kinds, exports, kind, backend):
    expected = _scores(kinds[kind])
    got = _scores(kinds[kind], backend, cache_dir=exports)
    assert not np.array_equal(expected, expected[0])  # the scores differ between pairs
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_a_model_the_exporter_cannot_trace_is_refused_naming_the_way_out(tmp_path):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    base = tiny_encoder(tmp_path / "base")
    pooling = Pooling(32, pooling_mode="mean", include_prompt=False)
    model = SentenceTransformer(modules=[Transformer(str(base)), pooling], prompts={"query": "query: "},
                                default_prompt_name="query")
    model.save(str(tmp_path / "st"), create_model_card=False)
    expected = model.encode(list(S1), prompt_name="query", convert_to_numpy=True)
    scorer = load_scorer(str(tmp_path / "st"), cache_dir=None)  # torch: pooled without the prompt
    np.testing.assert_allclose(scorer.encode(S1), expected, atol=1e-6)
    scorer = load_scorer(str(tmp_path / "st"), cache_dir=tmp_path / "cache", backend="onnx")
    with pytest.raises(ParameterError, match=r"cannot run .*st: torch.onnx.export failed on it "
                                             r"\(TorchExportError: .*\); use --backend torch"):
        scorer.encode(S1)
    assert not [p for p in (tmp_path / "cache" / "exports").rglob("*") if p.is_file()]


def test_the_export_is_made_once_and_kept_by_model_content(kinds, tmp_path, monkeypatch):
    made = []
    export = backends._export
    monkeypatch.setattr(backends, "_export", lambda *a: (made.append(a[2]), export(*a)))
    folder = shutil.copytree(kinds["semrel-bi"], tmp_path / "model")
    first = _scores(folder, "onnx", cache_dir=tmp_path / "cache")
    again = load_scorer(str(folder), cache_dir=tmp_path / "cache", backend="onnx")
    again.score(["something new"], ["not cached yet"])  # computed, so the export is read
    again.close()
    assert len(made) == 1 and made[0].is_file() and made[0].parent.parent == tmp_path / "cache" / "exports"
    shutil.copy(tiny_encoder(tmp_path / "other", seed=5) / "model.safetensors", folder / "model.safetensors")
    shutil.rmtree(tmp_path / "other")
    changed = _scores(folder, "onnx", cache_dir=tmp_path / "cache")
    assert len(made) == 2 and made[1].parent != made[0].parent  # new weights, new export
    assert not np.allclose(changed, first)


def test_a_failed_export_leaves_nothing_that_looks_finished(kinds, tmp_path, monkeypatch):
    import torch

    def broken(module, args, path, **kwargs):
        open(path, "wb").write(b"half an onnx file")
        raise RuntimeError("exporter crashed")

    monkeypatch.setattr(torch.onnx, "export", broken)
    with pytest.raises(ParameterError, match=r"failed on it \(RuntimeError: exporter crashed\)"):
        _scores(kinds["semrel-bi"], "onnx", cache_dir=tmp_path)
    assert [p.name for p in (tmp_path / "exports").rglob("*") if p.is_file()] == []
    monkeypatch.undo()
    np.testing.assert_allclose(_scores(kinds["semrel-bi"], "onnx", cache_dir=tmp_path),
                               _scores(kinds["semrel-bi"]), atol=1e-5)


def test_int8_is_its_own_cache_entry_and_differs_from_float32(kinds, exports):
    plain = load_scorer(str(kinds["semrel-cross"]), cache_dir=exports)
    onnx = load_scorer(str(kinds["semrel-cross"]), cache_dir=exports, backend="onnx")
    int8 = load_scorer(str(kinds["semrel-cross"]), cache_dir=exports, backend="onnx", quantize="int8")
    assert plain.settings().keys().isdisjoint({"backend", "quantize"})  # torch's keys as before backends
    assert len({plain.key, onnx.key, int8.key}) == 3
    assert int8.settings()["quantize"] == "int8"
    for scorer in (plain, onnx, int8):
        scorer.close()
    quantized = _scores(kinds["semrel-cross"], "onnx", "int8", cache_dir=exports)
    assert quantized.shape == (len(S1),) and not np.allclose(quantized, _scores(kinds["semrel-cross"]), atol=1e-7)


@pytest.mark.parametrize(("backend", "quantize", "message"), [
    ("onxx", None, "--backend onxx: must be one of torch, onnx, openvino (did you mean onnx?)"),
    ("openvino", "int8",
     "--quantize int8: is onnxruntime's dynamic quantisation: it runs with --backend onnx, not openvino"),
    ("onnx", "int4", "--quantize int4: must be one of int8"),
])
def test_a_bad_backend_is_refused_in_one_line(kinds, capsys, backend, quantize, message):
    from semrel.cli import main

    argv = ["benchmark", "--model", str(kinds["bi-encoder"]), "--only", "semrel-2024/eng", "--backend", backend,
            *(["--quantize", quantize] if quantize else [])]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"semrel benchmark: error: {message}"]


def test_a_typo_in_the_backend_is_refused_by_the_installed_command(kinds):
    command = [sys.executable, "-m", "semrel", "predict", "--model", str(kinds["bi-encoder"]), "--dataset",
               "semrel-2024", "--config", "eng", "--output", "p.csv", "--backend", "opnvino"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr.strip().splitlines()) == (2, [
        "semrel predict: error: --backend opnvino: must be one of torch, onnx, openvino (did you mean openvino?)"])


def test_a_missing_package_names_the_extra(monkeypatch):
    real = backends.importlib.util.find_spec
    monkeypatch.setattr(backends.importlib.util, "find_spec", lambda name: None if name == "openvino" else real(name))
    with pytest.raises(ParameterError, match=r"needs openvino: pip install 'semrel\[backends\]'"):
        backends.check_backend("openvino")


def test_predict_writes_the_same_file_on_every_backend(kinds, tmp_path):
    from semrel.cli import main
    from trainer_fixtures import toy_folder

    folder = toy_folder(tmp_path / "toy", 8, 16)
    files = {}
    for backend in ("torch", "onnx", "openvino"):
        out = tmp_path / f"{backend}.json"
        assert main(["predict", "--dataset", str(folder), "--score-range", "0", "5", "--model",
                     str(kinds["cross-encoder"]), "--output", str(out), "--backend", backend]) == 0
        files[backend] = np.array(list(json.loads(out.read_text()).values()), dtype=float)
    assert len(files["torch"]) == 16
    for backend in ("onnx", "openvino"):
        np.testing.assert_allclose(files[backend], files["torch"], atol=1e-5)


@pytest.mark.slow  # MiniLM exported twice, 500 texts encoded on each backend
@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_minilm_on_the_backend_gives_torchs_figure_on_semrel_2024_english_dev(mirror, cache_dir, tmp_path, backend):
    """0.82453 on torch (MTEB's figure too; tests/training/test_benchmark.py); each pair's score
    within 1e-5 of torch's on a float32 backend."""
    from semrel.dataset_scripts.benchmark_sets import select_sets
    from semrel.trainers.benchmark import load_sets, run_benchmark

    sets = select_sets(["semrel-2024/eng/validation"], mirror=mirror, cache_dir=cache_dir)
    (loaded,) = load_sets(sets, mirror=mirror)
    pairs = (loaded.rows["sentence1"], loaded.rows["sentence2"])
    scorers = [load_scorer("minilm", cache_dir=tmp_path, backend=b) for b in ("torch", backend)]
    try:
        np.testing.assert_allclose(scorers[1].score(*pairs), scorers[0].score(*pairs), atol=1e-5)
        reference, other = (run_benchmark([s], [loaded], n_resamples=100, log=lambda line: None).cells[0].spearman
                            for s in scorers)
    finally:
        for scorer in scorers:
            scorer.close()
    assert round(reference, 5) == 0.82453 and abs(other - reference) <= 1e-4

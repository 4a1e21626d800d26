"""Write a tiny random BERT (2 layers, hidden size 32, a vocabulary of 35 words) into a folder.

The docs' examples train and score it in seconds: its scores mean nothing. Usage:
``python scripts/tiny_bert.py tiny-bert``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from transformers import BertConfig, BertModel, BertTokenizer

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"a the is and of to in man woman dog".split()]
WORDS += [f"{w}s" for w in WORDS[5:]] + "what who where it was be on at for with".split()


def write_tiny_bert(folder: Path) -> Path:
    """A BertModel with random weights and a WordPiece tokenizer over :data:`WORDS`, saved in ``folder``."""
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is a file: the model needs a folder")
    with tempfile.TemporaryDirectory() as tmp:
        vocab = Path(tmp) / "vocab.txt"
        vocab.write_text("\n".join(WORDS) + "\n", encoding="utf-8")
        BertTokenizer(vocab=str(vocab)).save_pretrained(folder)
    config = BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(folder)
    return folder


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="where to write it (created)")
    try:
        folder = write_tiny_bert(ap.parse_args(argv).folder)
    except NotADirectoryError as e:
        ap.error(str(e))
    print(f"tiny random BERT -> {folder}")


if __name__ == "__main__":
    main()

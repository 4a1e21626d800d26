"""scripts/tiny_bert.py, the tiny random BERT the docs' pages train and score: run as the pages run
it (a subprocess from another directory), then loaded as they load it (transformers and
sentence-transformers on the folder)."""

from __future__ import annotations

import subprocess
import sys

from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer

from project import REPO

SCRIPT = REPO / "scripts" / "tiny_bert.py"


def test_the_script_writes_a_bert_that_transformers_and_sentence_transformers_load(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "tiny-bert"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "tiny random BERT -> tiny-bert"
    folder = tmp_path / "tiny-bert"
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder)
    assert (len(tokenizer), model.config.hidden_size, model.config.num_hidden_layers) == (35, 32, 2)
    ids = tokenizer("The man is at the dogs.")["input_ids"]
    assert tokenizer.unk_token_id in ids  # "." is not a word of its vocabulary
    ids = tokenizer("the man is at the dogs")["input_ids"]
    assert tokenizer.convert_ids_to_tokens(ids) == ["[CLS]", "the", "man", "is", "at", "the", "dogs", "[SEP]"]
    embeddings = SentenceTransformer(str(folder), device="cpu").encode(["a man", "a woman and a dog"])
    assert embeddings.shape == (2, 32)


def test_a_folder_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    done = subprocess.run([sys.executable, str(SCRIPT), "taken"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith("error: taken is a file: the model needs a folder")
    assert (tmp_path / "taken").read_text(encoding="utf-8") == "x"

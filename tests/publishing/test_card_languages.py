"""A card's languages are any ISO 639-1, 639-2 or 639-3 code in lower case, by one rule
(:func:`semrel.dataset_scripts.languages.language_problem`) that `semrel annotate dataset --language`
and the card check of `semrel push` share: a folder made for German or Swiss German is pushed; a name,
an upper-case code or no code at all is refused in one line naming it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from semrel.cli import main
from semrel.dataset_scripts.languages import language_problem
from semrel.publishing.hub_vocabulary import check_card

ACCEPTED = ["de", "deu", "ger", "gsw", "en", "cs", "arq", "ary", "rw", "mul"]
NOT_A_CODE = "is not an ISO 639-1, 639-2 or 639-3 language code (e.g. en, deu, gsw)"
REFUSED = [  # value -> what is said of it
    ("xx", NOT_A_CODE),
    ("e1", NOT_A_CODE),
    ("en ", NOT_A_CODE),
    ("", NOT_A_CODE),
    ("english", "is a language's name: its ISO 639 code is 'en'"),
    ("Swiss German", "is a language's name: its ISO 639 code is 'gsw'"),
    ("EN", "is not lower case: the ISO 639 code is 'en'"),
    ("Deu", "is not lower case: the ISO 639 code is 'deu'"),
]


@pytest.mark.parametrize("code", ACCEPTED)
def test_an_iso_639_code_is_accepted(code):
    assert language_problem(code) is None


@pytest.mark.parametrize("code, said", REFUSED, ids=[repr(c) for c, _ in REFUSED])
def test_anything_else_is_refused_saying_what_to_give(code, said):
    assert language_problem(code) == said


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A pairs file of 8 pairs and a BWS file of pair ids that annotates each (two annotators)."""
    root = tmp_path_factory.mktemp("languages")
    with open(root / "pairs.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["pair_id", "sentence1", "sentence2", "source"],
                                 *[[f"p{i}", f"Satz {i} über eine Katze.", f"Ein Hund {i} im Park.", "toy"]
                                   for i in range(8)]])
    with open(root / "ann.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["annotator", "tuple_id", "Item1", "Item2", "Item3", "Item4", "BestItem", "WorstItem"])
        for who in ("a1", "a2"):
            for t in range(8):
                ids = [f"p{(t + k) % 8}" for k in range(4)]
                ranked = sorted(ids, key=lambda p: int(p[1:]))
                w.writerow([who, f"t{t}", *ids, ranked[-1], ranked[0]])
    return root


def made(inputs: Path, out: Path, *languages: str) -> int:
    return main(["annotate", "dataset", str(inputs / "ann.csv"), "--pairs", str(inputs / "pairs.csv"),
                 "--output", str(out), "--license", "cc-by-4.0", "--trials", "20",
                 *[arg for language in languages for arg in ("--language", language)]])


@pytest.mark.parametrize("languages", [("de",), ("deu",), ("gsw",), ("de", "gsw")])
def test_a_folder_made_for_any_language_passes_the_push_checks(inputs, languages, tmp_path, upstream, capsys):
    folder = tmp_path / "my-dataset"
    assert made(inputs, folder, *languages) == 0
    assert check_card(folder / "README.md", "dataset") == []
    capsys.readouterr()
    assert main(["push", "--namespace", "my-org", "--dataset", str(folder), "--out", str(tmp_path / "out"),
                 "--mirror", str(upstream), "--dry-run"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("code, said", REFUSED[:1] + REFUSED[4:], ids=[repr(c) for c, _ in REFUSED[:1] + REFUSED[4:]])
def test_a_bad_language_is_refused_by_annotate_dataset_and_by_the_card_check(inputs, code, said, tmp_path, capsys):
    assert made(inputs, tmp_path / "refused", "en", code) == 2
    assert capsys.readouterr().err == f"semrel annotate dataset: error: --language {code}: {said}\n"
    assert not (tmp_path / "refused").exists()
    folder = tmp_path / "card"
    assert made(inputs, folder, "en") == 0
    card = folder / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("- en\n", f"- en\n- {code}\n", 1), encoding="utf-8")
    assert check_card(card, "dataset") == [f"{card}: language {code!r} {said}"]

"""The SemRel-2024 release files: which file holds which language and split, and reading one.

Upstream (``semantic-textual-relatedness/Semantic_Relatedness_SemEval2024``, branch ``main``) lays
its CSVs out as ``Track A|B|C/<lang>/<lang>_<split>[_with_labels].csv``; Track B and C repeat the
same bytes for the languages they share with Track A, so each distinct file is read once, from its
:data:`FILES` path (Track A where the language has one, else Track B). Measured layouts
(:data:`LAYOUTS`): ``PairID,Text,Score``, ``PairID,Text,score`` (afr dev), ``Text,Score,PairID``
(pan dev and labelled test), ``PairID,Text`` (no labels). ``Text`` holds the two sentences split
by one newline; only ``afr_test_with_labels.csv`` splits them by a tab (its entry in
:data:`SEPARATOR` says so; every other file must use a newline).

:func:`read_file` raises :class:`~semrel.dataset_scripts.errors.DataValidationError` naming file,
row, rule and value on: a header that is none of the layouts, a PairID naming another language or
split (its ``-``/``_``-separated tokens must name exactly this language and this split), a
repeated PairID, a ``Text`` without exactly one separator or with an empty sentence, a score that
is not an ASCII number in [0, 1]. Sentences are kept as upstream wrote them (arq and arb
sentences carry leading/trailing spaces; the raw BWS tuples carry the same text).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from urllib.parse import quote

from ..errors import DataValidationError, SourceNotFound
from ..sources import Source, fetch
from ..textio import NUMBER_RULE, ascii_number, csv_rows, decode_utf8

DATASET_ID = "semrel-2024"
REPOSITORY = "https://github.com/semantic-textual-relatedness/Semantic_Relatedness_SemEval2024"
RAW_BASE = ("https://raw.githubusercontent.com/semantic-textual-relatedness/"
            "Semantic_Relatedness_SemEval2024/main/")
LICENCE = ("Research use only; do not redistribute (the task's terms: cite Ousidhoum et al. 2024 "
           "and point people to the task repository). The texts come from many sources with "
           "their own terms.")

# code -> (English name, BCP-47 tag for the Hub card)
LANGUAGES = {
    "afr": ("Afrikaans", "af"), "amh": ("Amharic", "am"), "arb": ("Modern Standard Arabic", "ar"),
    "arq": ("Algerian Arabic", "arq"), "ary": ("Moroccan Arabic", "ary"), "eng": ("English", "en"),
    "esp": ("Spanish", "es"), "hau": ("Hausa", "ha"), "hin": ("Hindi", "hi"),
    "ind": ("Indonesian", "id"), "kin": ("Kinyarwanda", "rw"), "mar": ("Marathi", "mr"),
    "pan": ("Punjabi", "pa"), "tel": ("Telugu", "te"),
}
TRACK_A = ("amh", "arq", "ary", "eng", "esp", "hau", "kin", "mar", "tel")  # supervised: has train
TRACK_C = ("afr", "amh", "arb", "arq", "ary", "eng", "esp", "hau", "hin", "ind", "kin", "pan")
SPLIT_NAMES = {"train": "train", "dev": "validation", "test": "test"}  # upstream's split -> ours
SPLITS = tuple(SPLIT_NAMES)  # upstream's, as in its file names and PairIDs
# a split as the evaluation takes it (``semrel evaluate --split``): upstream's word or ours -> ours
EVALUATION_SPLITS = {word: ours for upstream, ours in SPLIT_NAMES.items() for word in dict.fromkeys((upstream, ours))}

# header layouts as measured; anything else is an error
LAYOUTS = {
    ("PairID", "Text", "Score"): "Score",
    ("PairID", "Text", "score"): "score",
    ("Text", "Score", "PairID"): "Score",
    ("PairID", "Text"): None,
}


@dataclass(frozen=True)
class ReleaseFile:
    """One distinct upstream file: its path under the dataset folder and its sha256."""

    path: str
    sha256: str

    @property
    def source(self) -> Source:
        return Source(dataset_id=DATASET_ID, file_name=self.path, url=RAW_BASE + quote(self.path),
                      sha256=self.sha256, licence=LICENCE, licence_url=REPOSITORY,
                      redistributable=False)


def _f(track: str, name: str, sha256: str) -> ReleaseFile:
    return ReleaseFile(f"Track {track}/{name.split('_')[0]}/{name}", sha256)


# language, split, track, file name, sha256: the file the builder reads for each split. dev/test:
# the labelled file where published; esp test: the unlabelled file (Spanish test labels were never
# published: scores null); eng test: the labelled file, held back from the mirror (see builder)
_TABLE = """
amh train A amh_train.csv              33847fcf914f96e1e47b2806362958afd1be365bbd464a51a276d6782aac96f6
arq train A arq_train.csv              c1a86af4108b81071639549c6deafb58a7adc0297ce124341f47b053d1d2dd0a
ary train A ary_train.csv              7017fb5b58f23231ac4d5601123dd11bcd8967d3a3057277e88ddf329324b938
eng train A eng_train.csv              fbf2227c7d35d1c039c6afced3314197f712f40c73a76bad7383ac58ffa21550
esp train A esp_train.csv              74b4686b00722684f8f009d46238b9a731e4a9ca6b24eb02efad0fd530531736
hau train A hau_train.csv              fef1e27aa6da2295c9c5ce64c8e93ea018070cc6d629aa1d998572d917771618
kin train A kin_train.csv              03cb184d2bf4bfd91267f555a794414773854bbb74da409a4bdabc0c1505c2f3
mar train A mar_train.csv              ba7a78c427fed7f86e25c94b0e07b3b4536e4f08b64a9fa1f84138fb57157a8d
tel train A tel_train.csv              0c44e305b7b972e5b6e11e2ea1bc497ba11f9685c5f67583df90b1bbce9753e5
afr dev   B afr_dev_with_labels.csv    d544a2e09ce02820d80b10710d732850c5b4a8bc83cba542eed19270c44e302a
amh dev   A amh_dev_with_labels.csv    3cf303cd409b0e9eb0ac67d1c8b0c559da57a484b37c370f55248bb8f4df5515
arb dev   B arb_dev_with_labels.csv    03eb381d3fdbe6d91e0943fc456ba6c9daa2da9ac1ab3fb526d220c12a474409
arq dev   A arq_dev_with_labels.csv    5a22c13fc0ed49d49403dcbe29fd3efcc9aed1b0fb6a49b278cf4151609a01ae
ary dev   A ary_dev_with_labels.csv    14fc7960afdc212145a1a959bff799feeda5993437ce341e0152ba8c3f9f893d
eng dev   A eng_dev_with_labels.csv    33bff72be169a0da2988496d17ee1e4fd1c17be10230c7820dc4628cd9c349d5
esp dev   A esp_dev_with_labels.csv    c072a6ea554cf6eac2d37d9ca1db381e4c0086c15ece15d0b37c4d0d33778c79
hau dev   A hau_dev_with_labels.csv    077a10d9710ad3a4f241cfd41a0b404966d6586811f25f192e3db699985472e3
hin dev   B hin_dev_with_labels.csv    df7703168b3aed48158ed3dcb7d394c3bd9ae57568abd4a63cd297498078f5ee
ind dev   B ind_dev_with_labels.csv    b55143fb8405512be7f437a6d115c1d450966c7f3fdf298f8d7b6ca6b24911aa
kin dev   A kin_dev_with_labels.csv    b0bf3b918ecfacfc837d1a909a9ad1f978c185a40eb8e6f4e43887c707d3da71
mar dev   A mar_dev_with_labels.csv    859def29780b03bc877eb33e940de40c77318e91e0f7a48f911243b77ce4fef6
pan dev   B pan_dev_with_labels.csv    0e6914532c4dc60f493c8a8059f59602536c828733588431a168f1621f7e465e
tel dev   A tel_dev_with_labels.csv    73ce4daf8645b246570902531ded386c7a1937e02c97a912f2766db90019d4a0
afr test  B afr_test_with_labels.csv   d301b3c75eb4f3a97fa35d2084d21b0db35a20aa90d2f5bcd781fbfad7884d76
amh test  A amh_test_with_labels.csv   8b88797a6f3b22608f3159d6ca47bcf46fb012d248060bbbe1e8f66245f7b422
arb test  B arb_test_with_labels.csv   26c4a1b89bc3c2a8de6cdca22baf0a01c7144dd68b767826d8a79411d7dca0d4
arq test  A arq_test_with_labels.csv   675ef272446676d125c0db63203a1ef478ab04222adcaa1831d9f46f85ab65b4
ary test  A ary_test_with_labels.csv   b7f0a95a13bf4781a2f3e7d12ef212146cd8fd520a21fce144465decdf910a59
eng test  A eng_test_with_labels.csv   6f3a7bb48ddb8ba9fe9fcf96dfa2bca70da477f1a2be2193f884f4eda3212c0e
esp test  A esp_test.csv               1147b303b6f5798ad01652a803b05f382c07ef394ab9201f49697b8917a5bd1b
hau test  A hau_test_with_labels.csv   7f166eab81b377e4856d96d36a52e58a862fe4c075acfd4f0c21f6153e5c4f3c
hin test  B hin_test_with_labels.csv   6a4baf0e9f1bb720b3d0a8094a7b826db2ffcb5d90e195358172ac2b9082cd2e
ind test  B ind_test_with_labels.csv   a6ce2c401a0d0b9131dbb2d180d5c93c0841fd16f42b14f0b5007ba4df82c106
kin test  A kin_test_with_labels.csv   a9258444caea42153f159955e075070f191b8481e939c13c31f074fd47279282
mar test  A mar_test_with_labels.csv   29dacc1eb8b8c830bda3d3c68ddb6a0026e6d27e645da0ccc12968db64555619
pan test  B pan_test_with_labels.csv   0348304ac453204508e7687e9f629cda46da656cdb40bfc6b999704f20433b58
tel test  A tel_test_with_labels.csv   758804fd2624aa1958aa652986ca39ae042d728ba72e49a11a14c991504ba14f
"""
FILES: dict[tuple[str, str], ReleaseFile] = {
    (lang, split): _f(track, name, sha256)
    for lang, split, track, name, sha256 in (line.split() for line in _TABLE.strip().splitlines())
}
# the labelled English test file is held back from the mirror on purpose (2,600 pairs); when it
# cannot be had, English test is built from this unlabelled file with null scores
ENG_TEST_UNLABELLED = _f("A", "eng_test.csv",
                         "5a2058d5fe63193488394c4a791eac81e9a7a454c44a3da68efda7fee90ce151")
# 20 pilot pairs: the first 20 of afr dev, same text and score (checked by the builder)
AFR_PILOT = _f("B", "afr_pilot_dev_labels.csv",
               "35cb5bbc05efb203a2fd759774f2a93e4100e171930111f46e90ce37ec730e91")
BWS = {
    "arb": ReleaseFile("BWS_annotations/arb_bws.csv",
                       "326a3e7ae7065d8403d53979e4d4beaa0f058da1162bd18911ddfd45a89f3719"),
    "arq": ReleaseFile("BWS_annotations/arq_bws.csv",
                       "38dcd42fcac081c6eda70ceae3d753b9176ccb74e1c16edb1338e03f660af7ed"),
}
SEPARATOR = {FILES[("afr", "test")].path: "\t"}  # the one file that splits Text by a tab


def languages_with(split: str) -> list[str]:
    """The languages that have ``split`` (train: Track A's nine)."""
    return [lang for lang in LANGUAGES if (lang, split) in FILES]


@dataclass(frozen=True)
class SplitRows:
    """What :func:`read_split` read: the rows, the file they came from, and (only when the
    labelled file could not be had) the note saying so."""

    rows: list[dict]
    file: ReleaseFile
    note: str | None = None


def read_split(language: str, split: str, *, mirror=None, dl_manager=None) -> SplitRows:
    """The rows of ``language``/``split`` from :data:`FILES`, fetched sha256-checked
    (:func:`semrel.dataset_scripts.sources.fetch`: the mirror, else the upstream URL).

    English test: its labelled file is read like every other; only when it is absent (not in the
    mirror, or not downloadable: :class:`~semrel.dataset_scripts.errors.SourceNotFound`) is the
    unlabelled ``eng_test.csv`` read instead, scores null, with a note saying so. A file that is
    there but fails its checksum is an error, never a fallback. The checksums live in
    :data:`FILES` only; a test substitutes a fixture for a file by replacing its entry there
    (``monkeypatch.setitem(FILES, ("eng", "test"), ReleaseFile(path, fixture_sha256))``).
    """
    if (language, split) not in FILES:
        raise KeyError(f"semrel-2024 has no {language}/{split} (languages with {split}: "
                       f"{', '.join(languages_with(split))})")
    release = FILES[(language, split)]
    try:
        path = fetch(release.source, dl_manager=dl_manager, mirror=mirror)
    except SourceNotFound as exc:
        if (language, split) != ("eng", "test"):
            raise
        fallback = ENG_TEST_UNLABELLED
        path = fetch(fallback.source, dl_manager=dl_manager, mirror=mirror)
        note = (f"semrel-2024: {release.path} (the labelled English test, sha256 "
                f"{release.sha256[:12]}...) was not available ({exc}); English test is built "
                f"from {fallback.path}: {{n}} pairs with null scores, no labels")
        rows = read_file(path, _read_bytes(path), language=language, split=split)
        return SplitRows(rows, fallback, note.format(n=len(rows)))
    return SplitRows(read_file(path, _read_bytes(path), language=language, split=split), release)


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _tokens(pair_id: str) -> set[str]:
    return set(re.split(r"[-_]", pair_id.lower()))


def read_file(name: str, data: bytes, *, language: str, split: str,
              separator: str | None = None) -> list[dict]:
    """Rows ``{"pair_id", "sentence1", "sentence2", "score", "row"}`` of one release file.

    ``name`` is the file named in errors; ``score`` is a float in [0, 1] or ``None`` when the
    file has no score column; ``separator`` defaults to :data:`SEPARATOR`'s entry, else newline.
    See the module docstring for the rules.
    """
    if separator is None:
        separator = next((sep for path, sep in SEPARATOR.items() if str(name).endswith(path)), "\n")
    text = decode_utf8(name, data)
    header = tuple(next(csv.reader(io.StringIO(text, newline="")), ()))
    if header not in LAYOUTS:
        raise DataValidationError(name, None, "unknown header layout: expected one of "
                                  + "; ".join(",".join(h) for h in LAYOUTS), ",".join(header))
    score_column = LAYOUTS[header]
    shown = "a tab" if separator == "\t" else "a newline" if separator == "\n" else repr(separator)
    rows, first_row_of = [], {}
    for row_no, row in csv_rows(name, data, header):
        pair_id = row["PairID"]
        tokens = _tokens(pair_id)
        if tokens & set(LANGUAGES) != {language} or tokens & set(SPLITS) != {split}:
            raise DataValidationError(name, row_no, f"PairID must name language {language!r} and "
                                      f"split {split!r} (PairID of another language or split)",
                                      repr(pair_id))
        if pair_id in first_row_of:
            raise DataValidationError(name, row_no, "repeated PairID",
                                      f"{pair_id!r} first seen at row {first_row_of[pair_id]}")
        first_row_of[pair_id] = row_no
        cell = row["Text"]
        if cell.count(separator) != 1 or (separator != "\n" and "\n" in cell):
            raise DataValidationError(name, row_no, f"Text must hold two sentences separated by "
                                      f"exactly one {shown.split()[-1]}",
                                      f"{pair_id}: found {cell.count(separator)} × {shown}"
                                      + (", and a newline" if separator != "\n" and "\n" in cell
                                         else ""))
        sentence1, sentence2 = cell.split(separator)
        if not sentence1.strip() or not sentence2.strip():
            raise DataValidationError(name, row_no, "empty sentence", pair_id)
        rows.append({"pair_id": pair_id, "sentence1": sentence1, "sentence2": sentence2,
                     "score": None if score_column is None else
                     _score(name, row_no, row[score_column]), "row": row_no})
    return rows


def _score(name: str, row_no: int, raw: str) -> float:
    value = ascii_number(raw)
    if value is None:
        raise DataValidationError(name, row_no, f"score must be a number ({NUMBER_RULE})", repr(raw))
    if not 0.0 <= value <= 1.0:
        raise DataValidationError(name, row_no, "score must be in [0, 1]", repr(raw))
    return value

"""Potato (``potato-annotation``): a best-worst scaling task folder out, its annotations back.

**Out** (:func:`write_task`): ``config.yaml`` (Potato's ``bws`` annotation scheme and its
``bws_config`` block), ``data/slots.jsonl`` (the items Potato reads) and ``semrel-task.json`` (what
the way back needs: each Potato tuple id's semrel tuple id and pair ids, and the scheme's name).
Potato's ``bws`` scheme takes no tuples from its data: ``bws_config`` makes it cut ``num_tuples``
tuples from random shuffles of the data's items (``potato.bws_tuple_generator``: a
``random.Random(seed)`` shuffle of the item indices per pass, each tuple the next ``tuple_size``
indices). So that it shows semrel's design (:func:`semrel.metrics.bws.design.generate_tuples`,
the most even co-occurrence), the data holds one item per *slot* of the design (tuple i, position
j), ``k * T`` items for T tuples, placed where that one pass puts them: with ``num_tuples`` T
the generator's single pass over the slots yields exactly tuple i at Potato's ``bws_tuple_<i>``.
Each slot shows its pair as ``sentence1 ↔ sentence2``.

**Back** (:func:`read_answers`): Potato keeps each annotator's answers in
``<output_annotation_dir>/<user>/user_state.json`` (``instance_id_to_label_to_value``: per tuple,
the scheme's ``best`` and ``worst`` labels, each a position letter ``A``..). Each labelled tuple
is one :class:`~semrel.annotation.answers.RawAnswer` (a position without a label: None), and the
rules of :mod:`semrel.annotation.answers` (incomplete, contradictory, ...) count the odd ones.
Every folder there that holds a ``user_state.json`` is an annotator (Potato keeps folders of its
own beside them); unreadable JSON, a tuple id or position letter the task does not hold: an error
naming the file.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path

from semrel.metrics.errors import DataValidationError

from .answers import AnswerRows, RawAnswer, bws_rows

TASK_FILE = "semrel-task.json"
CONFIG_FILE = "config.yaml"
DATA_FILE = "data/slots.jsonl"
OUTPUT_DIR = "annotation_output"
SCHEME = "relatedness"
FORMAT = "semrel-potato-task/1"
GUIDE = ("Each of the four items below is a pair of sentences. Choose the pair whose two sentences are "
         "the most related in meaning, and the pair whose two sentences are the least related.")
BEST = "Which pair is the MOST related?"
WORST = "Which pair is the LEAST related?"
POSITIONS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def potato_tuple_id(i: int) -> str:
    """Potato's id of its i-th generated tuple (0-based), as ``BwsTupleGenerator`` names it."""
    return f"bws_tuple_{i + 1:04d}"


def slot_order(n_tuples: int, k: int, seed: int) -> list[int]:
    """The slot (``k * tuple + position``) at each data row: the inverse of the permutation that
    Potato's generator's first ``random.Random(seed).shuffle`` of ``range(k * n_tuples)`` gives."""
    shuffled = list(range(k * n_tuples))
    random.Random(seed).shuffle(shuffled)
    order = [0] * len(shuffled)
    for slot, row in enumerate(shuffled):
        order[row] = slot
    return order


def write_task(tuples: Mapping[str, Sequence[str]], pairs: Mapping[str, Mapping[str, str]], output, *,
               guide: str = GUIDE, title: str = "semrel best-worst relatedness", seed: int = 0) -> list[Path]:
    """Potato's task folder for ``tuples`` (tuple id -> pair ids, as ``semrel bws design --pairs``
    writes them) over ``pairs`` (pair id -> row with ``sentence1``, ``sentence2``) into the new
    folder ``output`` (module docstring); returns the files written. ``guide``: the annotation
    guide shown above each tuple; ``seed``: the seed Potato's shuffle is given."""
    import yaml

    from semrel.dataset_scripts.folders import replaced_whole

    ids = list(tuples)
    k = len(tuples[ids[0]])
    order = slot_order(len(ids), k, seed)
    if Path(output).exists() and (not Path(output).is_dir() or any(Path(output).iterdir())):
        raise DataValidationError(str(output), None, "exists and is not an empty folder (a task folder "
                                  "holds Potato's annotations: never replaced; give a new folder)")
    with replaced_whole(Path(output)) as folder:
        (folder / "data").mkdir()
        with (folder / DATA_FILE).open("w", encoding="utf-8") as data:
            for slot in order:
                tuple_id, position = ids[slot // k], slot % k
                pair = pairs[tuples[tuple_id][position]]
                data.write(json.dumps({"id": f"{tuple_id}-{POSITIONS[position]}",
                                       "text": f"{pair['sentence1']} ↔ {pair['sentence2']}",
                                       "pair_id": tuples[tuple_id][position]}, ensure_ascii=False) + "\n")
        config = {
            "annotation_task_name": title,
            "task_dir": ".",
            "output_annotation_dir": OUTPUT_DIR + "/",
            "data_files": [DATA_FILE],
            "item_properties": {"id_key": "id", "text_key": "text"},
            "user_config": {"allow_all_users": True, "users": []},
            "annotation_schemes": [{"annotation_type": "bws", "name": SCHEME, "description": guide,
                                    "best_description": BEST, "worst_description": WORST,
                                    "tuple_size": k, "label_requirement": {"required": True}}],
            "bws_config": {"tuple_size": k, "num_tuples": len(ids), "seed": seed},
        }
        (folder / CONFIG_FILE).write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
                                          encoding="utf-8")
        task = {"format": FORMAT, "scheme": SCHEME, "output_annotation_dir": OUTPUT_DIR,
                "tuples": {potato_tuple_id(i): [t, list(tuples[t])] for i, t in enumerate(ids)}}
        (folder / TASK_FILE).write_text(json.dumps(task, indent=1), encoding="utf-8")
    return [Path(output) / name for name in (CONFIG_FILE, DATA_FILE, TASK_FILE)]


def read_task(folder) -> dict:
    """The ``semrel-task.json`` of a task folder :func:`write_task` wrote (an error naming it otherwise)."""
    path = Path(folder) / TASK_FILE
    if not path.is_file():
        raise DataValidationError(str(folder), None, f"not a Potato task folder of semrel (no {TASK_FILE}; "
                                  "semrel annotate potato writes one)")
    try:
        task = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataValidationError(str(path), None, "unreadable JSON", str(exc)) from None
    if not isinstance(task, dict) or task.get("format") != FORMAT:
        raise DataValidationError(str(path), None, "not a semrel Potato task file", f"format is not {FORMAT!r}")
    return task


def read_answers(folder, *, salt: str) -> AnswerRows:
    """The BWS rows of every ``user_state.json`` under the task's output folder (module docstring)."""
    folder = Path(folder)
    task = read_task(folder)
    names = {potato: tuple_id for potato, (tuple_id, _) in task["tuples"].items()}
    design = {tuple_id: items for tuple_id, items in task["tuples"].values()}
    output = folder / task["output_annotation_dir"]
    users = sorted(p.parent for p in output.glob("*/user_state.json")) if output.is_dir() else []
    if not users:
        raise DataValidationError(str(output), None, "no annotations yet (no annotator folder with a "
                                  "user_state.json; start Potato with config.yaml and annotate first)")
    answers = [answer for user in users for answer in _user_answers(user, names, design)]
    return bws_rows(answers, design, salt=salt, source=str(output))


def _user_answers(user: Path, names: dict, design: dict) -> list[RawAnswer]:
    path = user / "user_state.json"
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        labelled = state["instance_id_to_label_to_value"]
        annotator = str(state.get("user_id", user.name))
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise DataValidationError(str(path), None, "not a Potato user state", f"{type(exc).__name__}: {exc}") from None
    answers = []
    for instance, labels in labelled.items():
        if instance not in names:
            raise DataValidationError(str(path), None, "a tuple the task does not hold", repr(instance))
        tuple_id = names[instance]
        chosen = {"best": None, "worst": None}
        for label, value in labels:
            if label.get("schema") == SCHEME and label.get("name") in chosen:
                chosen[label["name"]] = _pair_at(value, design[tuple_id], path, instance)
        if chosen["best"] is None and chosen["worst"] is None:
            continue  # labels of another scheme only
        answers.append(RawAnswer(annotator, tuple_id, chosen["best"], chosen["worst"],
                                 where=f"{path}: {instance}"))
    return answers


def _pair_at(value, items: Sequence[str], path: Path, instance: str) -> str | None:
    """The pair id at position letter ``value`` (None for an empty one)."""
    if value in (None, ""):
        return None
    position = POSITIONS.find(str(value)) if len(str(value)) == 1 else -1
    if not 0 <= position < len(items):
        raise DataValidationError(str(path), None, "a position the tuple does not have",
                                  f"{instance}: {value!r} (positions A..{POSITIONS[len(items) - 1]})")
    return items[position]

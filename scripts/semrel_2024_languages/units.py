"""What the study is made of: its units (a Track A language, a Track C target, Czech News STS),
the members each unit trains, and the settings they share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from semrel.dataset_scripts.semrel_2024.files import TRACK_A, TRACK_C

MODEL = "e5-small"
GRID_A = {"bi": ("2e-5", "5e-5"), "cross": ("2e-5", "5e-5")}  # learning rates per encoder
EPOCHS_A = 4  # the best epoch of these is kept, on dev
SETTINGS_C = {"bi": "2e-5", "cross": "2e-5"}  # learning rate per encoder, fixed beforehand
EPOCHS_C = 2
SAVE_STEPS_C = 250  # Track C runs keep a checkpoint this often, to resume
CHOICE_FOLDS = 5
GRID_FROM_ALL = {"bi": ("1e-5", "2e-5"), "cross": ("1e-5", "2e-5")}  # the all members trained further
EPOCHS_FROM_ALL = 2  # the best of these is kept, on dev
LONGER = 2  # a chosen member whose kept epoch is its last gets a sibling with LONGER × its epochs
SHARED = "all"  # the config the Track C targets without a train split train on
CZECH_SCALE = 6.0  # Czech News STS scores 0-6: prediction = 6 × the model's [0, 1] score


@dataclass(frozen=True)
class Unit:
    """One Track A language or Track C target: where its members train (``train``: a config of
    semrel-2024) and what it is scored on (``config``'s validation and test)."""

    track: str
    language: str
    folder: Path
    train: str
    members: Path  # the folder its members and ensembles live in

    @property
    def config(self) -> str:
        return self.language if self.track == "A" or self.language == SHARED else f"cross-lingual-{self.language}"


def units(out: Path, tracks, languages) -> list[Unit]:
    chosen = []
    if "a" in tracks:
        chosen += [Unit("A", lang, out / "track-a" / lang, lang, out / "track-a" / lang)
                   for lang in TRACK_A if lang in languages]
    if "c" in tracks:
        for lang in TRACK_C:
            if lang in languages:
                train = f"cross-lingual-{lang}" if lang in TRACK_A else SHARED
                chosen.append(Unit("C", lang, out / "track-c" / lang, train,
                                   out / "track-c" / f"train-{lang if lang in TRACK_A else SHARED}"))
    return chosen


@dataclass(frozen=True)
class MemberSpec:
    """One member a unit trains: its folder name under ``unit.members`` and its ``semrel fit``
    settings (``choose_on``: the config whose dev split chooses the epoch, None: the last;
    ``start``: a run it goes on training)."""

    name: str
    encoder: str
    learning_rate: str
    epochs: int
    choose_on: str | None
    start: Path | None = None  # the run folder it starts from (None: the study's model)


def member_specs(unit: Unit) -> list[MemberSpec]:
    """Track A: every encoder at every rate of :data:`GRID_A`, the epoch chosen on the language's
    dev; Track C: each encoder at its :data:`SETTINGS_C` rate."""
    if unit.track == "A":
        return [MemberSpec(f"{e}-lr{rate}", e, rate, EPOCHS_A, unit.language) for e, rates in GRID_A.items()
                for rate in rates]
    return [MemberSpec(e, e, rate, EPOCHS_C, None) for e, rate in SETTINGS_C.items()]


def czech_unit(out: Path) -> Unit:
    """Czech News STS, scored by the Track C members trained on config :data:`SHARED`."""
    return Unit("C", "czech", out / "czech", SHARED, out / "track-c" / f"train-{SHARED}")


def shared_unit(out: Path) -> Unit:
    """The Track C members trained once on config :data:`SHARED` (``train-all/``), as a unit."""
    return Unit("C", SHARED, out / "track-c" / SHARED, SHARED, out / "track-c" / f"train-{SHARED}")


def from_all_unit(out: Path, language: str) -> Unit:
    """``--all-languages``: a Track A language's families built on the :data:`SHARED` members."""
    return Unit("A", language, out / "all-languages" / language, language, out / "all-languages" / language)


def from_all_specs(unit: Unit, shared: Unit) -> list[MemberSpec]:
    """Each :data:`SHARED` member trained further on the language's train split at every rate of
    :data:`GRID_FROM_ALL`, :data:`EPOCHS_FROM_ALL` epochs, the epoch chosen on its dev."""
    return [MemberSpec(f"from-all-{e}-lr{rate}", e, rate, EPOCHS_FROM_ALL, unit.language, shared.members / e)
            for e, rates in GRID_FROM_ALL.items() for rate in rates]

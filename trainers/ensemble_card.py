"""The model card of an ensemble folder: metadata made from its members' facts, and a body that
says how the members combine and how the folder loads.

The metadata (:func:`ensemble_metadata`) comes from each member's own card (a run's, a copied
folder's, a Hub model's, a packaged model's; a packaged model's licence is the one semrel
records for it):

- ``license``: the most restrictive of the members' licences, by :data:`CHAINS` (each licence
  covers those before it in a chain: CC0 < MIT < Apache-2.0 < CC BY < CC BY-SA, and CC BY <
  CC BY-NC < CC BY-NC-SA). Members whose licences no one of them covers (CC BY-SA beside CC BY-NC,
  two different ``other`` licences, a licence outside the chains beside another one) are refused
  in one line: no single licence states the terms of the whole. ``unknown`` covers every
  licence (the whole's terms are unknown too). A member whose card names no licence leaves the
  ensemble without one, and the card says which member (``semrel push`` refuses such a card, as
  it refuses a run's). This is an order for cards, not legal advice.
- ``language``, ``datasets``: the union of the members' (in member order);
- ``library_name: semrel``, ``pipeline_tag: sentence-similarity``: only semrel's
  ``Ensemble.load`` loads the folder (the combination is semrel code), and it scores sentence pairs.
"""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS
from semrel.metrics.errors import ParameterError

from .card import PATH_COMMENT, SEMREL_INSTALL
from .members import origin
from .run_folder import CARD, MEMBERS, member_facts

PERMISSIVE = ("cc0-1.0", "mit", "apache-2.0", "cc-by-4.0")
CHAINS = (PERMISSIVE + ("cc-by-sa-4.0",), PERMISSIVE + ("cc-by-nc-4.0", "cc-by-nc-sa-4.0"))


def covers(first: str, second: str) -> bool:
    """Whether licence ``first`` states terms that hold for ``second`` too (:data:`CHAINS`)."""
    return first == second or first == "unknown" or any(
        first in chain and second in chain and chain.index(first) >= chain.index(second) for chain in CHAINS)


def _member_card(path: Path) -> dict:
    """The metadata of the card in ``path`` ({} where it has none)."""
    if not (Path(path) / CARD).is_file():
        return {}
    return ModelCard.load(Path(path) / CARD, ignore_metadata_errors=True).data.to_dict()


def _listed(value) -> list:
    return [] if not value else [value] if isinstance(value, str) else list(value)


def combined_licence(licences: dict[str, dict]) -> dict:
    """``license`` (with ``license_name``/``license_link`` for ``other``) of the whole, from each
    member's card metadata (member name -> its metadata); {} where a member names none; a
    ParameterError on ``members`` where no member's licence covers the others' (module docstring)."""
    if any(not meta.get("license") for meta in licences.values()):
        return {}
    terms = {name: (meta["license"], meta.get("license_name"), meta.get("license_link"))
             for name, meta in licences.items()}

    def over(first: tuple, second: tuple) -> bool:  # an `other` licence covers only itself
        return covers(first[0], second[0]) and (first[0] != "other" or first == second)

    for licence, name, link in terms.values():
        if all(over((licence, name, link), other) for other in terms.values()):
            return {"license": licence, **({"license_name": name, "license_link": link} if licence == "other" else {})}
    a, b = next((a, b) for a in terms for b in terms if not (over(terms[a], terms[b]) or over(terms[b], terms[a])))
    shown = {k: t[0] if t[0] != "other" else f"other ({t[1] or 'unnamed'})" for k, t in terms.items()}
    raise ParameterError("members", [a, b], f"have licences no single one covers: {shown[a]} ({a}) and "
                         f"{shown[b]} ({b}); an ensemble's card takes the member licence that covers every other, "
                         f"in the order {' < '.join(CHAINS[0])} and {' < '.join(CHAINS[1][len(PERMISSIVE) - 1:])}")


def member_cards(members, models) -> dict[str, dict]:
    """Each member's card metadata by its name (``members``: their folders; ``models``: their
    records, None for runs); a packaged member's ``license`` is semrel's record of it."""
    cards = {}
    for member, model in zip(members, models, strict=True):
        meta = _member_card(Path(member))
        if model is not None and model["source"] == "packaged":
            meta["license"] = PACKAGED_MODELS[model["spec"]].license
        name = model["spec"] if model is not None and model["source"] != "folder" else Path(member).name
        cards[name] = meta
    return cards


def ensemble_metadata(cards: dict[str, dict], conditional: bool) -> tuple[ModelCardData, str]:
    """The card's metadata from the members' (:func:`member_cards`), and a note naming the
    members without a licence ("" where each has one)."""
    union = {key: list(dict.fromkeys(v for meta in cards.values() for v in _listed(meta.get(key))))
             for key in ("language", "datasets")}
    unlicensed = [name for name, meta in cards.items() if not meta.get("license")]
    note = ("" if not unlicensed else f"\nNo licence: the card of {', '.join(f'`{n}`' for n in unlicensed)} "
            "names none, so this card cannot name the whole's; add `license:` once the members' terms are known.\n")
    metadata = ModelCardData(library_name="semrel", pipeline_tag="sentence-similarity",
                             language=union["language"] or None, datasets=union["datasets"] or None,
                             tags=["semrel", "ensemble", "sentence-similarity", *["conditional"] * conditional],
                             **combined_licence(cards))
    return metadata, note


def _named(data) -> str:
    """A run's data as its card names it, never by a path of this machine: an absolute path by its
    last two parts (``<folder>/<config>``, or a folder and its parent)."""
    path = Path(str(data))
    return Path(*path.parts[-2:]).as_posix() if path.is_absolute() else str(data)


def _described(path: Path, model: dict | None) -> str:
    """A member's kind and origin: a run's encoder and training data, else
    :func:`~trainers.members.origin`."""
    if model is not None:
        return origin(model)
    facts = member_facts(path)
    return f"{facts['encoder']}-encoder run of `semrel fit`, trained on {_named(facts['data'])}"


def ensemble_body(ensemble, base: Path, name: str, note: str = "") -> str:
    """The card's body of ``ensemble`` saved in ``base`` (its member paths relative to it), a
    folder that will be called ``name``; ``note``: a line of :func:`ensemble_metadata`."""
    if ensemble.learned is not None:
        learned = ensemble.learned
        fit = ", ".join(f"{p['data']}/{p['split']}" for p in learned.fit_on)
        extra = f" and {', '.join(learned.features)}" if learned.features else ""
        weights = (tuple(learned.state["coef"][:len(ensemble.members)])
                   if ensemble.method == "ridge" else (float("nan"),) * len(ensemble.members))
        how = (f"learned stack ({ensemble.method}) of the members' scores{extra}, fit on "
               f"{learned.n_rows} predictions of pairs the members never trained on "
               f"({fit}); scoring those rows with it is refused (weight: ridge coefficient)")
    elif ensemble.method == "stack":
        weights = ensemble.stack.weights
        how = (f"linear stack `{ensemble.stack.intercept:+.4f} + Σ w·score`, weights fit by "
               f"non-negative least squares on {ensemble.stack.n_rows} out-of-fold predictions")
    else:
        weights = ensemble.weights or (1.0,) * len(ensemble.members)
        sizes = " / ".join(str(n) for n in sorted({len(r) for r in ensemble.reference or ()}))
        how = ("rank average: weighted mean of each member's score as its quantile among "
               f"{sizes} reference scores of that member (its held-out predictions), so a "
               "pair's score does not depend on the pairs scored with it"
               if ensemble.reference else "rank average: weighted mean of the members' ranks "
               "among the pairs scored together")
    models = ensemble.models or (None,) * len(ensemble.members)
    rows = "\n".join(f"| `{m}` | {_described(base / m, model)} | {w:.4f} |"
                     for m, model, w in zip(ensemble.members, models, weights, strict=True))
    packaged = sorted({PACKAGED_MODELS[m["spec"]].install for m in models if m and m["source"] == "packaged"})
    example = '["A man plays."], ["Someone is playing."]' + (', ["the activity"]' if ensemble.conditional else "")
    return f"""# Ensemble of {len(ensemble.members)} pair scorers

Combination: {how}. Score range of the members' data: {list(ensemble.score_range)};
conditional: {ensemble.conditional}. The members are in this folder (`{MEMBERS}/`), packaged and
Hub models by name and commit; scores are on the label scale [0, 1].
{note}
| member | kind and origin | weight |
|---|---|---|
{rows}

## Usage

Only semrel loads this ensemble: its combination of the members' scores is semrel code
(`Ensemble.load`; `semrel predict --model DIR`, DIR this folder, maps the scores to a dataset's range).

```bash
{SEMREL_INSTALL}{''.join(f'{chr(10)}{line}  # a packaged member' for line in packaged)}
```

```python
from semrel.trainers.ensemble import Ensemble
path = "{name}"  {PATH_COMMENT}
model = Ensemble.load(path)
model.predict({example})
```
"""

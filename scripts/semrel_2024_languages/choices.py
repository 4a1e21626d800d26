"""The study's choices, each on dev and each a pure function of the records of its members and
candidates: the member per encoder, the longer schedule where the kept epoch was the last, and a
language's final model among the candidates of every family."""

from __future__ import annotations

from .units import GRID_A, LONGER


def _dev(record: dict) -> float:
    """A member's kept dev Spearman; an undefined one (constant predictions) loses to any."""
    return -2.0 if record["dev_kept"] is None else record["dev_kept"]


def best_per_encoder(grid: dict[str, dict]) -> dict[str, str]:
    """Per encoder of :data:`GRID_A`, the member of ``grid`` (name -> record with ``encoder`` and
    ``dev_kept``) whose kept epoch scores best on dev; of a tie, the first in ``grid``'s order."""
    return {e: max((n for n in grid if grid[n]["encoder"] == e), key=lambda n: _dev(grid[n])) for e in GRID_A}


def longer_siblings(grid: dict[str, dict], chosen: dict[str, str]) -> dict[str, tuple[str, int]]:
    """Each chosen member whose kept evaluation is its last (``kept_last``: its dev figure was
    still rising when training stopped): its sibling's name and epochs, :data:`LONGER` × its own,
    trained afresh at the same rate. Applied once: a sibling gets no sibling."""
    return {n: (f"{n}-ep{LONGER * grid[n]['epochs']}", LONGER * grid[n]["epochs"])
            for n in chosen.values() if grid[n].get("kept_last")}


def prefer_longer(chosen: dict[str, str], grid: dict[str, dict], siblings: dict[str, tuple[str, int]],
                  trained: dict[str, dict]) -> dict[str, str]:
    """Per encoder the chosen member, or its sibling (``trained``: the siblings' records) where
    the sibling's kept epoch scores higher on dev; a tie keeps the shorter schedule."""
    return {e: siblings[n][0] if n in siblings and _dev(trained[siblings[n][0]]) > _dev(grid[n]) else n
            for e, n in chosen.items()}


def final_choice(candidates: dict[str, float | None]) -> str:
    """The candidate with the best dev figure; of a tie, the first (the per-language study's
    first: a new family must beat it on dev to replace it); an undefined figure loses."""
    return max(candidates, key=lambda n: -2.0 if candidates[n] is None else candidates[n])

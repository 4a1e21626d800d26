"""English train of SemRel-2024 is STR-2021: the same 5,500 pairs, scores rounded to 2 decimals.

:func:`link_str_2021` gives each English train pair the ``pair_id`` and ``source`` of its STR-2021
pair (Abdalla et al., EACL 2023), matched on the two sentences in order (STR-2021's sentences are
stripped by its reader; English train has no surrounding spaces). Every pair must match exactly
one STR-2021 pair, no STR-2021 pair twice, and the scores must agree to the rounding
(|score − STR-2021 score| <= 0.005), else a DataValidationError names the row and rule. So nobody
trains on one and tests on the other by mistake: the link is a column of the data.
"""

from __future__ import annotations

from ..errors import DataValidationError

ROUNDING = 0.005  # SemRel-2024 publishes 2 decimals of STR-2021's 3
_EPS = 1e-9  # float noise of the decimal strings


def link_str_2021(rows: list[dict], str_pairs: list[dict], name: str) -> list[dict]:
    """``rows`` (English train, from :func:`~.files.read_file`) with ``str_2021_pair_id`` and
    ``str_2021_source`` added; ``str_pairs`` from :func:`semrel.dataset_scripts.str_2021.read_pairs`;
    ``name`` is the file named in errors."""
    by_text: dict[tuple[str, str], dict] = {}
    for pair in str_pairs:
        by_text[(pair["sentence1"], pair["sentence2"])] = pair  # read_pairs refuses repeated ids
    used: dict[str, int] = {}
    linked = []
    for row in rows:
        match = by_text.get((row["sentence1"].strip(), row["sentence2"].strip()))
        if match is None:
            raise DataValidationError(name, row["row"], "English train pair has no STR-2021 pair "
                                      "with the same two sentences in order", row["pair_id"])
        if match["pair_id"] in used:
            raise DataValidationError(name, row["row"], "two English train pairs match one "
                                      "STR-2021 pair", f"{row['pair_id']} and the pair at row "
                                      f"{used[match['pair_id']]} both match {match['pair_id']}")
        used[match["pair_id"]] = row["row"]
        if abs(row["score"] - match["score"]) > ROUNDING + _EPS:
            raise DataValidationError(name, row["row"], f"score differs from STR-2021's by more "
                                      f"than the rounding ({ROUNDING})",
                                      f"{row['pair_id']}: {row['score']} vs {match['pair_id']}: "
                                      f"{match['score']}")
        linked.append({**row, "str_2021_pair_id": match["pair_id"],
                       "str_2021_source": match["source"]})
    return linked

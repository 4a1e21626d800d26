"""Ensemble members that semrel did not train: a packaged name (``minilm``, ``mpnet``, ...), a
sentence-transformers bi-encoder or ``CrossEncoder``, a plain transformers encoder (mean-pooled
cosine), a Hub model, a semrel model saved without its run record.

Such a model records no score range, data or held-out predictions. In an ensemble it takes the
score range and conditioning of the trained members (a model that cannot score conditions beside
conditional members is refused, and the other way round), and its scores of the rows the trained
members' predictions are on stand in for its held-out predictions (:func:`scored_like`): the
rows are loaded again by the ``data``/``split`` their predictions file records
(:func:`~semrel.dataset_scripts.pairs.load_pairs`, checked against its ``ids``) and scored by the
model's scorer (:func:`~trainers.scoring.loader.model_scorer`, every kind, cached), on the label scale as
``semrel predict`` reads them (a zero-shot cosine as is).

How a saved ensemble folder holds the model (:func:`member_model`, ``models`` in
``semrel_ensemble.json``): a packaged name (its weights' sha256 checked on every use) and a Hub
model (pinned to the commit it was fetched at) *by reference*, resolved again on loading
(:func:`resolve_member`) -- a copy of mpnet's ~400 MB in every ensemble would fix nothing that
the name or the commit does not fix already; a local folder, whose origin nothing records,
*by a copy* in the ensemble folder, which stays movable either way.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS
from semrel.metrics.errors import ParameterError

from .kinds import get
from .model_ref import ModelRef, resolve_model_ref
from .run_folder import RunPredictions


def member_model(ref: ModelRef) -> dict:
    """What ``semrel_ensemble.json`` records of a member semrel did not train: the argument
    given, its kind, and its source (``packaged``, ``hub``: kept by reference; ``folder``:
    copied) with the Hub id and commit."""
    source = "packaged" if ref.spec in PACKAGED_MODELS else "hub" if ref.hub_id else "folder"
    return {"spec": ref.spec, "kind": ref.kind, "source": source, "hub_id": ref.hub_id,
            "revision": ref.revision}


def saved_name(model: dict) -> str:
    """The model argument that names a referenced member again: its packaged name, or
    ``hub_id@commit``."""
    return model["spec"] if model["source"] == "packaged" else f"{model['hub_id']}@{model['revision']}"


def resolve_member(entry: str, model: dict, folder: Path, parameter: str = "model_path") -> ModelRef:
    """The member ``entry`` of the ensemble ``folder`` (``model``: its record) as a resolved
    model: a copied folder inside the ensemble, else the packaged name or Hub model at its
    commit (fetched into the cache if it is not there); a ParameterError naming the member."""
    if model["source"] == "folder":
        return ModelRef(entry, (folder / entry).resolve(), model["kind"])
    try:
        return resolve_model_ref(entry, kind=model["kind"], parameter=parameter)
    except ParameterError as exc:
        raise ParameterError(parameter, str(folder), f"its member {entry} cannot be resolved: "
                             f"{exc.rule}") from None


def origin(model: dict) -> str:
    """The member's kind (in its kind's words) and where it comes from, for the ensemble's card."""
    kind = get(model["kind"]).member_words
    if model["source"] == "packaged":
        return f"{kind}: packaged model `{model['spec']}`, by reference (resolved on loading)"
    if model["source"] == "hub":
        return (f"{kind}: Hub model `{model['hub_id']}` at commit `{model['revision']}`, by reference "
                "(fetched on loading)")
    return f"{kind}: a copy of the folder `{Path(model['spec']).name}`, not trained by semrel"


def check_conditioning(ref: ModelRef, scorer, conditional: bool, source: str) -> None:
    """A member semrel did not train takes conditions exactly when the trained members (or the
    rows of ``source``) do; a ParameterError on ``members`` naming it otherwise."""
    if scorer.conditional == conditional:
        return
    if conditional:
        raise ParameterError("members", ref.spec, f"is a {ref.kind} model, which cannot score the "
                             f"conditions of the pairs {source} scored (it would ignore them); an "
                             "ensemble's members all take the condition or none does")
    raise ParameterError("members", ref.spec, f"is a conditional {ref.kind} model, and {source} "
                         "scored pairs without conditions; an ensemble's members all take the "
                         "condition or none does")


def recorded_rows(run: RunPredictions, loaded: dict):
    """The rows ``run`` (a trained member's predictions) scored, loaded again by the data name it
    records (a ``save_to_disk`` folder, else ``dataset/config``: a registry id from the default
    mirror, a Hub-layout folder or a Hub dataset) and checked against its ids; ``loaded`` keeps
    the splits loaded so far (one ensemble's). A ValueError says what could not be loaded."""
    from semrel.dataset_scripts.pairs import load_pairs

    key = (run.data, run.split, tuple(run.score_range))
    if key not in loaded:
        whole = Path(run.data).expanduser()
        dataset, _, config = ((run.data, "", "default") if (whole / "dataset_dict.json").is_file()
                              else run.data.rpartition("/"))
        try:
            if not dataset:
                raise ParameterError("dataset", run.data, "names no dataset/config")
            loaded[key] = load_pairs(dataset, config, score_range=list(run.score_range)).splits[run.split]
        except (ParameterError, KeyError, OSError) as exc:
            raise ValueError(f"the rows {run.path} scored ({run.data}, split {run.split}) cannot be "
                             f"loaded again for the members semrel did not train: {exc}") from None
    rows = loaded[key]
    ids = rows["pair_id"] if "pair_id" in rows.column_names else range(len(rows))
    if [str(i) for i in ids] != [str(i) for i in run.ids]:
        raise ValueError(f"the rows of {run.data}/{run.split} are not the ones {run.path} scored "
                         "(pair ids differ): the data changed since the run")
    return rows


def scored_like(ref: ModelRef, scorer, run: RunPredictions, loaded: dict) -> RunPredictions:
    """``run`` with the model's own scores of its rows (:func:`recorded_rows`, ``loaded``) in
    place of the trained member's."""
    rows = recorded_rows(run, loaded)
    condition = rows["condition"] if scorer.conditional else None
    scores = scorer.score(rows["sentence1"], rows["sentence2"], condition)
    return replace(run, path=ref.spec, encoder=ref.kind, predictions=np.asarray(scores, dtype=np.float64))

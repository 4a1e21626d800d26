"""``ensemble``: a folder written by ``semrel ensemble`` (``semrel_ensemble.json``), its members
scored by their own scorers and combined by the ensemble's method
(:class:`~trainers.scoring.ensemble.EnsembleScorer`). It cannot be fine-tuned nor be a member;
what it saw is what its members' runs saw (and a learned stack's fit rows)."""

from __future__ import annotations

from semrel.metrics.errors import ParameterError

from ..run_folder.checks import check_ensemble_folder
from ..run_folder.files import ENSEMBLE
from .base import ModelKind


class Ensemble(ModelKind):
    name = "ensemble"
    order = 20
    files = (ENSEMBLE,)
    records_training = True

    def check(self, path, parameter="model"):
        return check_ensemble_folder(path, parameter)

    def check_member(self, path, parameter="members"):
        raise ParameterError(parameter, str(path), "is an ensemble folder; an ensemble's members are "
                             "models: give its members instead")

    def scorer(self, ref, options, member):
        from ..ensemble import Ensemble as Combined
        from ..scoring.ensemble import EnsembleScorer

        ensemble = Combined.load(ref.path)
        return EnsembleScorer(ref.spec, ref.path, ensemble=ensemble,
                              members=[member(m) for m in ensemble.refs], **options)

    def scored_models(self, ref):
        from ..ensemble import Ensemble as Combined

        return [(m, f"{ref.spec}'s member {m.path.name}") for m in Combined.load(ref.path).refs]

    def start(self, ref, parameter):
        raise ParameterError(parameter, ref.spec, "an ensemble cannot be fine-tuned; pass one of "
                             "its members")

    def seen_folders(self, scorer):
        return [m.path for m in scorer.members]


KIND = Ensemble()

"""``semrel``: a model saved by ``semrel fit`` (``semrel_encoder.json`` beside its transformer),
a cross-, bi- or tri-encoder (:mod:`~trainers.models`). It scores pairs through its own encoder
(:class:`~trainers.scoring.cross.SemrelCrossScorer`,
:class:`~trainers.scoring.encoders.SemrelEncoderScorer`); fit goes on training its transformer
(a run with layers only semrel loads, ``semrel_head.safetensors``, is refused as a start); its
folder records what it trained on (``metrics.json``, ``seen_pairs.json``)."""

from __future__ import annotations

from pathlib import Path

from semrel.metrics.errors import ParameterError

from ..run_folder.checks import check_encoder_folder
from ..run_folder.files import ENCODER_CONFIG, HEAD, METRICS, read_encoder_config
from ..token_limits import encoder_inputs
from .base import ModelKind


class SemrelRun(ModelKind):
    name = "semrel"
    order = 10
    files = (ENCODER_CONFIG,)
    start_words = "a run of semrel"
    member_words = "semrel model saved without its run record"
    records_training = True

    def check(self, path, parameter="model"):
        return check_encoder_folder(path, parameter)

    def check_member(self, path, parameter="members"):
        fit_run = (Path(path) / METRICS).is_file()
        check_encoder_folder(path, parameter, written_by_fit=fit_run)
        return fit_run

    def scorer_class(self, ref):
        from ..scoring import cross, encoders

        cross_run = read_encoder_config(ref.path, "model", ref.spec)["kind"] == "cross"
        return cross.SemrelCrossScorer if cross_run else encoders.SemrelEncoderScorer

    def tokenized(self, ref):
        options = read_encoder_config(ref.path, "model", ref.spec)
        pair, prompted = encoder_inputs(options["kind"], bool(options.get("conditional")))
        return ref.path, pair, options.get("prompt") or "", prompted

    def start(self, ref, parameter):
        options = read_encoder_config(ref.path, parameter, ref.spec)
        if (ref.path / HEAD).is_file() or options["kind"] == "tri":
            raise ParameterError(parameter, ref.spec, f"a {options['kind']}-encoder run with layers "
                                 f"only semrel loads ({HEAD}) cannot be a starting point: start from "
                                 "the transformer it was trained from")
        return ref.path

    def own_pooling(self, ref, encoder, parameter):
        options = read_encoder_config(ref.path, parameter, ref.spec)
        return None if options["kind"] == "cross" else (options.get("pooling") or "mean",
                                                        "its semrel_encoder.json")


KIND = SemrelRun()

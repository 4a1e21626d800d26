"""``cross-encoder``: a sentence-transformers ``CrossEncoder`` (``modules.json`` with
``model_type: CrossEncoder`` in ``config_sentence_transformers.json``) or a
sequence-classification transformer alone, with a trained head of one label; scored by
``CrossEncoder.predict`` (:class:`~trainers.scoring.cross.CrossEncoderScorer`). Fit starts from
its folder: a cross-encoder goes on training it, its head included; a bi- or tri-encoder takes
its transformer without the head."""

from __future__ import annotations

from semrel.metrics.errors import ParameterError

from ..run_folder.checks import check_transformer_folder
from ..run_folder.files import CONFIG, ST_MODULES, read_json_object
from .base import ModelKind
from .st_folders import check_sentence_transformers_modules, st_model_type


def _heads(config: dict) -> list[str]:
    return [str(a) for a in config.get("architectures") or [] if str(a).endswith("ForSequenceClassification")]


class CrossEncoder(ModelKind):
    name = "cross-encoder"
    order = 40
    files = (ST_MODULES, CONFIG)
    start_words = "a sentence-transformers CrossEncoder"
    member_words = "CrossEncoder"
    st_model_type = "CrossEncoder"  # config_sentence_transformers.json's model_type

    def detects(self, folder, parameter, value):
        if (folder / ST_MODULES).is_file():
            return st_model_type(folder, parameter, value) == self.st_model_type
        return (folder / CONFIG).is_file() and bool(_heads(read_json_object(folder / CONFIG, parameter, value)))

    def check(self, path, parameter="model"):
        """A transformer folder (its sentence-transformers modules whole where it has them) whose
        ``config.json`` names a ``...ForSequenceClassification`` of one label and whose weights
        hold that head's tensors (:func:`~trainers.classification_head.missing_head_tensors`): a
        folder without a trained head is not a cross-encoder."""
        from ..classification_head import missing_head_tensors

        folder = check_transformer_folder(path, parameter)
        if (folder / ST_MODULES).is_file():
            check_sentence_transformers_modules(folder, parameter, str(path))
        config = read_json_object(folder / CONFIG, parameter, str(path))
        named, heads = [str(a) for a in config.get("architectures") or []], _heads(config)
        random = "(loading it as one would draw that head at random)"
        if not heads:
            raise ParameterError(parameter, str(path), f"is not a cross-encoder: its {CONFIG} names "
                                 f"{' and '.join(named) or 'no architecture'}, not a sequence-"
                                 f"classification head {random}")
        labels = len(config.get("id2label") or {}) or config.get("num_labels", 1)
        if labels != 1:
            raise ParameterError(parameter, str(path), f"its classification head has {labels} labels; "
                                 "a cross-encoder scores with one")
        try:
            missing = missing_head_tensors(folder)
        except ValueError as exc:  # a model transformers cannot build, torch weights it cannot read
            raise ParameterError(parameter, str(path), str(exc)) from None
        if missing:
            raise ParameterError(parameter, str(path), f"is not a cross-encoder: its {CONFIG} names "
                                 f"{heads[0]}, but its weights hold no {', '.join(missing)} {random}")
        return folder

    def scorer_class(self, ref):
        from ..scoring.cross import CrossEncoderScorer

        return CrossEncoderScorer

    def tokenized(self, ref):
        return ref.path, True, "", 1


KIND = CrossEncoder()

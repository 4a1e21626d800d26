"""``bi-encoder``: a sentence-transformers ``SentenceTransformer`` folder (``modules.json``),
scored as it is configured (:class:`~trainers.scoring.encoders.SentenceTransformerScorer`). Fit
starts from its Transformer module's folder; its modules must be Transformer, Pooling and
Normalize (cosine ignores the norm; a Dense layer would be dropped: refused), and a bi- or
tri-encoder keeps or says its pooling (:func:`~trainers.starting_point.pooling_note`)."""

from __future__ import annotations

import json
from pathlib import Path

from semrel.metrics.errors import ParameterError

from ..run_folder.checks import check_folder
from ..run_folder.files import CONFIG, ST_CONFIG, ST_MODULES, read_json_object
from ..token_limits import default_prompt
from .base import ModelKind
from .st_folders import check_sentence_transformers_modules, sentence_transformers_pooling, st_model_type

ST_KEPT = ("Transformer", "Pooling", "Normalize")  # sentence-transformers modules fit can start from


def _modules(ref, parameter: str) -> list[tuple[str, str]]:
    """(type's last name, folder) of each module ``modules.json`` lists."""
    try:
        listed = json.loads((ref.path / ST_MODULES).read_text(encoding="utf-8"))
        return [(str(m["type"]).rsplit(".", 1)[-1], str(m.get("path") or "")) for m in listed]
    except (OSError, ValueError, TypeError, KeyError):
        raise ParameterError(parameter, ref.spec, f"{ST_MODULES} is not a list of modules with a "
                             "type and a path") from None


def transformer_folder(path: Path) -> Path:
    """A sentence-transformers folder's Transformer module folder (``modules.json``), else
    ``path`` itself."""
    try:
        modules = json.loads((path / ST_MODULES).read_text(encoding="utf-8"))
        folder = next(str(m.get("path") or "") for m in modules if str(m["type"]).endswith("Transformer"))
        return path / folder
    except (OSError, ValueError, TypeError, KeyError, AttributeError, StopIteration):
        return path


class BiEncoder(ModelKind):
    name = "bi-encoder"
    order = 30
    files = (ST_MODULES,)
    start_words = "a sentence-transformers bi-encoder"
    member_words = "sentence-transformers bi-encoder"
    st_model_type = "SentenceTransformer"  # config_sentence_transformers.json's model_type

    def detects(self, folder, parameter, value):
        return (folder / ST_MODULES).is_file() and st_model_type(folder, parameter, value) == self.st_model_type

    def check(self, path, parameter="model"):
        """A ``modules.json`` whose modules are whole, and no other model type in
        ``config_sentence_transformers.json`` (none: a SentenceTransformer)."""
        folder = check_folder(path, parameter, "model folder")
        if not (folder / ST_MODULES).is_file():
            raise ParameterError(parameter, str(path), f"holds no {ST_MODULES}: not a sentence-"
                                 "transformers bi-encoder")
        said = read_json_object(folder / ST_CONFIG, parameter, str(path)) if (folder / ST_CONFIG).is_file() else {}
        model_type = said.get("model_type", self.st_model_type)
        if model_type != self.st_model_type:
            raise ParameterError(parameter, str(path), f"is a sentence-transformers {model_type} "
                                 f"({ST_CONFIG}), not a bi-encoder")
        check_sentence_transformers_modules(folder, parameter, str(path))
        return folder

    def scorer_class(self, ref):
        from ..scoring.encoders import SentenceTransformerScorer

        return SentenceTransformerScorer

    def tokenized(self, ref):
        return transformer_folder(ref.path), False, default_prompt(ref.path), 1

    def start(self, ref, parameter):
        modules = _modules(ref, parameter)
        other = [kind for kind, _ in modules if kind not in ST_KEPT]
        if other or not modules or modules[0][0] != "Transformer":
            raise ParameterError(parameter, ref.spec, f"a sentence-transformers model of modules "
                                 f"{' -> '.join(k for k, _ in modules)}: fit starts from one of "
                                 f"{', '.join(ST_KEPT)} (a Transformer first), where no layer is dropped")
        return ref.path / modules[0][1]

    def own_pooling(self, ref, encoder, parameter):
        pooled = [folder for kind, folder in _modules(ref, parameter) if kind == "Pooling"]
        if not pooled or not (ref.path / pooled[0] / CONFIG).is_file():
            raise ParameterError(parameter, ref.spec, "a sentence-transformers model without a "
                                 f"Pooling module ({CONFIG}): a {encoder}-encoder keeps the pooling it "
                                 "starts from")
        config = read_json_object(ref.path / pooled[0] / CONFIG, parameter, ref.spec)
        return sentence_transformers_pooling(config), f"its {pooled[0]}/{CONFIG}"


KIND = BiEncoder()

"""The model card (README.md) of every trained model and ensemble: Hub metadata, metrics, data,
hyperparameters, training loss, how to load it, citations.

:func:`write_card` is the one writer: metadata through huggingface_hub's ``ModelCardData``, the
card through ``ModelCard``, the file whole (:func:`~trainers.run_folder.write_text`). A trained
model's card (:func:`write_model_card`) is written by ``PairEncoder.save_pretrained`` from the
:class:`CardFacts` that the trainer's callback (:class:`~trainers.trainer.ModelCardCallback`)
gathers while training and :func:`~trainers.fitting.fit` completes with the data and its
evaluation; an ensemble's by ``Ensemble.save``.

No ``model-index`` ever: the Hub would show its numbers in a results widget as if checked, and
they are self-reported (the Metrics section gives them). ``base_model`` only for a starting
model with a Hub id (one fetched from the Hub, a packaged one); the text names the model a run
started from (Hub id and commit, packaged name, or a local folder of which kind). A kind that
only semrel can load (tri-encoder, conditional bi-encoder) says ``library_name: semrel``: with
``transformers`` the Hub would offer ``AutoModel``, which loads the bare encoder and silently
drops the semrel head. The usage snippet runs as written beside the run folder
(``path = "<folder>"``); ``semrel push`` points it at the model's Hub repo."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

from semrel.dataset_scripts.pretrained import PACKAGED_MODELS

from .kinds import get
from .run_folder import CARD, CONFIG, HEAD, write_text
from .selection import card_section

SBERT_CITATION = """\
@inproceedings{reimers-gurevych-2019-sentence,
  title = {Sentence-{BERT}: Sentence Embeddings using {S}iamese {BERT}-Networks},
  author = {Reimers, Nils and Gurevych, Iryna},
  booktitle = {Proceedings of EMNLP-IJCNLP 2019},
  year = {2019},
  url = {https://arxiv.org/abs/1908.10084}
}"""

CONDITIONAL_ENCODERS_CITATION = """\
@inproceedings{deshpande-etal-2023-csts,
  title = {{C}-{STS}: Conditional Semantic Textual Similarity},
  author = {Deshpande, Ameet and Jimenez, Carlos and Chen, Howard and Murahari, Vishvak and
            Graf, Victoria and Rajpurohit, Tanmay and Kalyan, Ashwin and Chen, Danqi and
            Narasimhan, Karthik},
  booktitle = {Proceedings of EMNLP 2023},
  year = {2023},
  url = {https://arxiv.org/abs/2305.15093}
}"""  # the conditional cross/bi/tri-encoders and the quadruplet loss (§4.1)

SEMREL_INSTALL = ("# the semrel source is not on a package index: in a checkout of it\n"
                  "pip install '.[train]'")


def _table(header: tuple[str, str], rows: dict, float_format: str = ".4f") -> str:
    """Two-column markdown table; floats formatted with ``float_format``."""
    lines = [f"| {header[0]} | {header[1]} |", "|---|---|"]
    lines += [f"| {k} | {f'{v:{float_format}}' if isinstance(v, float) else v} |"
              for k, v in rows.items()]
    return "\n".join(lines)


def _ci_row(name: str, interval) -> dict:
    """``{"<name>, 95 % CI": "[low, high]"}`` where the run recorded the interval, else nothing."""
    return {f"{name}, 95 % CI": f"[{interval[0]:.4f}, {interval[1]:.4f}]"} if interval else {}


PATH_COMMENT = "# the folder of this model"  # `semrel push` puts its Hub repo in this line


def requirement(name: str) -> str:
    """``name`` with the lower bound semrel itself requires (``sentence-transformers>=6.0``), so
    a card never pins another version than the project's ``pyproject.toml``."""
    try:
        lines = requires("semrel") or []
    except PackageNotFoundError:  # not installed: the bare name
        lines = []
    for line in lines:
        spec = line.partition(";")[0].strip()
        if re.split(r"[\[<>=!~ ]", spec, maxsplit=1)[0].lower() == name:
            return re.sub(r"\[[^]]*\]", "", spec).replace(" ", "")
    return name


def usage(model, folder: str = "model") -> tuple[str, str, str | None, str]:
    """(library_name, install line, pipeline_tag, code) for loading ``model`` where users do;
    the code runs as written beside the run folder named ``folder``."""
    example = '["A man plays."], ["Someone is playing."]' + (
        ', ["the activity"]' if model.conditional else '')
    path = f'path = "{folder}"  {PATH_COMMENT}\n'
    install_st = f"pip install '{requirement('sentence-transformers')}'"
    ours = ("from semrel.trainers.models import PairEncoder\n" + path +
            "model = PairEncoder.from_pretrained(path)  # not AutoModel: it would drop the semrel head\n"
            f"model.predict({example})\n")
    if model.kind == "cross":
        second = ('"Someone is playing. " + model.tokenizer.sep_token + " the activity"'
                  if model.conditional else '"Someone is playing."')
        code = ("from sentence_transformers import CrossEncoder\n" + path +
                "model = CrossEncoder(path)  # sigmoid scores on the [0, 1] label scale\n"
                f"model.predict([(\"A man plays.\", {second})])\n")
        return "sentence-transformers", install_st, "text-ranking", code
    if model.kind == "bi" and not model.conditional:
        code = ("from sentence_transformers import SentenceTransformer\n" + path +
                "model = SentenceTransformer(path)\n"
                "a, b = model.encode([\"A man plays.\", \"Someone is playing.\"])\n"
                "model.similarity(a, b)  # cosine: the score on the [0, 1] label scale\n")
        return "sentence-transformers", install_st, "sentence-similarity", code
    # conditional bi-encoder, tri-encoder: their conditioning is semrel code, so not `transformers`
    # (the Hub would offer AutoModel, which loads the bare encoder without the semrel head)
    return "semrel", SEMREL_INSTALL, "sentence-similarity", ours


@dataclass
class CardFacts:
    """What a trained model's card says. The trainer's callback fills the training part (the
    training data's name, the recorded options, the log, sizes); ``fit`` adds the data
    (:class:`~semrel.dataset_scripts.pairs.PairData`), its result
    (:class:`~trainers.fitting.FitResult`: evaluation, speed, options as the run records them)
    and the starting model's (Hub id, licence) where it is a packaged one."""

    train_name: str = ""
    options: dict = field(default_factory=dict)
    log_history: list = field(default_factory=list)
    train_pairs: int = 0
    n_omitted_groups: int = 0
    precision: str = ""
    train_seconds: float = 0.0
    data: object = None
    result: object = None
    base_model: tuple[str, str] | None = None


def write_card(folder, metadata: ModelCardData, body: str, parameter: str = "output_dir") -> Path:
    """``folder/README.md``: ``metadata`` as the YAML header, then ``body``; written whole."""
    card = ModelCard(f"---\n{metadata.to_yaml()}\n---\n{body}")
    return write_text(Path(folder) / CARD, str(card), parameter)


def _started_from(result) -> str:
    """The sentence naming the model a run started from (``FitResult.start_model``), or ""."""
    start = getattr(result, "start_model", None) or {}
    if not start:
        return ""
    what = get(start["kind"]).start_words or start["kind"]  # the kind's words for what a run starts from
    if start.get("hub_id"):
        return f"\nStarted from `{start['hub_id']}` at revision `{start['revision']}` ({what})."
    if start["spec"] in PACKAGED_MODELS:
        return (f"\nStarted from the packaged `{start['spec']}` "
                f"(`{PACKAGED_MODELS[start['spec']].hub_id}`, {what}).")
    return f"\nStarted from a local folder ({what})."


def _splits(options: dict) -> str:
    """The split(s) a run trained on, in words: "the `train` split", "the splits `train+validation`"."""
    splits = options.get("train_splits", "train")
    return f"the splits `{splits}`" if "+" in splits else f"the `{splits}` split"


def _metrics(facts: CardFacts) -> str:
    result = facts.result
    if result is None:
        return (f"Not evaluated: saved from a `PairTrainer` after training on `{facts.train_name}` "
                "(`semrel fit` evaluates the model and adds its figures here).")
    splits = result.options.get("train_splits", "train")
    if not result.eval_split and splits != "train":
        return (f"Not evaluated: trained on {result.train_pairs} pairs, the splits `{splits}` of "
                f"`{facts.data.name}`, and no split it did not train on has gold scores. A figure "
                "on the splits it learnt from would measure nothing; the run that chose this "
                "recipe's settings on a held-out split gives its expected quality.")
    if not result.eval_split:
        return (f"Not evaluated: trained on all {result.train_pairs} pairs of `{facts.data.name}` "
                "(it has no validation or test split); see the CV of the same recipe for its "
                "expected quality.")
    per_source = (f"\n\nSpearman per source ({result.eval_split} split):\n\n"
                  + _table(("source", "Spearman"), result.per_source)) if result.per_source else ""
    per_language = (f"\n\nSpearman per language ({result.eval_split} split; the SemEval-2024 Task 1 "
                    "evaluation, `semrel evaluate`):\n\n" + _table(("language", "Spearman"), result.per_language)
                    ) if getattr(result, "per_language", None) else ""
    return (f"On the `{result.eval_split}` split, scores and labels on the [0, 1] label "
            "scale:\n\n" + _table(("metric", "value"), {
                "Pearson r": result.pearson,
                **_ci_row("Pearson r (Fisher z)", getattr(result, "pearson_ci", None)),
                "Spearman rho": result.spearman,
                **_ci_row("Spearman rho (paired bootstrap, seed 0)", getattr(result, "spearman_ci", None)),
                "MSE": result.mse}) + per_source + per_language)


def _data_section(facts: CardFacts) -> str:
    data, result = facts.data, facts.result
    pairs = result.train_pairs if result is not None else facts.train_pairs
    omitted = result.n_omitted_groups if result is not None else facts.n_omitted_groups
    if data is None:
        return (f"- training data: `{facts.train_name}`; labels on the [0, 1] label scale\n"
                f"- train pairs: {pairs}\n"
                f"- omitted tied condition groups (`on_invalid=\"omit\"`): {omitted}")
    from semrel.dataset_scripts.registry import registered_id

    semrel_id = registered_id(data.name)
    hub_note = ("" if data.hub_id else
                f"\n- `{data.name}` has no Hub dataset id (it is built locally by semrel), so this "
                "card lists no `datasets:`"
                + (f". `semrel push --namespace NS --model DIR` adds `datasets: "
                   f"[NS/{semrel_id}]`, the dataset repo that namespace publishes" if semrel_id
                   else ""))
    lo, hi = data.score_range
    return (f"- dataset: `{data.name}`; native score range [{lo:g}, {hi:g}], labels scaled to [0, 1] as\n"
            f"  (score - {lo:g}) / ({hi:g} - {lo:g}){hub_note}\n"
            f"- train pairs: {pairs}, the split(s) `{result.options.get('train_splits', 'train')}`; "
            f"evaluation split: {f'`{result.eval_split}`' if result.eval_split else 'none'}\n"
            f"- omitted tied condition groups (`on_invalid=\"omit\"`): {omitted}")


def write_model_card(output_dir: Path, model) -> Path:
    """Write ``output_dir/README.md`` for ``model`` (a trained
    :class:`~trainers.models.PairEncoder`) from its :class:`CardFacts` (``model.card_facts``)."""
    facts = model.card_facts
    data, result = facts.data, facts.result
    options = result.options if result is not None else facts.options
    name = data.name if data is not None else facts.train_name
    library, install, pipeline_tag, code = usage(model, Path(output_dir).name)
    metadata = ModelCardData(
        library_name=library,
        base_model=facts.base_model[0] if facts.base_model else None,
        license=facts.base_model[1] if facts.base_model else None,
        language=list(data.language) or None if data is not None else None,
        datasets=[data.hub_id] if data is not None and data.hub_id else None,
        pipeline_tag=pipeline_tag,
        tags=["semrel", "sentence-similarity", f"{model.kind}-encoder",
              *(["sentence-transformers"] if library == "sentence-transformers" else []),
              *(["conditional"] if model.conditional else [])],
        metrics=["pearsonr", "spearmanr", "mse"],
        model_name=f"{model.kind}-encoder fine-tuned on {name}",
    )
    losses = {f"{e['epoch']:.2f}": e["loss"] for e in facts.log_history if "loss" in e}
    head = HEAD if (Path(output_dir) / HEAD).is_file() else None
    loads = ("" if library != "semrel" else
             f"\nOnly semrel loads this model: its conditioning{f' and its head (`{head}`)' if head else ''} "
             f"are semrel code. transformers' `AutoModel` would load the bare encoder of `{CONFIG}`"
             + (f" and silently drop `{head}`" if head else " without the condition") + ".\n")
    pooling = (f"pooling `{model.pooling}`" if model.pooling else
               "the architecture's classification head")
    prompt = (f"\nEach sentence is prefixed with `{model.prompt!r}` before tokenizing (the starting "
              "model's default prompt)" + (", which `SentenceTransformer` applies as this folder's "
              "default prompt." if library == "sentence-transformers" else "; prefix them yourself "
              "outside semrel.") if model.prompt else "")
    citation = data.citation if data is not None else ""
    method = [SBERT_CITATION] + ([CONDITIONAL_ENCODERS_CITATION] if model.conditional else [])
    citations = "\n\n".join([citation] * bool(citation) + [
        c for c in method if c.split(",")[0] not in citation])  # each BibTeX key once
    speed = (f"Training throughput: {result.pairs_per_second:.1f} pairs/s over "
             f"{result.train_seconds:.1f} s\n(precision: {result.precision})" if result is not None
             else f"Training time: {facts.train_seconds:.1f} s (precision: {facts.precision})")
    body = f"""
# {model.kind}-encoder fine-tuned on {name}

{type(model).description}; {pooling}{', conditional' if model.conditional else ''}.{prompt}
Trained with `semrel` (semrel) on {_splits(options)}, objective `{options['objective']}`.{_started_from(result)}

## Usage
{loads}
```bash
{install}
```

```python
{code}```

## Metrics

{_metrics(facts)}{card_section(getattr(result, 'selection', {}))}

## Data

{_data_section(facts)}

## Training hyperparameters

{_table(("option", "value"), options, "g")}

{speed}.

Training loss:

{_table(("epoch", "loss"), losses) if losses else "(not logged)"}

## Citation

```bibtex
{citations}
```
"""
    return write_card(output_dir, metadata, body)


def write_section(folder, heading: str, section: str, parameter: str = "card") -> Path:
    """``folder/README.md`` with its ``heading`` section (from the heading to the next ``## ``
    heading) replaced by ``section``, or, where it has none, ``section`` put before
    ``## Citation`` (else at the end); metadata untouched, the file written whole. A folder
    without a card is a ParameterError on ``parameter``."""
    from semrel.metrics.errors import MissingPathError

    path = Path(folder) / CARD
    if not path.is_file():
        raise MissingPathError(parameter, str(folder), f"holds no {CARD}: no model card to write into")
    card = ModelCard.load(path)
    body = card.text
    pattern = re.compile(rf"^{re.escape(heading)}\b.*?(?=^## |\Z)", re.M | re.S)
    section = section.rstrip() + "\n\n"
    if pattern.search(body):
        body = pattern.sub(lambda _: section, body, count=1)
    elif "\n## Citation" in body:
        body = body.replace("\n## Citation", f"\n{section}## Citation", 1)
    else:
        body = body.rstrip() + "\n\n" + section
    return write_card(folder, card.data, body, parameter)

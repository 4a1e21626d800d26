"""The model card (README.md) written beside every trained model: Hub metadata, metrics, data,
hyperparameters, training loss, how to load it, citations.

Metadata is written with huggingface_hub's ``ModelCardData``. No ``model-index`` ever: the Hub
would show its numbers in a results widget as if checked, and they are self-reported (the
Metrics section gives them). ``base_model`` only for a packaged starting model (a Hub id). A
kind that only semrel can load (tri-encoder, conditional bi-encoder) says ``library_name:
semrel``: with ``transformers`` the Hub would offer ``AutoModel``, which loads the bare encoder and
silently drops the semrel head. The usage snippet runs as written beside the run folder
(``path = "<folder>"``); ``semrel push`` points it at the model's Hub repo."""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

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


def write_model_card(output_dir: Path, *, model, data, options: dict, result, log_history,
                     base_model: tuple[str, str] | None = None) -> Path:
    """Write ``output_dir/README.md`` for a run of :func:`trainers.training.fit`; ``options``
    as the run records them (:func:`~trainers.arguments.recorded_options`); ``base_model`` is
    (Hub id, licence) of the starting transformer when known."""
    library, install, pipeline_tag, code = usage(model, Path(output_dir).name)
    card_data = ModelCardData(
        library_name=library,
        base_model=base_model[0] if base_model else None,
        license=base_model[1] if base_model else None,
        language=list(data.language) or None,
        datasets=[data.hub_id] if data.hub_id else None,
        pipeline_tag=pipeline_tag,
        tags=["semrel", "sentence-similarity", f"{model.kind}-encoder",
              *(["sentence-transformers"] if library == "sentence-transformers" else []),
              *(["conditional"] if model.conditional else [])],
        metrics=["pearsonr", "spearmanr", "mse"],
        model_name=f"{model.kind}-encoder fine-tuned on {data.name}",
    )
    losses = {f"{e['epoch']:.2f}": e["loss"] for e in log_history if "loss" in e}
    per_source = (f"\n\nSpearman per source ({result.eval_split} split):\n\n"
                  + _table(("source", "Spearman"), result.per_source)) if result.per_source else ""
    per_language = (f"\n\nSpearman per language ({result.eval_split} split; the SemEval-2024 Task 1 "
                    "evaluation, `semrel evaluate`):\n\n" + _table(("language", "Spearman"), result.per_language)
                    ) if getattr(result, "per_language", None) else ""
    lo, hi = data.score_range
    metrics = (f"On the `{result.eval_split}` split, scores and labels on the [0, 1] label "
               "scale:\n\n" + _table(("metric", "value"), {
                   "Pearson r": result.pearson,
                   **_ci_row("Pearson r (Fisher z)", getattr(result, "pearson_ci", None)),
                   "Spearman rho": result.spearman,
                   **_ci_row("Spearman rho (paired bootstrap, seed 0)", getattr(result, "spearman_ci", None)),
                   "MSE": result.mse})) if result.eval_split else \
        (f"Not evaluated: trained on all {result.train_pairs} pairs of `{data.name}` (it has no "
         "validation or test split); see the CV of the same recipe for its expected quality.")
    from semrel.dataset_scripts.registry import registered_id

    semrel_id = registered_id(data.name)
    hub_note = ("" if data.hub_id else
                f"\n- `{data.name}` has no Hub dataset id (it is built locally by semrel), so this "
                "card lists no `datasets:`"
                + (f". `semrel push --namespace NS --model DIR` adds `datasets: "
                   f"[NS/{semrel_id}]`, the dataset repo that namespace publishes" if semrel_id
                   else ""))
    head = "semrel_head.safetensors" if (Path(output_dir) / "semrel_head.safetensors").is_file() else None
    loads = ("" if library != "semrel" else
             f"\nOnly semrel loads this model: its conditioning{f' and its head (`{head}`)' if head else ''} "
             "are semrel code. transformers' `AutoModel` would load the bare encoder of `config.json`"
             + (f" and silently drop `{head}`" if head else " without the condition") + ".\n")
    pooling = (f"pooling `{model.pooling}`" if model.pooling else
               "the architecture's classification head")
    method = [SBERT_CITATION] + ([CONDITIONAL_ENCODERS_CITATION] if model.conditional else [])
    citations = "\n\n".join([data.citation] * bool(data.citation) + [
        c for c in method if c.split(",")[0] not in data.citation])  # each BibTeX key once
    body = f"""
# {model.kind}-encoder fine-tuned on {data.name}

{type(model).description}; {pooling}{', conditional' if model.conditional else ''}.
Trained with `semrel` (semrel) on the `train` split, objective `{options['objective']}`.

## Usage
{loads}
```bash
{install}
```

```python
{code}```

## Metrics

{metrics}{per_source}{per_language}{card_section(getattr(result, 'selection', {}))}

## Data

- dataset: `{data.name}`; native score range [{lo:g}, {hi:g}], labels scaled to [0, 1] as
  (score - {lo:g}) / ({hi:g} - {lo:g}){hub_note}
- train pairs: {result.train_pairs}; evaluation split `{result.eval_split}`
- omitted tied condition groups (`on_invalid="omit"`): {result.n_omitted_groups}

## Training hyperparameters

{_table(("option", "value"), options, "g")}

Training throughput: {result.pairs_per_second:.1f} pairs/s over {result.train_seconds:.1f} s
(precision: {result.precision}).

Training loss:

{_table(("epoch", "loss"), losses) if losses else "(not logged)"}

## Citation

```bibtex
{citations}
```
"""
    card = ModelCard(f"---\n{card_data.to_yaml()}\n---\n{body}")
    path = Path(output_dir) / "README.md"
    card.save(path)
    return path

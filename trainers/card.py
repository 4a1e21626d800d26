"""The model card (README.md) written beside every trained model: metrics, data, hyperparameters,
training loss, usage and citations."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from dataset_scripts.c_sts.builder import CITATION as CSTS_CITATION  # the conditional encoders' paper
from dataset_scripts.cards import markdown_table

SBERT_CITATION = """\
@inproceedings{reimers-gurevych-2019-sentence,
  title = {Sentence-{BERT}: Sentence Embeddings using {S}iamese {BERT}-Networks},
  author = {Reimers, Nils and Gurevych, Iryna},
  booktitle = {Proceedings of EMNLP-IJCNLP 2019},
  year = {2019},
  url = {https://arxiv.org/abs/1908.10084}
}"""

DESCRIPTIONS = {
    "cross": "cross-encoder: one sequence `s1 [SEP] s2` (`[SEP] condition` when conditional) "
             "-> pooled vector -> linear head -> sigmoid",
    "bi": "bi-encoder: one shared encoder, score = cosine of the two pooled sentence vectors "
          "(each sentence paired with the condition as a text pair when conditional)",
    "tri": "tri-encoder: sentences and condition encoded apart; the linearly transformed "
           "condition vector is combined with each sentence vector; score = cosine",
}


def _table(header: tuple[str, str], rows: dict, float_format: str = ".4f") -> str:
    """Two-column markdown table; floats formatted with ``float_format``."""
    return markdown_table(list(header), [[k, f"{v:{float_format}}" if isinstance(v, float) else v]
                                         for k, v in rows.items()])


def eval_results(data, result) -> list[EvalResult]:
    """The run's metrics as Hub ``model-index`` entries (dataset type = the registry id)."""
    dataset_id, _, config = data.name.partition("/")
    return [EvalResult(task_type="semantic-similarity", dataset_type=dataset_id,
                       dataset_name=data.name, dataset_config=config or None,
                       dataset_split=result.eval_split, metric_type=metric, metric_value=value)
            for metric, value in (("pearsonr", result.pearson), ("spearmanr", result.spearman),
                                  ("mse", result.mse))]


def write_model_card(output_dir: Path, *, model, data, options, result, log_history,
                     base_model: tuple[str, str] | None = None) -> Path:
    """Write ``output_dir/README.md`` for a run of :func:`trainers.training.fit`;
    ``base_model`` is (Hub id, licence) of the starting transformer when known."""
    plain_bi = model.kind == "bi" and not model.conditional
    card_data = ModelCardData(
        library_name="sentence-transformers" if plain_bi else "transformers",
        base_model=base_model[0] if base_model else None,
        license=base_model[1] if base_model else None,
        pipeline_tag="sentence-similarity" if plain_bi else None,
        tags=["semrel", "sentence-similarity", f"{model.kind}-encoder"],
        metrics=["pearsonr", "spearmanr", "mse"],
        model_name=f"{model.kind}-encoder fine-tuned on {data.name}",
        eval_results=eval_results(data, result) if result.spearman is not None else None,
    )
    losses = {f"{e['epoch']:.2f}": e["loss"] for e in log_history if "loss" in e}
    per_source = (f"\n\nSpearman per source ({result.eval_split} split):\n\n"
                  + _table(("source", "Spearman"), result.per_source)) if result.per_source else ""
    lo, hi = data.score_range
    metrics = (f"On the `{result.eval_split}` split, scores and labels on the [0, 1] label "
               "scale:\n\n" + _table(("metric", "value"), {
                   "Pearson r": result.pearson, "Spearman rho": result.spearman,
                   "MSE": result.mse})) if result.eval_split else \
        (f"Not evaluated: trained on all {result.train_pairs} pairs of `{data.name}` (it has no "
         "validation or test split); see the CV of the same recipe for its expected quality.")
    load_line = ("from sentence_transformers import SentenceTransformer\n"
                 "model = SentenceTransformer(path)  # also loads as a plain ST model\n") \
        if plain_bi else ""
    citations = "\n\n".join(c for c in (data.citation, SBERT_CITATION,
                                        CSTS_CITATION if model.conditional else "") if c)
    body = f"""
# {model.kind}-encoder fine-tuned on {data.name}

{DESCRIPTIONS[model.kind]}; pooling `{model.pooling}`{', conditional' if model.conditional else ''}.
Trained with `python -m trainers` (semrel) on the `train` split, objective `{options.objective}`.

## Metrics

{metrics}{per_source}

## Data

- dataset: `{data.name}`; native score range [{lo:g}, {hi:g}], labels scaled to [0, 1] as
  (score - {lo:g}) / ({hi:g} - {lo:g})
- train pairs: {result.train_pairs}; evaluation split `{result.eval_split}`
- skipped tied condition groups: {result.n_skipped_ties}

## Training hyperparameters

{_table(("option", "value"), asdict(options), "g")}

Training throughput: {result.pairs_per_second:.1f} pairs/s over {result.train_seconds:.1f} s.

Training loss:

{_table(("epoch", "loss"), losses) if losses else "(not logged)"}

## Usage

```python
from trainers.models import PairEncoder
model = PairEncoder.from_pretrained(path)
model.predict(["A man plays."], ["Someone is playing."]{', ["the activity"]' if model.conditional else ''})
{load_line}```

## Citation

```bibtex
{citations}
```
"""
    card = ModelCard(f"---\n{card_data.to_yaml()}\n---\n{body}")
    path = Path(output_dir) / "README.md"
    card.save(path)
    return path

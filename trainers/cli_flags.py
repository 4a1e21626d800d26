"""The flags of ``semrel fit | cv | predict | ensemble | benchmark | augment``, and the words of
their errors.

Each flag is declared with the Python parameters it sets (:func:`flag`), so a
:class:`~semrel.metrics.errors.ParameterError`, which names a parameter, is answered in the
command's flags (:func:`in_flags`, through the one wrapper of every handler, :func:`answered`).
The training flags are the options of :data:`~trainers.options.OPTIONS`; :func:`training_arguments`
turns the flags into ``PairTrainingArguments`` keyword arguments, checked by the rules that need no
torch. Standard library only, so ``semrel --help`` imports no torch.
"""

from __future__ import annotations

import argparse
import functools
import os

from semrel.command_line import UsageError, add_command, at_least, integer, number
from semrel.metrics.errors import ParameterError

from .benchmark.options import MAX_RESAMPLES, MIN_RESAMPLES, RESAMPLES_COST
from .kinds import names as model_kinds
from .options import OPTIONS, check_arguments
from .selection import DEV_SPLITS, METRICS, selection_arguments

ARG_TYPES = {int: integer, float: number}  # ASCII decimal notation, as every semrel command
# Python parameters a training flag sets beside its option's argument (build_model's `kind`; the
# workers kept across epochs, see training_arguments)
ALSO_SET = {"encoder": ("kind",), "num_workers": ("dataloader_persistent_workers",)}


def command(commands, name: str, handler, help: str) -> argparse.ArgumentParser:
    """``semrel NAME``, run by ``handler(args)`` with the answers of :func:`answered`; its
    flags, declared by :func:`flag`, word its errors."""
    parser = add_command(commands, name, answered(handler), help)
    parser.set_defaults(flags={})
    return parser


def flag(parser: argparse.ArgumentParser, name: str, *parameters: str, **kwargs) -> None:
    """``parser.add_argument(name, **kwargs)``; an error about any of ``parameters`` (default:
    the flag's dest) names the flag ``name``."""
    action = parser.add_argument(name, **kwargs)
    parser.get_default("flags").update(dict.fromkeys(parameters or (action.dest,), name))


def _show(value) -> str:
    """A value as typed on the command line: numbers as ``%g``, sequences space-separated, a
    flag that is set (True) or left out (None) as nothing."""
    if value is None or value is True:
        return ""
    if isinstance(value, (list, tuple)):
        return " ".join(_show(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def in_flags(error: ParameterError, flags: dict) -> str:
    """``error`` worded for the command line: parameters named by their flags (``flags``:
    parameter -> flag, a command's ``args.flags``; a parameter without one keeps its name)."""
    return error.worded(name=lambda p: flags.get(p, p), show=_show, sep=" ")


def _os_error(exc: OSError) -> str:
    """An OSError in one line: ``path: reason``, else its first line."""
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def answered(handler):
    """``handler`` with a ParameterError answered in the command's flags and an OSError (a fault
    the checks up front cannot foresee, a full disk) in one line: a UsageError (exit 2)."""
    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except ParameterError as exc:
            raise UsageError(in_flags(exc, args.flags)) from exc
        except OSError as exc:
            raise UsageError(_os_error(exc)) from exc
    return run


def load_kwargs(args) -> dict:
    """The data flags as :func:`~semrel.dataset_scripts.pairs.load_pairs` keyword arguments."""
    kwargs = {"score_range": args.score_range, "mirror": args.mirror, "data_dir": args.data_dir,
              "cache_dir": args.cache_dir}
    if args.password is not None:
        kwargs["password"] = args.password
    return kwargs


def data_read(args) -> dict:
    """The data a command reads, by parameter (registry names and missing paths are skipped by
    :func:`~semrel.metrics.output_files.check_output`)."""
    return {"dataset": [args.dataset], "data_dir": [args.data_dir],
            "mirror": (args.mirror or "").split(os.pathsep)}


def check_caches(args):
    """``--cache-dir`` and, where the command keeps one, the score cache (``--score-cache``, else
    the default; none with ``--no-score-cache``) as folders to write into
    (:func:`~trainers.scoring.cache.checked_caches`); the score cache's folder, or None."""
    from .scoring.cache import checked_caches

    no_cache = getattr(args, "no_score_cache", True)
    return checked_caches(args.cache_dir, False if no_cache else args.score_cache or True)


def add_data_flags(parser: argparse.ArgumentParser) -> None:
    flag(parser, "--dataset", required=True,
         help="registry id (str-2021, c-sts, ...), a DatasetDict.save_to_disk folder, an "
              "exported Hub-layout folder (build/hub/datasets/ID) or a Hub dataset id "
              "(namespace/name)")
    flag(parser, "--score-range", nargs=2, type=number, metavar=("LO", "HI"),
         help="native score range of data that records none (registry datasets declare their "
              "own; a dataset card may record it)")
    flag(parser, "--mirror", help="mirror directory of the upstream files ($SEMREL_MIRROR)")
    flag(parser, "--data-dir", help="user-supplied data (C-STS: csts.tar.enc or the CSVs)")
    flag(parser, "--password", help="C-STS password (else $CSTS_PASSWORD)")
    flag(parser, "--cache-dir", help="datasets cache directory")


MODEL_HELP = ("a packaged name (minilm, mpnet, e5-small; see `semrel models`), a model folder (a run of "
              "semrel fit, an ensemble, a sentence-transformers bi-encoder or CrossEncoder, a transformers "
              "encoder) or a Hub model id namespace/name[@revision] (fetched into the Hugging Face cache; "
              "HF_HUB_OFFLINE=1: the cache only)")


def add_backend_flags(parser: argparse.ArgumentParser) -> None:
    """``--backend``, ``--quantize``: where a scorer's forward passes run (trainers.scoring.backends)."""
    flag(parser, "--backend", default="torch", metavar="{torch,onnx,openvino}",
         help="where the models run: torch (default, the reference figures), onnx (onnxruntime) or "
              "openvino, both on CPU from an ONNX export made once and kept in the score cache")
    flag(parser, "--quantize", metavar="int8",
         help="int8: onnxruntime's dynamic int8 quantisation of the export (--backend onnx); faster, "
              "its figures differ from torch's")


def add_model_kind_flag(parser: argparse.ArgumentParser) -> None:
    """``--model-kind``: what ``--model`` (``--member``) is, where its files leave it open."""
    flag(parser, "--model-kind", "model_kind", choices=model_kinds(),
         help="the kind of model --model is, where its files leave it open (default: read from "
              "its files)")


def add_training_flags(parser: argparse.ArgumentParser, model_required: bool = True) -> None:
    flag(parser, "--model", "name_or_path", "model_path", required=model_required,
         help="the model to start from: " + MODEL_HELP)
    add_model_kind_flag(parser)
    flag(parser, "--output", "output_dir", required=True,
         help="output folder (new, empty, or --overwrite)")
    flag(parser, "--overwrite", action="store_true",
         help="clear an output folder that holds another run")
    for option in OPTIONS:
        kind = ({"action": argparse.BooleanOptionalAction} if option.type is bool else
                {"type": ARG_TYPES.get(option.type, str), "choices": option.choices})
        flag(parser, option.flag, option.argument, *ALSO_SET.get(option.name, ()),
             default=option.default, help=option.help, **kind)


def add_selection_flags(parser: argparse.ArgumentParser) -> None:
    """``--eval-dataset`` and the flags that go with it (:mod:`~trainers.selection`)."""
    flag(parser, "--eval-dataset", help="evaluate during training on a split of this dataset "
                                        "(anything --dataset takes) and keep the best checkpoint")
    flag(parser, "--eval-config", help="its config (default: default)")
    flag(parser, "--eval-split", help=f"its split (default: {' or '.join(DEV_SPLITS)})")
    flag(parser, "--eval-score-range", nargs=2, type=number, metavar=("LO", "HI"),
         help="its native score range where it records none")
    flag(parser, "--metric-for-best", "metric_for_best_model",
         help=f"keep the checkpoint best by this metric: {' | '.join(METRICS)} (default: "
              "spearman)")
    flag(parser, "--eval-steps", type=integer, help="evaluate every N steps (default: each epoch)")


def training_arguments(args, output: str, changes: dict | None = None) -> dict:
    """``PairTrainingArguments`` keyword arguments from the flags (workers kept across epochs
    when there are any; ``--save-steps N``: a checkpoint every N steps, the latest kept), checked by the rules
    that need no torch."""
    values = {o.argument: o.to_argument(getattr(args, o.name)) for o in OPTIONS}
    values.update(changes or {})
    values["dataloader_persistent_workers"] = values["dataloader_num_workers"] > 0
    if getattr(args, "save_steps", None) is not None:
        values.update(save_strategy="steps", save_steps=args.save_steps, save_total_limit=1)
    values.update(selection_values(args))  # --eval-dataset: evaluate, keep the best checkpoint
    values["output_dir"] = output
    check_arguments(values)
    return values


def selection_values(args: argparse.Namespace) -> dict:
    """The ``TrainingArguments`` values the selection flags set (none without
    ``--eval-dataset``); flags that need ``--eval-dataset`` without it (``--selection-overlap
    omit`` among them), or ``--save-steps`` beside it, are a ParameterError."""
    given = [f for f in ("eval_config", "eval_split", "eval_score_range", "metric_for_best",
                         "eval_steps") if getattr(args, f, None) is not None]
    given += ["selection_overlap"] if getattr(args, "selection_overlap", None) == "omit" else []
    if getattr(args, "eval_dataset", None) is None:
        if given:
            name = "metric_for_best_model" if given[0] == "metric_for_best" else given[0]
            raise ParameterError(name, getattr(args, given[0]), "needs {eval_dataset}")
        return {}
    if getattr(args, "save_steps", None) is not None:
        raise ParameterError("save_steps", args.save_steps, "excludes {eval_dataset}: checkpoints "
                             "are saved at each evaluation (every {eval_steps} steps or epoch)")
    return selection_arguments(args.metric_for_best or "spearman", args.eval_steps)


def add_benchmark_flags(p: argparse.ArgumentParser) -> None:
    """The flags of ``semrel benchmark``."""
    flag(p, "--model", "model", "models", action="append", required=True, metavar="MODEL",
         help="a model (repeat): a packaged name (minilm, mpnet, e5-small), a semrel run or "
              "ensemble, a sentence-transformers bi-encoder or CrossEncoder, a transformers "
              "encoder folder, or a Hub model id namespace/name[@revision]")
    add_model_kind_flag(p)
    flag(p, "--only", "only", action="append", metavar="SET",
         help="score only these (repeat): a dataset id (every dataset whose spec declares benchmark sets), "
              "the start of a set name (semrel-2024/eng, crowd-sts/pairs/test), or a dataset folder "
              "(semrel annotate dataset)")
    flag(p, "--output", "output", help="folder for benchmark.json, benchmark.md, benchmark.png")
    flag(p, "--card", "card", metavar="RUN",
         help="write RUN's results (one of the --model, a semrel run) into its model card")
    flag(p, "--mirror", help="mirror directory of the upstream files ($SEMREL_MIRROR)")
    flag(p, "--data-dir", "data_dirs", action="append", metavar="DATASET=DIR",
         help="user-supplied data of a dataset (c-sts=DIR)")
    flag(p, "--password", help="C-STS password (else $CSTS_PASSWORD)")
    flag(p, "--cache-dir", help="datasets cache directory")
    add_score_cache_flags(p)
    flag(p, "--batch-size", "batch_size", type=at_least(1), default=64, help="texts per batch")
    flag(p, "--max-length", "max_length", type=at_least(1),
         help="tokens per text (default: each model's own); longer ones are cut and counted; one below "
              "a model's special tokens + 1 token of each text, or above its position embeddings, is refused")
    add_backend_flags(p)
    flag(p, "--resamples", "n_resamples", type=at_least(MIN_RESAMPLES, MAX_RESAMPLES, RESAMPLES_COST), default=1000,
         help=f"bootstrap resamples of each interval and comparison, at most {MAX_RESAMPLES}{RESAMPLES_COST}")
    flag(p, "--progress", action=argparse.BooleanOptionalAction,
         help="a progress bar per model (default: when stderr is a terminal)")


def data_dirs(values) -> dict[str, str]:
    """``--data-dir DATASET=DIR`` (repeated) as {dataset: DIR} (each folder checked by
    :func:`~trainers.benchmark.options.check_data_dirs`)."""
    out = {}
    for value in values or ():
        name, sep, folder = value.partition("=")
        if not sep or not name or not folder:
            raise ParameterError("data_dirs", value, "must be DATASET=DIR (e.g. c-sts=~/csts)")
        out[name] = folder
    return out


def add_score_cache_flags(p: argparse.ArgumentParser) -> None:
    """``--score-cache``, ``--no-score-cache``: where a command's scorers keep what they compute."""
    either = p.add_mutually_exclusive_group()
    flag(either, "--score-cache", "score_cache", metavar="DIR",
         help="where computed embeddings and scores are kept (default: $SEMREL_CACHE/scores, "
              "else ~/.cache/semrel/scores)")
    flag(either, "--no-score-cache", action="store_true", help="keep nothing on disk")


def add_augment_flags(p: argparse.ArgumentParser) -> None:
    """The flags of ``semrel augment``."""
    add_data_flags(p)
    flag(p, "--config", default="default", help="dataset config")
    flag(p, "--neighbours", "neighbours", type=at_least(1), default=1, metavar="K",
         help="new pairs per train sentence: its K nearest other train sentences by cosine "
              "(pairs already in train passed over)")
    flag(p, "--embed-model", "embed_model", default="minilm", metavar="MODEL",
         help="the bi-encoder that finds the neighbours: " + MODEL_HELP)
    flag(p, "--teacher", "teacher", required=True, metavar="MODEL",
         help="the model whose score labels each new pair, as semrel predict scores it (best a run "
              "or ensemble trained on this train split; one that saw its validation or test pairs "
              "is refused): " + MODEL_HELP)
    flag(p, "--clip-labels", "clip_labels", action="store_true",
         help="put a teacher score outside the score range on its nearer end (counted in the "
              "record); without it such a score is an error")
    flag(p, "--batch-size", "batch_size", type=at_least(1), default=64, help="texts per batch")
    add_score_cache_flags(p)
    flag(p, "--output", "output", required=True,
         help="the dataset folder to write (new, empty, or an earlier augmented folder, replaced "
              "whole): semrel fit --dataset takes it")

"""The run folder and the ensemble folder: every file in them is named, read, written and checked
here, and nowhere else.

A run folder (``semrel fit``'s ``output_dir``)::

    config.json, model.safetensors, tokenizer files   the transformer (save_pretrained)
    semrel_encoder.json         the semrel model's kind and options
    semrel_head.safetensors     parameters outside the transformer (tri-encoder)
    metrics.json                what fit measured, on which data and score range, with which options
    eval_predictions.json       scores on the evaluated split, with the gold labels
    seen_pairs.json             hashes of the pairs it (and the run it started from) trained and chose on
    selection_predictions.json  the kept model's dev predictions (when a dev split chose it)
    README.md                   the model card
    checkpoints/semrel_run.json the run's fingerprint; checkpoints/ stays local

A CV folder holds its fingerprint and one run folder per fold; an ensemble folder holds
``semrel_ensemble.json``, a card and copies of its members under ``members/``.

* :mod:`.files`: the names, and one reader and one whole-file writer per file;
* :mod:`.schema`: what each JSON file holds, checked by its reader;
* :mod:`.predictions`: the predictions files and the CV folders' folds;
* :mod:`.seen`: the pairs a run saw, as hashes;
* :mod:`.checks`: what a folder argument must be before a command uses it;
* :mod:`.output`: which folder a run may use, its fingerprint (marked incomplete until the run
  has written everything), where it resumes.

Standard library only (numpy and safetensors where a function needs them): ``semrel --help`` and
publishing import it without torch.
"""

from __future__ import annotations

from .checks import (
    check_checkpoint_folder,
    check_cv_folder,
    check_encoder_folder,
    check_member_folder,
    check_output_file,
    check_output_folder,
    check_run_folder,
    check_transformer_folder,
    member_facts,
    recorded_score_range,
)
from .files import (
    CARD,
    CHECKPOINTS,
    CONFIG,
    ENCODER_CONFIG,
    ENSEMBLE,
    HEAD,
    MEMBERS,
    METRICS,
    PREDICTIONS,
    SEEN,
    SELECTION,
    WEIGHT_FILES,
    read_encoder_config,
    read_ensemble,
    read_metrics,
    run_data,
    write_encoder_config,
    write_ensemble,
    write_metrics,
    write_text,
)
from .output import (
    check_checkpoint_run,
    check_ensemble_output,
    check_output,
    finish_run,
    holds_run,
    last_complete_checkpoint,
    prepare_output,
    resume_point,
)
from .predictions import (
    RunPredictions,
    check_same_rows,
    cv_folds,
    load_run,
    read_cvs,
    same_folds,
    write_predictions,
)
from .seen import pair_hashes, seen_pairs, seen_part, start_seen, write_seen_pairs

__all__ = [
    "CARD", "CHECKPOINTS", "CONFIG", "ENCODER_CONFIG", "ENSEMBLE", "HEAD", "MEMBERS",
    "METRICS", "PREDICTIONS", "SEEN", "SELECTION", "WEIGHT_FILES", "RunPredictions",
    "check_checkpoint_folder", "check_checkpoint_run", "check_cv_folder", "check_encoder_folder",
    "check_ensemble_output", "check_member_folder", "check_output", "check_output_file", "check_output_folder",
    "check_run_folder", "check_same_rows", "check_transformer_folder", "cv_folds", "finish_run",
    "holds_run", "last_complete_checkpoint", "load_run", "member_facts", "pair_hashes", "prepare_output",
    "read_cvs", "read_encoder_config", "read_ensemble", "read_metrics",
    "recorded_score_range", "resume_point", "run_data", "same_folds", "seen_pairs", "seen_part", "start_seen",
    "write_encoder_config",
    "write_ensemble", "write_metrics", "write_predictions", "write_seen_pairs", "write_text",
]

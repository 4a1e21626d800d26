"""The options of one training run (stdlib only, so the CLI builds its --help without torch).

Names of encoder kinds and objectives are checked against their registries
(:data:`trainers.models.MODEL_CLASSES`, :data:`trainers.losses.LOSSES`) when the run starts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

ON_INVALID = ("raise", "omit")
COMPILE_MODES = ("none", "default", "reduce-overhead", "max-autotune")
PRECISIONS = ("auto", "bf16", "fp32")


@dataclass(frozen=True)
class FitOptions:
    """Model and training hyperparameters of one run (``batch_size`` is per device;
    ``group_by_length`` batches pairs of similar token length, see
    :class:`~trainers.samplers.GroupBatchSampler`; ``pooling`` applies to bi- and tri-encoders;
    ``on_invalid="omit"`` drops tied condition groups of quadruplet objectives and counts them).
    GPU speed, opt-in: ``compile`` compiles the transformer with ``torch.compile`` in that mode
    (``reduce-overhead``: CUDA graphs); ``pad_to_multiple_of`` pads batches to width buckets (few
    shapes to compile); ``num_workers`` collates batches in that many DataLoader processes.
    ``precision``: ``auto`` (bf16 autocast + TF32 on a GPU, fp16 where it lacks bf16; float32 on
    CPU), ``bf16`` (bf16 autocast on either, refused by a GPU without bf16; on a CPU with
    AVX512-BF16 or AMX about 1.7x faster for mpnet), ``fp32`` (no autocast, no TF32). Master
    weights stay float32 in every case.
    A value outside its rule is a ``ValueError`` naming the option."""

    encoder: str = "bi"
    objective: str = "mse"
    pooling: str = "mean"
    combine: str = "hadamard"
    max_length: int = 256
    epochs: float = 4.0
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    seed: int = 42
    max_steps: int = -1
    margin: float = 1.0
    on_invalid: str = "raise"
    group_by_length: bool = True
    compile: str = "none"
    pad_to_multiple_of: int = 0
    num_workers: int = 0
    precision: str = "auto"

    def __post_init__(self):
        rules = [
            ("epochs", math.isfinite(self.epochs) and self.epochs > 0, "a number > 0 (e.g. 2.5)"),
            ("max_length", self.max_length >= 1, "an integer >= 1"),
            ("batch_size", self.batch_size >= 1, "an integer >= 1"),
            ("learning_rate", math.isfinite(self.learning_rate) and self.learning_rate > 0,
             "a number > 0"),
            ("warmup", math.isfinite(self.warmup) and self.warmup >= 0,
             "a fraction of the steps in [0, 1) or a step count >= 1"),
            ("weight_decay", math.isfinite(self.weight_decay) and self.weight_decay >= 0,
             "a number >= 0"),
            ("max_steps", self.max_steps == -1 or self.max_steps >= 1,
             "-1 (train for --epochs) or an integer >= 1"),
            ("margin", math.isfinite(self.margin), "a finite number"),
            ("on_invalid", self.on_invalid in ON_INVALID, f"one of {ON_INVALID}"),
            ("compile", self.compile in COMPILE_MODES, f"one of {COMPILE_MODES}"),
            ("pad_to_multiple_of", self.pad_to_multiple_of >= 0, "an integer >= 0 (0: none)"),
            ("num_workers", self.num_workers >= 0, "an integer >= 0"),
            ("precision", self.precision in PRECISIONS, f"one of {PRECISIONS}"),
        ]
        for name, ok, rule in rules:
            if not ok:
                raise ValueError(f"--{name.replace('_', '-')} {getattr(self, name)!r}: must be "
                                 f"{rule}")


def stored_options(saved: dict) -> dict:
    """Options as a run stored them (``asdict(FitOptions)`` of an earlier version), with the
    options added to :class:`FitOptions` since then at their defaults (e.g. ``precision``)."""
    return {**asdict(FitOptions()), **saved}


def check_score_range(score_range) -> tuple[float, float]:
    """``(lo, hi)``: two finite numbers with ``lo < hi``, else a ValueError naming --score-range."""
    lo, hi = (float(x) for x in score_range)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"--score-range {lo:g} {hi:g}: must be two finite numbers LO < HI")
    return lo, hi


def check_save_steps(save_steps: int | None) -> None:
    if save_steps is not None and save_steps < 1:
        raise ValueError(f"--save-steps {save_steps}: must be an integer >= 1")

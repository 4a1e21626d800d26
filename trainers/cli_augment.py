"""``semrel augment``: a dataset folder with more train pairs, nearest neighbours labelled by a
teacher model (:mod:`~trainers.neighbour_pairs`)."""

from __future__ import annotations

import argparse
import sys

from semrel.dataset_scripts.schema import check_score_range
from semrel.metrics.output_files import check_output

from .cli_flags import check_caches, data_read, load_kwargs


def run_augment(args: argparse.Namespace) -> int:
    """``semrel augment``: the dataset with nearest-neighbour train pairs labelled by
    ``--teacher``, as a dataset folder (:mod:`~trainers.neighbour_pairs`)."""
    if args.score_range is not None:
        check_score_range(args.score_range)
    from .model_ref import resolve_model_ref
    from .neighbour_pairs import augment, check_augmented_output
    from .run_folder import check_output_folder

    refs = {p: resolve_model_ref(getattr(args, p), parameter=p) for p in ("embed_model", "teacher")}
    output = check_output(args.output, "output", {p: [str(r.path)] for p, r in refs.items()},
                          folder=True, data=data_read(args))
    check_augmented_output(output)
    check_output_folder(output, "output")
    score_cache = check_caches(args)
    import datasets

    from semrel.dataset_scripts.pairs import load_pairs

    datasets.disable_progress_bars()  # the summary lines say what was written
    data = load_pairs(args.dataset, args.config, **load_kwargs(args))
    augmented = augment(data, neighbours=args.neighbours, teacher=refs["teacher"],
                        embed_model=refs["embed_model"], clip_labels=args.clip_labels,
                        batch_size=args.batch_size, cache_dir=score_cache,
                        progress=sys.stderr.isatty())
    counts, record = augmented.record["counts"], augmented.record
    print(f"{counts['new_pairs']} new pairs from {counts['sentences']} train sentences (K = "
          f"{args.neighbours}; {counts['existing_passed']} pairs already in train passed over, "
          f"{counts['duplicates']} found from both ends, {counts['held_out_sentences']} sentences "
          f"of other splits left out), labelled by {args.teacher}"
          + (f" ({record['clipped']} clipped)" if record["clipped"] else ""))
    path = augmented.save(output)
    print(f"train {counts['original_pairs']} + {counts['new_pairs']} pairs, "
          + ", ".join(f"{s} {n}" for s, n in record["splits"].items() if s != "train")
          + f" -> {path}")
    return 0

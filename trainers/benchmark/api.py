"""``semrel.benchmark(models, only=[...], **options)``: what ``semrel benchmark`` does, in one call.

The options are the command's flags by their Python names, checked by the same rules before any
model or set is loaded: each model once, ``card`` one of them (a run or ensemble saved by
semrel, with a card), ``output`` a folder to write and matplotlib there to draw its picture,
the mirror, the caches and ``data_dirs`` folders. The scorers it opens it closes; a benchmark
stopped by ``KeyboardInterrupt`` or scoring no cell writes nothing.

    >>> import semrel
    >>> result = semrel.benchmark(["minilm"], only=["semrel-2024/eng/validation"])  # doctest: +SKIP
    >>> result.cells[0].set, result.cells[0].n                                       # doctest: +SKIP
    ('semrel-2024/eng/validation', 250)
"""

from __future__ import annotations

import sys
from pathlib import Path

from semrel.dataset_scripts.benchmark_sets import select_sets
from semrel.dataset_scripts.sources import check_mirror
from semrel.metrics.errors import ParameterError
from semrel.metrics.output_files import check_output

from ..card import write_section
from ..model_ref import resolve_model_ref
from ..run_folder import CARD, check_output_file, check_output_folder
from ..scoring import check_backend, load_scorer
from ..scoring.cache import checked_caches
from ..scoring.limits import check_scored_model
from .cells import unscored
from .options import check_data_dirs, check_options
from .report import CARD_HEADING, card_section, write_outputs
from .run import BenchmarkResult, load_sets, run_benchmark


class NothingScored(RuntimeError):
    """No cell of a benchmark was scored (the message counts each status); ``result`` holds every
    cell with why. Nothing was written."""

    def __init__(self, why: str, result: BenchmarkResult):
        super().__init__(why)
        self.result = result


def benchmark(models, only=None, *, model_kind=None, output=None, card=None, mirror=None, data_dirs=None,
              password=None, cache_dir=None, score_cache=True, batch_size=64, max_length=None,
              n_resamples=1000, progress=None, log=None, backend="torch", quantize=None) -> BenchmarkResult:
    """Every model of ``models`` (any model argument: :func:`~trainers.model_ref.resolve_model_ref`,
    ``model_kind`` overriding the kind its files tell) on every labelled set, or those ``only``
    names (:func:`~semrel.dataset_scripts.benchmark_sets.select_sets`): the
    :class:`~.run.BenchmarkResult`, whose ``written`` lists the files written.

    ``output``: a folder for benchmark.json, benchmark.md and benchmark.png; ``card``: the one of
    ``models`` whose model card gets the ``## Benchmark`` section; ``mirror``, ``data_dirs``
    (``{dataset: folder}`` of user-supplied data), ``password``, ``cache_dir``: where the sets come
    from; ``score_cache``: the scorers' cache folder (True: the default, False: nothing on disk);
    ``batch_size``, ``max_length`` (default: each model's own), ``n_resamples`` of each interval
    and comparison; ``progress``: a bar per model (None: when stderr is a terminal); ``log``: takes
    each progress line (default: stderr); ``backend`` and ``quantize``: where the models run
    (:mod:`~trainers.scoring.backends`). A bad option is a ParameterError naming it; no cell
    scored is :class:`NothingScored`."""
    models, only = check_options(models, only, batch_size=batch_size, max_length=max_length,
                                 n_resamples=n_resamples, score_cache=score_cache, progress=progress)
    check_backend(backend, quantize)
    check_mirror(mirror)
    cache = checked_caches(cache_dir, score_cache)
    refs = _checked_models(models, model_kind, max_length)
    card_ref = None if card is None else _card_model(card, refs)
    if output is not None:
        _check_output(output, refs)
    sets = select_sets(only, mirror=mirror, cache_dir=cache_dir, data_dirs=check_data_dirs(data_dirs),
                       password=password)
    loaded = load_sets(sets, mirror=mirror)
    progress = sys.stderr.isatty() if progress is None else progress
    scorers = []
    try:
        for ref in refs:
            scorers.append(load_scorer(ref, max_length=max_length, batch_size=batch_size, cache_dir=cache,
                                       progress=progress, parameter="models", backend=backend,
                                       quantize=quantize))
        result = run_benchmark(scorers, loaded, n_resamples=n_resamples, log=log)
    finally:
        for scorer in scorers:
            scorer.close()
    if (why := unscored(result.cells)) is not None:  # earlier outputs stay as they were
        raise NothingScored(why, result)
    if output is not None:
        result.written += write_outputs(result, output)
    if card_ref is not None:
        result.written.append(write_section(card_ref.path, CARD_HEADING, card_section(result, card_ref.spec)))
    return result


def _checked_models(models: list[str], kind, max_length) -> list:
    """Each model resolved and checked (:func:`~..scoring.limits.check_scored_model`), once."""
    refs, seen = [], {}
    for spec in models:
        ref = resolve_model_ref(spec, kind=kind, parameter="models")
        check_scored_model(ref, max_length, "models")
        where = ref.path.resolve()
        if where in seen:
            raise ParameterError("models", ref.spec, f"is {seen[where]} again: give each model once")
        seen[where] = ref.spec
        refs.append(ref)
    return refs


def _card_model(run, refs):
    """The model whose card ``card`` names: a semrel run or ensemble among ``refs``, with a card."""
    where = Path(run).expanduser().resolve()
    for ref in refs:
        if ref.path.resolve() == where:
            if not ref.model_kind.records_training:
                raise ParameterError("card", run, f"is a {ref.kind} model, not a run or ensemble "
                                     "saved by semrel (whose card semrel writes)")
            if not (where / CARD).is_file():
                raise ParameterError("card", run, f"holds no {CARD}: no model card to write into")
            check_output_file(where / CARD, "card")
            return ref
    raise ParameterError("card", run, "must be one of the {models} folders: its results are what the card gets")


def _check_output(output, refs) -> None:
    """``output`` as a folder to write (none of the models, nor inside one), with matplotlib to
    draw benchmark.png (checked before scoring, not after)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ParameterError("output", output, "draws benchmark.png with matplotlib: pip install "
                             "'matplotlib>=3.8' (the report extra)") from None
    check_output(output, "output", {"models": [str(r.path) for r in refs]}, folder=True)
    check_output_folder(output, "output")

"""The scorer of any model kind: pairs in, one score per pair out, every distinct text unit
computed once (:class:`Scorer`).

A pair is made of *units*, what the model computes apart: a bi-encoder's two sentences, a
conditional bi-encoder's (sentence, condition) text pairs, a tri-encoder's two sentences and
condition, a cross-encoder's one joint sequence. A scorer computes each distinct unit once,
in batches sorted by token length (longest first: the least padding, the memory peak early),
keeps the values in memory and, given a :class:`~.cache.UnitCache`, on disk; the pair scores
are then cheap arithmetic over the units' values (a cosine, a cross-encoder's score). A batch is
tokenised (:meth:`Scorer.tokenized`) in a helper thread while the model computes the batch before
it (fast tokenizers release the GIL), and each unit's key is hashed once per scorer.
A unit longer than the model's ``max_length`` tokens is cut; each scoring says how many pairs
had a unit cut (:class:`Scores`).
"""

from __future__ import annotations

import contextlib
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .cache import UnitCache, unit_key

Unit = tuple[str, ...]


@dataclass(frozen=True)
class Scores:
    """``values``: one score per pair; ``cut``: per pair, whether a unit of it was longer than
    ``max_length`` tokens (and cut); ``computed``: units this call computed (none were in
    memory or on disk)."""

    values: np.ndarray
    cut: np.ndarray
    computed: int
    max_length: int

    @property
    def truncated(self) -> int:
        """How many pairs were cut."""
        return int(self.cut.sum())


COSINE_DECIMALS = 12


def cosine(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise cosine ``u·v / (|u| |v|)`` (float64), rounded to 12 decimals: a pair of two
    identical texts (one embedding) scores 1 up to float64 rounding (±2e-16), and that noise
    must not order such pairs among themselves -- rounded, they tie, as they should."""
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    norms = np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1)
    return np.round((u * v).sum(axis=1) / np.maximum(norms, 1e-12), COSINE_DECIMALS)


class Scorer:
    """A model as a pair scorer. Subclasses say which units a pair needs (:meth:`pair_units`),
    how the model is loaded (:meth:`load`), how a batch of units is computed (:meth:`compute`,
    from what :meth:`tokenized` made of it) and counted in tokens (:meth:`lengths`), and how a
    pair's score follows from its units' values (:meth:`combine`).

    ``spec``: the model argument as given; ``path``: its folder; ``kind``: the name of its
    kind (:mod:`~trainers.kinds`) and ``key``: the cache key (content hash + settings), both
    set by :func:`~.loader.model_scorer`; ``conditional``: it takes a condition (and needs one).
    The model is loaded on the first unit that must be computed: a run that finds every unit
    in the cache loads nothing, and reads what the model is (:attr:`facts`: its ``max_length``,
    its ``scale``) from the cache, where the first load wrote it."""

    kind: str = ""

    def __init__(self, spec: str, path: Path, *, max_length: int | None = None, device: str | None = None,
                 batch_size: int = 64, progress: bool = False, backend: str = "torch",
                 quantize: str | None = None):
        self.spec, self.path = spec, Path(path)
        self.requested_max_length, self.device_name = max_length, device
        self.backend, self.quantize = backend, quantize
        self.model_hash, self.export_root = "", None  # set by loader.keyed
        self._exports: tempfile.TemporaryDirectory | None = None
        self.batch_size, self.progress = batch_size, progress
        self.key = ""
        self.conditional = False
        self.computed = 0  # units computed over the scorer's life (tests count re-encoding)
        self.loaded = False
        self._facts: dict | None = None
        self._memory: dict[bytes, tuple[int, np.ndarray]] = {}
        self._keys: dict[Unit, bytes] = {}
        self._cache: UnitCache | None = None

    # ---- what a kind defines --------------------------------------------------------------
    def settings(self) -> dict:
        """What besides the model's files changes its output (part of :attr:`key`); the files
        (configs included) are in the content hash. A backend other than torch, and a
        quantisation, are named (torch's keys stay those of the runs before backends)."""
        settings = {"kind": self.kind, "scorer": type(self).__name__, "max_length": self.requested_max_length}
        if self.backend != "torch":
            settings["backend"] = self.backend
        if self.quantize:
            settings["quantize"] = self.quantize
        return settings

    def load(self) -> dict:
        """Load the model; its facts: ``max_length`` (tokens per unit), ``scale`` (``label``:
        trained onto the [0, 1] label scale; ``cosine``: a zero-shot cosine; ``logit``: an
        unbounded cross-encoder output) and whatever else describes it (a prompt)."""
        raise NotImplementedError

    def pair_units(self, sentence1: str, sentence2: str, condition: str | None) -> tuple[Unit, ...]:
        raise NotImplementedError

    def lengths(self, units: list[Unit]) -> np.ndarray:
        """Each unit's token count before truncation."""
        raise NotImplementedError

    def tokenized(self, units: list[Unit]):
        """What :meth:`compute` takes for one batch: here the units as they are; a kind that
        tokenises returns the model's inputs, made in a helper thread while the batch before runs."""
        return units

    def compute(self, batch) -> np.ndarray:
        """(len(units), dim) float32 values of one batch (:meth:`tokenized` of its units)."""
        raise NotImplementedError

    def combine(self, values: list[np.ndarray]) -> np.ndarray:
        """Pair scores from ``values[j]``, the (n, dim) values of every pair's unit ``j``."""
        raise NotImplementedError

    # ---- shared -----------------------------------------------------------------------------
    def use_cache(self, cache: UnitCache | None) -> None:
        self._cache = cache

    @property
    def cache_folder(self) -> Path | None:
        """The score cache's folder where this scorer keeps its units on disk, else None."""
        return None if self._cache is None else self._cache.path.parent

    def ensure_loaded(self) -> None:
        if not self.loaded:
            self._facts = self.load()
            self.loaded = True
            if self._cache is not None:
                self._cache.set_about("facts", self._facts)

    @property
    def facts(self) -> dict:
        """What the model is (see :meth:`load`): from the cache where a run wrote it, else
        from the loaded model."""
        if self._facts is None and self._cache is not None:
            self._facts = self._cache.get_about("facts")
        if self._facts is None:
            self.ensure_loaded()
        return self._facts

    @property
    def max_length(self) -> int:
        return self.facts["max_length"]

    @property
    def scale(self) -> str:
        return self.facts["scale"]

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        if self._exports is not None:
            self._exports.cleanup()

    @property
    def exports(self) -> Path:
        """Where a backend's exports of the model are kept: ``export_root``, else a temporary
        folder removed by :meth:`close`."""
        if self.export_root is not None:
            return Path(self.export_root)
        if self._exports is None:
            self._exports = tempfile.TemporaryDirectory(prefix="semrel-exports-")
        return Path(self._exports.name)

    def check_condition(self, condition) -> None:
        if self.conditional and condition is None:
            raise ValueError(f"{self.spec} is a conditional model: give a condition column")

    def prepare(self, units: list[Unit]) -> int:
        """Every unit in memory: read from the disk cache, else computed (sorted by length,
        in batches, each stored as it is done); the number computed."""
        keys = dict(zip(self.keys_of(units), units, strict=True))
        wanted = [k for k in keys if k not in self._memory]
        if wanted and self._cache is not None:
            self._memory.update(self._cache.get(wanted))
            wanted = [k for k in wanted if k not in self._memory]
        if not wanted:
            return 0
        todo = [keys[k] for k in wanted]
        self.ensure_loaded()
        tokens = self.lengths(todo)
        order = np.argsort(-tokens, kind="stable")
        batches = [order[start:start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        with self._bar(len(todo)) as bar, ThreadPoolExecutor(1, thread_name_prefix="tokenize") as helper:
            ahead = helper.submit(self.tokenized, [todo[i] for i in batches[0]])
            for number, batch in enumerate(batches):
                inputs = ahead.result()
                if number + 1 < len(batches):
                    ahead = helper.submit(self.tokenized, [todo[i] for i in batches[number + 1]])
                values = self.compute(inputs)
                rows = [(wanted[i], int(tokens[i]), values[j]) for j, i in enumerate(batch)]
                if self._cache is not None:
                    self._cache.put(rows)
                self._memory.update({k: (t, v) for k, t, v in rows})
                self.computed += len(batch)
                bar.update(len(batch))
        return len(todo)

    def keys_of(self, units: list[Unit]) -> list[bytes]:
        """Each unit's :func:`~.cache.unit_key`, hashed once per scorer (a benchmark asks for
        every unit's key three times: to compute, to read, to score)."""
        known = self._keys
        known.update((u, unit_key(u)) for u in set(units).difference(known))
        return [known[u] for u in units]

    def _pairs(self, sentence1, sentence2, condition) -> list[tuple[Unit, ...]]:
        """Each pair's units; inputs of unequal length, or a conditional model without
        conditions, are a ValueError."""
        self.check_condition(condition)
        sentence1, sentence2 = list(sentence1), list(sentence2)
        if len(sentence1) != len(sentence2) or (condition is not None and len(condition) != len(sentence1)):
            raise ValueError(f"{len(sentence1)} first sentences, {len(sentence2)} second"
                             + ("" if condition is None else f", {len(condition)} conditions")
                             + ": one of each per pair")
        conditions = list(condition) if self.conditional else [None] * len(sentence1)
        return [self.pair_units(a, b, c) for a, b, c in zip(sentence1, sentence2, conditions, strict=True)]

    def precompute(self, sentence1, sentence2, condition=None) -> int:
        """Every unit of these pairs computed (or read from the cache) in one sorted pass, one
        progress bar; the number computed. Scoring sets of them afterwards computes nothing."""
        return self.prepare([u for units in self._pairs(sentence1, sentence2, condition) for u in units])

    def scored(self, sentence1, sentence2, condition=None) -> Scores:
        """:class:`Scores` of the pairs ``(sentence1[i], sentence2[i][, condition[i]])``."""
        pairs = self._pairs(sentence1, sentence2, condition)
        units = [u for pair in pairs for u in pair]
        computed = self.prepare(units)
        if not pairs:
            return Scores(np.zeros(0), np.zeros(0, dtype=bool), computed, self.max_length)
        width = len(pairs[0])  # units per pair: one number for every pair of a scorer
        stored = [self._memory[k] for k in self.keys_of(units)]
        cut = (np.array([t for t, _ in stored]).reshape(-1, width) > self.max_length).any(axis=1)
        values = [np.stack([v for _, v in stored[j::width]]) for j in range(width)]
        return Scores(np.asarray(self.combine(values), dtype=np.float64), cut, computed,
                      self.max_length)

    def score(self, sentence1, sentence2, condition=None) -> np.ndarray:
        """One score per pair (see :attr:`scale`)."""
        return self.scored(sentence1, sentence2, condition).values

    def _bar(self, total: int):
        if not self.progress:
            return contextlib.nullcontext(_NoBar())
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=f"{Path(self.spec).name or self.spec} ({self.kind})",
                    unit=" texts", leave=False)


class _NoBar:
    def update(self, n: int) -> None:
        pass


class EncoderScorer(Scorer):
    """A model that encodes each unit apart into a vector (bi-encoders): :meth:`encode`, and a
    pair's score is the cosine of its two vectors."""

    def pair_units(self, sentence1, sentence2, condition):
        return (sentence1,), (sentence2,)

    def combine(self, values):
        return cosine(values[0], values[1])

    def encode(self, texts) -> np.ndarray:
        """(len(texts), dim) embeddings, each distinct text computed once (cached)."""
        units = [(t,) for t in texts]
        self.prepare(units)
        return np.stack([self._memory[k][1] for k in self.keys_of(units)]) if units else np.zeros((0, 0))

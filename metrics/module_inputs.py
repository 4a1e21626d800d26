"""Strict inputs for semrel's evaluate modules: each input is checked before evaluate stores it.

evaluate 0.4.6 casts every value to the declared feature with Python's ``int()``/``str()`` (a
position 1.5 becomes 1, an id 2 among string ids becomes ``'2'``), picks one of several feature
sets from the first row alone, answers an input left out, ``None`` or empty with a TypeError,
KeyError or IndexError from its internals, and keeps a half-made cache after a failed call, so
that the next, valid call fails too. :class:`StrictInputs`, put before ``evaluate.Metric``,
``evaluate.Measurement`` or ``evaluate.Comparison`` in a module's bases, replaces that step:

- every input column goes through pyarrow whole (no Python cast per value) with the type its
  values have; a value the declared features would change (a float where ids or positions
  belong, a word where a number belongs, a str among int ids, an int beyond int64) is a
  ``ValueError`` naming the module, the input and the index of the first such value;
- an input left out or ``None``, inputs of different lengths, empty inputs and unknown
  arguments (``predictions`` or ``references`` too, where the module has no such input: evaluate
  would drop them without a word) are a one-line ``ValueError``;
- a call that fails leaves the module as it was: nothing of a refused batch is stored, and a
  ``compute`` that fails drops its cache file and lock, so the next call starts clean.
"""

from __future__ import annotations

import inspect
import os

import numpy as np
import pyarrow as pa

INT64 = (-(2**63), 2**63 - 1)


class InputError(ValueError):
    """An input refused before evaluate stored anything of the call (the module is unchanged)."""


class StrictInputs:
    """Mixin for an evaluate module: strict input columns, one-line errors, no state after a failure.

    An input that ``_compute`` gives a default may be left out (the module's ``add_batch`` fills
    it, as mse_lower_bound's does for ``predictions``; the Space form reads the same rule)."""

    def _module_info(self, description: str, citation: str, inputs_description: str, features, *,
                     reference_urls=(), arrow: bool = False):
        """The module's ``_info``: evaluate's MetricInfo, MeasurementInfo or ComparisonInfo, after the
        module's base class. ``arrow``: ``_compute`` gets Arrow columns instead of Python lists (ids
        coded in Arrow, no Python object per cell); set after construction, because evaluate checks
        a format only against a single Features."""
        import evaluate

        kind = (evaluate.ComparisonInfo if isinstance(self, evaluate.Comparison) else
                evaluate.MeasurementInfo if isinstance(self, evaluate.Measurement) else evaluate.MetricInfo)
        info = kind(description=description, citation=citation, inputs_description=inputs_description,
                    features=features, reference_urls=list(reference_urls))
        if arrow:
            info.format = "arrow"
        return info

    def compute(self, *, predictions=None, references=None, **kwargs):
        """evaluate's ``compute`` after the checks above; a failure leaves no state behind.

        (evaluate appends each module's input description to this docstring.)
        """
        names = self._feature_names()
        given = {"predictions": predictions, "references": references, **kwargs}
        self._check_arguments(_others(names, predictions, references, kwargs))
        inputs = {k: given.get(k) for k in names}
        if all(v is None for v in inputs.values()):
            if self.writer is None:  # nothing added before either
                raise InputError(f"{self.name}: no inputs given; compute needs {_listing(self._required())}")
        else:
            self._check_present(inputs)
        try:
            return super().compute(predictions=predictions, references=references, **kwargs)
        except InputError:  # refused before anything was stored: earlier add_batch calls stay
            raise
        except BaseException:
            self._discard()
            raise

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """evaluate's ``add_batch``, with each column converted by pyarrow as its values are."""
        names = self._feature_names()
        self._check_arguments(_others(names, predictions, references, kwargs), options=False)
        batch = {"predictions": predictions, "references": references, **kwargs}
        batch = {name: batch.get(name) for name in names}
        self._check_present(batch)
        candidates = [self.selected_feature_format] if self.writer is not None else (
            self.features if isinstance(self.features, list) else [self.features])
        features, table = strict_table(self.name, batch, candidates, later=self.writer is not None)
        first = self.writer is None
        if first:
            self.selected_feature_format = features
        try:
            if first:
                self._init_writer()
            self.writer.write_table(table)
        except BaseException:
            if first:
                self._discard()
            raise

    def add(self, *, prediction=None, reference=None, **kwargs):
        """One row: ``add_batch`` of one-row columns (the same checks)."""
        names = self._feature_names()
        self._check_arguments([k for k, v in (("prediction", prediction), ("reference", reference))
                               if v is not None and f"{k}s" not in names], options=False)
        one = {k: [v] for k, v in kwargs.items()}
        return self.add_batch(predictions=None if prediction is None else [prediction],
                              references=None if reference is None else [reference], **one)

    def _required(self) -> list[str]:
        params = inspect.signature(self._compute).parameters
        return [n for n in self._feature_names() if n not in params or params[n].default is inspect.Parameter.empty]

    def _check_present(self, inputs: dict) -> None:
        missing = [n for n in self._required() if inputs.get(n) is None]
        if missing:
            raise InputError(f"{self.name}: {_listing(missing)} left out or None; compute needs "
                             f"{_listing(self._required())}, one value per row")

    def _check_arguments(self, others: list[str], options: bool = True) -> None:
        params = inspect.signature(self._compute).parameters
        known = [p for p, v in params.items() if v.kind is not v.VAR_KEYWORD and p not in self._feature_names()]
        unknown = [k for k in others if not options or k not in known]
        if unknown:
            raise InputError(f"{self.name}: unknown argument(s) {', '.join(map(repr, unknown))}; inputs are "
                             f"{_listing(self._feature_names())}" + (f", options {_listing(known)}" if known else ""))

    def _discard(self) -> None:
        """Forget what a failed call left: the writer, its cache files and locks, the read data
        (evaluate's own attributes: it has no public reset; test_module_inputs.py pins them)."""
        writer, self.writer = self.writer, None
        if writer is not None:
            try:
                writer.close()
            except Exception:  # noqa: BLE001 (a broken writer: its file is removed below anyway)
                pass
        files = list(zip(getattr(self, "filelocks", None) or [], getattr(self, "file_paths", None) or [],
                         strict=True))
        if self.filelock is not None and self.cache_file_name:
            files.append((self.filelock, self.cache_file_name))
        for lock, path in files:
            if path and os.path.exists(path):
                os.remove(path)
            lock.release()
        self.filelocks, self.file_paths = [], []
        self.filelock = self.cache_file_name = self.selected_feature_format = None
        self.buf_writer = self.data = None


def _others(names: list[str], predictions, references, kwargs: dict) -> list[str]:
    """The arguments given that are no input of the module: evaluate's ``predictions`` and
    ``references`` where the module has no such input, and every other unknown name."""
    given = [k for k, v in (("predictions", predictions), ("references", references)) if v is not None]
    return [k for k in [*given, *kwargs] if k not in names]


def strict_table(module: str, batch: dict, candidates: list, *, later: bool = False):
    """(the features of ``candidates`` the columns' own types fit, the batch as an Arrow table of
    exactly those types); a ValueError naming input and index otherwise."""
    lengths = {name: _length(module, name, values) for name, values in batch.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(f"{module}: inputs of different lengths ("
                         + ", ".join(f"{n} {len_}" for n, len_ in lengths.items()) + "): one value per row")
    if not any(lengths.values()):
        raise InputError(f"{module}: {_listing(list(batch))} are empty: no rows to compute on")
    arrays = {name: _arrow(module, name, values, _accepts(candidates, name)) for name, values in batch.items()}
    fits = [f for f in candidates if all(_fits(arrays[n].type, _target(f, n)) for n in batch)]
    if not fits:
        raise InputError(_misfit(module, batch, arrays, candidates, later))
    features = fits[0]
    columns = {}
    for name, array in arrays.items():
        target = _target(features, name)
        try:
            columns[name] = array.cast(target, safe=True)
        except (pa.ArrowInvalid, OverflowError) as err:  # an int beyond 2**53 for a float64 column
            where = _first(batch[name], lambda v: isinstance(v, int) and abs(v) > 2**53)
            raise InputError(f"{module}: {name}{where or ''} cannot be a float64 exactly ({err})") from None
    return features, pa.table(columns)


def _length(module, name, values) -> int:
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise InputError(f"{module}: {name} must be a list with one value per row, got {type(values).__name__}"
                         f" {_short(values)}")
    return len(values)


def _accepts(candidates, name: str) -> dict[str, str]:
    """{kind of Python value: words} a column ``name`` of any of ``candidates`` takes."""
    kinds = {}
    for features in candidates:
        leaf = _target(features, name)
        while pa.types.is_list(leaf) or pa.types.is_large_list(leaf):
            leaf = leaf.value_type
        word = _word(leaf)
        kinds.update({"int": "numbers", "float": "numbers"} if word == "float" else {word: word})
    return kinds


def _arrow(module: str, name: str, values, accepts: dict[str, str]) -> pa.Array:
    """``values`` as Arrow with the type pyarrow infers from the values themselves (no cast)."""
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    if isinstance(values, np.ndarray) and values.ndim > 1:
        values = list(values)
    elif not isinstance(values, (list, tuple, np.ndarray)) and hasattr(values, "__array__"):
        values = np.asarray(values)  # a tensor, a pandas Series
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError) as err:
        raise InputError(f"{module}: {_first_odd(name, values, accepts) or f'{name}: {err}'}") from None


def _first_odd(name: str, values, accepts: dict[str, str]) -> str | None:
    """Where ``values`` (one level of lists deep) first hold an int beyond int64, a value of a
    type the column does not take, or a value of another type than the first non-null value."""
    cells = ((f"{name}[{i}]", v) for i, v in enumerate(values))
    flat = []
    for where, v in cells:
        if isinstance(v, (list, tuple, np.ndarray)):
            flat.extend((f"{where}[{j}]", w) for j, w in enumerate(v))
        else:
            flat.append((where, v))
    first = None
    for where, v in flat:
        if v is None:
            continue
        kind = _kind(v)
        if kind == "int" and not INT64[0] <= int(v) <= INT64[1]:
            return f"{where} is {v}, beyond the int64 range of ids and numbers"
        if kind not in accepts:
            return (f"{where} is {_short(v)} ({type(v).__name__}); {name} takes "
                    + " or ".join(sorted(set(accepts.values()))))
        if first is None:
            first = (where, v, kind)
        elif kind != first[2] and {kind, first[2]} != {"int", "float"}:
            return (f"{where} is {v!r} ({kind}) but {first[0]} is {first[1]!r} ({first[2]}): "
                    "use one type per input")
    return None


def _kind(v) -> str | None:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, str):
        return "str"
    return None


def _target(features, name: str) -> pa.DataType:
    return features.arrow_schema.field(name).type


def _fits(have: pa.DataType, want: pa.DataType) -> bool:
    """Values of Arrow type ``have`` become ``want`` unchanged (nulls fit anything)."""
    if pa.types.is_null(have):
        return True
    if pa.types.is_list(want) or pa.types.is_large_list(want):
        return (pa.types.is_list(have) or pa.types.is_large_list(have)) and _fits(have.value_type, want.value_type)
    if pa.types.is_string(want):
        return pa.types.is_string(have) or pa.types.is_large_string(have)
    if pa.types.is_integer(want):
        return pa.types.is_integer(have)
    if pa.types.is_floating(want):
        return pa.types.is_integer(have) or pa.types.is_floating(have)
    return have == want


def _misfit(module, batch, arrays, candidates, later) -> str:
    """Words for columns whose types no candidate takes: the first value of a refused type."""
    accepted = {n: {_word(_target(f, n), wanted=True) for f in candidates} for n in batch}
    for name in batch:
        if not any(_fits(arrays[name].type, _target(f, name)) for f in candidates):
            want = " or ".join(sorted(accepted[name]))
            accepts = _accepts(candidates, name)
            where = _first(batch[name], lambda v, accepts=accepts: _kind(v) not in accepts)
            if where is None:
                return f"{module}: {name} holds {_word(arrays[name].type)}; {name} takes {want}"
            value = _example(batch[name], where)
            return (f"{module}: {name}{where} is {_short(value)} ({type(value).__name__}); {name} takes {want}"
                    + (" as in the earlier batches" if later else ""))
    combos = "; ".join(", ".join(f"{n} {_word(_target(f, n), wanted=True)}" for n in batch) for f in candidates)
    got = ", ".join(f"{n} {_word(arrays[n].type)}" for n in batch)
    return (f"{module}: inputs of types {got} do not go together"
            + (" with the earlier batches'" if later else "") + f"; accepted: {combos}")


def _word(t: pa.DataType, wanted: bool = False) -> str:
    """A type in words; ``wanted``: as a column takes it (a float64 column takes numbers, int too)."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"lists of {_word(t.value_type, wanted)}"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "str"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "numbers" if wanted else "float"
    if pa.types.is_boolean(t):
        return "bool"
    return str(t)


def _first(values, test) -> str | None:
    """``[i]`` or ``[i][j]`` of the first value (one level of lists deep) passing ``test``."""
    for i, v in enumerate(values.to_pylist() if isinstance(values, (pa.Array, pa.ChunkedArray)) else values):
        if isinstance(v, (list, tuple, np.ndarray)):
            for j, w in enumerate(v):
                if w is not None and test(w):
                    return f"[{i}][{j}]"
        elif v is not None and test(v):
            return f"[{i}]"
    return None


def _example(values, where: str):
    value = values.to_pylist() if isinstance(values, (pa.Array, pa.ChunkedArray)) else values
    for part in where.strip("[]").split("]["):
        value = value[int(part)]
    return value


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _listing(names: list[str]) -> str:
    return ", ".join(names)

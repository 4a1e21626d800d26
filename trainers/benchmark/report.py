"""A benchmark result as people read it: the stdout table, Markdown, JSON, the picture (models ×
sets, 95 % interval bars, the human ceiling drawn) and the section of a model card.

Every file is written whole (:func:`semrel.metrics.output_files.write_whole`): a run that fails
leaves the previous files as they were.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

from semrel.metrics.output_files import write_whole

from .run import BenchmarkResult, resamples_for

JSON_NAME, MARKDOWN_NAME, PICTURE_NAME = "benchmark.json", "benchmark.md", "benchmark.png"
CARD_HEADING = "## Benchmark"


def _f(value, digits: int = 3) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _rho(cell) -> str:
    if cell.status != "scored":
        return cell.status
    low, high = cell.spearman_ci
    return f"{cell.spearman:.3f} [{low:.3f}, {high:.3f}]" + (f" cut {cell.truncated}" if cell.truncated else "")


def _ceiling(entry) -> str:
    return _f(entry.ceiling.value) if entry.ceiling else "—"


def _grid(result: BenchmarkResult) -> list[list[str]]:
    """A row per set: its name, n, ceiling and each model's Spearman ρ [95 % CI] or mark."""
    names = [m["spec"] for m in result.models]
    return [[e.bset.name, "" if e.rows is None else str(len(e.rows)), _ceiling(e),
             *(_rho(result.cell(m, e.bset.name)) for m in names)] for e in result.sets]


def table(result: BenchmarkResult) -> str:
    """Sets × models: Spearman ρ [95 % CI] (or the cell's mark), n and the ceiling; then the
    reasons of marked cells, the MSE lines and the comparisons."""
    head, rows = ["set", "n", "ceiling", *(m["spec"] for m in result.models)], _grid(result)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines += ["", "Spearman ρ [95 % paired-bootstrap interval]; ceiling: the set's human ceiling "
              "(— not available); cut N: N pairs longer than the model's max length, scored cut."]
    lines += _notes(result) + _mse_lines(result) + _comparison_lines(result)
    return "\n".join(lines)


def _notes(result: BenchmarkResult) -> list[str]:
    """Each reason once, with the cells it marks."""
    reasons: dict[str, list[str]] = {}
    for c in result.cells:
        if c.status != "scored":
            reasons.setdefault(f"{c.status}: {c.reason}", []).append(f"{c.model} on {c.set}")
    if not reasons:
        return []
    lines = ["", "Marked cells:"]
    for reason, where in reasons.items():
        lines.append(f"  {reason}  [{where[0]}" + (f" and {len(where) - 1} more]" if len(where) > 1 else "]"))
    return lines


def _mse_lines(result: BenchmarkResult) -> list[str]:
    lines = [f"  {c.model} on {c.set}: MSE {c.mse:.3f} (lower bound of averaged gold "
             f"{c.mse_lower_bound:.3f}, native scale)" for c in result.cells if c.mse is not None]
    return ["", "MSE beside its lower bound:", *lines] if lines else []


def _comparison_lines(result: BenchmarkResult) -> list[str]:
    if not result.comparisons:
        return []
    lines = ["", "Paired comparison per set (model1 − model2): Spearman difference [95 % CI], "
             "bootstrap p, Holm-adjusted p; Williams' p for Pearson", f"  correction: {result.correction}",
             *_floor_lines(result.comparisons)]
    for c in result.comparisons:
        if "error" in c:
            lines.append(f"  {c['set']}: {c['model1']} vs {c['model2']}: not tested ({c['error']})")
            continue
        low, high = c["spearman_difference_ci"]
        lines.append(f"  {c['set']}: {c['model1']} − {c['model2']} {c['spearman_difference']:+.3f} "
                     f"[{low:+.3f}, {high:+.3f}] p {c['spearman_p_value']:.3f} Holm {c['spearman_p_holm']:.3f}"
                     f"; Williams p {c['williams_p_value']:.3f}")
    return lines


def _floor_lines(comparisons: list[dict]) -> list[str]:
    """A warning for each pair of models whose Holm-adjusted p cannot reach 0.05 (too few
    resamples for its number of sets: :func:`~.run.holm_floor`)."""
    lines, tests = [], {}
    for c in comparisons:
        if "error" not in c:
            tests.setdefault((c["model1"], c["model2"]), []).append(c)
    for (first, second), done in tests.items():
        floor = done[0]["spearman_p_holm_floor"]
        if floor >= 0.05:
            lines.append(f"  too few resamples: {first} vs {second} over {len(done)} sets cannot reach "
                         f"a Holm p below {floor:.3f}; --resamples {resamples_for(len(done))} lets "
                         "it reach 0.005")
    return lines


def model_markdown(result: BenchmarkResult, model: str) -> str:
    """One model's cells as a Markdown table (every figure with its interval)."""
    lines = ["| set | n | Spearman ρ [95 % CI] | Pearson r [95 % CI] | human ceiling | ρ / ceiling | "
             "MSE (lower bound) | note |", "|---|---|---|---|---|---|---|---|"]
    for entry in result.sets:
        c = result.cell(model, entry.bset.name)
        if c.status != "scored":
            lines.append(f"| {c.set} | {c.n or ''} | {c.status} | | {_ceiling(entry)} | | | {c.reason} |")
            continue
        r = f"{c.pearson:.3f} [{c.pearson_ci[0]:.3f}, {c.pearson_ci[1]:.3f}]"
        mse = f"{c.mse:.3f} ({c.mse_lower_bound:.3f})" if c.mse is not None else ""
        note = f"{c.truncated} pairs cut at {c.max_length} tokens" if c.truncated else c.reason
        lines.append(f"| {c.set} | {c.n} | {_rho(c).split(' cut')[0]} | {r} | {_ceiling(entry)} | "
                     f"{_f(c.fraction_of_ceiling)} | {mse} | {note} |")
    return "\n".join(lines)


def summary_markdown(result: BenchmarkResult) -> str:
    """Sets × models as a Markdown table: n, the human ceiling and each model's Spearman ρ
    [95 % CI] (or its mark: skipped, refused, failed; ``cut N``: N pairs cut at max length)."""
    names = [m["spec"] for m in result.models]
    lines = ["| set | n | human ceiling | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    lines += ["| " + " | ".join(row) + " |" for row in _grid(result)]
    return "\n".join(lines)


def markdown(result: BenchmarkResult, picture: str | None = PICTURE_NAME) -> str:
    parts = ["# semrel benchmark", ""]
    if picture:
        parts += [f"![Spearman per set, 95 % intervals, the human ceiling as a bar]({picture})", ""]
    parts += ["## All models: Spearman ρ [95 % CI]", "", summary_markdown(result), ""]
    for m in result.models:
        parts += [f"## `{m['spec']}` ({m['kind']}, max length {m['max_length']})", "",
                  model_markdown(result, m["spec"]), ""]
    comparisons = _comparison_lines(result)
    if comparisons:
        parts += ["## Comparisons", "", "```", *comparisons[1:], "```", ""]
    return "\n".join(parts)


def picture(result: BenchmarkResult, path: Path) -> Path:
    """Models × sets: each model's ρ with its 95 % interval, one row per set, the set's human
    ceiling as a vertical bar; a PNG written whole."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    sets = [e for e in result.sets if e.rows is not None]
    names = [m["spec"] for m in result.models]
    fig = Figure(figsize=(8, 1.2 + 0.3 * max(len(sets), 1)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    step = 0.7 / max(len(names), 1)
    for k, name in enumerate(names):
        ys, xs, errs = [], [], [[], []]
        for i, entry in enumerate(sets):
            c = result.cell(name, entry.bset.name)
            if c.status == "scored":
                ys.append(i - 0.35 + step * (k + 0.5))
                xs.append(c.spearman)
                errs[0].append(c.spearman - c.spearman_ci[0])
                errs[1].append(c.spearman_ci[1] - c.spearman)
        ax.errorbar(xs, ys, xerr=errs, fmt="o", ms=3, capsize=2, label=name)
    for i, entry in enumerate(sets):
        if entry.ceiling and entry.ceiling.value is not None:
            ax.plot([entry.ceiling.value] * 2, [i - 0.4, i + 0.4], color="black", lw=2)
    ax.set_yticks(range(len(sets)), [e.bset.name for e in sets], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("Spearman ρ (95 % interval); black bar: human ceiling")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return write_whole(path, buffer.getvalue(), "output")


def write_outputs(result: BenchmarkResult, folder: str | Path) -> list[Path]:
    """JSON, Markdown and the picture in ``folder``, each written whole; models by their names,
    never a path of this machine (:meth:`~.run.BenchmarkResult.public`)."""
    folder, result = Path(folder), result.public()
    folder.mkdir(parents=True, exist_ok=True)
    return [write_whole(folder / JSON_NAME, json.dumps(result.as_dict(), indent=1, allow_nan=False), "output"),
            write_whole(folder / MARKDOWN_NAME, markdown(result), "output"),
            picture(result, folder / PICTURE_NAME)]


def card_section(result: BenchmarkResult, model: str) -> str:
    """The ``## Benchmark`` section of ``model``'s card (``model``: as given): its cells, and its
    comparisons; models by their names, never a path of this machine."""
    model, result = result.names.get(model, model), result.public()
    own = [c for c in result.comparisons if model in (c["model1"], c["model2"]) and "error" not in c]
    compared = ("" if not own else "\n\nAgainst the other models benchmarked with it (paired "
                f"bootstrap of the Spearman difference; {result.correction}):\n\n```\n"
                + "\n".join(line for line in _comparison_lines(BenchmarkResult([], [], [], own))[2:]) + "\n```")
    return (f"{CARD_HEADING}\n\nScored by `semrel benchmark` against the gold scores of every labelled "
            "set of the suite; a set holding pairs this model trained or chose its checkpoint on is "
            "refused, never scored:\n\n"
            + model_markdown(result, model) + compared + "\n")

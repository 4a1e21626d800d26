"""Metric folders -> standalone Hub Space folders (``build/hub/spaces/<name>/``).

A metric folder (``metrics/<name>/``) is already laid out as a Space: ``<name>.py`` (the evaluate
module), its pure math module(s), ``README.md`` (card with Space YAML), ``app.py`` and
``requirements.txt``. On the Hub nothing of this package is installed, so a module that imports
another module of the project (``from metrics.bws_scores.counting import tally``, or inside a
function ``from dataset_scripts.errors import DataValidationError``) would fail there.
:func:`build_space` copies the folder and **vendors** such modules: the file is copied in and the
import becomes same-folder relative (``from .counting import tally``). Because ``evaluate.load``
copies only the modules that ``<name>.py`` imports at top level (it does not follow imports),
every same-folder module used anywhere also gets an import line in ``<name>.py``. Third-party
imports missing from ``requirements.txt`` are added with the bound this package declares.
:func:`check_space` lists what would stop the Space from working.
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import packages_distributions, requires
from pathlib import Path

from huggingface_hub import RepoCard

METRICS_ROOT = Path(__file__).resolve().parents[1] / "metrics"
PROJECT_PACKAGES = ("metrics", "dataset_scripts", "trainers", "scripts")
OWN_DISTRIBUTION = "semrel"
SPACE_YAML = {"sdk": "gradio", "app_file": "app.py"}
SPACE_TAGS = {"evaluate", "metric"}
# A comment after an import would be read by evaluate's scanner as a "# From: URL": own line.
VENDOR_NOTE = "# vendored for the Space: evaluate.load copies only the modules imported here\n"


class SpaceError(ValueError):
    """A metric folder that cannot become a standalone Space (names the file, line and rule)."""


@dataclass(frozen=True)
class SpaceBuild:
    name: str
    folder: Path
    vendored: tuple[str, ...]  # sibling modules copied in, e.g. ("bws_scores/counting.py",)
    added_requirements: tuple[str, ...]
    removed_requirements: tuple[str, ...]  # this project itself: vendoring replaces it


def metric_names(root: Path = METRICS_ROOT) -> list[str]:
    """Every metric folder: ``<root>/<name>/<name>.py``."""
    return sorted(p.parent.name for p in Path(root).glob("*/*.py") if p.stem == p.parent.name)


def build_space(name: str, out_root: Path, *, metrics_root: Path = METRICS_ROOT) -> SpaceBuild:
    """Copy ``metrics_root/<name>`` to ``out_root/spaces/<name>``, vendoring sibling imports."""
    source = Path(metrics_root) / name
    if not (source / f"{name}.py").is_file():
        raise SpaceError(f"{source}: no metric module {name}.py (known: {metric_names(metrics_root)})")
    folder = Path(out_root) / "spaces" / name
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "__init__.py"))
    vendored = _vendor(folder, name, Path(metrics_root))
    removed = _drop_own_requirement(folder / "requirements.txt")
    added = _complete_requirements(folder)
    problems = check_space(folder)
    if problems:
        raise SpaceError(f"Space {name} would not work standalone:\n  " + "\n  ".join(problems))
    return SpaceBuild(name, folder, tuple(vendored), tuple(added), tuple(removed))


def _project_import(node: ast.AST) -> str | None:
    """The module name of an absolute import of this project's packages, else None."""
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module]
    elif isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        return None
    return next((n for n in names if n.split(".")[0] in PROJECT_PACKAGES), None)


def _vendor(folder: Path, name: str, metrics_root: Path) -> list[str]:
    """Copy project modules in and make their imports relative; returns what was copied."""
    vendored: dict[str, str] = {}  # module stem -> "<package>/<file>.py"
    todo = sorted(folder.glob("*.py"))
    while todo:
        path = todo.pop()
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for node in ast.walk(ast.parse("".join(lines), str(path))):
            module = _project_import(node)
            if module is None:
                continue
            where = f"{path.name}:{node.lineno}"
            if not isinstance(node, ast.ImportFrom) or node.lineno != node.end_lineno:
                raise SpaceError(f"{where}: import a project module as one line "
                                 f"`from {module} import <names>` so it can be vendored")
            origin = metrics_root.parent / (module.replace(".", "/") + ".py")
            if not origin.is_file():
                raise SpaceError(f"{where}: `{module}` is not a module file of this project "
                                 f"({origin} does not exist); a Space can only vendor module files")
            names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
            indent = lines[node.lineno - 1][: node.col_offset]
            lines[node.lineno - 1] = f"{indent}from .{origin.stem} import {names}\n"
            if origin.parent.resolve() != (metrics_root / name).resolve():  # else: already here
                todo += _copy_module(origin, folder, vendored, where)
        path.write_text("".join(lines), encoding="utf-8")
    _import_from_main(folder / f"{name}.py")
    return sorted(vendored.values())


def _copy_module(origin: Path, folder: Path, vendored: dict[str, str], where: str) -> list[Path]:
    """Copy ``origin`` and, recursively, its own same-folder imports; returns the new files."""
    if origin.stem in vendored:
        return []
    target = folder / origin.name
    if target.exists():
        raise SpaceError(f"{where}: cannot vendor {origin}: {target.name} already exists")
    shutil.copyfile(origin, target)
    vendored[origin.stem] = f"{origin.parent.name}/{origin.name}"
    copied = [target]
    for stem in _relative_imports(target):
        if not (origin.parent / f"{stem}.py").is_file():
            raise SpaceError(f"{origin}: imports .{stem}, which is not a module file")
        copied += _copy_module(origin.parent / f"{stem}.py", folder, vendored, origin.name)
    return copied


def _relative_imports(path: Path) -> dict[str, str]:
    """``{module: first imported name}`` of every ``from .module import name`` in ``path``."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found.setdefault(node.module, node.names[0].name)
    return found


def _import_from_main(main: Path) -> None:
    """Make ``main`` import every same-folder module any file of the Space imports."""
    direct = _relative_imports(main)
    needed = {}
    for path in sorted(main.parent.glob("*.py")):
        if path != main:
            needed.update({k: v for k, v in _relative_imports(path).items() if k not in needed})
    missing = [stem for stem in sorted(needed) if stem not in direct]
    if not missing:
        return
    source = main.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    last = max(n.end_lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    lines[last:last] = [VENDOR_NOTE] + [f"from .{stem} import {needed[stem]}\n" for stem in missing]
    main.write_text("".join(lines), encoding="utf-8")


def _third_party_imports(folder: Path) -> set[str]:
    local = {p.stem for p in folder.glob("*.py")}
    tops = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops.add(node.module.split(".")[0])
    return {t for t in tops if t not in local and t not in sys.stdlib_module_names and t != "__future__"}


def _normalise(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


@lru_cache(maxsize=None)
def _distribution(top_level: str) -> str:
    """The (normalised) distribution that provides ``import top_level`` (``yaml`` -> ``pyyaml``)."""
    return _normalise((_module_distributions().get(top_level) or [top_level])[0])


@lru_cache(maxsize=1)
def _module_distributions() -> dict[str, list[str]]:
    return packages_distributions()


@lru_cache(maxsize=1)
def _our_bounds() -> dict[str, str]:
    """This package's own requirement strings by distribution name, e.g. scipy -> 'scipy>=1.11'."""
    bounds = {}
    for req in requires("semrel") or []:
        if "extra ==" not in req:
            spec = req.split(";")[0].strip()
            bounds[_normalise(re.split(r"[\[<>=!~ ]", spec, maxsplit=1)[0])] = spec
    return bounds


def _requirement_names(path: Path) -> set[str]:
    return _requirement_names_of(path.read_text(encoding="utf-8").splitlines() if path.is_file() else [])


def _requirement_names_of(lines: list[str]) -> set[str]:
    return {_normalise(re.split(r"[\[<>=!~ ;@]", line.strip(), maxsplit=1)[0])
            for line in lines if line.strip() and not line.strip().startswith("#")}


def _drop_own_requirement(path: Path) -> list[str]:
    """Remove this project (``semrel``, not on PyPI) from requirements.txt, with the comment lines
    just above it: the Space carries the vendored modules instead."""
    if not path.is_file():
        return []
    kept, removed, comments = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.strip().startswith("#"):
            comments.append(line)
            continue
        if line.strip() and _requirement_names_of([line]) == {OWN_DISTRIBUTION}:
            removed.append(line.strip())
        else:
            kept += comments + [line]
        comments = []
    if removed:
        path.write_text("".join(kept + comments), encoding="utf-8")
    return removed


def _complete_requirements(folder: Path) -> list[str]:
    """Append the distributions the Space's modules import but requirements.txt lacks."""
    path = folder / "requirements.txt"
    listed = _requirement_names(path)
    added = []
    for dist in sorted({_distribution(t) for t in _third_party_imports(folder)} - listed):
        added.append(_our_bounds().get(dist, dist))
    if added:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        path.write_text(text + ("" if not text or text.endswith("\n") else "\n")
                        + "\n".join(added) + "\n", encoding="utf-8")
    return added


def _app_loads_own_module(app: Path, name: str) -> bool:
    """Whether ``app.py`` calls ``evaluate.load("<name>.py")`` (the Space root is the working
    directory) or ``evaluate.load(str(Path(__file__).with_name("<name>.py")))``."""
    for node in ast.walk(ast.parse(app.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "load" and node.args):
            argument = node.args[0]
            names = {n.id for n in ast.walk(argument) if isinstance(n, ast.Name)}
            strings = [n.value for n in ast.walk(argument) if isinstance(n, ast.Constant)]
            if (isinstance(argument, ast.Constant) and argument.value == f"{name}.py") or (
                    "__file__" in names and strings == [f"{name}.py"]):
                return True
    return False


def check_space(folder: Path) -> list[str]:
    """Problems that would stop ``folder`` from working as a metric Space (empty = fine)."""
    folder = Path(folder)
    name = folder.name
    problems = [f"{folder}/{f} is missing" for f in (f"{name}.py", "README.md", "app.py",
                                                     "requirements.txt")
                if not (folder / f).is_file()]
    if problems:
        return problems
    card = RepoCard.load(folder / "README.md")
    meta = card.data.to_dict()
    problems += [f"README.md: Space YAML needs {key}: {value}" for key, value in SPACE_YAML.items()
                 if meta.get(key) != value]
    problems += [f"README.md: Space YAML needs {key}" for key in ("title", "sdk_version", "description")
                 if not meta.get(key)]
    if not SPACE_TAGS <= set(meta.get("tags") or []):
        problems.append(f"README.md: tags must include {sorted(SPACE_TAGS)}")
    if not _app_loads_own_module(folder / "app.py", name):
        problems.append(f'app.py: must load the module from the Space itself with '
                        f'`evaluate.load("{name}.py")` (a bare name is looked up on the Hub as '
                        f'evaluate-metric/{name})')
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (module := _project_import(node)) is not None:
                problems.append(f"{path.name}:{node.lineno}: imports {module}, which a Space lacks")
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"^\s*import\s+\w+(\.\w+)*\s*,", line):
                problems.append(f"{path.name}:{line_no}: one import per line (evaluate's scanner)")
            if re.match(r"^from\s+\.\w+\s+import\s+[^#]*#", line):
                problems.append(f"{path.name}:{line_no}: no comment after a relative import "
                                "(evaluate's scanner reads it as a '# From: URL')")
        for stem in _relative_imports(path):
            if not (folder / f"{stem}.py").is_file():
                problems.append(f"{path.name}: imports .{stem}, but {stem}.py is not in the Space")
            elif stem not in _relative_imports(folder / f"{name}.py"):
                problems.append(f"{path.name}: imports .{stem}, which {name}.py does not import "
                                f"(evaluate.load copies only what {name}.py imports)")
    listed = _requirement_names(folder / "requirements.txt")
    if OWN_DISTRIBUTION in listed:
        problems.append(f"requirements.txt: lists {OWN_DISTRIBUTION}, this project, which is not "
                        "installable on the Hub (vendor its modules instead)")
    problems += [f"requirements.txt: lacks {_distribution(t)} (imported as `{t}`)"
                 for t in sorted(_third_party_imports(folder)) if _distribution(t) not in listed]
    return problems

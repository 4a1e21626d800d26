"""The import graph of the package: no circle, and no library module importing a command line.

A command-line module is the front door ``semrel.cli`` (and ``semrel.__main__``), the kit every
part's command line is built from (``semrel.command_line``) and each part's ``cli`` (with its
``cli_*`` helpers, e.g. ``trainers.cli_flags``). Every module
of ``semrel`` (its folders as pyproject's ``package-dir`` maps them) is parsed with ``ast``; each
``import``/``from ... import`` anywhere in it (inside functions too, relative ones resolved) is
an edge to the semrel module it names (``from pkg import name`` to ``pkg.name`` where that is a
module, else to ``pkg``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import tomllib

from project import REPO


def package_modules() -> dict[str, Path]:
    """Module name -> file, for every ``.py`` of the package (``__init__`` as its package)."""
    mapping = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    modules = {}
    for package, folder in mapping.items():
        for file in sorted((REPO / folder).rglob("*.py")):
            parts = file.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = file
    return modules


def _imported(module: str, file: Path, known: set[str]) -> set[str]:
    is_package = file.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"), str(file))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + is_package]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module
            names = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem
                     for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:  # `import semrel.x.y` of a name inside a module
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {m: _imported(m, f, set(modules)) for m, f in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_sees_function_level_and_relative_imports():
    graph = import_graph()
    assert "semrel.trainers.cli" in graph["semrel.cli"]  # inside build_parser
    assert "semrel.metrics.errors" in graph["semrel.trainers.options"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle_in_the_package():
    cycle = _cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def is_cli(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return name in ("semrel.cli", "semrel.__main__", "semrel.command_line") or last == "cli" or last.startswith("cli_")


def test_no_library_module_imports_a_command_line_module():
    wrong = sorted(f"{m} imports {t}" for m, targets in import_graph().items() if not is_cli(m)
                   for t in targets if is_cli(t))
    assert not wrong, "\n".join(wrong)

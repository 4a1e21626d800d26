"""Metric folders -> standalone Hub Space folders (``build/hub/spaces/<name>/``), and their check.

A metric folder (``metrics/<name>/``) is laid out as a Space: ``<name>.py`` (the evaluate module),
its math modules, ``README.md`` (card with Space YAML), ``app.py`` and ``requirements.txt``. Its
modules import only same-folder modules (``from .counting import tally``). A module shared by
several folders lives once in ``metrics/`` (``errors.py``, ``correlation.py``, ``space_app.py``,
``bws_scores/counting.py``); a folder that uses it holds a **link**: a file of that name whose only
statements are ``from metrics.<module> import <names>``. In the repository the link re-exports the
one original (one class, one function); :func:`build_space` replaces each link with the file it
points to, so the Space carries no import of this project and nothing is rewritten.

``evaluate.load`` copies only the same-folder modules that ``<name>.py`` imports at top level, so
``<name>.py`` imports every module the math uses; :func:`check_space` lists what would stop a
Space from working and :func:`verify_space` starts its ``app.py`` and compares its answer with
``evaluate.load(...).compute(...)``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

METRICS_ROOT = Path(__file__).resolve().parents[1] / "metrics"
PROJECT_PACKAGES = ("metrics", "dataset_scripts", "trainers", "scripts", "publishing")
SPACE_YAML = {"sdk": "gradio", "app_file": "app.py"}
SPACE_TAGS = {"evaluate"}
GRADIO_SDK_VERSION = "6.31.0"  # the gradio the Space tests ran (README sdk_version)
# Runs an app.py with this project's packages unimportable (argv: app.py); used by verify_space.
ISOLATED_RUNNER = f"""\
import importlib.abc, runpy, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {PROJECT_PACKAGES!r}:
            raise ModuleNotFoundError(f"{{name}} is not available in a Space", name=name)
sys.meta_path.insert(0, Block())
sys.path.insert(0, ".")
runpy.run_path(sys.argv[1], run_name="__main__")
"""


class SpaceError(ValueError):
    """A metric folder that cannot become a standalone Space (names the file, line and rule)."""


@dataclass(frozen=True)
class SpaceBuildResult:
    name: str
    folder: Path
    linked: tuple[str, ...]  # link files replaced by their originals, e.g. ("counting.py <- bws_scores/counting.py",)


def metric_names(root: Path = METRICS_ROOT) -> list[str]:
    """Every metric folder: ``<root>/<name>/<name>.py``."""
    return sorted(p.parent.name for p in Path(root).glob("*/*.py") if p.stem == p.parent.name)


def link_target(path: Path, metrics_root: Path = METRICS_ROOT) -> Path | None:
    """The file a link module points to (``from semrel.metrics.x.y import a, b`` only), else None."""
    body = ast.parse(Path(path).read_text(encoding="utf-8")).body
    modules = {n.module for n in body if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module}
    if not body or len(modules) != 1 or len(body) != sum(isinstance(n, ast.ImportFrom) for n in body):
        return None
    (module,) = modules
    if module.split(".")[0] != "metrics":
        return None
    target = Path(metrics_root).parent / (module.replace(".", "/") + ".py")
    if not target.is_file():
        raise SpaceError(f"{path}: links to {module}, which is not a module file ({target})")
    return target


def build_space(name: str, out_root: Path, *, metrics_root: Path = METRICS_ROOT) -> SpaceBuildResult:
    """Copy ``metrics_root/<name>`` to ``out_root/spaces/<name>``, replacing links by their files."""
    source = Path(metrics_root) / name
    if not (source / f"{name}.py").is_file():
        raise SpaceError(f"{source}: no metric module {name}.py (known: {metric_names(metrics_root)})")
    folder = Path(out_root) / "spaces" / name
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "__init__.py", "__main__.py"))
    linked = []
    for path in sorted(folder.glob("*.py")):
        target = link_target(path, metrics_root)
        if target is not None:
            shutil.copyfile(target, path)
            linked.append(f"{path.name} <- {target.relative_to(Path(metrics_root)).as_posix()}")
            if link_target(path, metrics_root) is not None:
                raise SpaceError(f"{target}: a link to a link; point {source / path.name} at the original")
    problems = check_space(folder)
    if problems:
        raise SpaceError(f"Space {name} would not work standalone:\n  " + "\n  ".join(problems))
    return SpaceBuildResult(name, folder, tuple(linked))


def _relative_imports(path: Path) -> set[str]:
    return {n.module for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}


def _project_import(node: ast.AST) -> str | None:
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module]
    elif isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        return None
    return next((n for n in names if n.split(".")[0] in PROJECT_PACKAGES), None)


def _requirement_names(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return {re.split(r"[\[<>=!~ ;@]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")
            for line in lines if line.strip() and not line.strip().startswith("#")}


def _third_party_imports(folder: Path) -> set[str]:
    local = {p.stem for p in folder.glob("*.py")}
    tops = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops.add(node.module.split(".")[0])
    return {t for t in tops - local - {"__future__", "gradio"} if t not in sys.stdlib_module_names}


def check_space(folder: Path) -> list[str]:
    """Problems that would stop ``folder`` from working as a metric Space (empty = fine)."""
    from huggingface_hub import RepoCard

    folder = Path(folder)
    name = folder.name
    problems = [f"{folder}/{f} is missing" for f in (f"{name}.py", "README.md", "app.py", "requirements.txt")
                if not (folder / f).is_file()]
    if problems:
        return problems
    meta = RepoCard.load(folder / "README.md").data.to_dict()
    problems += [f"README.md: Space YAML needs {key}: {value}" for key, value in SPACE_YAML.items()
                 if meta.get(key) != value]
    problems += [f"README.md: Space YAML needs {key}" for key in ("title", "sdk_version", "description")
                 if not meta.get(key)]
    if not SPACE_TAGS <= set(meta.get("tags") or []):
        problems.append(f"README.md: tags must include {sorted(SPACE_TAGS)}")
    if f'with_name("{name}.py")' not in (folder / "app.py").read_text(encoding="utf-8"):
        problems.append(f'app.py: must launch its own module, Path(__file__).with_name("{name}.py")')
    main_imports = _relative_imports(folder / f"{name}.py")
    for path in sorted(folder.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if (module := _project_import(node)) is not None:
                problems.append(f"{path.name}:{node.lineno}: imports {module}, which a Space lacks")
        for line_no, line in enumerate(text.splitlines(), 1):
            if re.match(r"^\s*import\s+\w+(\.\w+)*\s*,", line):
                problems.append(f"{path.name}:{line_no}: one import per line (evaluate's scanner)")
            if re.match(r"^from\s+\.\w+\s+import\s+[^#]*#", line):
                problems.append(f"{path.name}:{line_no}: no comment after a relative import "
                                "(evaluate's scanner reads it as a '# From: URL')")
        for stem in _relative_imports(path):
            if not (folder / f"{stem}.py").is_file():
                problems.append(f"{path.name}: imports .{stem}, but {stem}.py is not in the Space")
            elif stem not in main_imports:
                problems.append(f"{path.name}: imports .{stem}, which {name}.py does not import "
                                f"(evaluate.load copies only what {name}.py imports)")
    listed = _requirement_names(folder / "requirements.txt")
    problems += [f"requirements.txt: lacks {t} (imported)" for t in sorted(_third_party_imports(folder))
                 if t not in listed]
    return problems


def space_example(folder: Path) -> tuple[dict, dict]:
    """(EXAMPLE, OPTIONS) literals of a Space's app.py: the inputs its form is prefilled with."""
    values = {}
    for node in ast.parse((Path(folder) / "app.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in ("EXAMPLE", "OPTIONS"):
                values[node.targets[0].id] = ast.literal_eval(node.value)
    return values.get("EXAMPLE", {}), values.get("OPTIONS", {})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SpaceServer:
    """A built Space's ``app.py`` running in a subprocess on 127.0.0.1, this project unimportable.

    Use as a context manager; ``client`` is a ``gradio_client.Client`` connected to it. The app is
    asked for a free port, and the client connects to the URL the app prints that it runs on
    (gradio moves on to the next port when another program took the one asked for, so Spaces
    started side by side may not be where they were asked to be).
    """

    def __init__(self, folder: Path, timeout: float = 60.0):
        self.folder, self.timeout = Path(folder), timeout

    def __enter__(self) -> "SpaceServer":
        from gradio_client import Client

        asked = _free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
        env.update(GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(asked),
                   GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1",
                   HF_MODULES_CACHE=tempfile.mkdtemp(prefix="space-modules-"), PYTHONUNBUFFERED="1")
        self.log = tempfile.TemporaryFile(mode="a+b")  # the app appends whatever we last read
        self.process = subprocess.Popen([sys.executable, "-s", "-c", ISOLATED_RUNNER, "app.py"],
                                        cwd=self.folder, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.timeout
        while not (running := re.search(r"Running on local URL: +(http://127\.0\.0\.1:(\d+))", self.output())):
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.folder}/app.py exited ({self.process.returncode}):\n{self.output()}")
            if time.monotonic() > deadline:
                self.__exit__()
                raise TimeoutError(f"{self.folder}/app.py did not start within {self.timeout:.0f} s:\n{self.output()}")
            time.sleep(0.2)
        self.url, self.port = running.group(1) + "/", int(running.group(2))
        self.client = Client(self.url, verbose=False)
        return self

    def compute(self, inputs: dict, options: dict | None = None, names=None) -> dict:
        """The page's answer to ``inputs`` (one JSON text per field, in the form's order)."""
        names = list(names or inputs)
        texts = [json.dumps(inputs[n]) if n in inputs else "" for n in names]
        return self.client.predict(*texts, json.dumps(options or {}), api_name="/compute")

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-3000:]

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def verify_space(space_dir: Path) -> str:
    """Start the built Space's app, send its example, compare with ``evaluate.load(...).compute``.

    Returns a one-line verdict; raises SpaceError when the Space fails or answers differently, or
    when gradio / gradio_client is not installed (``pip install '.[spaces]'``).
    """
    space_dir = Path(space_dir)
    problems = check_space(space_dir)
    if problems:
        raise SpaceError(f"{space_dir}: " + "; ".join(problems))
    try:
        import gradio  # noqa: F401
        import gradio_client  # noqa: F401
    except ImportError as err:
        raise SpaceError(f"{space_dir}: cannot start the Space: {err.name} is not installed "
                         "(pip install '.[spaces]')") from None
    import evaluate

    example, options = space_example(space_dir)
    expected = evaluate.load(str(space_dir / f"{space_dir.name}.py")).compute(**example, **options)
    with SpaceServer(space_dir) as server:
        answer = server.compute(example, options)
    if json.loads(json.dumps(answer)) != json.loads(json.dumps(expected)):
        raise SpaceError(f"{space_dir}: the Space answered {answer} but evaluate.load(...).compute gives {expected}")
    return f"{space_dir.name}: the Space's app answered its example as evaluate.load(...).compute does"


def main(argv=None) -> int:
    """``python -m publishing.spaces NAME``: build the Space into build/hub/spaces/NAME and serve it."""
    import argparse

    parser = argparse.ArgumentParser(description="Build a metric Space and serve it on 127.0.0.1:7860.")
    parser.add_argument("name", choices=metric_names())
    parser.add_argument("--out", type=Path, default=Path("build/hub"))
    args = parser.parse_args(argv)
    folder = build_space(args.name, args.out).folder
    print(f"built {folder}; serving http://127.0.0.1:7860 (Ctrl-C stops)", flush=True)
    return subprocess.call([sys.executable, "app.py"], cwd=folder)


if __name__ == "__main__":
    sys.exit(main())

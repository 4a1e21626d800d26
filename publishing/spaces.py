"""Metric folders -> self-sufficient Hub Space folders (``build/hub/spaces/<name>/``), and their check.

A metric folder (``metrics/<name>/``, ``semrel.metrics.<name>`` when installed) holds the evaluate
module ``<name>.py``, its card ``README.md`` (Space YAML), ``app.py`` and ``requirements.txt``;
the module and the app import their math and page from the ``semrel`` package. :func:`build_space`
copies the four files and puts a wheel of semrel beside them (:func:`package_wheel`); the Space's
``requirements.txt`` names that wheel by a path relative to the folder, then
``gradio==<sdk_version of the card>``, then the package lines of the folder's own file. So in the
built folder ``pip install -r requirements.txt && python app.py`` works in a fresh virtualenv.
The folder is written beside its place and swapped in whole
(:func:`~semrel.dataset_scripts.folders.replaced_whole`): a failed build keeps the previous one.

The wheel is built once per state of the source: :func:`package_wheel` hashes the files it is
built from and keeps it in ``<out>/.wheels/<hash>/``; any change to them builds a new one (never a
stale wheel) and removes the old.

:func:`check_space` lists what would stop a built folder from working;
:func:`~semrel.publishing.space_server.verify_space` starts
its ``app.py`` on 127.0.0.1 and compares the page's answer to the example of each config with
``evaluate.load(...).compute`` in this process. ``semrel verify`` runs the app with this
interpreter (the fast path: the app, card and module against the semrel installed here, in
seconds, offline). Whether the wheel and requirements alone make a working Space is checked by
``verify_space(folder, python=<a fresh venv's python>)`` after ``pip install -r requirements.txt``
in that venv: the slow tests in ``tests/publishing/test_publish_spaces.py`` do it for every Space
(uv and PyPI; with a warm uv cache a venv and its install take about 2 s, starting an app about
10-20 s on 2 cores, gradio's first import compiling its bytecode), so ``semrel verify`` does not.
"""

from __future__ import annotations

import ast
import email
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from semrel.dataset_scripts.folders import replaced_whole
from semrel.metrics import ROOT as METRICS_ROOT
from semrel.metrics import folders as metric_folders
from semrel.metrics import names as metric_names

SOURCE_ROOT = METRICS_ROOT.parent  # the source tree the wheel is built from (pyproject.toml)
SPACE_YAML = {"sdk": "gradio", "app_file": "app.py"}
SPACE_TAGS = {"evaluate"}
GRADIO_SDK_VERSION = "6.31.0"  # the gradio the Space tests ran (README sdk_version)


class SpaceError(ValueError):
    """A metric folder that cannot become a standalone Space (names the file, line and rule)."""


@dataclass(frozen=True)
class SpaceBuildResult:
    name: str
    folder: Path
    wheel: Path  # the semrel wheel in the folder, named by its requirements.txt


def space_files(name: str) -> tuple[str, ...]:
    """What a metric folder holds (a built Space adds the semrel wheel)."""
    return (f"{name}.py", "README.md", "app.py", "requirements.txt")


def _wheel_sources(root: Path) -> list[Path]:
    """The files the semrel wheel is built from: pyproject.toml, README.md, LICENSE* and every
    file of each folder pyproject's ``package-dir`` maps into ``semrel``, caches left out."""
    import tomllib

    root = Path(root)
    if not (root / "pyproject.toml").is_file():
        raise SpaceError(f"{root}: no pyproject.toml; building a Space needs the semrel source tree "
                         "(a checkout, installed with pip install -e .)")
    mapping = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    files = [root / "pyproject.toml", root / "README.md", *root.glob("LICENSE*")]
    for package in sorted(root / folder for folder in mapping["package-dir"].values()):
        files += [p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix != ".pyc"]
    return sorted(p for p in files if p.is_file())


def package_wheel(out_root: Path, source_root: Path = SOURCE_ROOT) -> Path:
    """A wheel of semrel built from ``source_root``, kept in ``<out_root>/.wheels/<hash>/``.

    ``<hash>`` is the SHA-256 of the files it is built from (their paths and bytes), so a wheel is
    built once per state of the source and reused until a file changes; the wheels of other
    states are then removed. It is built from a copy of those files (``pip wheel --no-deps``, with
    this environment's setuptools where it has one), so nothing an earlier build left in the tree
    (``build/lib``) gets in.
    """
    source_root = Path(source_root)
    files = _wheel_sources(source_root)
    digest = hashlib.sha256()
    for path in files:
        data = path.read_bytes()
        digest.update(f"{path.relative_to(source_root).as_posix()}\0{len(data)}\0".encode() + data)
    store = Path(out_root) / ".wheels"
    folder = store / digest.hexdigest()[:16]
    if built := sorted(folder.glob("*.whl")):
        return built[0]
    with tempfile.TemporaryDirectory(prefix="semrel-wheel-") as tmp:
        for path in files:
            target = Path(tmp, "src", path.relative_to(source_root))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        if importlib.util.find_spec("pip") is None:
            raise SpaceError("building the semrel wheel needs pip in this environment (python -m ensurepip)")
        # offline with this environment's setuptools; else pip fetches the build backend pyproject names
        isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation,
                               "-w", str(Path(tmp, "dist")), str(Path(tmp, "src"))], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise SpaceError(f"could not build the semrel wheel from {source_root} (pip wheel):\n"
                             f"{(done.stdout + done.stderr)[-2000:]}")
        with replaced_whole(folder) as staging:  # a full disk never leaves a truncated wheel to reuse
            for wheel in Path(tmp, "dist").glob("*.whl"):
                shutil.copyfile(wheel, staging / wheel.name)
        for old in store.iterdir():  # the wheels of other states of the source
            if old.name != folder.name:
                shutil.rmtree(old, ignore_errors=True)
    return min(folder.glob("*.whl"))


def _card(folder: Path) -> dict:
    from huggingface_hub import RepoCard

    return RepoCard.load(Path(folder) / "README.md").data.to_dict()


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement line (``Foo_Bar>=1`` -> ``foo-bar``)."""
    return re.split(r"[\[<>=!~ ;@(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _requirement_lines(path: Path) -> list[tuple[int, str]]:
    lines = Path(path).read_text(encoding="utf-8").splitlines() if Path(path).is_file() else []
    return [(n, line.strip()) for n, line in enumerate(lines, 1) if line.strip() and not line.strip().startswith("#")]


def build_space(name: str, out_root: Path, *, metrics_root: Path | None = None) -> SpaceBuildResult:
    """The metric folder ``<name>`` (in ``metrics_root``, default: where
    :func:`semrel.metrics.folders` finds it) -> ``out_root/spaces/<name>``: its four files and the
    semrel wheel."""
    source = Path(metrics_root) / name if metrics_root else metric_folders().get(name, METRICS_ROOT / name)
    if not (source / f"{name}.py").is_file():
        raise SpaceError(f"{source}: no metric module {name}.py (semrel has {', '.join(metric_names())})")
    extra = sorted(p.name for p in source.iterdir() if p.name not in (*space_files(name), "__pycache__"))
    if extra:
        raise SpaceError(f"{source}: holds {', '.join(extra)}; a metric folder holds only "
                         f"{', '.join(space_files(name))} (shared code goes in semrel.metrics)")
    for n, line in _requirement_lines(source / "requirements.txt"):
        if _name(line) in ("semrel", "gradio") or line.endswith(".whl"):
            raise SpaceError(f"{source}/requirements.txt:{n}: {line!r}: the build adds the semrel wheel and "
                             "gradio==<the card's sdk_version>; list only other packages")
    wheel = package_wheel(out_root)
    folder = Path(out_root) / "spaces" / name
    with replaced_whole(folder) as staging:  # a failure (a full disk) keeps the previous Space whole
        for file in space_files(name):
            if (source / file).is_file():
                shutil.copyfile(source / file, staging / file)
        shutil.copyfile(wheel, staging / wheel.name)
        sdk_version = _card(staging).get("sdk_version") if (staging / "README.md").is_file() else None
        requirements = [f"./{wheel.name}", f"gradio=={sdk_version}" if sdk_version else "gradio",
                        *(line for _, line in _requirement_lines(source / "requirements.txt"))]
        (staging / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
        problems = check_space(staging, name)
        if problems:
            raise SpaceError(f"Space {name} would not work standalone:\n  " + "\n  ".join(problems))
    return SpaceBuildResult(name, folder, folder / wheel.name)


def _wheel_dependencies(wheel: Path) -> set[str]:
    """The distributions a wheel requires (its METADATA's Requires-Dist, extras left out)."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = email.message_from_bytes(archive.read(metadata)).get_all("Requires-Dist") or []
    return {_name(r) for r in requires if "extra" not in r.partition(";")[2]}


def _third_party_imports(folder: Path) -> set[str]:
    local = {p.stem for p in folder.glob("*.py")}
    tops = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops.add(node.module.split(".")[0])
    return {t for t in tops - local - {"__future__"} if t not in sys.stdlib_module_names}


def check_space(folder: Path, name: str | None = None) -> list[str]:
    """Problems that would stop ``folder`` from working as the Space of the metric ``name``
    (default: the folder's name); empty = fine."""
    folder = Path(folder)
    name = name or folder.name
    problems = [f"{folder}/{f} is missing" for f in space_files(name) if not (folder / f).is_file()]
    if problems:
        return problems
    meta = _card(folder)
    problems += [f"README.md: Space YAML needs {key}: {value}" for key, value in SPACE_YAML.items()
                 if meta.get(key) != value]
    problems += [f"README.md: Space YAML needs {key}" for key in ("title", "sdk_version", "description")
                 if not meta.get(key)]
    if not SPACE_TAGS <= set(meta.get("tags") or []):
        problems.append(f"README.md: tags must include {sorted(SPACE_TAGS)}")
    if f'with_name("{name}.py")' not in (folder / "app.py").read_text(encoding="utf-8"):
        problems.append(f'app.py: must launch its own module, Path(__file__).with_name("{name}.py")')
    for path in sorted(folder.glob("*.py")):
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"^\s*import\s+\w+(\.\w+)*\s*,", line):
                problems.append(f"{path.name}:{line_no}: one import per line (evaluate's scanner)")
    covered, gradio = set(), None
    for n, line in _requirement_lines(folder / "requirements.txt"):
        if line.endswith(".whl"):  # ./<file>.whl beside it, or (staged for the Hub) its URL in the repo
            url = re.fullmatch(r"semrel @ https?://\S+/resolve/main/([^/]+\.whl)", line)
            wheel = folder / (url[1] if url else line)
            if Path(line).is_absolute() or wheel.resolve().parent != folder.resolve() or not wheel.is_file():
                problems.append(f"requirements.txt:{n}: names {line}, which is not a file in the Space "
                                "(the wheel goes beside requirements.txt, named ./<file>.whl)")
                continue
            covered |= {_name(wheel.name.split("-")[0])} | _wheel_dependencies(wheel)
        else:
            covered.add(_name(line))
            gradio = line if _name(line) == "gradio" else gradio
    if meta.get("sdk_version") and gradio != f"gradio=={meta['sdk_version']}":
        problems.append(f"requirements.txt: must pin gradio=={meta['sdk_version']} (the card's sdk_version), "
                        f"not {gradio or 'nothing'}")
    problems += [f"requirements.txt: lacks {t} (imported, and no listed wheel requires it)"
                 for t in sorted(_third_party_imports(folder)) if _name(t) not in covered]
    return problems


def space_example(folder: Path) -> dict[str, dict]:
    """The ``EXAMPLES`` literal of a Space's app.py: per config, ``{"inputs": ..., "options": ...}``."""
    for node in ast.parse((Path(folder) / "app.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["EXAMPLES"]:
            return ast.literal_eval(node.value)
    raise SpaceError(f"{folder}/app.py: no EXAMPLES literal (per config, the inputs and options of the form)")


def serve(name: str, out_root: Path = Path("build/hub"), say=print) -> int:
    """``python -m semrel.publishing.spaces NAME``: build the Space of ``name`` into
    ``out_root/spaces/NAME`` and run its app until Ctrl-C; prints the URL the app says it runs on
    (gradio moves to the next free port when the one asked for is taken)."""
    folder = build_space(name, out_root).folder
    say(f"built {folder}; starting its app.py ...")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen([sys.executable, "app.py"], cwd=folder, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as app:
        try:
            for line in app.stdout:
                if running := re.search(r"Running on local URL: +(\S+)", line):
                    say(f"serving {running[1]} (Ctrl-C stops)")
                else:
                    sys.stdout.write(line)
            return app.wait()
        except KeyboardInterrupt:
            app.terminate()
            return 130


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m semrel.publishing.spaces",
                                     description="Build a metric's Space and serve it on 127.0.0.1.")
    parser.add_argument("name", choices=metric_names())
    parser.add_argument("--out", type=Path, default=Path("build/hub"), help="hub folder (default build/hub)")
    args = parser.parse_args(argv)
    try:
        return serve(args.name, args.out)
    except (SpaceError, OSError) as exc:
        sys.stderr.write(f"{parser.prog}: error: {str(exc).splitlines()[0]}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())

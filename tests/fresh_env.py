"""Fresh virtual environments for tests that check what a user gets from an install.

Created with uv (a dev dependency; it caches wheels, so the second environment costs seconds): a
venv holds only what the test installs into it, never this project's development environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def _uv() -> str:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is None:
        raise RuntimeError("uv is not installed: pip install '.[dev]'")
    return uv


def fresh_venv(path: Path) -> Path:
    """A new virtualenv at ``path`` (this interpreter's Python, no system site-packages); its python."""
    subprocess.run([_uv(), "venv", "-q", "--python", sys.executable, str(path)], check=True,
                   capture_output=True, text=True)
    return Path(path) / "bin" / "python"


def install(python: Path, *args: str, cwd: Path | None = None, timeout: float = 900) -> str:
    """``uv pip install ARGS`` into the venv of ``python``; its output, or an AssertionError with it."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([_uv(), "pip", "install", "--python", str(python), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"uv pip install {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def run(python: Path, *args: str, cwd: Path, env: dict | None = None, timeout: float = 600):
    """``python ARGS`` in ``cwd`` with no PYTHONPATH: the venv's own packages only."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(python), *args], cwd=cwd, env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=timeout)

"""A built metric Space running on 127.0.0.1, and the check that it answers as ``evaluate`` does.

:class:`SpaceServer` starts a Space folder's ``app.py`` in a subprocess (this interpreter, or a
fresh venv's python that checks what the Space installs alone) and connects a
``gradio_client.Client``; :func:`answers_like_evaluate` compares its answer to the example of each
config with ``evaluate.load(...).compute`` in this process; :func:`verify_space` does both after
:func:`~semrel.publishing.spaces.check_space`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from semrel.metrics.space_app import OPTIONS, api_name

from .spaces import SpaceError, check_space, space_example


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SpaceServer:
    """A built Space's ``app.py`` running in a subprocess on 127.0.0.1, started with ``python``
    (default: this interpreter; a fresh venv's python checks what the Space installs alone).

    Use as a context manager; ``client`` is a ``gradio_client.Client`` connected to it. The app is
    asked for a free port, and the client connects to the URL the app prints that it runs on
    (gradio moves on to the next port when another program took the one asked for, so Spaces
    started side by side may not be where they were asked to be).
    """

    def __init__(self, folder: Path, timeout: float = 60.0, python: Path | str | None = None):
        self.folder, self.timeout = Path(folder), timeout
        self.python = str(python or sys.executable)

    def __enter__(self) -> SpaceServer:
        from gradio_client import Client

        asked = _free_port()
        self.modules = tempfile.TemporaryDirectory(prefix="space-modules-")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "VIRTUAL_ENV")}
        env.update(GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(asked),
                   GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1",
                   HF_MODULES_CACHE=self.modules.name, PYTHONUNBUFFERED="1")
        self.log = tempfile.TemporaryFile(mode="a+b")  # the app appends whatever we last read
        self.process = subprocess.Popen([self.python, "-s", "app.py"], cwd=self.folder, env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.timeout
        while not (running := re.search(r"Running on local URL: +(http://127\.0\.0\.1:(\d+))", self.output())):
            if self.process.poll() is not None:
                self.__exit__()
                raise RuntimeError(f"{self.folder}/app.py exited ({self.process.returncode}):\n{self.output()}")
            if time.monotonic() > deadline:
                self.__exit__()
                raise TimeoutError(f"{self.folder}/app.py did not start within {self.timeout:.0f} s:\n{self.output()}")
            time.sleep(0.2)
        self.url, self.port = running.group(1) + "/", int(running.group(2))
        self.client = Client(self.url, verbose=False)
        return self

    def parameters(self, config: str | None = None) -> list[str]:
        """The API parameter names of ``config``'s endpoint (default: the first config's)."""
        api = self._api(config)
        endpoint = self.client.view_api(print_info=False, return_format="dict")["named_endpoints"][api]
        return [p["parameter_name"] for p in endpoint["parameters"]]

    def compute(self, inputs: dict, options: dict | None = None, config: str | None = None) -> dict:
        """The page's answer to ``inputs`` on ``config``'s form, each as a JSON text by name; an
        input not given is sent as an empty field (not the form's prefilled example)."""
        names = [p for p in self.parameters(config) if p != OPTIONS]
        unknown = sorted(set(inputs) - set(names))
        if unknown:
            raise ValueError(f"{self.folder.name}: no input {unknown} on {self._api(config)} (it has {names})")
        texts = {n: json.dumps(inputs[n]) if n in inputs else "" for n in names}
        return self.client.predict(**texts, **{OPTIONS: json.dumps(options or {})}, api_name=self._api(config))

    def _api(self, config: str | None) -> str:
        configs = space_example(self.folder)
        return "/" + api_name(config or next(iter(configs)), configs)

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-3000:]

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.modules.cleanup()


def answers_like_evaluate(server: SpaceServer) -> list[str]:
    """The running Space's answer to the example of each config vs ``evaluate.load(...).compute``
    here on its module file: the configs that differ (empty = every answer equal)."""
    import evaluate

    module = str(server.folder / f"{server.folder.name}.py")
    problems = []
    for config, example in space_example(server.folder).items():
        options = example.get("options") or {}
        loaded = evaluate.load(module, None if config == "default" else config)
        expected = loaded.compute(**example["inputs"], **options)
        answer = server.compute(example["inputs"], options, config)
        if json.loads(json.dumps(answer)) != json.loads(json.dumps(expected)):
            problems.append(f"{config}: the Space answered {answer} but evaluate.load(...).compute gives {expected}")
    return problems


def verify_space(space_dir: Path, python: Path | str | None = None) -> str:
    """Start the built Space's app (with ``python``, default this interpreter), send the example
    of each config and compare with ``evaluate.load(...).compute`` here.

    Returns a one-line verdict; raises SpaceError when the Space fails or answers differently, or
    when gradio / gradio_client is not installed here (``pip install '.[spaces]'``).
    """
    space_dir = Path(space_dir)
    problems = check_space(space_dir)
    if problems:
        raise SpaceError(f"{space_dir}: " + "; ".join(problems))
    try:
        if python is None:
            import gradio  # noqa: F401
        import gradio_client  # noqa: F401
    except ImportError as err:
        raise SpaceError(f"{space_dir}: cannot start the Space: {err.name} is not installed "
                         "(pip install '.[spaces]')") from None
    try:
        with SpaceServer(space_dir, timeout=120, python=python) as server:
            problems = answers_like_evaluate(server)
    except Exception as err:  # the app did not start, or its page failed: a verdict, not a crash
        raise SpaceError(f"{space_dir}: {type(err).__name__}: {err}") from None
    if problems:
        raise SpaceError(f"{space_dir}: " + "; ".join(problems))
    configs = ", ".join(space_example(space_dir))
    return (f"the Space's app answered the example of each config ({configs}) "
            "as evaluate.load(...).compute does")

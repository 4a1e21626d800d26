"""``semrel`` commands of a docs page run by a process that imported semrel's libraries once.

Before any work, a ``semrel`` command imports torch, scikit-learn, transformers,
sentence-transformers and datasets: about 11 CPU-seconds on a 2-core CI machine, more than the
work of most commands the docs run. :func:`preloaded` starts a server with the page's environment
and working directory that imports them once and listens on a Unix socket, and puts first on
``PATH`` a ``semrel`` script that hands its arguments, working directory, environment and
standard streams to the server. The server forks a child that takes them over and runs the
installed ``semrel`` script as ``__main__`` (a fresh copy of the imported process per command);
the child's exit status is the script's. Where the command's environment is not the server's (a
variable set for one command) or the server is not listening yet, the script runs the installed
``semrel`` itself, so every command runs as written.

    python preloaded_semrel.py SOCKET MODULE...   # the server (started by preloaded)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PRELOAD = ("torch", "sklearn.metrics", "scipy.stats", "transformers", "sentence_transformers",
           "datasets", "semrel.cli")
SHELL_OWN = ("_", "SHLVL", "PWD", "OLDPWD")  # variables bash sets for every command it starts
SCRIPT = """#!{python} -IS
import json, os, socket, struct, sys
real, path = {real!r}, {socket!r}
try:
    server = socket.socket(socket.AF_UNIX)
    server.connect(path)
except OSError:  # not listening (yet)
    os.execv(real, [real, *sys.argv[1:]])
message = json.dumps([sys.argv[1:], os.getcwd(), dict(os.environ)]).encode()
socket.send_fds(server, [struct.pack("!I", len(message)) + message], [0, 1, 2])
reply = b""
while len(reply) < 4 and (part := server.recv(4 - len(reply))):
    reply += part
if reply == b"env!":  # the command's environment is not the server's
    os.execv(real, [real, *sys.argv[1:]])
status = struct.unpack("!i", reply)[0]
if status < 0:
    os.kill(os.getpid(), -status)
sys.exit(status)
"""


def received(connection: socket.socket) -> tuple[list, list[int]]:
    """The length-prefixed JSON message of the client script and the descriptors sent with it."""
    data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
    while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
        part = connection.recv(1 << 16)
        if not part:
            raise ConnectionError("the client left before its message ended")
        data += part
    return json.loads(data[4:]), fds


def reap(*_) -> None:
    """Wait for the exited waiters, so their CPU time and their commands' count as the server's."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def stop(*_) -> None:
    while True:  # every waiter, then exit
        try:
            os.wait()
        except ChildProcessError:
            sys.exit(0)


def serve(path: str, modules: list[str]) -> tuple[list[str], str, dict, list[int]]:
    """Import ``modules``, then accept commands until SIGTERM; in the child that runs a command,
    return it (arguments, working directory, environment, standard streams)."""
    own = {k: v for k, v in os.environ.items() if k not in SHELL_OWN}  # before what imports set
    for name in modules:
        __import__(name)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path + ".binding")
    listener.listen()
    os.rename(path + ".binding", path)  # clients find the socket only once it listens
    signal.signal(signal.SIGTERM, stop)
    while True:
        connection, _ = listener.accept()
        reap()
        (args, cwd, env), fds = received(connection)
        other = sorted(k for k in {*own, *env} - set(SHELL_OWN) if own.get(k) != env.get(k))
        if other:
            print(f"not served ({', '.join(other)} not the server's):", *args, file=sys.stderr, flush=True)
            connection.sendall(b"env!")
        else:
            print("served:", *args, file=sys.stderr, flush=True)
            if os.fork() == 0:  # the waiter: forks the command, sends its exit status
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                listener.close()
                if os.fork() == 0:
                    connection.close()
                    return args, cwd, env, fds
                for fd in fds:
                    os.close(fd)
                _, status = os.wait()
                connection.sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))
                os._exit(0)
        connection.close()
        for fd in fds:
            os.close(fd)


@contextmanager
def preloaded(env: dict, cwd: Path, modules: tuple[str, ...] = PRELOAD) -> Iterator[dict]:
    """A server for ``semrel`` commands run in ``cwd`` with ``env``, while in the ``with`` block;
    it yields the commands' environment: ``env`` with the client script first on ``PATH``."""
    folder = Path(tempfile.mkdtemp(prefix="semrel-"))  # short: a socket's path has at most 107 bytes
    (folder / "semrel").write_text(SCRIPT.format(python=sys.executable, socket=str(folder / "socket"),
                                                 real=str(Path(sys.executable).parent / "semrel")))
    (folder / "semrel").chmod(0o755)
    env = {**env, "PATH": f"{folder}{os.pathsep}{env['PATH']}"}
    with open(folder / "server.log", "w") as log:
        server = subprocess.Popen([sys.executable, __file__, str(folder / "socket"), *modules], cwd=cwd,
                                  env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        yield env
    finally:
        server.terminate()  # it waits for the commands still running
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(folder)


def run(args: list[str], cwd: str, env: dict, fds: list[int]) -> None:
    """Run the installed ``semrel`` script as ``__main__`` with the client's arguments, working
    directory, environment and standard streams."""
    import runpy

    os.chdir(cwd)
    for name in SHELL_OWN:
        os.environ.pop(name, None)
    os.environ.update(env)  # the server's own, and what its imports set, as in a fresh process
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    sys.argv = [str(Path(sys.executable).parent / "semrel"), *args]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    sys.path[0] = str(Path(sys.executable).parent)  # as for the installed script, not tests/
    run(*serve(sys.argv[1], sys.argv[2:]))

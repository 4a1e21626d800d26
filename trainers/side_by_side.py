"""Commands as processes side by side, a few at a time, each after the ones it needs: how a script
shares one machine (one GPU that a single small fit leaves mostly idle) among its fits and scorings,
each process's output in a log of its own, and what happens told to the caller's ``say`` (a script
passes ``print``):

    side_by_side([Task(("python", "-c", "print(1)"), Path("one.log"))], jobs=2, say=print)
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Task:
    """One process of a ``--jobs`` run: its command, its log, and the tasks (indices) that must
    have ended well before it starts."""

    argv: tuple[str, ...]
    log: Path
    after: tuple[int, ...] = ()
    echo: bool = False  # say its log when it ends (else only when it fails, and its command,
    # ``python -m semrel ...``, as ``$ semrel ...`` when it starts)


def side_by_side(tasks: list[Task], jobs: int, ended_well=lambda index, seconds: None, *, say) -> None:
    """Run the tasks as processes, ``jobs`` at a time, always the first ready one in list order,
    each one's output into its log; ``ended_well(index, wall seconds)`` as each one succeeds, before
    the tasks after it start; ``say(line)`` for each start, end and task not run. SystemExit naming
    every failed command and its log once nothing more can run (a task after a failed one does not
    run)."""
    import subprocess
    import time

    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS",
                                                           str(max(1, (os.cpu_count() or 1) // jobs)))}
    waiting, running, ended, failed = list(range(len(tasks))), {}, set(), []
    while True:
        for index in [i for i in waiting if any(a in failed for a in tasks[i].after)]:
            waiting.remove(index)
            failed.append(index)
            say(f"not run, a command it needs failed: {shlex.join(tasks[index].argv)}")
        ready = [i for i in waiting if all(a in ended for a in tasks[i].after)]
        while ready and len(running) < jobs:
            index = ready.pop(0)
            waiting.remove(index)
            task = tasks[index]
            if not task.echo:
                say("$ semrel " + shlex.join(task.argv[3:]))
            task.log.parent.mkdir(parents=True, exist_ok=True)
            with open(task.log, "w", encoding="utf-8") as out:
                running[index] = (subprocess.Popen(task.argv, stdout=out, stderr=subprocess.STDOUT, env=env),
                                  time.perf_counter())
        if not running:
            break
        time.sleep(0.2)
        for index, (process, start) in list(running.items()):
            if process.poll() is None:
                continue
            del running[index]
            seconds = time.perf_counter() - start
            task = tasks[index]
            if (task.echo or process.returncode) and (text := task.log.read_text(encoding="utf-8")):
                say(text.removesuffix("\n"))
            say(f"ended ({seconds:.1f} s, exit status {process.returncode}): {task.log}")
            if process.returncode:
                failed.append(index)
            else:
                ended_well(index, seconds)
                ended.add(index)
    broken = [f"{shlex.join(tasks[i].argv)} (output in {tasks[i].log})" for i in failed]
    if broken:
        raise SystemExit("failed: " + "; ".join(broken))

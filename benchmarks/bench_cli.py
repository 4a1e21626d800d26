"""Wall time of ``semrel --help`` and of each subcommand's ``--help`` (whole process; target well
under 0.3 s: building the parser imports only the standard library).

    .venv/bin/python benchmarks/bench_cli.py [--runs 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = [[], ["build"], ["bws", "score"], ["fit"]]


def wall(command: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    script = shutil.which("semrel", path=str(Path(sys.executable).parent)) or "semrel"
    wall([script, "--help"], 2)  # warm the page cache
    for sub in COMMANDS:
        times = wall([script, *sub, "--help"], runs)
        print(f"semrel {' '.join([*sub, '--help']):<24} median {statistics.median(times):.3f} s  "
              f"min {min(times):.3f} s  ({runs} runs)")


if __name__ == "__main__":
    main()

"""The design card's publishing script: ``semrel build|verify|push ...`` runs
``semrel build|verify|push ...`` (same options; see ``semrel build --help``)."""

import sys

from semrel.cli import main

COMMANDS = ("build", "verify", "push")

if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv and argv[0] in COMMANDS:
        sys.exit(main(argv))
    sys.stderr.write(f"upload.py: use one of {', '.join(COMMANDS)} (the same as `semrel {'|'.join(COMMANDS)}`); "
                     f"every other command is in `semrel --help`\n")
    sys.exit(2)

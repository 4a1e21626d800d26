"""Build, verify and publish semrel artefacts.

    python upload.py build --all [--mirror DIR] [--data-dir ID=DIR ...]   # -> build/hub/...
    python upload.py verify                                                # reload + compare

Datasets go to ``build/hub/datasets/<id>/`` (Parquet + README with YAML configs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import datasets

from dataset_scripts import REGISTRY
from dataset_scripts.export import build_dataset, verify_folder

DEFAULT_OUT = Path("build")


def _data_dirs(pairs: list[str]) -> dict[str, str]:
    dirs = {}
    for pair in pairs:
        dataset_id, sep, path = pair.partition("=")
        if not sep or dataset_id not in REGISTRY:
            raise SystemExit(f"--data-dir expects ID=DIR with ID in {sorted(REGISTRY)}, got {pair!r}")
        dirs[dataset_id] = path
    return dirs


def _selected(only: list[str] | None) -> list[str]:
    unknown = sorted(set(only or []) - set(REGISTRY))
    if unknown:
        raise SystemExit(f"unknown dataset(s) {unknown}; known: {sorted(REGISTRY)}")
    return list(only) if only else list(REGISTRY)


def cmd_build(args) -> int:
    datasets.disable_progress_bars()  # one summary line per split instead of a bar per file
    data_dirs = _data_dirs(args.data_dir)
    hub = args.out / "hub"
    print(f"{'dataset':<16} {'config':<28} {'split':<10} {'rows':>7}")
    for dataset_id in _selected(args.only):
        result = build_dataset(dataset_id, hub, mirror=args.mirror,
                               data_dir=data_dirs.get(dataset_id), cache_dir=args.cache_dir)
        for config, splits in result.rows.items():
            for split, rows in splits.items():
                print(f"{dataset_id:<16} {config:<28} {split:<10} {rows:>7,}")
        for config, reason in result.skipped.items():
            print(f"{dataset_id:<16} {config:<28} skipped: {reason}")
        where = result.folder if result.rows else "(nothing built)"
        print(f"-> {dataset_id}: {len(result.rows)} config(s) in {where}")
    return 0


def cmd_verify(args) -> int:
    data_dirs = _data_dirs(args.data_dir)
    failed = 0
    for dataset_id in _selected(args.only):
        folder = args.out / "hub" / "datasets" / dataset_id
        if not (folder / "README.md").is_file():
            print(f"{dataset_id}: not built ({folder})")
            continue
        problems = verify_folder(folder, dataset_id, mirror=args.mirror,
                                 data_dir=data_dirs.get(dataset_id), cache_dir=args.cache_dir)
        failed += bool(problems)
        print(f"{dataset_id}: " + ("verified" if not problems else "FAILED\n  " + "\n  ".join(problems)))
    return 1 if failed else 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name, func, help_ in (("build", cmd_build, "build datasets into build/hub"),
                              ("verify", cmd_verify, "reload built folders and compare")):
        s = sub.add_parser(name, help=help_)
        s.set_defaults(func=func)
        s.add_argument("--all", action="store_true", help="every dataset (the default)")
        s.add_argument("--only", nargs="+", metavar="NAME", help="only these datasets")
        s.add_argument("--mirror", default=None,
                       help="mirror directory (<mirror>/<dataset-id>/<file>); default $SEMREL_MIRROR")
        s.add_argument("--data-dir", action="append", default=[], metavar="ID=DIR",
                       help="user-supplied files of a dataset (C-STS, Czech train/dep)")
        s.add_argument("--out", type=Path, default=DEFAULT_OUT)
        s.add_argument("--cache-dir", default=None, help="datasets cache directory")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

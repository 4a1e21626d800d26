"""Build, verify and publish semrel artefacts.

    python upload.py build --all [--mirror DIR] [--data-dir ID=DIR ...]   # -> build/hub/..., build/report/
    python upload.py verify                                                # reload + compare
    python upload.py push --namespace NS [--private] [--only NAME ...] [--model PATH ...] [--dry-run]

Datasets go to ``build/hub/datasets/<id>/`` (Parquet + README with YAML configs), metrics to
``build/hub/spaces/<name>/`` (standalone Space folders). ``push`` publishes them (see
``dataset_scripts.publish`` for what each artefact sends).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import datasets

from dataset_scripts import REGISTRY
from dataset_scripts import publish
from dataset_scripts.export import build_dataset, verify_folder
from dataset_scripts.report import build_report
from publishing.spaces import SpaceError, build_space, metric_names, verify_space

DEFAULT_OUT = Path("build")


def _data_dirs(pairs: list[str]) -> dict[str, str]:
    dirs = {}
    for pair in pairs:
        dataset_id, sep, path = pair.partition("=")
        if not sep or dataset_id not in REGISTRY:
            raise SystemExit(f"--data-dir expects ID=DIR with ID in {sorted(REGISTRY)}, got {pair!r}")
        dirs[dataset_id] = path
    return dirs


def _selected(only: list[str] | None) -> tuple[list[str], list[str]]:
    """(datasets, metrics) named by --only; all of both without it."""
    known = sorted(REGISTRY) + metric_names()
    unknown = sorted(set(only or []) - set(known))
    if unknown:
        raise SystemExit(f"unknown dataset or metric name(s) {unknown}; known: {known}")
    names = list(only) if only else known
    return [n for n in names if n in REGISTRY], [n for n in names if n not in REGISTRY]


def cmd_build(args) -> int:
    datasets.disable_progress_bars()  # one summary line per split instead of a bar per file
    data_dirs = _data_dirs(args.data_dir)
    hub = args.out / "hub"
    dataset_ids, metrics = _selected(args.only)
    print(f"{'dataset':<16} {'config':<28} {'split':<10} {'rows':>7}")
    for dataset_id in dataset_ids:
        result = build_dataset(dataset_id, hub, mirror=args.mirror,
                               data_dir=data_dirs.get(dataset_id), cache_dir=args.cache_dir)
        for config, splits in result.rows.items():
            for split, rows in splits.items():
                print(f"{dataset_id:<16} {config:<28} {split:<10} {rows:>7,}")
        for config, reason in result.skipped.items():
            print(f"{dataset_id:<16} {config:<28} skipped: {reason}")
        where = result.folder if result.rows else "(nothing built)"
        print(f"-> {dataset_id}: {len(result.rows)} config(s) in {where}")
    for name in metrics:
        space = build_space(name, hub)
        extra = "".join(f"; {link}" for link in space.linked)
        print(f"-> metric {name}: Space in {space.folder}{extra}")
    if not args.no_report:
        page = build_report(args.out, dataset_ids, metrics, mirror=args.mirror,
                            cache_dir=args.cache_dir)
        print(f"-> reliability report: {page}")
    return 0


def cmd_verify(args) -> int:
    data_dirs = _data_dirs(args.data_dir)
    failed = 0
    dataset_ids, metrics = _selected(args.only)
    for dataset_id in dataset_ids:
        folder = args.out / "hub" / "datasets" / dataset_id
        if not (folder / "README.md").is_file():
            print(f"{dataset_id}: not built ({folder})")
            continue
        problems = verify_folder(folder, dataset_id, mirror=args.mirror,
                                 data_dir=data_dirs.get(dataset_id), cache_dir=args.cache_dir)
        failed += bool(problems)
        print(f"{dataset_id}: " + ("verified" if not problems else "FAILED\n  " + "\n  ".join(problems)))
    for name in metrics:
        folder = args.out / "hub" / "spaces" / name
        try:
            verdict = verify_space(folder) if folder.is_dir() else None
        except SpaceError as err:
            verdict, failed = f"FAILED\n  {err}", failed + 1
        print(f"metric {name}: " + ("not built" if verdict is None else verdict))
    return 1 if failed else 0


def cmd_push(args) -> int:
    """Check every artefact, then push; errors are printed (never the token) and exit 1."""
    try:
        # --model alone pushes only the models; --all (or no --model) adds every dataset and metric
        names = args.only or (publish.known_names() if args.all or not args.model else [])
        artefacts = publish.plan(args.out, names, args.model)
        print(f"{'kind':<13} {'repo':<40} {'files':>5}  what")
        for a in artefacts:
            print(f"{a.kind:<13} {args.namespace + '/' + a.name:<40} {len(a.files()):>5}  {a.note}")
            if args.dry_run:
                print("".join(f"    {f}\n" for f in a.files()), end="")
        if args.dry_run:
            return 0
        token = publish.resolve_token()
        publish.check(artefacts, mirror=args.mirror, data_dir=_data_dirs(args.data_dir),
                      cache_dir=args.cache_dir)
        done = publish.push(artefacts, args.namespace, private=args.private, token=token)
    except publish.PublishError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    changed = sum(p.changed for p in done)
    print(f"done: {changed} repo(s) updated, {len(done) - changed} already up to date")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name, func, help_ in (("build", cmd_build, "build datasets and metric Spaces into build/hub"),
                              ("verify", cmd_verify, "reload built folders and compare"),
                              ("push", cmd_push, "publish built datasets, Spaces and models")):
        s = sub.add_parser(name, help=help_)
        s.set_defaults(func=func)
        s.add_argument("--all", action="store_true", help="every dataset and metric (the default)")
        s.add_argument("--only", nargs="+", metavar="NAME", help="only these datasets/metrics")
        s.add_argument("--mirror", default=None,
                       help="mirror directory (<mirror>/<dataset-id>/<file>); default $SEMREL_MIRROR")
        s.add_argument("--data-dir", action="append", default=[], metavar="ID=DIR",
                       help="user-supplied files of a dataset (C-STS, Czech train/dep)")
        s.add_argument("--out", type=Path, default=DEFAULT_OUT)
        s.add_argument("--cache-dir", default=None, help="datasets cache directory")
        if name == "build":
            s.add_argument("--no-report", action="store_true",
                           help="skip the reliability report (build/report/index.html)")
        if name == "push":
            s.add_argument("--namespace", required=True, help="user or organisation on the Hub")
            s.add_argument("--private", action="store_true", help="create new repos as private")
            s.add_argument("--model", nargs="+", type=Path, default=[], metavar="PATH",
                           help="model folders (python -m trainers fit); alone unless --all/--only")
            s.add_argument("--dry-run", action="store_true",
                           help="print what each repo would receive; no token, no network")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

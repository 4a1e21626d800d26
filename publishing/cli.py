"""``semrel build | verify | push``: datasets, metric Spaces and the report, built and published.

    semrel build [--only NAME ...] [--mirror DIR] [--data-dir ID=DIR ...]   # -> build/hub/..., build/report/
    semrel verify [--only NAME ...]                                         # rebuild from upstream + compare
    semrel push --namespace NS [--private] [--only NAME ...] [--model PATH ...] [--dataset DIR ...] [--dry-run]

Datasets go to ``build/hub/datasets/<id>/`` (Parquet + README with YAML configs; C-STS: the card
only, its rows stay in your datasets cache), metrics to ``build/hub/spaces/<name>/`` (standalone
Space folders). ``push`` publishes them, and dataset folders of ``semrel annotate dataset`` (see
:mod:`semrel.publishing.publish` for what each artefact sends). A failed build keeps the previous
output of that dataset; concurrent builds into one folder wait. The ``--out`` of ``build`` and
``push`` (which stages there) is never a link, nor a folder they read (``--mirror``,
``--data-dir``, push's ``--model``), an existing folder in one, or one holding one (nor a
``--dataset`` folder). The mirror is found as every command finds it: ``--mirror``, else
``$SEMREL_MIRROR``, else ``../shared/upstream`` beside the working directory, else the upstream
URLs.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from semrel.command_line import UsageError, add_command, check_mirror
from semrel.metrics.output_files import check_output, unwritable

DEFAULT_OUT = Path("build")
REPLACED = ("hub", "report")  # what build and push write in --out; the rest of the folder is left alone
log = logging.getLogger(__name__)


def _known_datasets() -> list[str]:
    from semrel.dataset_scripts.registry import REGISTRY

    return sorted(REGISTRY)


def _metric_names() -> list[str]:
    from semrel.publishing.spaces import metric_names

    return metric_names()


def _folder(flag: str, path, *, exists: bool = False, write: bool = False, hint: str = "") -> Path:
    """``path`` of a folder argument, or a one-line :class:`UsageError`: a file where the folder
    goes, a missing folder that must exist (``exists``), or a place this process cannot write
    (``write``: :func:`~semrel.metrics.output_files.unwritable`)."""
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: is a file, not a folder")
    if exists and not path.is_dir():
        raise UsageError(f"{flag} {path}: no such folder{hint}")
    if write and (problem := unwritable(path)):
        parent, reason = problem
        if reason is None:
            raise UsageError(f"{flag} {path}: {parent} is a file, not a folder")
        raise UsageError(f"{flag} {path}: cannot write in {parent} ({reason})")
    return path


def _not_an_input(flag: str, path, inputs: dict, data: dict) -> None:
    """``path`` as an output folder (:func:`~semrel.metrics.output_files.check_output`: no link,
    none of ``inputs`` and ``data`` (flag -> paths), inside an input or holding one in the parts
    build and push replace, ``hub/`` and ``report/``), or a one-line UsageError."""
    from semrel.metrics.errors import ParameterError

    try:
        check_output(path, flag, inputs, folder=True, data=data, replaced=REPLACED)
    except ParameterError as exc:
        raise UsageError(exc.worded(show=str, sep=" ")) from None


def _check_cache_dir(cache_dir) -> None:
    if cache_dir is not None:
        _folder("--cache-dir", cache_dir, write=True)


def _data_dirs(pairs: list[str]) -> dict[str, str]:
    dirs, known = {}, _known_datasets()
    for pair in pairs:
        dataset_id, sep, path = pair.partition("=")
        if not sep or dataset_id not in known:
            raise UsageError(f"--data-dir expects ID=DIR with ID one of {', '.join(known)}; got {pair!r}")
        if Path(path).expanduser().is_file():
            raise UsageError(f"--data-dir {dataset_id}={path}: is a file, not a folder (the folder "
                             f"with the files the authors give you)")
        if not Path(path).expanduser().is_dir():
            raise UsageError(f"--data-dir {dataset_id}={path}: no such directory (the folder with "
                             f"the files the authors give you)")
        dirs[dataset_id] = str(Path(path).expanduser())
    return dirs


def _selected(only: list[str] | None) -> tuple[list[str], list[str]]:
    """(datasets, metrics) named by --only; all of both without it."""
    datasets, metrics = _known_datasets(), _metric_names()
    unknown = [n for n in only or [] if n not in datasets + metrics]
    if unknown:
        raise UsageError(f"unknown name(s) {', '.join(unknown)}; datasets: {', '.join(datasets)}; "
                         f"metrics: {', '.join(metrics)}")
    names = list(only) if only else datasets + metrics
    return [n for n in names if n in datasets], [n for n in names if n in metrics]


def cmd_build(args) -> int:
    import datasets

    from semrel.publishing.export import build_dataset, build_lock
    from semrel.publishing.report import build_report
    from semrel.publishing.spaces import SpaceError, build_space

    check_mirror(args.mirror)
    data_dirs = _data_dirs(args.data_dir)
    _not_an_input("--out", args.out, {}, {"--mirror": (args.mirror or "").split(os.pathsep),
                                          "--data-dir": data_dirs.values()})
    _folder("--out", args.out, write=True)
    _check_cache_dir(args.cache_dir)
    datasets.disable_progress_bars()  # one summary line per split instead of a bar per file
    hub = args.out / "hub"
    dataset_ids, metrics = _selected(args.only)
    failed: dict[str, tuple[str, str]] = {}  # what failed -> (the error, what is left of it)

    def fail(what: str, previous: Path, exc: BaseException) -> None:
        kept = "its previous output is kept" if previous.exists() else "there was no previous output"
        failed[what] = (f"{type(exc).__name__}: {exc}", kept)
        log.error("-> %s: FAILED (%s); %s", what, failed[what][0], kept)

    with build_lock(args.out):
        print(f"{'dataset':<16} {'config':<28} {'split':<18} {'rows':>7}")
        for dataset_id in dataset_ids:
            try:
                result = build_dataset(dataset_id, hub, mirror=args.mirror,
                                       data_dir=data_dirs.get(dataset_id), cache_dir=args.cache_dir)
            except (OSError, ValueError) as exc:  # DataValidationError, SourceError, a full disk ...
                fail(dataset_id, hub / "datasets" / dataset_id / "README.md", exc)
                continue
            for config, splits in result.rows.items():
                for split, rows in splits.items():
                    print(f"{dataset_id:<16} {config:<28} {split:<18} {rows:>7,}")
            for config, reason in result.skipped.items():
                print(f"{dataset_id:<16} {config:<28} skipped: {reason}")
            local = (f"; the card also describes {', '.join(result.local)}, whose rows stay in your "
                     "datasets cache" if result.local and not result.card_only else "")
            what = ("the card only (its rows stay in your datasets cache)" if result.card_only
                    else f"{len(result.rows) - len(result.local)} config(s){local}")
            print(f"-> {dataset_id}: " + (f"{what} in {result.folder}" if result.rows
                                          else "nothing built"))
        for name in metrics:
            try:
                space = build_space(name, hub)
            except (OSError, SpaceError) as exc:
                fail(f"metric {name}", hub / "spaces" / name, exc)
                continue
            print(f"-> metric {name}: Space in {space.folder} (with {space.wheel.name})")
        if args.report:
            stale = {d: failed[d][0] for d in dataset_ids if d in failed}
            try:
                page = build_report(args.out, dataset_ids, metrics, mirror=args.mirror,
                                    data_dirs=data_dirs, cache_dir=args.cache_dir, stale=stale)
            except OSError as exc:
                fail("report", args.out / "report" / "index.html", exc)
            else:
                print(f"-> reliability report: {page}" + (f" (marks {', '.join(stale)} stale)"
                                                           if stale else ""))
    if failed:
        log.error("build FAILED for %s", "; ".join(f"{what} ({kept})" for what, (_, kept) in failed.items()))
    return 1 if failed else 0


def cmd_verify(args) -> int:
    from semrel.publishing.export import is_card_only, verify_folder
    from semrel.publishing.space_server import verify_space
    from semrel.publishing.spaces import SpaceError

    check_mirror(args.mirror)
    _folder("--out", args.out, exists=True, hint=": run `semrel build` first")
    _check_cache_dir(args.cache_dir)
    data_dirs = _data_dirs(args.data_dir)
    failed = checked = 0
    dataset_ids, metrics = _selected(args.only)
    for dataset_id in dataset_ids:
        folder = args.out / "hub" / "datasets" / dataset_id
        if not (folder / "README.md").is_file():
            print(f"{dataset_id}: not built ({folder})")
            continue
        checked += 1
        if is_card_only(folder):
            print(f"{dataset_id}: card only (its rows stay in the datasets cache): nothing to reload")
            continue
        try:
            problems = verify_folder(folder, dataset_id, mirror=args.mirror,
                                     data_dir=data_dirs.get(dataset_id), cache_dir=args.cache_dir)
        except (OSError, ValueError) as exc:  # upstream file missing or changed, bad rows
            problems = [f"could not rebuild it from the upstream files: {type(exc).__name__}: {exc}"]
        failed += bool(problems)
        print(f"{dataset_id}: " + ("verified against the upstream files" if not problems
                                   else "FAILED\n  " + "\n  ".join(problems)))
    for name in metrics:
        folder = args.out / "hub" / "spaces" / name
        if not folder.is_dir():
            print(f"metric {name}: not built")
            continue
        checked += 1
        try:
            verdict = verify_space(folder)
        except SpaceError as err:
            verdict, failed = f"FAILED\n  {err}", failed + 1
        print(f"metric {name}: {verdict}")
    if not checked:
        log.error("error: nothing is built in %s: run `semrel build` first", args.out / "hub")
        return 1
    return 1 if failed else 0


def cmd_push(args) -> int:
    """Check every artefact, then push; errors are printed (never the token) and exit 1.
    ``--dry-run`` lists what each repo would receive (and what of a model folder stays here) and
    runs the same checks (:func:`~semrel.publishing.publish.check`) without the network."""
    from semrel.publishing import publish
    from semrel.publishing.staging import summary

    check_mirror(args.mirror)
    if args.only:
        _selected(args.only)  # a typo: exit 2 with the known names
    for model in args.model:
        _folder("--model", model, exists=True, hint=" (a run folder of `semrel fit`)")
    for folder in args.dataset:
        _folder("--dataset", folder, exists=True, hint=" (a dataset folder of `semrel annotate dataset`)")
    # --model or --dataset alone push only those; --all (or neither) adds every dataset and metric
    names = args.only or (publish.known_names() if args.all or not (args.model or args.dataset) else [])
    _not_an_input("--out", args.out, {"--model": args.model, "--dataset": args.dataset},
                  {"--mirror": (args.mirror or "").split(os.pathsep)})
    _folder("--out", args.out, write=True)  # staging goes there (a card-only repo needs no build)
    _check_cache_dir(args.cache_dir)
    data_dirs = _data_dirs(args.data_dir)
    try:
        try:
            artefacts = publish.plan(args.out, names, args.model, args.namespace, folders=args.dataset)
        except OSError as exc:  # a full disk while staging the repo folders
            raise publish.PublishError(f"could not stage the repos in {args.out / 'hub'} "
                                       f"({type(exc).__name__}: {exc}); nothing was uploaded") from None
        width = max([13, *(len(a.kind) for a in artefacts)])
        print(f"{'kind':<{width}} {'repo':<40} {'files':>5}  what")
        for a in artefacts:
            print(f"{a.kind:<{width}} {args.namespace + '/' + a.name:<40} {len(a.files()):>5}  {a.note}")
            changed = dict(a.changed)
            print("".join(f"    {f}" + (f"  ({changed[f]})" if f in changed else "") + "\n"
                          for f in a.files()), end="")
            if a.kept:
                print(f"  stays here: {summary(a.kept, a.files())}")
        if args.dry_run:
            unchecked = publish.check(artefacts, args.namespace, mirror=args.mirror, data_dir=data_dirs,
                                      cache_dir=args.cache_dir, offline=True)
            print("dry run: every check passed; nothing was sent" if not unchecked else
                  f"dry run: every check passed but {'; '.join(unchecked)}, which need the upstream "
                  "files (pass --mirror); nothing was sent")
            return 0
        token = publish.resolve_token()
        publish.check(artefacts, args.namespace, mirror=args.mirror, data_dir=data_dirs,
                      cache_dir=args.cache_dir)
        done = publish.push(artefacts, args.namespace, private=args.private, token=token)
    except publish.PublishError as exc:
        log.error("error: %s", exc)
        return 1
    changed = sum(p.changed for p in done)
    print(f"done: {changed} repo(s) updated, {len(done) - changed} already up to date")
    return 0


def register(commands) -> None:
    """Add build, verify and push to the ``semrel`` command."""
    for name, run, help_ in (("build", cmd_build, "build datasets, metric Spaces and the report"),
                             ("verify", cmd_verify, "rebuild from the upstream files and compare"),
                             ("push", cmd_push, "publish built datasets, Spaces and models")):
        s = add_command(commands, name, run, help_)
        s.add_argument("--all", action="store_true", help="every dataset and metric (the default)")
        s.add_argument("--only", nargs="+", metavar="NAME", help="only these datasets/metrics")
        s.add_argument("--mirror", default=None,
                       help="mirror directory (<mirror>/<dataset-id>/<file>); default: $SEMREL_MIRROR, "
                            "else ../shared/upstream if it exists, else download")
        s.add_argument("--data-dir", action="append", default=[], metavar="ID=DIR",
                       help="user-supplied files of a dataset (C-STS, Czech train/dep)")
        s.add_argument("--out", type=Path, default=DEFAULT_OUT, help="build folder")
        s.add_argument("--cache-dir", default=None, help="datasets cache directory (default: HF's)")
        if name == "build":
            s.add_argument("--report", action=argparse.BooleanOptionalAction, default=True,
                           help="the reliability report (build/report/index.html; needs the "
                                "'report' extra)")
        if name == "push":
            s.add_argument("--namespace", required=True, help="user or organisation on the Hub")
            s.add_argument("--private", action="store_true", help="create new repos as private")
            s.add_argument("--model", nargs="+", type=Path, default=[], metavar="PATH",
                           help="model folders (semrel fit); alone unless --all/--only")
            s.add_argument("--dataset", nargs="+", type=Path, default=[], metavar="DIR",
                           help="dataset folders (semrel annotate dataset), each to NAMESPACE/<its folder "
                                "name>; alone unless --all/--only")
            s.add_argument("--dry-run", action="store_true",
                           help="print what each repo would receive; no token, no network")

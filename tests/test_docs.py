"""Every code block of README.md and docs/*.md runs here, so the docs cannot drift from the code.

The blocks of a page run in order in one temporary working directory, which stands in for the
root of a checkout (``upload.py``, ``scripts/`` and ``benchmarks/`` are linked into it):

- ```` ```python ````: one namespace per page. A block with ``>>>`` prompts is a doctest: the
  output it shows is checked (``...`` matches anything, whitespace runs are equal); a block
  without prompts shows no output and must run without error.
- ```` ```bash ````: bash ``-e -o pipefail`` with the test's ``.venv/bin`` first on ``PATH`` (so
  ``semrel`` and ``python`` are the installed ones), ``$SEMREL_MIRROR`` the upstream mirror and
  the Hub offline; on a page that pushes, ``HF_ENDPOINT``/``HF_TOKEN`` point at the local Hub of
  tests/hub_server.py. Lines that start with ``$ `` are commands and the lines after each, up to
  the next ``$ ``, its output (stdout and stderr), checked as in a doctest; a block without
  ``$ `` lines is a script that must succeed. On a page of many commands that load a model,
  ``semrel`` is tests/preloaded_semrel.py's: the same script, forked from a process that has
  imported torch and the Hugging Face libraries once for the page.
- a block in any other language, or none, is an error: nothing in the docs goes unrun.

:data:`EXEMPT` names the only commands that are not run, each with its reason. Running a page
is a ``slow`` test (its commands start processes, build or train); the harness's own tests are fast.
"""

from __future__ import annotations

import doctest
import functools
import json
import os
import re
import subprocess
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from hub_server import LocalHub
from preloaded_semrel import preloaded
from project import MIRROR, REPO, needs_mirror

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DOC_PAGES = {"datasets", "c-sts", "metrics", "training", "models", "ensembles", "studies", "benchmark", "publishing",
             "cli", "making-a-dataset", "reliability-plan"}
EXEMPT = {
    "make build": "sets up the checkout's own .venv and writes its build/; what it runs, "
                  "`semrel build`, runs in docs/publishing.md",
    "make test": "runs the test suite's default run; the pages run as written in `make test-slow`",
    "python scripts/train_semrel_2024_recipe.py --output runs/semrel-2024-recipe":
        "trains all-mpnet-base-v2 for about half an hour on a CPU; "
        "tests/training/test_recipe_script.py runs the same script with a tiny model",
    "python scripts/train_str_2021.py --output runs/str-2021-cv --publish --write-results":
        "trains all-mpnet-base-v2 ten times (hours on a CPU) and stores into the checkout's results; "
        "tests/training/test_str_2021_script.py runs the same script with a tiny model",
    "python scripts/train_str_2021.py --output runs/str-2021-cv --precision bf16 --publish --reuse-published":
        "trains all-mpnet-base-v2 on each fold no published file stands for and publishes into the "
        "checkout; tests/training/test_str_2021_script.py reruns the same script from its published files",
    "python scripts/train_semrel_2024_languages.py --track a --language kin --output runs/languages":
        "trains four e5-small members on Kinyarwanda, hours on a CPU; "
        "tests/training/test_languages_script.py runs the same script with a tiny model",
    "python scripts/train_semrel_2024_languages.py --czech --output runs/languages":
        "trains the whole study (days on a CPU); tests/training/test_languages_script.py runs it "
        "for one language with a tiny model",
    "python scripts/train_semrel_2024_languages.py --czech --jobs 12 --output runs/languages":
        "trains the whole study on a GPU (days on a CPU); tests/training/test_languages_script.py runs "
        "it with --jobs for one language with a tiny model",
    "python benchmarks/bench_c_sts.py --only 'cross@mpnet,epochs=3,learning_rate=3e-5' --only 'bi@mpnet,epochs=4' "
    "--only 'bi@mpnet,epochs=3' --eval-steps 160 --precision bf16 --out runs/c-sts --publish --reuse-published "
    "--write-results":
        "trains three all-mpnet-base-v2 members (hours on a CPU), publishes and stores into the checkout; "
        "tests/training/test_c_sts_study.py reruns the same script from its published files",
    "python benchmarks/bench_c_sts.py --group screen --record benchmarks/results.json":
        "trains four MiniLM encoders for an hour or more on a CPU; tests/training/test_c_sts_study.py "
        "runs the same script with a tiny model",
    "python benchmarks/bench_c_sts.py --group screen --group minilm --group mpnet --record benchmarks/results.json":
        "hours of training on a CPU (the study's later groups)",
    ".venv-label-studio/bin/label-studio start --no-browser --port 8080 --data-dir ls-data --username "
    "you@example.org --password 'choose one'": "starts a server that runs until stopped; "
        "tests/annotation/test_label_studio.py starts the same server",
    'semrel annotate push tuples.csv --pairs pairs.csv --project "relatedness, batch 1"':
        "needs a Label Studio server; tests/annotation/test_label_studio.py pushes to a real one",
    "semrel annotate pull --project 1 --tuples tuples.csv --pairs pairs.csv --output annotations.csv":
        "needs a Label Studio server; tests/annotation/test_label_studio.py pulls from a real one",
    "semrel annotate status --project 1 --tuples tuples.csv --pairs pairs.csv --target 0.9":
        "needs a Label Studio server; tests/annotation/test_label_studio.py asks a real one",
    ".venv-potato/bin/potato start potato-task/config.yaml --port 8000":
        "starts Potato's server, which runs until stopped; tests/annotation/test_potato.py starts it and "
        "answers over HTTP",
    "semrel annotate potato-pull potato-task --output annotations.csv":
        "needs answers given in Potato; tests/annotation/test_potato.py pulls those of the real server",
}
LANGUAGES = {"python", "bash"}
CHECKOUT = ("upload.py", "scripts", "benchmarks", "docs")  # what the docs run from a checkout's root
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
MARK = "@@semrel-docs-command-done@@"
TOKEN = "hf_semrelDocsTestToken"
# the commands that load a model, importing torch, transformers and sentence-transformers first
MODEL_COMMANDS = ("fit", "cv", "predict", "ensemble", "augment", "benchmark")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a markdown page (fences may be indented, as in list items)."""
    found, lines = [], page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)```(.*)$", lines[i])
        if opening is None:
            i += 1
            continue
        indent, language = len(opening[1]), opening[2].strip()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise AssertionError(f"{page.relative_to(REPO)}:{i + 1}: code block never closed")
        code = "\n".join(line[indent:] for line in lines[i + 1:end]) + "\n"
        found.append(Block(page, i + 1, language, code))
        i = end + 1
    return found


def code_lines(block: Block) -> list[str]:
    """The lines of a block that run: for a ``$``-prompted bash block its commands alone."""
    if block.language == "bash" and re.search(r"^\$ ", block.code, re.M):
        return [command for command, _ in prompted(block.code)]
    return block.code.splitlines()


def command_of(line: str) -> str:
    """A bash line without its trailing comment, for comparison with :data:`EXEMPT`."""
    return re.sub(r"\s+#.*$", "", line).strip()


def prompted(code: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a block written with ``$ `` prompts."""
    pairs = []
    for line in code.splitlines():
        if line.startswith("$ "):
            pairs.append([line[2:], ""])
        elif pairs and pairs[-1][0].endswith("\\") and not pairs[-1][1]:
            pairs[-1][0] += "\n" + line  # continuation of a command
        elif pairs:
            pairs[-1][1] += line + "\n"
        elif line.strip():
            raise AssertionError(f"output before the first `$ ` command: {line!r}")
    return [(command, want) for command, want in pairs]


def check_output(want: str, got: str) -> bool:
    return doctest.OutputChecker().check_output(want, got, FLAGS)


def run_bash(block: Block, cwd: Path, env: dict) -> None:
    pairs = prompted(block.code) if re.search(r"^\$ ", block.code, re.M) else None
    if pairs is None:  # a script: every command must succeed
        script = "\n".join(": exempt" if command_of(line) in EXEMPT else line
                           for line in block.code.splitlines())
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                                capture_output=True, text=True, timeout=1800)
        if result.returncode != 0:
            raise AssertionError(f"{block.where}: exit status {result.returncode}\n"
                                 f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return
    runnable = [(c, w) for c, w in pairs if command_of(c) not in EXEMPT]
    script = "exec 2>&1\necho $EPOCHREALTIME\n" + "".join(f"{c}\necho {MARK} $EPOCHREALTIME\n"
                                                          for c, _ in runnable)
    result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=1800)
    started, _, rest = result.stdout.partition("\n")
    *parts, last = re.split(rf"{MARK} (\S+)\n", rest)
    ends = [float(t.replace(",", ".")) for t in (started, *parts[1::2])]  # $EPOCHREALTIME
    outputs = [*parts[0::2], last]
    done = len(outputs) - 1  # commands that finished
    for (command, _), seconds in zip(runnable, np.diff(ends), strict=False):
        print(f"{block.where}: {seconds:6.1f} s  {command}")  # shown by pytest -rP, or on failure
    for (command, want), got in zip(runnable[:done], outputs[:done], strict=True):
        if not check_output(want, got):
            raise AssertionError(f"{block.where}: `{command}` printed\n{got}\n"
                                 f"where the page shows\n{want}")
    if result.returncode != 0:
        raise AssertionError(f"{block.where}: `{runnable[done][0]}` failed with exit status "
                             f"{result.returncode}:\n{outputs[done][-3000:]}")


def run_python(block: Block, namespace: dict) -> None:
    if ">>> " not in block.code:
        exec(compile(block.code, block.where, "exec"), namespace)
        return
    test = doctest.DocTestParser().get_doctest(block.code, namespace, block.where,
                                               str(block.page), block.line)
    report = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=report.append, clear_globs=False)
    namespace.update(test.globs)
    if runner.failures:
        raise AssertionError("".join(report))


def run_page(page: Path, cwd: Path, env: dict, monkeypatch) -> None:
    """Run every block of ``page`` in ``cwd``: bash with ``env``, python in this process."""
    import datasets

    for name in CHECKOUT:
        if (REPO / name).exists():
            (cwd / name).symlink_to(REPO / name)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("SEMREL_MIRROR", env["SEMREL_MIRROR"])
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", Path(env["HF_DATASETS_CACHE"]))
    namespace = {"__name__": f"docs_{page.stem}"}
    for block in blocks(page):
        if block.language not in LANGUAGES:
            raise AssertionError(f"{block.where}: a ```{block.language} block cannot be run; "
                                 f"write it as {' or '.join(sorted(LANGUAGES))}, or as prose")
        if block.language == "bash":
            run_bash(block, cwd, env)
        else:
            run_python(block, namespace)


def environment(home: Path, cache_dir: Path, hub: LocalHub | None) -> dict:
    """The shell of a reader who ran `make build`: the venv's commands first, the mirror set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "SEMREL_"))}
    env |= {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "SEMREL_MIRROR": str(MIRROR), "HF_HOME": str(home),
            "HF_DATASETS_CACHE": str(cache_dir), "SEMREL_CACHE": os.environ["SEMREL_CACHE"],
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "HF_DATASETS_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1",
            "TOKENIZERS_PARALLELISM": "false"}
    if hub is not None:
        env |= hub.client_env(TOKEN)
    return env


@needs_mirror  # the pages run on the real data
@pytest.mark.parametrize("page", [
    pytest.param(p, id=str(p.relative_to(REPO)), marks=[pytest.mark.slow])  # runs a page's commands
    for p in PAGES])
def test_page_runs(page, tmp_path, cache_dir, monkeypatch):
    (tmp_path / "work").mkdir()
    bash = [b.code for b in blocks(page) if b.language == "bash"]
    pushes = any(re.search(r"\b(semrel|upload\.py) push\b(?!.*--dry-run)", code) for code in bash)
    loading = sum(len(re.findall(rf"^\$ .*\bsemrel ({'|'.join(MODEL_COMMANDS)}) ", code, re.M)) for code in bash)
    with LocalHub() if pushes else nullcontext() as hub:
        env = environment(tmp_path / "home", cache_dir, hub)
        # five or more commands that load a model: a server that imported their libraries once runs them
        with preloaded(env, tmp_path / "work") if loading >= 5 else nullcontext(env) as env:
            run_page(page, tmp_path / "work", env, monkeypatch)
        assert not pushes or hub.commits, f"{page.name} pushes, but nothing arrived at the local Hub"


def test_one_page_per_part_and_every_exemption_in_use():
    assert {p.stem for p in PAGES[1:]} == DOC_PAGES
    commands = {command_of(line) for p in PAGES for b in blocks(p) if b.language == "bash"
                for line in code_lines(b)}
    assert set(EXEMPT) <= commands, "an exemption no page uses any more: remove it"


@functools.cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors GitHub gives the headings of ``page``: lower case, punctuation but ``-`` and ``_``
    dropped, spaces as ``-``; a repeated one gets ``-1``, ``-2``, ..."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        found.add(slug if seen[slug] == 0 else f"{slug}-{seen[slug]}")
    return frozenset(found)


RESULT_PAGES = [REPO / "benchmarks" / "RESULTS.md", *sorted((REPO / "benchmarks" / "results").glob("*.md"))]


def test_readme_stays_short_and_links_resolve():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 200
    for page in [*PAGES, *RESULT_PAGES]:
        text = page.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if re.match(r"[a-z]+://", target):
                continue
            linked = page.parent / target if target else page
            assert linked.exists(), f"{page.name}: broken link {target}"
            if anchor and linked.suffix == ".md":
                heading = f"{page.name}: no heading of {target or page.name} is #{anchor}"
                assert anchor in anchors(linked.resolve()), heading


def test_results_page_shows_the_figures_of_results_json():
    """RESULTS.md's first table and results.json (what the report reads) say the same."""
    results = json.loads((REPO / "benchmarks" / "results.json").read_text(encoding="utf-8"))
    text = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    section = text.split("## Best fine-tuned figure per dataset", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]  # no header
    expected = [f"| {d} | {e['spearman']} | {e['model']} | {e['protocol']} | {e['machine']} | "
                f"`{e['command']}` |" for d, e in results["fine_tuned"].items()]
    assert rows == expected


def write_page(folder: Path, text: str) -> Path:
    page = folder / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


@pytest.mark.parametrize("text, message", [
    ("```python\n>>> 1 + 1\n3\n```\n", "Expected:\n    3\nGot:\n    2"),
    ("```python\nx = 1\n```\n\n```python\n>>> x + 1\n2\n>>> y\n```\n", "NameError"),
    ("```bash\n$ echo hello\nhallo\n```\n", "printed\nhello"),
    ("```bash\n$ echo one\none\n$ false\n$ echo never\n```\n", "`false` failed with exit status 1"),
    ("```bash\ntrue\nfalse\ntrue\n```\n", "exit status 1"),
    ("```bash\nmake test\nfalse\n```\n", "exit status 1"),
    ("```text\nnot code\n```\n", "a ```text block cannot be run"),
    ("```\nno language\n```\n", "a ``` block cannot be run"),
    ("```python\nx = 1\n", "code block never closed"),
])
def test_the_harness_catches_wrong_docs(text, message, tmp_path, monkeypatch, cache_dir):
    page = write_page(tmp_path, text)
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    (tmp_path / "upload.py").write_text("")
    (tmp_path / "work").mkdir()
    with pytest.raises(AssertionError, match=re.escape(message)):
        run_page(page, tmp_path / "work", environment(tmp_path / "home", cache_dir, None),
                 monkeypatch)


def test_the_harness_passes_right_docs_and_skips_only_exemptions(tmp_path, monkeypatch, cache_dir):
    page = write_page(tmp_path, "```python\n>>> import os\n>>> sorted(os.listdir('.'))\n"
                                "['upload.py']\n>>> (1, 2)\n(1,\n 2)\n```\n\n"
                                "```bash\nmake build   # exempt\nmake test\necho $SEMREL_MIRROR > m\n```\n\n"
                                "```bash\n$ cat m\n...upstream\n"
                                "$ python -c 'import semrel; print(semrel.__name__)'\nsemrel\n"
                                "$ python -c 'import sys; print(sys.argv)' a \\\n    b\n"
                                "['-c', 'a', 'b']\n```\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    (tmp_path / "upload.py").write_text("")
    (tmp_path / "work").mkdir()
    run_page(page, tmp_path / "work", environment(tmp_path / "home", cache_dir, None), monkeypatch)


@pytest.fixture(scope="module")
def served(tmp_path_factory, cache_dir):
    """A preloaded server (importing nothing ahead: the mechanism, not the saving) and a working
    directory with an empty folder ``runs``; the environment of its commands and its log."""
    work = tmp_path_factory.mktemp("preloaded")
    (work / "runs").mkdir()
    with preloaded(environment(work / "home", cache_dir, None), work, modules=()) as env:
        log = Path(env["PATH"].split(os.pathsep)[0]) / "server.log"
        for _ in range(600):  # listening once the socket is there
            if (log.parent / "socket").exists():
                break
            time.sleep(0.1)
        yield env, work, log


@pytest.mark.parametrize("command, served_here", [
    ("semrel fit --dataset str-2021 --model runs --output x", True),  # its working directory
    ("echo hello | semrel nonsense", True),  # exit status 2, stderr
    ("semrel --help | head -n 3", True),  # stdout
    ("HF_HUB_OFFLINE=0 semrel --help", False),  # another environment: the installed semrel
])
def test_a_preloaded_command_prints_and_exits_as_the_installed_one(command, served_here, served):
    env, work, log = served
    plain = {**env, "PATH": env["PATH"].split(os.pathsep, 1)[1]}
    got, want = (subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=e,
                                capture_output=True, text=True) for e in (env, plain))
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)
    assert want.returncode or want.stdout
    line = log.read_text().splitlines()[-1]
    assert line == ("served: " if served_here else "not served (HF_HUB_OFFLINE not the server's): ") + command.split(
        "semrel ", 1)[1].split(" |")[0]

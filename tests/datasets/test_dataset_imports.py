"""Light, side-effect-free imports: `import dataset_scripts` and `load()` leave the
heavy libraries unimported. Each check runs in a fresh interpreter (this one has them loaded)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from project import REPO

HEAVY = ("torch", "matplotlib", "sacrebleu", "sentence_transformers", "transformers",
         "vaderSentiment", "rouge_score")


def _imported_after(code: str) -> dict:
    probe = (f"import sys, json\n{code}\n"
             f"print(json.dumps({{m: m in sys.modules for m in {list(HEAVY)} + "
             f"['datasets', 'cryptography', 'ftfy']}}))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_dataset_scripts_is_light():
    imported = _imported_after("import dataset_scripts")
    assert [m for m, there in imported.items() if there] == []  # not even datasets


def test_registry_is_reachable_and_still_light():
    imported = _imported_after("import dataset_scripts\n"
                               "assert 'crowd-sts' in dataset_scripts.REGISTRY")
    assert imported["datasets"] and not any(imported[m] for m in HEAVY)
    assert not imported["cryptography"] and not imported["ftfy"]


@pytest.mark.parametrize("dataset, config", [("str-2021", "default"), ("czech-news-sts", "free")])
def test_load_imports_nothing_heavy(dataset, config, upstream, tmp_path):
    imported = _imported_after(f"from semrel.dataset_scripts import load\n"
                               f"load({dataset!r}, {config!r}, mirror={str(upstream)!r}, "
                               f"cache_dir={str(tmp_path)!r})")
    assert [m for m in HEAVY if imported[m]] == []

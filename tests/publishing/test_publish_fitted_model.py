"""`semrel push` of a model that `semrel fit` trained on a semrel dataset, against a local Hub
(tests/hub_server.py): its card is staged with the dataset repo it was trained on."""

from __future__ import annotations

import pytest
from huggingface_hub import ModelCard
from test_publish import NS, run

import toy_dataset
from hub_server import LocalHub


@pytest.mark.slow
def test_a_model_fit_on_a_semrel_dataset_is_pushed_with_its_dataset_repo(toy_registered, mirror,
                                                                         tmp_path):
    """`fit` cannot know the namespace, so its card names no dataset and the Hub vocabulary check
    would refuse it; the push stages the card with `datasets: [NS/<id>]` (the run stays as is)."""
    from semrel.dataset_scripts.pairs import load_pairs
    from semrel.dataset_scripts.pretrained import minilm_path
    from semrel.publishing.hub_vocabulary import check_card
    from semrel.trainers.arguments import PairTrainingArguments
    from semrel.trainers.fitting import fit

    run_dir = tmp_path / "toy-minilm"
    fit(load_pairs("toy-sts", "cv-fold-0", mirror=toy_dataset.MIRROR,
                   cache_dir=tmp_path / "cache"),
        str(minilm_path()), PairTrainingArguments(str(run_dir), max_steps=1,
                                                  per_device_train_batch_size=8,
                                                  save_strategy="steps", save_steps=1))
    assert any((run_dir / "checkpoints").iterdir())  # kept local, never pushed
    before = (run_dir / "README.md").read_text()
    assert ModelCard(before).data.datasets is None
    assert check_card(run_dir / "README.md", "model") == [
        f"{run_dir / 'README.md'}: YAML lacks datasets"]
    assert "adds `datasets: [NS/toy-sts]`" in before
    with LocalHub() as hub:
        result = run(hub, tmp_path / "build", "--model", str(run_dir), home=tmp_path,
                     mirror=mirror)
        assert result.returncode == 0, result.stderr
        assert f"    README.md  (datasets: [{NS}/toy-sts]; its usage snippet loads {NS}/toy-minilm)" \
            in result.stdout
        files = hub.files("model", f"{NS}/toy-minilm")
        assert ModelCard(files["README.md"].decode()).data.datasets == [f"{NS}/toy-sts"]
        assert "model.safetensors" in files and "metrics.json" in files
        assert "eval_predictions.json" not in files  # no model repo needs it: it stays here
        assert "  stays here: checkpoints/ (" in result.stdout
        assert not [f for f in files if f.startswith("checkpoints/")]
    assert (run_dir / "README.md").read_text() == before  # the run folder is not changed

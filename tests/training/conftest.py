"""Fixtures the training tests share; module scope: made once for each test file that asks (a
file's own fixture of the same name wins)."""

from __future__ import annotations

import pytest

from trainer_fixtures import model_kinds, saved_runs, split_toy_folders, tiny_encoder


def _made_in_a_folder(name: str, make, what: str):
    """The module fixture ``name``: ``make`` (a helper of tests/trainer_fixtures.py) in a new folder."""
    def fixture(tmp_path_factory):
        return make(tmp_path_factory.mktemp(name))

    fixture.__doc__ = what
    return pytest.fixture(fixture, scope="module", name=name)


encoder = _made_in_a_folder("encoder", tiny_encoder, "A tiny random BERT folder.")
folders = _made_in_a_folder("folders", split_toy_folders, "Toy pair folders of several splits.")
kinds = _made_in_a_folder("kinds", model_kinds, "A model folder of each kind.")
saved = _made_in_a_folder("saved", saved_runs, "The runs and ensembles earlier versions saved.")

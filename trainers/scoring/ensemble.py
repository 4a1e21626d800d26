"""An ensemble folder (``semrel ensemble``) as a scorer: its members scored by their own scorers
(each with its cache), their scores combined by the ensemble's own method
(:meth:`~trainers.ensemble.Ensemble.combined`: rank average, linear or learned stack)."""

from __future__ import annotations

import numpy as np

from .base import Scorer, Scores


class EnsembleScorer(Scorer):
    """The ensemble at ``path`` over its ``members`` (scorers of its member folders, in order)."""

    def __init__(self, spec, path, *, ensemble, members: list[Scorer], **options):
        super().__init__(spec, path, **options)
        self.ensemble, self.members = ensemble, members
        self.conditional = ensemble.conditional
        self.loaded = True  # nothing of its own: its members load theirs

    @property
    def facts(self) -> dict:
        return {"max_length": min(m.max_length for m in self.members), "scale": "label",
                "method": self.ensemble.method}

    def settings(self):
        return {**super().settings(), "members": [m.key for m in self.members]}

    def use_cache(self, cache) -> None:  # each member keeps its own
        if cache is not None:
            cache.close()

    def close(self) -> None:
        for member in self.members:
            member.close()

    def precompute(self, sentence1, sentence2, condition=None) -> int:
        self.check_condition(condition)
        return sum(m.precompute(sentence1, sentence2, condition) for m in self.members)

    def scored(self, sentence1, sentence2, condition=None) -> Scores:
        self.check_condition(condition)
        parts = [m.scored(sentence1, sentence2, condition) for m in self.members]
        values = self.ensemble.combined([p.values for p in parts], list(sentence1), list(sentence2))
        cut = np.logical_or.reduce([p.cut for p in parts])
        return Scores(np.asarray(values, dtype=np.float64), cut, sum(p.computed for p in parts),
                      self.max_length)

"""Batches made of whole condition groups, for the quadruplet loss."""

from __future__ import annotations

import numpy as np
from torch.utils.data import Sampler


class GroupBatchSampler(Sampler[list[int]]):
    """Shuffled batches of whole groups; the rows of a group stay adjacent and in order.

    ``groups`` is an (n_groups, group_size) array of dataset row indices (for C-STS:
    ``[high, low]``); each batch holds ``batch_size // group_size`` groups, so a batch is
    ``[g0_high, g0_low, g1_high, g1_low, ...]``. The group order of epoch ``e`` is a permutation
    drawn from ``numpy.random.default_rng([seed, e])``: the same seed and epoch give the same
    batches on every machine and after resuming. Distributed runs shard whole batches across
    processes (accelerate's ``BatchSamplerShard``), so groups are never split.
    """

    def __init__(self, groups: np.ndarray, batch_size: int, *, seed: int = 0,
                 drop_last: bool = False):
        groups = np.asarray(groups, dtype=np.int64)
        if groups.ndim != 2 or groups.shape[0] == 0:
            raise ValueError(f"groups must be a non-empty (n_groups, group_size) array, got shape "
                             f"{groups.shape}")
        group_size = groups.shape[1]
        if batch_size < group_size or batch_size % group_size:
            raise ValueError(f"batch size {batch_size} must be a positive multiple of the group "
                             f"size {group_size} (quadruplet batches hold whole (high, low) "
                             "condition groups: use an even batch size)")
        self.groups, self.batch_size, self.seed, self.drop_last = groups, batch_size, seed, drop_last
        self.groups_per_batch = batch_size // group_size
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        n = len(self.groups)
        return n // self.groups_per_batch if self.drop_last else -(-n // self.groups_per_batch)

    def __iter__(self):
        order = np.random.default_rng([self.seed, self.epoch]).permutation(len(self.groups))
        for b in range(len(self)):
            chosen = order[b * self.groups_per_batch:(b + 1) * self.groups_per_batch]
            yield self.groups[chosen].reshape(-1).tolist()

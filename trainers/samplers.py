"""Training batches made of whole row groups, optionally grouped by length to cut padding, and
the row order that hands them to the Trainer's own DataLoader."""

from __future__ import annotations

import numpy as np
from torch.utils.data import Sampler

MEGA_BATCHES = 50  # length grouping sorts within windows of this many global batches (as HF)


class GroupBatchSampler(Sampler[list[int]]):
    """Shuffled batches of whole groups; the rows of a group stay adjacent and in order.

    ``groups`` is an (n_groups, group_size) array of dataset row indices (for C-STS:
    ``[high, low]``; for pointwise objectives one row per group); each batch holds
    ``batch_size // group_size`` groups, so a quadruplet batch is
    ``[g0_high, g0_low, g1_high, g1_low, ...]``. The group order of epoch ``e`` is a permutation
    drawn from ``numpy.random.default_rng([seed, e])``: the same seed and epoch give the same
    batches on every machine and after resuming.

    With ``lengths`` (one per group: the padded width it forces), the permutation is cut into
    windows of ``min(50, n // (4 · global batch))`` global batches (``global batch = batch_size ·
    world_size``), each window is sorted by length (stable, longest first) and cut into global
    batches, whose order is then shuffled (a partial last one stays last). Batches then hold rows
    of similar length, so dynamic padding wastes little -- HF ``LengthGroupedSampler``'s scheme,
    seeded per epoch. Distributed runs shard whole per-device batches across processes
    (accelerate's ``BatchSamplerShard``), so groups are never split and ``world_size``
    consecutive batches form the global batch that one process with ``batch_size · world_size``
    would see.
    """

    def __init__(self, groups: np.ndarray, batch_size: int, *, seed: int = 0,
                 drop_last: bool = False, lengths: np.ndarray | None = None,
                 world_size: int = 1):
        groups = np.asarray(groups, dtype=np.int64)
        if groups.ndim != 2 or groups.shape[0] == 0:
            raise ValueError(f"groups must be a non-empty (n_groups, group_size) array, got shape "
                             f"{groups.shape}")
        group_size = groups.shape[1]
        if batch_size < group_size or batch_size % group_size:
            raise ValueError(f"batch size {batch_size} must be a positive multiple of the group "
                             f"size {group_size} (quadruplet batches hold whole (high, low) "
                             "condition groups: use an even batch size)")
        if lengths is not None:
            lengths = np.asarray(lengths)
            if lengths.shape != (len(groups),):
                raise ValueError(f"lengths must hold one value per group ({len(groups)}), got "
                                 f"shape {lengths.shape}")
        self.groups, self.batch_size, self.seed, self.drop_last = groups, batch_size, seed, drop_last
        self.groups_per_batch = batch_size // group_size
        self.lengths, self.world_size = lengths, max(1, world_size)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        n = len(self.groups)
        return n // self.groups_per_batch if self.drop_last else -(-n // self.groups_per_batch)

    def group_order(self) -> np.ndarray:
        """This epoch's order of the groups (see the class docstring)."""
        rng = np.random.default_rng([self.seed, self.epoch])
        order = rng.permutation(len(self.groups))
        if self.lengths is None:
            return order
        per_global = self.groups_per_batch * self.world_size
        window = per_global * max(1, min(MEGA_BATCHES, len(order) // (4 * per_global)))
        order = np.concatenate([chunk[np.argsort(-self.lengths[chunk], kind="stable")]
                                for chunk in np.split(order, range(window, len(order), window))])
        batches = np.split(order, range(per_global, len(order), per_global))
        full = [b for b in batches if len(b) == per_global]
        shuffled = [full[i] for i in rng.permutation(len(full))]
        return np.concatenate(shuffled + [b for b in batches if len(b) < per_global])

    def __iter__(self):
        order = self.group_order()
        for b in range(len(self)):
            chosen = order[b * self.groups_per_batch:(b + 1) * self.groups_per_batch]
            yield self.groups[chosen].reshape(-1).tolist()


class BatchOrderSampler(Sampler[int]):
    """The rows of ``batches``' batches, one after the other. Every batch of a
    :class:`GroupBatchSampler` but the last holds ``batch_size`` rows, so a DataLoader with that
    ``batch_size`` cuts this stream into exactly those batches (``drop_last`` drops the partial
    one): the Trainer builds the DataLoader, with all its arguments, and the batches stay ours.
    ``set_epoch`` (called by the Trainer through accelerate each epoch) reaches ``batches``."""

    def __init__(self, batches: GroupBatchSampler):
        self.batches = batches

    def set_epoch(self, epoch: int) -> None:
        self.batches.set_epoch(epoch)

    def __len__(self) -> int:
        b = self.batches
        return len(b) * b.batch_size if b.drop_last else b.groups.size

    def __iter__(self):
        for batch in self.batches:
            yield from batch

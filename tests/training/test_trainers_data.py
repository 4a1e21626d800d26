"""Labels, validation, condition groups, the group sampler, the losses and the metrics."""

from __future__ import annotations

import datasets
import numpy as np
import pytest
import torch
from scipy import stats

from semrel.dataset_scripts.errors import DataValidationError
from semrel.trainers.data import condition_groups, prepare_pairs, scale_scores, unscale, with_column
from semrel.trainers.losses import LOSSES, QuadrupletLoss, build_loss
from semrel.trainers.samplers import GroupBatchSampler
from semrel.trainers.trainer import similarity_scores
from trainer_fixtures import toy_conditional_pairs


def pairs(**columns) -> datasets.Dataset:
    return datasets.Dataset.from_dict(columns)


def test_scores_scale_from_the_declared_range_and_back():
    y = scale_scores(np.array([1.0, 3.0, 5.0]), (1.0, 5.0), where="x")
    np.testing.assert_allclose(y, [0.0, 0.5, 1.0])
    assert y.dtype == np.float32
    np.testing.assert_allclose(unscale(y, (1.0, 5.0)), [1.0, 3.0, 5.0])


@pytest.mark.parametrize("scores,row,rule", [
    ([1.0, 5.5, 2.0], 2, r"outside the declared score range \[1, 5\] \(score 5.5;"),
    ([1.0, 2.0, -1.0], 3, "outside the declared score range"),
    ([1.0, None, 2.0], 2, "score is missing"),
])
def test_bad_scores_name_the_row_and_rule(scores, row, rule):
    data = pairs(sentence1=["a", "b", "c"], sentence2=["d", "e", "f"], score=scores)
    with pytest.raises(DataValidationError, match=rule) as err:
        prepare_pairs(data, (1.0, 5.0), where="toy/train")
    assert err.value.row == row and err.value.file == "toy/train"


def test_empty_sentences_and_null_conditions_are_errors():
    data = pairs(sentence1=["a", "b"], sentence2=["c", "  "], score=[0.1, 0.2])
    with pytest.raises(DataValidationError, match="empty sentence2") as err:
        prepare_pairs(data, (0.0, 1.0), where="toy")
    assert err.value.row == 2
    data = pairs(sentence1=["a", "b"], sentence2=["c", "d"], condition=["x", None],
                 score=[0.1, 0.2])
    with pytest.raises(DataValidationError, match="condition is null"):
        prepare_pairs(data, (0.0, 1.0), where="toy")


def test_unlabelled_rows_pass_for_prediction_only():
    data = pairs(sentence1=["a"], sentence2=["b"], condition=[""], score=[None])
    rows = prepare_pairs(data, (1.0, 5.0), where="test", labelled=False)
    assert rows.column_names == ["sentence1", "sentence2", "condition"]
    with pytest.raises(DataValidationError, match="score is missing"):
        prepare_pairs(data, (1.0, 5.0), where="test")


def grouped(s1, s2, scores):
    return prepare_pairs(pairs(sentence1=s1, sentence2=s2, condition=["c"] * len(s1),
                               score=scores), (1.0, 5.0), where="toy")


def test_a_column_is_added_as_add_column_adds_it_with_a_fingerprint_of_its_values():
    base = pairs(sentence1=["a", "b"], sentence2=["c", "d"])
    ids = [[[2, 5, 3], [2, 3]], [[2, 6, 3], [2, 7, 7, 3]]]
    added = with_column(base, "input_ids", ids)
    assert added.to_dict() == base.add_column("input_ids", ids).to_dict()
    assert added.features == base.add_column("input_ids", ids).features
    again, other = with_column(base, "input_ids", ids), with_column(base, "input_ids", ids[::-1])
    assert again._fingerprint == added._fingerprint != base._fingerprint
    assert other._fingerprint != added._fingerprint  # another content, another cache key
    assert with_column(base, "labels", ids)._fingerprint != added._fingerprint


def test_condition_groups_put_high_first():
    data = grouped(["a", "b", "a", "b"], ["x", "y", "x", "y"], [1.0, 5.0, 4.0, 2.0])
    groups = condition_groups(data, where="toy")
    np.testing.assert_array_equal(groups.rows, [[2, 0], [1, 3]])


def test_condition_group_of_three_is_an_error():
    data = grouped(["a", "a", "a", "b", "b"], ["x"] * 3 + ["y"] * 2, [1.0, 5.0, 3.0, 1.0, 2.0])
    with pytest.raises(DataValidationError, match="exactly 2 rows") as err:
        condition_groups(data, where="toy")
    assert err.value.row == 1 and "rows [1, 2, 3]" in str(err.value)


def test_tied_groups_are_an_error_unless_omitted_and_counted():
    data = grouped(["a", "a", "b", "b"], ["x", "x", "y", "y"], [3.0, 3.0, 1.0, 2.0])
    with pytest.raises(DataValidationError, match="need different scores") as err:
        condition_groups(data, where="toy")
    assert err.value.row == 1
    groups = condition_groups(data, where="toy", on_invalid="omit")
    assert groups.n_omitted == 1
    np.testing.assert_array_equal(groups.rows, [[3, 2]])


def test_group_sampler_keeps_groups_whole_and_is_seeded():
    data = prepare_pairs(toy_conditional_pairs(), (1.0, 5.0), where="toy")
    groups = condition_groups(data, where="toy").rows
    sampler = GroupBatchSampler(groups, batch_size=6, seed=3)
    batches = list(sampler)
    assert len(batches) == len(sampler) == -(-len(groups) // 3)
    high_low = {tuple(g) for g in groups.tolist()}
    for batch in batches:
        assert len(batch) % 2 == 0
        assert all((batch[i], batch[i + 1]) in high_low for i in range(0, len(batch), 2))
    assert sorted(i for b in batches for i in b) == sorted(groups.reshape(-1).tolist())
    assert batches == list(GroupBatchSampler(groups, batch_size=6, seed=3))
    sampler.set_epoch(1)
    assert list(sampler) != batches
    assert list(GroupBatchSampler(groups, batch_size=6, seed=4)) != batches


def test_length_grouping_cuts_padding_and_keeps_every_row_once():
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 120, size=1000)
    rows = np.arange(1000)[:, None]
    grouped = list(GroupBatchSampler(rows, 16, seed=1, lengths=lengths))
    plain = list(GroupBatchSampler(rows, 16, seed=1))
    assert sorted(i for b in grouped for i in b) == list(range(1000))
    assert [len(b) for b in grouped] == [16] * 62 + [8]  # the partial batch stays last
    padded = lambda batches: sum(len(b) * lengths[b].max() for b in batches)  # noqa: E731
    real = lengths.sum()
    assert padded(plain) > 1.5 * real and padded(grouped) < 1.15 * real
    sampler = GroupBatchSampler(rows, 16, seed=1, lengths=lengths)
    assert list(sampler) == grouped
    sampler.set_epoch(1)
    assert list(sampler) != grouped
    with pytest.raises(ValueError, match="one value per group"):
        GroupBatchSampler(rows, 16, lengths=lengths[:10])


def test_length_grouped_shards_form_the_single_process_batches():
    """Two processes with batch 4 (consecutive batches go to rank 0, 1) see the same global
    batches as one process with batch 8 -- so a torchrun run matches a single-process one."""
    lengths = np.random.default_rng(2).integers(1, 50, size=203)
    groups = np.arange(406).reshape(-1, 2)
    one = list(GroupBatchSampler(groups, 8, seed=5, lengths=lengths))
    two = list(GroupBatchSampler(groups, 4, seed=5, lengths=lengths, world_size=2))
    assert [sorted(two[i] + (two[i + 1] if i + 1 < len(two) else [])) for i in
            range(0, len(two), 2)] == [sorted(b) for b in one]


def test_group_sampler_refuses_odd_batches():
    with pytest.raises(ValueError, match="even batch size"):
        GroupBatchSampler(np.array([[0, 1], [2, 3]]), batch_size=5)


def test_quadruplet_loss_matches_its_formula():
    rng = np.random.default_rng(0)
    h1, h2, l1, l2 = (rng.normal(size=(5, 4)) for _ in range(4))
    cos = lambda a, b: (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)  # noqa: E731
    expected = np.maximum(0, 1.0 + (1 - cos(h1, h2)) - (1 - cos(l1, l2))).mean()
    got = QuadrupletLoss(margin=1.0).quadruplet(*(torch.tensor(a) for a in (h1, h2, l1, l2)))
    assert float(got) == pytest.approx(expected, rel=1e-6)


def test_objectives_combine_on_interleaved_groups():
    e1 = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    e2 = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    scores, labels = torch.tensor([1.0, -1.0, 1.0, 0.0]), torch.tensor([1.0, 0.0, 1.0, 0.0])
    quad = float(build_loss("quad")(scores, labels, e1, e2))
    assert quad == pytest.approx(np.mean([max(0, 1 + 0 - 2), max(0, 1 + 0 - 1)]))
    mse = float(build_loss("mse")(scores, labels))
    assert mse == pytest.approx(0.25)
    assert float(build_loss("quad+mse")(scores, labels, e1, e2)) == pytest.approx(quad + mse)
    with pytest.raises(ValueError, match="even number of rows"):
        build_loss("quad")(scores[:3], labels[:3], e1[:3], e2[:3])


def test_similarity_scores_agree_with_scipy():
    rng = np.random.default_rng(1)
    p, y = rng.random(50), rng.random(50)
    s = similarity_scores(p, y)
    assert s.spearman == pytest.approx(stats.spearmanr(p, y).statistic)
    assert s.pearson == pytest.approx(stats.pearsonr(p, y).statistic)
    assert s.mse == pytest.approx(np.mean((p - y) ** 2))


def test_cosent_matches_its_formula():
    rng = np.random.default_rng(2)
    s, y = rng.normal(size=7), rng.integers(0, 3, size=7).astype(float)  # ties are no pair
    terms = [20 * (s[j] - s[i]) for i in range(7) for j in range(7) if y[i] > y[j]]
    expected = np.log1p(np.exp(terms).sum())
    got = build_loss("cosent")(torch.tensor(s), torch.tensor(y))
    assert float(got) == pytest.approx(expected, rel=1e-6)


def test_losses_are_modules_declaring_what_they_need():
    assert set(LOSSES) == {"mse", "quad", "quad+mse", "cosent"}
    for name, cls in LOSSES.items():
        loss = build_loss(name)
        assert isinstance(loss, torch.nn.Module) and loss.name == name
        for needle in ("Reference", ">>>"):  # formula, shapes, reference, example
            assert needle in (cls.__doc__ or "") or name == "quad+mse", (name, needle)
    assert [n for n, c in LOSSES.items() if c.needs_embeddings] == ["quad", "quad+mse"]
    assert [n for n, c in LOSSES.items() if c.grouped] == ["quad", "quad+mse"]
    with pytest.raises(ValueError, match=r"objective='quadd': must be one of"):
        build_loss("quadd")


def test_string_scores_are_not_coerced():
    data = pairs(sentence1=["a", "b"], sentence2=["x", "y"], score=["1.5", "2"])
    with pytest.raises(DataValidationError, match=r"row 1: score must be a number.*'1\.5'"):
        prepare_pairs(data, (0.0, 5.0), where="toy")

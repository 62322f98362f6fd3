"""Partial tiles inside a batch (`pypto.sim.batch.masks`): the last tiles of a
`valid_shape` / `clamp` loop run in the same batch as the whole ones, with each block's
valid extents beside the data, and give what block-by-block execution gives in every
element. (`test_speed_equivalence.py` runs every kernel here both ways, traced too.)"""
from __future__ import annotations

import batch_kernels as K
import numpy as np
import pytest

from pypto.sim import SimConfig
from pypto.sim.batch.masks import Masked
from pypto.sim.batch.rules.reduce import reduced as reduce
from pypto.sim.batch.rules.ufunc import elementwise


def _both(kernel, *args):
    mine = [a.copy() for a in args]
    ref = [a.copy() for a in args]
    r = kernel(*mine)
    kernel(*ref, config=SimConfig(batch=False))
    for a, b in zip(mine, ref):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    return r, mine


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_a_tail_tile_runs_in_the_batch():
    x = _x((100, 64))
    r, (_, y) = _both(K.tail_rows, x, np.zeros((100, 64), np.float32))
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    assert np.array_equal(y[96:], x[96:] - x[96:].max(axis=1, keepdims=True))


def test_a_column_sum_adds_only_the_valid_rows_of_a_tail():
    x = _x((100, 64), 1)
    r, (_, y) = _both(K.tail_col_sums, x, np.zeros((7, 64), np.float32))
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    # the pad (+inf, PadValue.max) of the last tile's 12 invalid rows stays out
    assert np.isfinite(y).all()
    assert np.allclose(y[6], (x[96:100] + np.float32(1)).sum(axis=0), rtol=1e-6)
    assert np.allclose(y[0], (x[0:16] + np.float32(1)).sum(axis=0), rtol=1e-6)


def test_the_partial_last_column_of_tiles_runs_as_a_second_batch():
    x = _x((64, 100), 2)
    r, (_, y) = _both(K.partial_first_tiles, x, np.zeros((64, 100), np.float32))
    # the three whole columns of tiles batched without masks, the four partial tiles
    # of the last column together, with them
    assert r.batch_stats == {"batched": 2, "fallback": 0}
    t = x[:, 96:100]
    assert np.allclose(y[:, 96:100], t - t.sum(axis=1, keepdims=True), rtol=1e-6)


def test_the_first_tagged_operand_decides_the_tag():
    r, _ = _both(K.tail_expand_first, _x((100, 64), 3), _x((16, 1), 4),
                 np.zeros((100, 64), np.float32))
    assert r.batch_stats == {"batched": 1, "fallback": 0}


def test_a_partial_tile_into_an_op_without_a_mask_rule_splits_the_batch():
    x, w = _x((100, 64), 5), _x((64, 32), 6)
    r, (_, _, y) = _both(K.tail_into_matmul, x, w, np.zeros((112, 32), np.float32))
    assert r.batch_stats == {"batched": 1, "fallback": 0}  # (the first six tiles)
    assert np.allclose(y[:100], x @ w, rtol=1e-4, atol=1e-4)
    assert np.array_equal(y[100:], np.zeros((12, 32), np.float32))  # the pad's rows


def test_a_valid_part_past_the_tensor_is_reported_by_block():
    with pytest.raises(Exception) as ei:
        K.tail_overrun(_x((100, 64)), np.zeros((112, 64), np.float32))
    msg = str(ei.value)
    assert "window [96:104, 0:64] of 'x'" in msg and "region 'overrun'" in msg


def test_tags_follow_the_first_tagged_operand():
    data = np.zeros((3, 4, 2), np.float32)
    vec = np.zeros((3, 4, 1), np.float32)
    tile = Masked(data, {(2,): (1, 2)})
    col = Masked(vec, {(1,): (3, 1)})
    # the vector first: block 1 takes its tag, without a valid shape (its shape differs);
    # block 2 the tile's
    r = elementwise([col, tile], 2, data + vec, 2)
    assert r.tags == {(1,): None, (2,): (1, 2)}
    r = elementwise([tile, col], 2, data + vec, 2)
    assert r.tags == {(1,): None, (2,): (1, 2)}
    plain = elementwise([data, vec], 2, data + vec, 2)  # no tagged operand: a plain array
    assert type(plain) is np.ndarray and plain.shape == (3, 4, 2)


def test_a_row_reduction_of_a_partial_tile_reduces_its_valid_columns():
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = Masked(data, {(1,): (2, 3)})
    r = reduce(lambda d: np.add.reduce(d, axis=-1, keepdims=True), x, -1, 2)
    assert isinstance(r, Masked) and r.tags == {(1,): (2, 1)}
    assert r.data[0, :, 0].tolist() == data[0].sum(axis=1).tolist()
    assert r.data[1, :, 0].tolist() == data[1, :, :3].sum(axis=1).tolist()

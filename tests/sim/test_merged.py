"""Both branches of a condition that differs per block writing the same window run as
one write (`pypto.sim.batch.merged`): the values, that no masked write is made then, and
the kernels that must keep the two masked writes."""
from __future__ import annotations

import warnings

import branch_kernels as K
import numpy as np
import pytest

import pypto.sim.batch.merged as merged
import pypto.sim.batch.rules.window_write as window_write
from pypto.sim import SimConfig

warnings.filterwarnings("ignore")
# the unwritten rows keep fresh memory's residue, as the harness starts a pl.Out
FRESH = SimConfig(out_start="fresh")
BLOCK_BY_BLOCK = SimConfig(batch=False, out_start="fresh")


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.fixture
def masked(monkeypatch) -> list:
    """The masked writes made (each branch its blocks': the predicated path)."""
    calls: list = []

    def counting(fn):
        def wrapped(*a, **k):
            calls.append(1)
            return fn(*a, **k)
        return wrapped

    monkeypatch.setattr(window_write, "masked_write", counting(window_write.masked_write))
    monkeypatch.setattr(merged, "masked_write", counting(merged.masked_write))
    return calls


def _table() -> np.ndarray:
    return np.random.default_rng(6).standard_normal((256, 128)).astype(np.float32)


@pytest.mark.parametrize("padding", [0.2, 0.8])
def test_gathered_rows_and_per_block_values_one_write(masked, padding):
    """Mostly rows (the gather writes first) and mostly padding (the other branch's
    values first, the rows through the boolean index): the same values."""
    rng = np.random.default_rng(3)
    ids = rng.integers(2, 250, 64).astype(np.int32)
    ids[rng.random(64) < padding] = 1  # row -1
    ids[5], ids[6] = 0, 257  # row -2 (padding) and the last row
    table = _table()
    x = rng.standard_normal((64, 128)).astype(np.float32)
    y = np.empty((64, 128), np.float32)
    r = K.merged_gather(ids, table, x, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    assert masked == []
    rows = ids.astype(np.int64) - 2
    want = np.where((rows >= 0)[:, None], table[np.clip(rows, 0, 255)], x * np.float32(3.0))
    assert _same(y, want.astype(np.float32))
    y2 = np.empty_like(y)
    K.merged_gather(ids, table, x, y2, config=BLOCK_BY_BLOCK)
    assert _same(y, y2)


@pytest.mark.parametrize("lens", [[0, 4, 5, 6, 7, 3, 9, 1], [1, 1, 1, 9, 1, 1, 1, 1]])
def test_computed_tiles_one_write(masked, lens):
    x = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32)
    lens = np.array(lens, np.int32)
    y = np.zeros((64, 64), np.float32)
    r = K.merged_tiles(x, lens, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    assert masked == []
    e = np.exp(x)
    take = np.repeat(lens > 3, 8)[:, None]
    want = np.where(take, e * e.sum(axis=1, keepdims=True, dtype=np.float32),
                    np.float32(-1.0))
    y2 = np.zeros_like(y)
    K.merged_tiles(x, lens, y2, config=BLOCK_BY_BLOCK)
    assert _same(y, y2)
    assert np.allclose(y, want, rtol=1e-6)


def test_padding_rows_of_a_product_one_write(masked):
    ids = np.random.default_rng(5).integers(0, 200, 64).astype(np.int32)
    ids[::3] = 1
    table = _table()
    y = np.empty((64, 128), np.float32)
    K.guarded_rows(ids, table, y)
    assert masked == []
    rows = ids.astype(np.int64) - 2
    want = np.where((rows >= 0)[:, None], table[np.maximum(rows, 0)] * np.float32(2.0),
                    np.float32(0.0))
    assert _same(y, want.astype(np.float32))


def test_a_branch_reading_the_written_window_keeps_two_writes(masked):
    x = np.random.default_rng(7).standard_normal((64, 64)).astype(np.float32)
    lens = np.array([0, 4, 5, 1, 7, 3, 9, 1], np.int32)
    y0 = np.random.default_rng(8).standard_normal((64, 64)).astype(np.float32)
    y = y0.copy()
    r = K.merged_reads_target(x, lens, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    assert len(masked) == 2
    take = np.repeat(lens > 3, 8)[:, None]
    assert _same(y, np.where(take, x * np.float32(2.0), y0 + np.float32(1.0)))


def test_branches_writing_other_tensors_keep_two_writes(masked):
    x = np.random.default_rng(9).standard_normal((64, 64)).astype(np.float32)
    lens = np.array([0, 4, 5, 1, 7, 3, 9, 1], np.int32)
    y, z = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    r = K.merged_two_targets(x, lens, y, z)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    assert len(masked) == 2
    take = np.repeat(lens > 3, 8)
    assert _same(y[take], x[take] * np.float32(2.0))
    assert _same(z[~take], x[~take] + np.float32(1.0))


def test_under_an_outer_condition_each_branch_writes_its_blocks(masked):
    """`guarded_nested`'s inner `if` may merge, but the outer mask leaves blocks that
    must not be written: two masked writes."""
    ids = np.random.default_rng(11).integers(0, 200, 64).astype(np.int32)
    ids[::3] = 1
    table = _table()
    y = np.zeros((64, 128), np.float32)
    r = K.guarded_nested(ids, table, y, config=FRESH)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    assert len(masked) == 2
    assert np.isnan(y[48:]).all()  # (never written)
    rows = ids.astype(np.int64)[:48] - 2
    assert _same(y[:48], np.where((rows >= 0)[:, None], table[np.maximum(rows, 0)],
                                  np.float32(0.0)).astype(np.float32))

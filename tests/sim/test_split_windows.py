"""Block indices split by a constant (`blk // c`, `blk % c`), offsets of integers of
unknown range, windows of varying values and branches a batch cannot run: which batch,
their values, and why the others do not (`pypto.sim.batch.lattice`, `own`,
`predicate.uniform_if`)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import split_kernels as K

from pypto.sim import SimConfig
from pypto.sim.batch.lattice import lattice_disjoint

warnings.filterwarnings("ignore")


def _rand(*shape: int, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _both(kernel, args: list, trace: bool) -> tuple:
    """(batched result, its arrays, block-by-block arrays)."""
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    r = kernel(*a1, config=SimConfig(trace=trace, batch=True))
    kernel(*a2, config=SimConfig(trace=trace, batch=False))
    return r, a1, a2


# --- the lattice test ---------------------------------------------------------------------


def test_unbounded_terms_must_clear_the_bounded_span():
    # 8 blocks one row apart, groups of unknown count 8 rows apart: disjoint
    assert lattice_disjoint([(8, None)], 1, [(1, 8)])
    # ... 4 rows apart: token 4 of group g meets token 0 of group g + 1
    assert not lattice_disjoint([(4, None)], 1, [(1, 8)])
    # a bounded loop stepping by the group's multiple moves with the groups
    assert lattice_disjoint([(4096, None), (4096, 2)], 8, [(8, 128)])
    # the separated index itself may not be a multiple of the unknown's step
    assert not lattice_disjoint([(8, None)], 1, [(16, 2)])
    # no unknowns: the plain mixed radix
    assert lattice_disjoint([(64, 4)], 16, [(16, 4)])
    assert not lattice_disjoint([(32, 4)], 16, [(16, 4)])


# --- the block index split into quotient and remainder ------------------------------------


@pytest.mark.parametrize("trace", [True, False])
def test_split_rows_batch_with_the_values_of_block_by_block(trace):
    x, y = _rand(128, 64), _rand(128, 64, seed=4)
    r, (_, yb), (_, yk) = _both(K.split_rows, [x, y], trace)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    want = y.copy()
    for tb in range(K.TOKENS):
        rows = slice(tb * K.PAD + K.ROWS, (tb + 1) * K.PAD)  # (the first window skipped)
        want[rows] = x[rows] + np.float32(1.0)
    assert _same(yb, want) and _same(yk, want)


@pytest.mark.parametrize("trace", [True, False])
def test_split_by_modulo_and_a_loop_batch(trace):
    x, y = _rand(128, 64), _rand(128, 64, seed=4)
    r, (_, yb), (_, yk) = _both(K.split_rows_mod, [x, y], trace)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    want = y.copy()
    for tb in range(K.TOKENS):
        rows = slice(tb * K.PAD + K.ROWS, (tb + 1) * K.PAD)
        want[rows] = x[rows] * np.float32(3.0)
    assert _same(yb, want) and _same(yk, want)


def test_split_windows_that_meet_refuse():
    x, y = _rand(128, 64), _rand(128, 64, seed=4)
    r, (_, yb), (_, yk) = _both(K.split_rows_overlap, [x, y], True)
    assert r.batch_stats["batched"] == 0
    assert "may overlap" in next(iter(r.batch_refusals.values()))
    # block by block the later block wins: row 4 is block 1's (tb 0, sb 1), then block
    # 3's (tb 1, sb 0)
    assert _same(yb, yk)
    assert np.array_equal(yb[4:8], x[12:16] + np.float32(1.0))


# --- offsets of integers of unknown range -------------------------------------------------


@pytest.mark.parametrize("trace", [True, False])
def test_groups_of_unknown_count_batch(trace):
    x, y = _rand(8, 64), _rand(48, 16, seed=4)
    r, (_, _, yb), (_, _, yk) = _both(K.grouped_rows, [x, 5, y], trace)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    want = y.copy()
    for t in range(8):
        for h in range(8):
            want[(h // 2) * 8 + t + 5, (h % 2) * 8:(h % 2) * 8 + 8] = x[t, h * 8:h * 8 + 8]
    assert _same(yb, want) and _same(yk, want)


def test_groups_too_close_refuse():
    x, y = _rand(8, 64), _rand(48, 16, seed=4)
    r, (_, yb), (_, yk) = _both(K.grouped_rows_overlap, [x, y], True)
    assert r.batch_stats["batched"] == 0
    assert "may overlap" in next(iter(r.batch_refusals.values()))
    assert _same(yb, yk)


# --- windows of varying values ------------------------------------------------------------


@pytest.mark.parametrize("trace", [True, False])
def test_window_of_an_op_result(trace):
    x, d = _rand(64, 64), np.abs(_rand(64, 1, seed=5)) + np.float32(1.0)
    r, (_, _, yb), (_, _, yk) = _both(K.window_of_result, [x, d, np.zeros((64, 32),
                                                                          np.float32)], trace)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    assert _same(yb, yk)
    assert _same(yb, np.exp((x / d)[:, 16:48]))


@pytest.mark.parametrize("trace", [True, False])
def test_windows_of_a_tile(trace):
    x = _rand(64, 64)
    r, (_, yb), (_, yk) = _both(K.window_of_tile, [x, np.zeros((64, 64), np.float32)], trace)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    e = x * np.float32(2.0)
    assert _same(yb, np.concatenate([e[:, :32] + e[:, 32:], e[:, :32] - e[:, 32:]], axis=1))
    assert _same(yb, yk)


def test_a_write_into_a_tile_window_refuses():
    x = _rand(64, 64)
    r, (_, yb), (_, yk) = _both(K.write_into_tile_window, [x, np.zeros((64, 64), np.float32)],
                                True)
    assert r.batch_stats["batched"] == 0
    assert list(r.batch_refusals.values()) == ["an in-place write into a window of a tile"]
    want = x * np.float32(2.0)
    want[::8] = 7.0  # (the write reached the tile through its window)
    assert _same(yb, want) and _same(yk, want)


# --- a uniform condition with a branch the batch cannot run -------------------------------


@pytest.mark.parametrize("trace", [True, False])
def test_the_branch_not_taken_batches_the_taken_one_gives_up(trace):
    x = _rand(64, 64)
    r, (_, _, yb), (_, _, yk) = _both(K.tail_branch, [x, 16, np.zeros((64, 64), np.float32)],
                                      trace)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    want = x.copy()
    want[:, :16] *= np.float32(2.0)
    assert _same(yb, want) and _same(yk, want)
    r, (_, _, yb), (_, _, yk) = _both(K.tail_branch, [x, 8, np.zeros((64, 64), np.float32)],
                                      trace)
    assert r.batch_stats == {"batched": 0, "fallback": 1}
    want[::16, 0] = 7.0
    assert _same(yb, want) and _same(yk, want)

"""Conditions that differ per block run batched, predicated (`pypto.sim.batch.predicate`):
the values, that they batch, and what still refuses or faults by block."""
from __future__ import annotations

import inspect
import warnings

import branch_kernels as K
import numpy as np
import pytest

from pypto.errors import SimulationError
from pypto.sim import SimConfig

warnings.filterwarnings("ignore")
# the unwritten rows keep fresh memory's residue, as the harness starts a pl.Out
FRESH = SimConfig(out_start="fresh")
BLOCK_BY_BLOCK = SimConfig(batch=False, out_start="fresh")


def _ids(seed: int = 5) -> np.ndarray:
    ids = np.random.default_rng(seed).integers(0, 200, 64).astype(np.int32)
    ids[::3] = 1  # padding (row -1)
    ids[1::7] = 0  # padding (row -2)
    return ids


def _table() -> np.ndarray:
    return np.random.default_rng(6).standard_normal((256, 128)).astype(np.float32)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _both_ways(kernel, args: tuple, out_shape: tuple, trace: bool) -> list:
    """The kernel run batched, then block by block (traced or not), each into a fresh
    zeroed fp32 output: [(result, output)] in that order."""
    runs = []
    for batch in (True, False):
        y = np.zeros(out_shape, np.float32)
        r = kernel(*args, y, config=SimConfig(trace=trace, batch=batch))
        runs.append((r, y))
    return runs


def test_padding_rows_batch_and_read_nothing_invalid():
    ids, table = _ids(), _table()
    y = np.empty((64, 128), np.float32)
    r = K.guarded_rows(ids, table, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    rows = ids.astype(np.int64) - 2
    want = np.where((rows >= 0)[:, None], table[np.maximum(rows, 0)] * np.float32(2.0),
                    np.float32(0.0))
    assert _same(y, want.astype(np.float32))
    y2 = np.empty_like(y)
    K.guarded_rows(ids, table, y2, config=BLOCK_BY_BLOCK)
    assert _same(y, y2)


def test_rows_no_branch_writes_keep_the_fresh_buffers_residue():
    ids, table = _ids(7), _table()
    y = np.zeros((64, 128), np.float32)
    r = K.guarded_keep(ids, table, y, config=FRESH)
    assert r.batch_stats["batched"] == 1, dict(r.batch_refusals)
    rows = ids.astype(np.int64) - 2
    taken = rows >= 0
    assert np.array_equal(y[taken], table[rows[taken]])
    assert np.isnan(y[~taken]).all()  # (never written: the residue of a fresh pl.Out)
    y2 = np.zeros_like(y)
    K.guarded_keep(ids, table, y2, config=BLOCK_BY_BLOCK)
    assert _same(y, y2)


def test_whole_tiles_only_the_other_blocks_window_leaves_the_tensor():
    x = np.random.default_rng(8).standard_normal((100, 64)).astype(np.float32)
    y = np.zeros((128, 64), np.float32)
    r = K.guarded_tail(x, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    assert np.array_equal(y[:96], np.exp(x[:96]))
    assert (y[96:] == -1.0).all()


@pytest.mark.parametrize("lens", [[0, 4, 5, 6, 7, 3, 9, 1], [5] * 8, [1] * 8])
def test_branches_yield_a_tile_each_block_takes_its_own(lens):
    """Mixed conditions, all blocks one way, all the other: the same values."""
    x = np.random.default_rng(9).standard_normal((64, 64)).astype(np.float32)
    lens = np.array(lens, np.int32)
    y = np.zeros((64, 64), np.float32)
    r = K.guarded_choice(x, lens, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    take = np.repeat((lens > 3) & (lens != 6), 8)[:, None]
    want = np.exp(np.where(take, x * np.float32(2.0), x + np.float32(1.0)))
    assert _same(y, want.astype(np.float32))


def test_a_condition_under_a_condition_ands_the_masks():
    ids, table = _ids(11), _table()
    y = np.zeros((64, 128), np.float32)
    r = K.guarded_nested(ids, table, y, config=FRESH)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    rows = ids.astype(np.int64) - 2
    first = np.arange(64) < 48
    assert np.array_equal(y[first & (rows >= 0)], table[rows[first & (rows >= 0)]])
    assert (y[first & (rows < 0)] == 0.0).all()
    assert np.isnan(y[~first]).all()  # (never written)
    y2 = np.zeros_like(y)
    K.guarded_nested(ids, table, y2, config=BLOCK_BY_BLOCK)
    assert _same(y, y2)


@pytest.mark.parametrize("trace", [False, True])
def test_a_counted_loop_under_a_condition_runs_predicated(trace):
    """Its bounds are the same in every block: the loop runs for all blocks under the
    mask (the same values, trace and loop work as block by block)."""
    from test_speed_equivalence import canonical_trace
    x = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    for lens, batched in ((np.full(8, 5, np.int32), 1), (np.arange(8, dtype=np.int32), 1)):
        (r1, y1), (r0, y0) = _both_ways(K.guarded_loop, (x, lens), (64, 64), trace)
        assert r1.batch_stats == {"batched": batched, "fallback": 1 - batched}
        assert _same(y0, y1)
        if trace:
            assert canonical_trace(r0.trace) == canonical_trace(r1.trace)


@pytest.mark.parametrize("n", [8, 3, 0])
def test_a_bound_check_that_needs_agreement_with_a_predicated_condition_inside(n):
    x = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32)
    lens = np.array([0, 4, 5, 2, 7, 3, 1, 1], np.int32)
    y = np.zeros((64, 64), np.float32)
    r = K.agreed_guard(x, lens, n, y, config=FRESH)
    assert r.batch_stats == {"batched": int(n in (8, 0)), "fallback": int(n == 3)}
    y2 = np.zeros_like(y)
    K.agreed_guard(x, lens, n, y2, config=BLOCK_BY_BLOCK)
    assert _same(y, y2)


@pytest.mark.parametrize("lens,batched", [([5] * 8, 1), ([2] * 8, 1), ([0] * 8, 1),
                                           (list(range(8)), 0)])
def test_a_condition_over_a_condition_that_needs_agreement(lens, batched):
    """A branch that cannot run predicated under a condition under another: the outer
    `if` cannot run predicated either: both run when every block agrees on each."""
    x = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    lens = np.array(lens, np.int32)
    y = np.zeros((64, 64), np.float32)
    r = K.agreed_under_mask(x, lens, y, config=FRESH)
    assert r.batch_stats == {"batched": batched, "fallback": 1 - batched}
    y2 = np.zeros_like(y)
    K.agreed_under_mask(x, lens, y2, config=BLOCK_BY_BLOCK)
    assert _same(y, y2)


def _traced(kernel, *args, batch: bool):
    outs = [a.copy() for a in args]
    r = kernel(*outs, config=SimConfig(trace=True, batch=batch))
    return r, outs


@pytest.mark.parametrize("name", ["guarded_rows", "guarded_keep", "guarded_nested"])
def test_traced_runs_predicate_and_record_each_blocks_branch(name):
    """A traced batch records, per block, only the branch the block took: the trace
    (accesses, costs, sites, last writers) is the one block by block records."""
    from test_speed_equivalence import canonical_trace
    ids, table = _ids(), _table()
    y = np.zeros((64, 128), np.float32)
    kernel = getattr(K, name)
    r1, out1 = _traced(kernel, ids, table, y, batch=True)
    r0, out0 = _traced(kernel, ids, table, y, batch=False)
    assert r1.batch_stats == {"batched": 1, "fallback": 0}, dict(r1.batch_refusals)
    assert all(_same(a, b) for a, b in zip(out0, out1))
    assert canonical_trace(r0.trace) == canonical_trace(r1.trace)
    if name == "guarded_rows":  # (one row per task: a padding row's reads no table row)
        padding = [t for t in r1.trace.tasks
                   if not any(a.tensor == "table" for a in t.accesses)]
        assert len(padding) == int(((ids.astype(np.int64) - 2) < 0).sum())


def test_traced_branch_costs_are_per_block():
    """Blocks of one batch taking different branches get each branch's cycles."""
    x = np.random.default_rng(9).standard_normal((64, 64)).astype(np.float32)
    lens = np.array([0, 4, 5, 6, 7, 3, 9, 1], np.int32)
    y = np.zeros((64, 64), np.float32)
    r1, _ = _traced(K.guarded_choice, x, lens, y, batch=True)
    r0, _ = _traced(K.guarded_choice, x, lens, y, batch=False)
    assert r1.batch_stats["batched"] == 1
    assert [t.cycles for t in r0.trace.tasks] == [t.cycles for t in r1.trace.tasks]
    assert [t.block_cycles for t in r0.trace.tasks] == [t.block_cycles for t in r1.trace.tasks]
    assert [t.op_counts for t in r0.trace.tasks] == [t.op_counts for t in r1.trace.tasks]
    assert r0.trace.sites == r1.trace.sites


def test_a_taken_blocks_invalid_row_is_reported_by_block():
    ids, table = _ids(), _table()
    ids[10] = 300  # row 298 of a 256-row table, in a block that takes the branch
    with pytest.raises(SimulationError) as ei:
        K.guarded_rows(ids, table, np.zeros((64, 128), np.float32))
    msg = str(ei.value)
    assert "out-of-bounds slice: window [298:299, 0:128] of 'table'" in msg
    assert "region 'guarded'" in msg and "block" in msg
    line = next(i for i, t in enumerate(inspect.getsource(K).splitlines(), 1)
                if "pl.mul(table[r:r + 1, :], 2.0)" in t)
    assert ei.value.span.line == line


@pytest.mark.parametrize("trace", [False, True])
def test_rows_staged_into_a_tile_under_a_condition(trace):
    """The gather of pypto-lib's sparse attention: `if raw >= 0: stage[k] = kv[raw]`
    in a loop; the tile write runs masked, batched, the values and trace block by
    block's."""
    from test_speed_equivalence import canonical_trace
    ids = np.random.default_rng(12).integers(0, 256, (64, 8)).astype(np.int32)
    ids[np.random.default_rng(13).random((64, 8)) < 0.3] = 1  # padding
    table = _table()
    (r1, y1), (r0, y0) = _both_ways(K.guarded_stage, (ids, table), (512, 128), trace)
    assert r1.batch_stats == {"batched": 1, "fallback": 0}, dict(r1.batch_refusals)
    want = np.where((ids >= 2)[..., None], table[ids], np.float32(0.0)).reshape(512, 128)
    assert _same(y1, want.astype(np.float32)) and _same(y0, y1)
    if trace:
        assert canonical_trace(r0.trace) == canonical_trace(r1.trace)


@pytest.mark.parametrize("trace", [False, True])
def test_a_uniform_value_written_into_a_tile_under_a_condition(trace):
    """The tile becomes each block's own, the blocks of the mask write theirs."""
    from test_speed_equivalence import canonical_trace
    for ids in (np.full((64, 8), 5, np.int32),
                np.random.default_rng(1).integers(0, 4, (64, 8)).astype(np.int32)):
        (r1, y1), (r0, y0) = _both_ways(K.guarded_stage_uniform, (ids,), (512, 128), trace)
        assert r1.batch_stats == {"batched": 1, "fallback": 0}, dict(r1.batch_refusals)
        assert _same(y0, y1)
        if trace:
            assert canonical_trace(r0.trace) == canonical_trace(r1.trace)


@pytest.mark.parametrize("trace", [False, True])
def test_an_imperative_write_of_a_tiles_window_under_a_condition(trace):
    from test_speed_equivalence import canonical_trace
    x = np.random.default_rng(14).standard_normal((64, 64)).astype(np.float32)
    lens = np.array([0, 4, 5, 2, 7, 3, 1, 9], np.int32)
    (r1, y1), (r0, y0) = _both_ways(K.guarded_assemble, (x, lens), (64, 64), trace)
    assert r1.batch_stats == {"batched": 1, "fallback": 0}, dict(r1.batch_refusals)
    assert _same(y0, y1)
    rows = np.repeat(lens > 3, 8) & (np.arange(64) % 8 < 4)
    assert _same(y1[rows], np.exp(x[rows]))
    if trace:
        assert canonical_trace(r0.trace) == canonical_trace(r1.trace)


@pytest.mark.parametrize("trace", [False, True])
def test_a_flag_of_each_blocks_own_tile_decides(trace):
    from test_speed_equivalence import canonical_trace
    x = np.random.default_rng(15).standard_normal((64, 64)).astype(np.float32)
    mask = np.random.default_rng(16).integers(0, 8, (8, 4)).astype(np.int32)
    (r1, y1), (r0, y0) = _both_ways(K.tile_flags, (x, mask), (64, 64), trace)
    assert r1.batch_stats == {"batched": 1, "fallback": 0}, dict(r1.batch_refusals)
    assert _same(y0, y1)
    if trace:
        assert canonical_trace(r0.trace) == canonical_trace(r1.trace)


@pytest.mark.parametrize("trace", [False, True])
def test_both_branches_write_rows_of_one_tile(trace):
    from test_speed_equivalence import canonical_trace
    ids = np.random.default_rng(17).integers(0, 256, (64, 8)).astype(np.int32)
    ids[np.random.default_rng(18).random((64, 8)) < 0.2] = 0  # padding
    table = _table()
    (r1, y1), (r0, y0) = _both_ways(K.guarded_stage_two, (ids, table), (512, 128), trace)
    assert r1.batch_stats == {"batched": 1, "fallback": 0}, dict(r1.batch_refusals)
    assert _same(y0, y1)
    if trace:
        assert canonical_trace(r0.trace) == canonical_trace(r1.trace)

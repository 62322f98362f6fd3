"""Which launches run batched, and why the others do not (`batch_refusals`).

The equivalence of batched and block-by-block runs is `test_speed_equivalence.py`'s;
these tests pin down the decisions: a batch that could be wrong must be refused (with a
reason), and the shapes issue 17 asks for must batch.
"""
from __future__ import annotations

import inspect

import batch_kernels as K
import numpy as np
import pytest

from pypto.errors import SimulationError
from pypto.sim import SimConfig
from pypto.sim.trace.access import RowAccess


def _args(kernel, seed=0):
    params = kernel.compile().program.entry_function.params
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(p.var.type.static_shape()).astype(p.var.type.dtype.np)
            for p in params]


def _run(kernel, batch=True, trace=False):
    args = _args(kernel)
    r = kernel(*args, config=SimConfig(batch=batch, trace=trace))
    return r, args


@pytest.mark.parametrize("kernel", [K.range_inner, K.range_only, K.pipeline_rows])
def test_sequential_launch_loops_batch(kernel):
    r, args = _run(kernel)
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    assert r.batch_refusals == {}
    _, ref = _run(kernel, batch=False)
    for a, b in zip(args, ref):
        assert np.array_equal(a, b)


def test_batched_sequential_loop_traces_one_task_per_iteration():
    r, _ = _run(K.range_inner, trace=True)
    tasks = r.trace.tasks
    assert len(tasks) == (K.M // K.TM) * (K.N // K.TN)
    # numbered and ordered as the loops run them: j (the sequential loop) innermost
    first = tasks[0].accesses, tasks[1].accesses
    assert [a.lo for a in first[0] if a.mode == "W"] == [(0, 0)]
    assert [a.lo for a in first[1] if a.mode == "W"] == [(0, K.TN)]


def test_a_loop_reading_the_previous_iterations_write_is_refused():
    r, y = _run(K.range_chain)
    assert r.batch_stats["batched"] == 0
    assert "may overlap" in r.batch_refusals["range_chain_chain"]
    expect = _args(K.range_chain)[0]
    for i in range(7):
        expect[i + 1] = expect[i] + np.float32(1.0)
    assert np.array_equal(y[0], expect)


def test_overlapping_windows_of_a_sequential_loop_are_refused():
    r, (x, y) = _run(K.range_overlap)
    assert r.batch_stats["batched"] == 0
    assert "'y' may overlap" in r.batch_refusals["range_overlap_overlap"]
    # the later iteration wins where windows overlap, as in program order
    assert np.array_equal(y[16:48], x[16:48] * np.float32(2.0))


def test_the_last_write_of_the_same_window_wins():
    r, (x, y) = _run(K.range_same_window)
    assert r.batch_stats["batched"] == 0
    assert np.array_equal(y, x[3])


def test_reshapes_of_batched_values_batch():
    r, (x, y) = _run(K.reshape_rows)
    assert r.batch_stats["batched"] == 1
    _, ref = _run(K.reshape_rows, batch=False)
    assert np.array_equal(y, ref[1])


def test_writes_through_a_reshaped_parameter_are_refused():
    r, (x, acc, y) = _run(K.rmw_through_reshape)
    assert r.batch_stats["batched"] == 0
    assert "writes 'acc' through a view" in r.batch_refusals["rmw_through_reshape_rmw"]
    start = _args(K.rmw_through_reshape)[1]
    assert np.array_equal(acc.reshape(4, 16)[0], start.reshape(4, 16)[0] + np.float32(4.0))


def test_footprints_spread_by_region_loops_are_proven_disjoint():
    r, (x, y) = _run(K.lattice_writes)
    assert r.batch_stats["batched"] == 1, r.batch_refusals
    _, ref = _run(K.lattice_writes, batch=False)
    assert np.array_equal(y, ref[1])


def test_footprints_that_meet_through_region_loops_are_refused():
    r, (x, y) = _run(K.lattice_collides)
    assert r.batch_stats["batched"] == 0
    assert "may overlap" in r.batch_refusals["lattice_collides_collide"]
    _, ref = _run(K.lattice_collides, batch=False)
    assert np.array_equal(y, ref[1])


def test_a_loop_body_of_two_launches_batches_one_launch_at_a_time():
    r, (a, b, res, y) = _run(K.proj_residual)
    assert r.batch_stats["batched"] == 2, r.batch_refusals
    expect = (a @ b) + res
    assert np.allclose(y, expect, rtol=1e-5, atol=1e-4)
    _, ref = _run(K.proj_residual, batch=False)
    assert np.array_equal(y, ref[3])


def test_a_body_traces_its_tasks_in_program_order():
    r, _ = _run(K.proj_residual, trace=True)
    names = [t.name for t in r.trace.tasks]
    assert names == ["proj", "residual"] * 4
    assert [t.loops for t in r.trace.tasks[:3]] == [(("ob", 0),), (("ob", 0),), (("ob", 1),)]
    # the residual of iteration ob takes that iteration's projection, its own buffer
    takes = [dict((p, t) for p, t, *_ in task.args) for task in r.trace.tasks[1::2]]
    assert [t["acc"] for t in takes] == ["proj.out"] * 4


def test_a_body_whose_launches_read_ahead_is_refused():
    r, (x, y, z) = _run(K.reads_next_iteration)
    assert r.batch_stats["batched"] == 0
    assert "may overlap from iteration to iteration" in \
        r.batch_refusals["reads_next_iteration_read_behind"]
    _, ref = _run(K.reads_next_iteration, batch=False)
    assert np.array_equal(z, ref[2])


def _gather_inputs(bad: bool = False):
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 256, 64).astype(np.int32)
    if bad:
        ids[37] = 256  # one row past the table
    table = rng.standard_normal((256, 128)).astype(np.float32)
    return ids, table


def test_a_gather_by_token_id_batches():
    ids, table = _gather_inputs()
    y = np.zeros((64, 128), np.float32)
    r = K.gather_rows(ids, table, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, r.batch_refusals
    assert np.array_equal(y, table[ids] * np.float32(2.0))
    y2 = np.zeros_like(y)
    K.gather_rows(ids, table, y2, config=SimConfig(batch=False))
    assert np.array_equal(y, y2)


def test_a_traced_gather_records_each_blocks_rows():
    ids, table = _gather_inputs()
    r = K.gather_rows(ids, table, np.zeros((64, 128), np.float32), config=SimConfig(trace=True))
    tasks = r.trace.tasks
    assert len(tasks) == 8
    # the block's eight rows of the table, one record of the rows (sorted, distinct)
    table = [a for a in tasks[2].accesses if a.tensor == "table"]
    assert len(table) == 1 and isinstance(table[0], RowAccess)
    assert [lo for lo, _ in table[0].boxes()] == sorted({(int(i), 0) for i in ids[16:24]})
    assert all(hi == (lo[0] + 1, 128) for lo, hi in table[0].boxes())
    # (the trace merges the eight one-element reads of ids into one range)
    assert [(a.lo, a.hi) for a in tasks[2].accesses if a.tensor == "ids"] == [((16,), (24,))]


def test_a_gather_index_out_of_range_is_reported_by_block():
    # the batch gives up on the bad row; the block-by-block rerun reports it as always
    ids, table = _gather_inputs(bad=True)
    with pytest.raises(SimulationError) as ei:
        K.gather_rows(ids, table, np.zeros((64, 128), np.float32))
    msg = str(ei.value)
    assert "out-of-bounds slice: window [256:257, 0:128] of 'table'" in msg
    assert "region 'rows'" in msg
    line = next(i for i, t in enumerate(inspect.getsource(K).splitlines(), 1)
                if "pl.mul(table[row:row + 1, :], 2.0)" in t)
    assert ei.value.span.line == line and ei.value.span.file.endswith("batch_kernels.py")


@pytest.mark.parametrize("bad", [None, -1, -(2 ** 31), 256])
def test_rows_taken_straight_are_bounds_checked(bad):
    """The first and last rows batch; a negative row or one past the table gives the
    batch up and block by block reports it."""
    ids, table = _gather_inputs()
    ids[0], ids[63] = 0, 255
    if bad is not None:
        ids[21] = bad
    y = np.zeros((64, 128), np.float32)
    if bad is None:
        r = K.gather_straight(ids, table, y)
        assert r.batch_stats == {"batched": 1, "fallback": 0}, r.batch_refusals
        assert np.array_equal(y, table[ids])
        return
    with pytest.raises(SimulationError) as ei:
        K.gather_straight(ids, table, y)
    assert f"out-of-bounds slice: window [{bad}:{bad + 1}, 0:128] of 'table'" in str(ei.value)


def test_min_of_a_loop_variable_clamps_windows_batched():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((100, 64)).astype(np.float32)
    y = np.zeros((112, 64), np.float32)
    r = K.clamped_windows(x, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, r.batch_refusals
    assert np.array_equal(y[96:112], np.exp(x[84:100]))
    y2 = np.zeros_like(y)
    K.clamped_windows(x, y2, config=SimConfig(batch=False))
    assert np.array_equal(y, y2)


def test_a_gather_from_a_tensor_the_region_writes_is_refused():
    ids = (np.arange(64 * 8).reshape(64, 8) % 56).astype(np.int32)
    ids2 = ids.copy()
    y, y2 = np.zeros_like(ids), np.zeros_like(ids)
    r = K.gather_reads_what_it_writes(ids, y)
    assert r.batch_stats["batched"] == 0
    assert "'ids'" in r.batch_refusals["gather_reads_what_it_writes_self_gather"]
    K.gather_reads_what_it_writes(ids2, y2, config=SimConfig(batch=False))
    assert np.array_equal(y, y2) and np.array_equal(ids, ids2)


def _same_as_block_by_block(kernel, *args, trace=False):
    outs = [np.zeros_like(a) for a in args[1:]]
    r = kernel(args[0], *outs, config=SimConfig(trace=trace))
    ref = [np.zeros_like(a) for a in args[1:]]
    r2 = kernel(args[0], *ref, config=SimConfig(batch=False, trace=trace))
    for a, b in zip(outs, ref):
        assert np.array_equal(a, b, equal_nan=True)
    return r, r2, outs


def test_a_last_partial_tile_runs_by_itself_after_the_batch():
    x = np.random.default_rng(5).standard_normal((100, 64)).astype(np.float32)
    r, r2, (y,) = _same_as_block_by_block(K.tail_rows, x, np.zeros((100, 64), np.float32),
                                          trace=True)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, r.batch_refusals
    assert np.array_equal(y[96:], x[96:] - x[96:].max(axis=1, keepdims=True))
    # seven tasks in program order, the last (r = 96) launched on its own
    assert [t.loops for t in r.trace.tasks] == [(("r", i),) for i in range(0, 100, 16)]
    assert [(a.lo, a.hi) for a in r.trace.tasks[-1].accesses if a.tensor == "x"] == \
        [((96, 0), (100, 64))]
    assert [(t.id, [(a.tensor, a.mode, a.lo, a.hi) for a in t.accesses])
            for t in r.trace.tasks] == \
        [(t.id, [(a.tensor, a.mode, a.lo, a.hi) for a in t.accesses]) for t in r2.trace.tasks]


def test_a_clamped_tail_window_runs_by_itself_after_the_batch():
    x = np.random.default_rng(6).standard_normal((100, 64)).astype(np.float32)
    r, _, (y,) = _same_as_block_by_block(K.clamp_rows, x, np.zeros((112, 64), np.float32))
    assert r.batch_stats == {"batched": 1, "fallback": 0}, r.batch_refusals
    assert np.array_equal(y[:100], x + np.float32(1.0))  # (the last tile's 4 valid rows)


def test_partial_tiles_of_an_inner_loop_run_in_the_batch_traced_too():
    x = np.random.default_rng(7).standard_normal((64, 100)).astype(np.float32)
    # the partial tiles run in the batch with masks (`masks`): one batch; traced, the
    # blocks are grouped by the extent of their valid part, each group's accesses and
    # costs its own (`mask_windows`), so every task's trace is its block-by-block one
    r, r2, (y,) = _same_as_block_by_block(K.tail_columns, x, np.zeros((64, 100), np.float32),
                                          trace=True)
    assert r.batch_stats == {"batched": 1, "fallback": 0} and not r.batch_refusals
    assert np.array_equal(y, np.exp(x))
    assert [(a.lo, a.hi) for a in r.trace.tasks[3].accesses if a.tensor == "x"] == \
        [((0, 96), (32, 100))]
    assert [(t.loops, [(a.tensor, a.mode, a.lo, a.hi) for a in t.accesses], t.block_cycles)
            for t in r.trace.tasks] == \
        [(t.loops, [(a.tensor, a.mode, a.lo, a.hi) for a in t.accesses], t.block_cycles)
         for t in r2.trace.tasks]
    r, _, (y,) = _same_as_block_by_block(K.tail_columns, x, np.zeros((64, 100), np.float32))
    assert r.batch_stats == {"batched": 1, "fallback": 0} and not r.batch_refusals
    assert np.array_equal(y, np.exp(x))


def test_a_per_head_body_of_broadcasts_and_a_window_of_a_result_batches():
    r, (q, k, y) = _run(K.per_head_body, trace=True)
    # per b: the h loop's three launches run once each for the 8 heads
    assert r.batch_stats == {"batched": 4 * 3, "fallback": 0}
    assert all(key.startswith("loop ") for key in r.batch_refusals)  # the b loop only
    want = np.zeros_like(y)
    for b in range(4):
        for h in range(8):
            qb = np.broadcast_to(q[b:b + 1, h * 64:h * 64 + 64], (16, 64))
            kr = np.broadcast_to(k[h:h + 16, 0:1], (16, 64))
            o = qb * (qb * kr).sum(axis=1, keepdims=True)
            want[b, h * 32:h * 32 + 32] = o[0, :32]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    # each `put` task reads its own head's `score` result, as block by block
    put = [t for t in r.trace.tasks if t.name == "put"]
    assert len(put) == 32
    reads = [a for a in put[3].accesses if a.mode == "R"]
    assert [(a.tensor, a.ranges) for a in reads] == [("score.out", [(0, 1), (0, 32)])]


def test_a_returned_tile_filled_in_place_and_a_local_accumulator_batch():
    r, (x, w, y) = _run(K.head_projection_body, trace=True)
    assert r.batch_stats == {"batched": 3, "fallback": 0} and r.batch_refusals == {}
    want = np.stack([x[h] @ w[h] + 1.0 for h in range(8)])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    # `fill` writes the tile `pad` returned, each iteration its own, in four chunks
    fill = [t for t in r.trace.tasks if t.name == "fill"]
    assert len(fill) == 8
    writes = [(a.tensor, a.ranges) for a in fill[5].accesses if a.mode == "W"]
    assert writes == [("pad.out", [(0, 16), (0, 128)])]
    # ... and the trace names that task as the last writer of the tile's buffer
    assert {t.name for t in r.trace.tasks} == {"pad", "fill", "acc"}


def test_a_local_tile_read_after_a_varying_write_is_refused():
    r, (x, y) = _run(K.local_tile_read_again)
    assert r.batch_stats["batched"] == 0
    assert r.batch_refusals["local_tile_read_again_keep"] == "a varying write into a local tile"
    for i in range(4):
        np.testing.assert_array_equal(y[i], np.concatenate([x[i, :16], x[i, :16]]))


def test_an_index_gather_of_each_blocks_tile_batches():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    idx = rng.integers(0, 32, (16, 32)).astype(np.int32)
    y, y2 = np.zeros_like(x), np.zeros_like(x)
    r = K.gather_columns(x, idx, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}, r.batch_refusals
    K.gather_columns(x, idx, y2, config=SimConfig(batch=False))
    assert np.array_equal(y, y2)
    for b in range(4):
        assert np.array_equal(y[16 * b:16 * b + 16], np.take_along_axis(x[16 * b:16 * b + 16],
                                                                         idx, axis=1))


def test_an_index_gather_out_of_range_is_reported_as_block_by_block():
    x = np.zeros((64, 32), np.float32)
    idx = np.full((16, 32), 40, np.int32)
    msgs = []
    for batch in (True, False):
        with pytest.raises(Exception) as ei:
            K.gather_columns(x, idx, np.zeros_like(x), config=SimConfig(batch=batch))
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1] and "gather index out of range" in msgs[0]


def test_a_product_with_a_stacked_weight_batches():
    """expert_routed's exp_*_mm and the dspark prefill files' proj_a_mm regions: a 2-D
    activation times a [1, N, K] slice of one expert's weights, the product 3-D. Both
    loops run as one batch (the activation, varying with the expert, gets its missing
    axis after the block axes), and the products are the exact int32 ones."""
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (64, 256)).astype(np.int8)
    w = rng.integers(-128, 128, (2, 128, 256)).astype(np.int8)
    y, ref = np.zeros((32, 128), np.int32), np.zeros((32, 128), np.int32)
    r = K.stacked_weight_mm(x, w, y)
    K.stacked_weight_mm(x, w, ref, config=SimConfig(batch=False))
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    assert r.batch_refusals == {}
    assert np.array_equal(y, ref)
    for e in range(2):
        rows = slice(e * 16, e * 16 + 16)
        assert np.array_equal(y[rows], x[rows].astype(np.int32) @ w[e].astype(np.int32).T)


def test_a_product_of_another_rank_is_assembled_batched():
    """A 3-D product written into a 2-D tensor loses its leading unit axis, batched as
    block by block; a tagged or non-unit one would not be admitted."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 256)).astype(np.float32)
    w = rng.standard_normal((2, 64, 256)).astype(np.float32)
    y, ref = np.zeros((128, 128), np.float32), np.zeros((128, 128), np.float32)
    r = K.stacked_rows_assemble(x, w, y)
    K.stacked_rows_assemble(x, w, ref, config=SimConfig(batch=False))
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    assert r.batch_refusals == {}
    assert np.array_equal(y.view(np.uint8), ref.view(np.uint8))
    for g in range(2):
        assert np.allclose(y[:, g * 64:g * 64 + 64], x @ w[g].T, rtol=1e-4, atol=1e-3)
    rt, _ = _run(K.stacked_rows_assemble, trace=True)
    assert rt.batch_stats == {"batched": 1, "fallback": 0}

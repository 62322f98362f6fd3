"""A region's own loop run as one more batch axis (`pypto.sim.batch.loop_axis`).

Which loops qualify is a static decision, pinned down here on the kernels of
`batch_kernels.py`; that the batched runs equal block-by-block ones bit for bit is
`test_speed_equivalence.py`'s (it runs every kernel there both ways), and checked here
once more on inputs of our own.
"""
from __future__ import annotations

import batch_kernels as K
import numpy as np
import pytest

from pypto.ir.nodes import For
from pypto.sim import SimConfig
from pypto.sim.batch.loop_axis import axis_loops
from pypto.sim.batch.plan import analyze
from pypto.sim.batch.state import Aff, BatchState


def _region(kernel):
    prog = kernel.compile().program
    funcs = prog.functions.values() if hasattr(prog.functions, "values") else prog.functions
    (func,) = [f for f in funcs if f.kind.is_region]
    return func


def _axes(kernel, block_var):
    func = _region(kernel)
    plan = analyze(func, {p.var.name for p in func.params if p.var.name.startswith(block_var)})
    assert not isinstance(plan, str), plan
    loops = {id(s): s for s in func.body if isinstance(s, For)}
    return {loops[k].var.name: ax for k, ax in axis_loops(func, plan).items()}


def test_the_gathers_row_loop_is_a_batch_axis():
    (ax,) = _axes(K.gather_rows, "t0").values()
    assert (ax.start, ax.step, ax.trips) == (0, 1, 8)
    # the block's own offset is what the body reads from before the loop; in the body
    # the loop variable and the row read with it vary
    assert ax.lifted == (("t0", 0),)
    assert ax.plan.varying == {"t0", "k", "row"}


def test_a_column_loop_lifts_the_row_statistic_it_reads():
    (ax,) = _axes(K.region_loop_columns, "r").values()
    assert (ax.start, ax.step, ax.trips) == (0, 64, 4)
    ranks = dict(ax.lifted)
    assert sorted(ranks.values()) == [0, 2]  # the row offset, and the [16, 1] row sums


def test_loops_whose_iterations_depend_on_their_order_are_not_axes():
    assert _axes(K.gather_rows_overlap, "t0") == {}


def test_a_branch_on_the_loop_variable_is_an_axis_predicated():
    """The condition differs per iteration: as an axis, both branches run predicated."""
    (ax,) = _axes(K.region_loop_branch, "t0").values()
    assert (ax.start, ax.step, ax.trips) == (0, 1, 8)
    assert {"t0", "k"} <= ax.plan.varying


def _gather_inputs(seed=3):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 250, 64).astype(np.int32)
    ids[5] = ids[40]  # the same row gathered twice
    return ids, rng.standard_normal((256, 128)).astype(np.float32)


def test_the_gather_batched_over_its_rows_equals_block_by_block():
    ids, table = _gather_inputs()
    y, y2 = np.zeros((64, 128), np.float32), np.zeros((64, 128), np.float32)
    r = K.gather_rows(ids, table, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    K.gather_rows(ids, table, y2, config=SimConfig(batch=False))
    assert np.array_equal(y, table[ids] * np.float32(2.0))
    assert np.array_equal(y.view(np.uint32), y2.view(np.uint32))


def test_overlapping_iterations_keep_program_order():
    ids, table = _gather_inputs(4)
    y = np.zeros((64, 128), np.float32)
    r = K.gather_rows_overlap(ids, table, y)
    # (the blocks' plan refuses too: its cells must be disjoint within a block as well)
    assert "'y' may overlap" in r.batch_refusals["gather_rows_overlap_rows2"]
    expect = np.zeros((64, 128), np.float32)
    for t0 in range(0, 64, 16):
        for k in range(15):  # (row k + 1 is the next iteration's first row)
            expect[t0 + k:t0 + k + 2] = table[ids[t0 + k]:ids[t0 + k] + 2]
    assert np.array_equal(y, expect)


def test_a_branch_on_the_loop_variable_runs_each_iterations_branch():
    x = np.random.default_rng(5).standard_normal((64, 128)).astype(np.float32)
    y = np.zeros((64, 128), np.float32)
    r = K.region_loop_branch(x, y)
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    first = (np.arange(64) % 8) < 4
    assert np.array_equal(y[first], x[first] * np.float32(2.0))
    assert np.array_equal(y[~first], np.exp(x[~first]))
    y2 = np.zeros_like(y)
    K.region_loop_branch(x, y2, config=SimConfig(batch=False))
    assert np.array_equal(y.view(np.uint8), y2.view(np.uint8))


def test_the_column_loop_as_an_axis_equals_block_by_block():
    x = np.random.default_rng(6).standard_normal((64, 256)).astype(np.float32)
    y, y2 = np.zeros_like(x), np.zeros_like(x)
    K.region_loop_columns(x, y)
    K.region_loop_columns(x, y2, config=SimConfig(batch=False))
    assert np.array_equal(y.view(np.uint32), y2.view(np.uint32))
    s = x[:, :64].sum(axis=1, keepdims=True)
    assert np.allclose(y, np.exp(x) - s, rtol=1e-6, atol=1e-5)


def test_a_bad_row_in_the_axis_batch_is_reported_by_block():
    ids, table = _gather_inputs()
    ids[42] = 256
    with pytest.raises(Exception) as ei:
        K.gather_rows(ids, table, np.zeros((64, 128), np.float32))
    assert "window [256:257, 0:128] of 'table'" in str(ei.value)
    assert "region 'rows'" in str(ei.value)


def test_the_axis_state_puts_the_new_axis_first():
    st = BatchState((4,), True, False, False)
    inner = st.axis(3)
    assert inner.bs == (3, 4) and inner.nb == 2
    assert inner.blk == Aff(0, (0, 1))
    assert inner.materialize(Aff(5, (2, 1))).tolist() == \
        [[5 + 2 * k + b for b in range(4)] for k in range(3)]


def test_row_pairs_are_taken_into_their_destination_and_half_rows_gathered():
    rng = np.random.default_rng(8)
    ids = rng.integers(0, 63, 32).astype(np.int32)
    table = rng.standard_normal((64, 16)).astype(np.float32)
    y, z = np.zeros((64, 16), np.float32), np.zeros((32, 8), np.float32)
    r = K.gather_row_pairs(ids, table, y, z)
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    pairs = np.stack([table[ids], table[ids + 1]], axis=1).reshape(64, 16)
    assert np.array_equal(y, pairs)
    assert np.array_equal(z, table[ids, 4:12])


def test_the_work_limit_counts_the_axis_loop_as_block_by_block_does():
    x = np.zeros((64, 256), np.float32)
    msgs = []
    for batch in (True, False):
        with pytest.raises(Exception) as ei:
            K.region_loop_columns(x, np.zeros_like(x), config=SimConfig(batch=batch, max_work=12))
        msgs.append(str(ei.value).splitlines()[0])
    assert msgs[0] == msgs[1]
    assert "a loop of 4 iterations would take the simulated work past its limit of 12" in msgs[0]


"""Tiles with valid shapes in a batch, traced too (`pypto.sim.batch.masks`,
`mask_windows`, `rules`): a valid shape the same in every block is one tag for all
blocks, one logged access and one cost; per-block extents are grouped, each group's
accesses and costs its blocks' own. Every result equals block-by-block execution bit for
bit (`test_speed_equivalence.py` runs the kernels of valid_kernels.py both ways)."""
from __future__ import annotations

import numpy as np
import pytest
import valid_kernels as V

from pypto.ops.numeric import with_valid
from pypto.sim import SimConfig
from pypto.sim.batch.masks import BY_BLOCK, Masked, declared, uniform
from pypto.sim.batch.rules.reduce import reduced as reduce
from pypto.sim.batch.rules.ufunc import elementwise
from pypto.sim.batch.state import BatchState


def _both(kernel, args, trace):
    mine = [a.copy() for a in args]
    ref = [a.copy() for a in args]
    r = kernel(*mine, config=SimConfig(trace=trace))
    r0 = kernel(*ref, config=SimConfig(batch=False, trace=trace))
    for a, b in zip(mine, ref):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    if trace:
        assert [(t.loops, [(a.tensor, a.mode, a.block, a.lo, a.hi) for a in t.accesses],
                 t.block_cycles, t.op_counts) for t in r.trace.tasks] == \
            [(t.loops, [(a.tensor, a.mode, a.block, a.lo, a.hi) for a in t.accesses],
              t.block_cycles, t.op_counts) for t in r0.trace.tasks]
    return r, mine


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("trace", [True, False])
def test_windows_of_one_valid_row_batch(trace):
    x, w = _x((16, 512)), _x((8, 512), 1)
    r, (_, _, y) = _both(V.row_gates, [x, w, np.zeros((16, 8), np.float32)], trace)
    # the 8-row windows overlap, and the write's footprint is its declared valid row
    assert r.batch_stats == {"batched": 1, "fallback": 0} and not r.batch_refusals
    assert np.allclose(y[:, :2], x @ w[:2].T, rtol=1e-4, atol=1e-4)
    assert not y[:, 2:].any()  # (the column the two sums were assembled into, transposed)
    if trace:
        # each block read its one valid row of x (the last ones' windows reach past it;
        # the trace joins the two K halves)
        last = [(a.lo, a.hi) for a in r.trace.tasks[0].accesses
                if a.tensor == "x" and a.block == 15]
        assert last == [((15, 0), (16, 512))]


@pytest.mark.parametrize("trace", [True, False])
def test_a_softmax_of_valid_columns_batches(trace):
    m, inv = _x((32, 16), 2), _x((32, 1), 3)
    r, (_, _, y) = _both(V.gate_softmax, [m, inv, np.zeros((32, 4), np.float32)], trace)
    assert r.batch_stats == {"batched": 1, "fallback": 0} and not r.batch_refusals
    scaled = m[:, 4:8] * inv * np.float32(0.5)
    row = scaled + m[0:1, 8:12]
    e = np.exp(row - row.max(axis=1, keepdims=True))
    soft = e / e.sum(axis=1, keepdims=True) + np.float32(1e-6)
    assert np.allclose(y, soft / (soft + 1), rtol=1e-5)


def test_per_block_valid_parts_trace_their_own_extents():
    x = _x((100, 64), 4)
    r, (_, y, z) = _both(V.tail_valid_rows, [x, np.zeros((100, 64), np.float32),
                                             np.zeros((112, 64), np.float32)], True)
    assert r.batch_stats == {"batched": 1, "fallback": 0} and not r.batch_refusals
    assert np.array_equal(y, np.exp(x))
    assert np.array_equal(z[:100], np.exp(x)) and not z[100:].any()
    last = r.trace.tasks[6]  # (c = 0, r = 96): four valid rows
    assert last.loops == (("c", 0), ("r", 96))
    assert [(a.tensor, a.lo, a.hi) for a in last.accesses] == \
        [("x", (96, 0), (100, 32)), ("y", (96, 0), (100, 32)), ("z", (96, 0), (112, 32))]
    assert last.block_cycles != r.trace.tasks[5].block_cycles


def test_a_fillpad_replaces_each_blocks_own_pad():
    x = _x((100, 64), 5)
    r, (_, y) = _both(V.tail_fillpad, [x, np.zeros((7, 64), np.float32)], True)
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    assert np.isfinite(y).all()
    assert np.allclose(y[6], x[96:].sum(axis=0), rtol=1e-5)


def test_a_tag_the_same_in_every_block_is_one_tag():
    data = np.zeros((3, 4, 2), np.float32)
    w = with_valid(np.zeros((4, 2), np.float32), (1, 2))  # a uniform tagged operand
    r = elementwise([data, w], 2, data + w.view(np.ndarray), 2, (3,))
    assert type(r) is Masked and r.every == (1, 2) and not r.tags
    # a per-block tag first: its blocks keep theirs, the others take the uniform one
    first = Masked(data, {(1,): None})
    r = elementwise([first, w], 2, data, 2, (3,))
    assert r.every is BY_BLOCK and r.tags == {(0,): (1, 2), (1,): None, (2,): (1, 2)}


def test_a_row_sum_of_one_valid_row_keeps_one_row():
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    r = reduce(lambda d: np.add.reduce(d, axis=-1, keepdims=True), uniform(data, (1, 2)), -1, 2)
    assert type(r) is Masked and r.every == (1, 1)
    assert r.data[:, :, 0].tolist() == data[:, :, :2].sum(axis=2).tolist()
    # the valid columns whole: the rows' sums of every column, still one valid row
    r = reduce(lambda d: np.add.reduce(d, axis=-1, keepdims=True), uniform(data, (1, 4)), -1, 2)
    assert r.every == (1, 1) and r.data[1, 2, 0] == data[1, 2].sum()


def test_a_declared_valid_shape_tags_an_untagged_result():
    st = BatchState((3,), False, False, False)
    data = np.zeros((3, 4, 2), np.float32)
    r = declared(st, data, [2, 2], 2)
    assert type(r) is Masked and r.every == (2, 2)
    assert declared(st, data, [4, 2], 2) is data  # (the whole shape: untagged)
    # a tag without a valid shape takes it; one with a valid shape keeps its own
    r = declared(st, Masked(data, {(0,): None, (1,): (1, 1)}), [2, 2], 2)
    assert r.tags == {(0,): (2, 2), (1,): (1, 1), (2,): (2, 2)}
    # clipped to the shape it is whole: untagged (`with_valid`)
    assert declared(st, uniform(data, None), [5, 2], 2) is data


@pytest.mark.parametrize("trace", [True, False])
def test_products_of_partial_tiles_batch(trace):
    x, w = _x((40, 512), 6), _x((32, 512), 7)
    r, (_, _, y) = _both(V.tail_linear, [x, w, np.zeros((48, 32), np.float32)], trace)
    assert r.batch_stats == {"batched": 1, "fallback": 0} and not r.batch_refusals
    assert np.allclose(y[:40, :24], x @ w[:24].T, rtol=1e-3, atol=1e-3)
    # the weight's pad rows and the last tile's pad rows: zeros, written whole
    assert not y[:, 24:].any() and not y[40:].any()


def test_a_reciprocal_keeps_the_valid_columns():
    m = _x((32, 16), 8)
    r, (_, y) = _both(V.gate_sigmoid, [m, np.zeros((32, 4), np.float32)], True)
    assert r.batch_stats == {"batched": 1, "fallback": 0} and not r.batch_refusals
    assert np.allclose(y, 1 / (1 + np.exp(-m[:, :4])) + np.float32(1e-6), rtol=1e-6)


def test_a_chain_into_a_partial_write_is_not_computed_in_its_windows():
    x = _x((112, 64), 9)
    r, (_, y) = _both(V.tail_chain, [x, np.full((112, 64), 7, np.float32)], False)
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    assert np.array_equal(y[:100], x[:100] * np.float32(2) + x[:100])
    # the last tiles' rows past their valid ones: untouched, so a direct call's pl.Out
    # keeps what the caller put there (out_start="caller")
    assert (y[100:] == 7).all()


def test_an_int8_product_of_partial_tiles_batches():
    rng = np.random.default_rng(10)
    q = rng.integers(-8, 8, (16, 128)).astype(np.int8)
    w = rng.integers(-8, 8, (128, 64)).astype(np.int8)
    r, (_, _, y) = _both(V.int_linear, [q, w, np.zeros((16, 64), np.int32)], True)
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    assert np.array_equal(y[:4], q[:4].astype(np.int32) @ w.astype(np.int32))
    assert not y[4:].any()  # (the pad rows)


def test_narrow_floats_with_a_valid_shape_batch():
    import ml_dtypes
    x = _x((64, 64), 11).astype(ml_dtypes.bfloat16)
    r, (_, y) = _both(V.bf16_rows, [x, np.zeros((64, 64), ml_dtypes.bfloat16)], True)
    assert r.batch_stats == {"batched": 1, "fallback": 0}
    want = ((x.astype(np.float32) + 1).astype(ml_dtypes.bfloat16).astype(np.float32) * 0.5)
    assert np.allclose(y.astype(np.float32), want, rtol=1e-2)

"""Integer tiles with a row tail in a batched launch nest (issue 31, item 2).

The last row of tiles is partial (`valid_shape=[rows, ...]`); integer elementwise ops on
partial tiles have no mask rule, so those launches run one at a time with the nest's
batched arguments taken per block. An integer tensor whose rank is the nest's depth
used to be read there as a per-block scalar array (`pypto.sim.batch.state.scalar_at`)
and the launch got one element of it: "slice of a rank-0 tensor". Every result here
equals numpy and block-by-block execution bit for bit, traced and untraced."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.sim import SimConfig
from pypto.sim.batch.state import Aff, arg_at, scalar_at

INTS = {pl.INT8: np.int8, pl.INT16: np.int16, pl.INT32: np.int32, pl.INT64: np.int64,
        pl.UINT8: np.uint8}


def _tail_kernels(dt):
    @pl.jit
    def nest(a: pl.Tensor[[20, 32], dt], b: pl.Tensor[[20, 32], dt],
             y: pl.Out[pl.Tensor[[20, 32], dt]]):
        for i in pl.parallel(0, 20, 8):
            for j in pl.parallel(0, 32, 16):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail"):
                    rows = pl.min(8, 20 - i)
                    t = pl.slice(a, [8, 16], [i, j], valid_shape=[rows, 16])
                    u = pl.slice(b, [8, 16], [i, j], valid_shape=[rows, 16])
                    y[i:i + 8, j:j + 16] = pl.add(pl.maximum(t, u), t)
        return y

    @pl.jit
    def ranges(a: pl.Tensor[[20, 32], dt], b: pl.Tensor[[20, 32], dt],
               y: pl.Out[pl.Tensor[[20, 32], dt]]):
        for i in pl.range(0, 20, 8):
            for j in pl.range(0, 32, 16):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail"):
                    rows = pl.min(8, 20 - i)
                    t = pl.slice(a, [8, 16], [i, j], valid_shape=[rows, 16])
                    u = pl.slice(b, [8, 16], [i, j], valid_shape=[rows, 16])
                    y[i:i + 8, j:j + 16] = pl.row_expand_add(t, pl.row_max(u))
        return y

    return nest, ranges


@pytest.mark.parametrize("dt", list(INTS), ids=lambda d: str(d))
@pytest.mark.parametrize("trace", [False, True])
def test_integer_row_tails_batch(dt, trace):
    nest, ranges = _tail_kernels(dt)
    rng = np.random.default_rng(3)
    a = rng.integers(0, 40, (20, 32)).astype(INTS[dt])
    b = rng.integers(0, 40, (20, 32)).astype(INTS[dt])
    wants = {nest: np.maximum(a, b) + a,
             ranges: np.concatenate([
                 a[:, :16] + b[:, :16].max(axis=1, keepdims=True),
                 a[:, 16:] + b[:, 16:].max(axis=1, keepdims=True)], axis=1)}
    for kernel, want in wants.items():
        y = np.zeros_like(a)
        r = kernel(a, b, y, config=SimConfig(trace=trace))
        y0 = np.zeros_like(a)
        kernel(a, b, y0, config=SimConfig(batch=False, trace=trace))
        assert np.array_equal(y, want.astype(a.dtype)), kernel
        assert y.tobytes() == y0.tobytes()
        assert r.batch_stats["batched"] >= 1  # the whole tiles ran as one batch


def test_a_launch_argument_is_per_block_only_as_aff():
    """The rule the fix rests on: `arg_at` takes an argument of the block; an integer
    tensor of the batch's rank is every block's (`scalar_at` would index it)."""
    idx = (1, 0)
    table = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert arg_at(table, idx) is table
    assert arg_at(Aff(4, (8, 16)), idx) == 12
    assert arg_at(7, idx) == 7
    assert scalar_at(table, idx) == 3  # (per-block scalars: the array over batch axes)

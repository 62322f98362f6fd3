"""The residue of a pl.Out buffer is filled after the batched launch loop that first
mentions it, only where it wrote nothing: outputs must equal block-by-block runs (which
fill it up front), unwritten parts included."""
import numpy as np
import pytest

import pypto.language as pl
import pypto.sim as sim
from pypto.sim.entry import executable


@pl.jit
def _half(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for i in pl.parallel(0, 32, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="h"):
            y[i:i + 8, :] = pl.add(x[i:i + 8, :], 1.0)
    return y


@pl.jit
def _full(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for i in pl.parallel(0, 64, 8):
        for j in pl.parallel(0, 64, 32):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="f"):
                y[i:i + 8, j:j + 32] = pl.mul(x[i:i + 8, j:j + 32], 2.0)
    return y


@pl.jit
def _ints(x: pl.Tensor[[64, 64], pl.INT32], y: pl.Out[pl.Tensor[[64, 64], pl.INT32]]):
    for i in pl.parallel(0, 32, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="i"):
            y[i:i + 8, :] = pl.add(x[i:i + 8, :], 1)
    return y


@pl.jit
def _reads_out(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for i in pl.parallel(0, 64, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            y[i:i + 8, :] = pl.add(y[i:i + 8, :], x[i:i + 8, :])
    return y


@pytest.mark.parametrize("kernel,dtype", [(_half, np.float32), (_full, np.float32),
                                          (_ints, np.int32), (_reads_out, np.float32)])
@pytest.mark.parametrize("uninit", ["residue", "zero"])
def test_deferred_fill_equals_block_by_block(kernel, dtype, uninit):
    x = np.arange(64 * 64, dtype=dtype).reshape(64, 64)
    outs = []
    for batch in (True, False):
        y = np.full((64, 64), 7, dtype)
        kernel(x, y, config=sim.SimConfig(batch=batch, uninit=uninit))
        outs.append(y)
    np.testing.assert_array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8))


def test_unwritten_rows_stay_nan():
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    compiled = _half.compile(x, y)
    res = sim.run_compiled(compiled, (x, y), config=sim.SimConfig(out_start="fresh"))
    assert np.isnan(y[32:]).all() and (y[:32] == 2).all()
    assert res.batch_stats["batched"] >= 1
    assert "y" in executable(compiled, sim.SimConfig()).deferrable


def test_uninit_sanitizer_still_sees_the_residue():
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    res = sim.simulate(_reads_out, x, y, checks=("uninit",), strict=False)
    assert res.uninit_reads

"""Integer division by zero (issue 16, item 3): one defined result on every host - the
quotient saturates by the dividend's sign (0 / 0 and x % 0 give 0), as pl.cast rounds
the float quotient - and the `div` check (on by default) names the op, the divisor,
the region, the block and the index; strict runs raise there, others record it."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.sim import SimConfig
from pypto.sim.checks import DivisionByZeroError

I32 = np.iinfo(np.int32)
I64 = np.iinfo(np.int64)


@pl.jit
def tile_div(x: pl.Tensor[[32, 16], pl.INT32], d: pl.Tensor[[32, 16], pl.INT32],
             y: pl.Out[pl.Tensor[[32, 16], pl.INT32]]):
    for i in pl.parallel(0, 32, 8):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="quot"):
            y[i:i + 8, :] = pl.div(x[i:i + 8, :], d[i:i + 8, :])
    return y


@pl.jit
def tile_divs(x: pl.Tensor[[8, 16], pl.INT32], s: pl.Scalar[pl.INT32],
              y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="by_scalar"):
        y[:, :] = pl.divs(x[:, :], s)
    return y


@pl.jit
def tile_rem(x: pl.Tensor[[8, 16], pl.INT32], d: pl.Tensor[[8, 16], pl.INT32],
             y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="remainder"):
        t = pl.create_tile([8, 16], pl.INT32)
        a = pl.load(x, [0, 0], [8, 16])
        b = pl.load(d, [0, 0], [8, 16])
        pl.store(pl.rem(a, b, t), [0, 0], y)
    return y


@pl.jit
def rows_div(x: pl.Tensor[[8, 16], pl.INT32], v: pl.Tensor[[8, 1], pl.INT32],
             y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
        y[:, :] = pl.row_expand_div(x[:, :], v[:, :])
    return y


@pl.jit
def scalar_div(n: pl.Scalar[pl.INDEX], k: pl.Scalar[pl.INDEX],
               y: pl.Out[pl.Tensor[[1, 16], pl.FP32]]):
    q = n // k
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
        y[:, :] = pl.full([1, 16], pl.FP32, pl.cast(q, pl.FP32))
    return y


@pl.jit
def partial_div(x: pl.Tensor[[8, 16], pl.INT32], d: pl.Tensor[[8, 16], pl.INT32],
                cols: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[8, 16], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="partial"):
        a = pl.slice(x, [8, 16], [0, 0], valid_shape=[8, cols])
        b = pl.slice(d, [8, 16], [0, 0], valid_shape=[8, cols])
        y[:, :] = pl.div(a, b)
    return y


@pl.jit
def float_scalar_div(a: pl.Scalar[pl.FP32], b: pl.Scalar[pl.FP32],
                     y: pl.Out[pl.Tensor[[1, 16], pl.FP32]]):
    q = a / b
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="fill"):
        y[:, :] = pl.full([1, 16], pl.FP32, q)
    return y


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def _div_case():
    x = np.arange(-256, 256, dtype=np.int32).reshape(32, 16)
    x[0, 0], x[20, 5] = 0, -7
    d = np.full((32, 16), 3, np.int32)
    d[19, 4] = d[20, 5] = d[0, 0] = d[25, 1] = 0
    return x, d


def _expected_div(x, d):
    q = np.zeros_like(x)
    nz = d != 0
    q[nz] = np.trunc(x[nz] / d[nz])
    q[~nz & (x > 0)] = I32.max
    q[~nz & (x < 0)] = I32.min
    return q


@pytest.mark.parametrize("batch", [True, False])
def test_defined_results_without_the_check(batch):
    x, d = _div_case()
    y = np.zeros_like(x)
    r = tile_div(x, d, y, config=SimConfig(checks=("oob", "ub"), batch=batch))
    np.testing.assert_array_equal(y, _expected_div(x, d))
    assert (y[19, 4], y[20, 5], y[0, 0]) == (I32.max if x[19, 4] > 0 else I32.min, I32.min, 0)
    assert r.zero_divisions == []
    if batch:
        assert r.batch_stats["batched"] > 0


def test_strict_run_names_the_divisor_region_block_and_index():
    x, d = _div_case()
    y = np.zeros_like(x)
    with pytest.raises(DivisionByZeroError) as ei:
        tile_div(x, d, y)  # the default checks include "div"
    err = ei.value
    assert err.code == "S012"
    # the first block dividing by zero is rows 0..7, where d[0, 0] is 0
    assert err.message.startswith("pl.div divides an integer by zero: divisor 'd' is 0 at "
                                  "[0, 0] of the result [tensor 'd', region 'quot'")
    assert (err.tensor, err.block, err.indices) == ("d", 0, (0, 0))
    assert err.region.startswith("'quot'")
    assert (err.span.file, err.span.line) == (__file__, _line_of("pl.div(x[i:i + 8, :]"))
    assert "guard the divisor" in err.hint
    assert "largest value of the type" in err.note


@pytest.mark.parametrize("batch", [True, False])
def test_lenient_run_records_each_site_once(batch):
    x, d = _div_case()
    y = np.zeros_like(x)
    r = tile_div(x, d, y, config=SimConfig(strict=False, batch=batch))
    np.testing.assert_array_equal(y, _expected_div(x, d))
    assert len(r.zero_divisions) == 1
    z = r.zero_divisions[0]
    assert (z.op, z.divisor, z.region, z.block, z.index, z.count) == \
        ("pl.div", "d", "quot", 0, (0, 0), 3)  # blocks 0, 2 and 3 divide by zero
    assert z.line == _line_of("pl.div(x[i:i + 8, :]")
    assert "pl.div divides by zero (divisor 'd' is 0 at [0, 0] of the result) in task 0 " \
           "'quot' block 0" in str(z)
    assert z.to_dict()["index"] == [0, 0]


def test_division_by_a_zero_scalar():
    x = np.array([[5, -5, 0, 7] * 4] * 8, np.int32)
    y = np.zeros_like(x)
    r = tile_divs(x, 0, y, config=SimConfig(strict=False))
    np.testing.assert_array_equal(y[0, :4], [I32.max, I32.min, 0, I32.max])
    assert [(z.op, z.divisor, z.index) for z in r.zero_divisions] == \
        [("pl.divs", "s", None)]
    with pytest.raises(DivisionByZeroError,
                       match=r"pl\.divs divides an integer by zero: divisor 's'"):
        tile_divs(x, 0, y)
    tile_divs(x, 2, y)
    np.testing.assert_array_equal(y[0, :4], [2, -2, 0, 3])


def test_remainder_by_zero_is_zero():
    x = np.arange(128, dtype=np.int32).reshape(8, 16) - 64
    d = np.full((8, 16), 5, np.int32)
    d[3, 3] = 0
    y = np.zeros_like(x)
    r = tile_rem(x, d, y, config=SimConfig(strict=False))
    want = np.remainder(x, np.where(d == 0, 1, d))
    want[3, 3] = 0
    np.testing.assert_array_equal(y, want)
    assert [(z.op, z.index) for z in r.zero_divisions] == [("pl.rem", (3, 3))]


def test_row_expand_div_names_the_row():
    x = np.full((8, 16), 9, np.int32)
    v = np.full((8, 1), 2, np.int32)
    v[5, 0] = 0
    y = np.zeros_like(x)
    with pytest.raises(DivisionByZeroError) as ei:
        rows_div(x, v, y)
    assert ei.value.indices == (5, 0) and ei.value.tensor == "v"
    rows_div(x, v, y, config=SimConfig(checks=()))
    assert (y[5] == I32.max).all() and (y[4] == 4).all()


def test_scalar_division_by_zero():
    y = np.zeros((1, 16), np.float32)
    with pytest.raises(DivisionByZeroError) as ei:
        scalar_div(7, 0, y)
    err = ei.value
    assert err.message.startswith("scalar // divides an integer by zero: divisor 'k' is 0 "
                                  "[tensor 'k', orchestration]")
    assert err.indices is None
    assert err.span.line == _line_of("q = n // k")
    r = scalar_div(-7, 0, y, config=SimConfig(strict=False))
    assert y[0, 0] == np.float32(I64.min)
    assert [(z.op, z.divisor, z.region, z.block) for z in r.zero_divisions] == \
        [("scalar //", "k", "orchestration", None)]
    scalar_div(7, 2, y)
    assert y[0, 0] == 3


def test_padding_lanes_are_not_reported():
    x = np.full((8, 16), 6, np.int32)
    d = np.full((8, 16), 3, np.int32)
    d[:, 12:] = 0  # zeros only outside the valid columns
    y = np.zeros_like(x)
    r = partial_div(x, d, 12, y, config=SimConfig(strict=False))
    assert r.zero_divisions == []
    assert (y[:, :12] == 2).all()
    with pytest.raises(DivisionByZeroError) as ei:
        partial_div(x, d, 13, y)
    assert ei.value.indices == (0, 12)


def test_float_division_by_zero_is_ieee():
    y = np.zeros((1, 16), np.float32)
    r = float_scalar_div(1.0, 0.0, y)
    assert np.isposinf(y).all() and r.zero_divisions == []
    float_scalar_div(-1.0, 0.0, y)
    assert np.isneginf(y).all()
    float_scalar_div(0.0, 0.0, y)
    assert np.isnan(y).all()

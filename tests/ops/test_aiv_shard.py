"""`pl.aiv_shard` in a `pl.split_aiv` loop: each vector lane gets its half of a
cube-produced operand (rows for UP_DOWN, columns for LEFT_RIGHT, all of it for NONE),
and lane writes carried through the loop reach the output."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import InvalidOperationError, PyptoSyntaxError
from pypto.ir.nodes import Call
from pypto.ir.transform import walk

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "frontend"))
from frontend_helpers import compile_error

HERE = __file__


@pl.jit
def up_down(a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
            y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            part = pl.aiv_shard(acc)
            y[lane * 8: lane * 8 + 8, :] = pl.mul(part, 2.0)
    return y


@pl.jit
def left_right(a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
               y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            part = pl.aiv_shard(acc)
            y[:, lane * 32: lane * 32 + 32] = pl.mul(part, 2.0)
    return y


@pl.jit
def whole(a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 64], pl.FP32],
          y: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            part = pl.aiv_shard(acc)
            y[lane: lane + 1, :, :] = pl.reshape(pl.mul(part, 2.0), [1, 16, 64])
    return y


@pytest.mark.parametrize("kernel", [up_down, left_right])
def test_each_lane_gets_its_half(kernel):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 64)).astype(np.float32)
    y = np.full((16, 64), np.nan, np.float32)
    kernel(a, b, y)
    np.testing.assert_allclose(y, 2 * (a @ b), rtol=1e-5, atol=1e-5)


def test_mode_none_gives_every_lane_the_whole_operand():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 64)).astype(np.float32)
    y = np.zeros((2, 16, 64), np.float32)
    whole(a, b, y)
    np.testing.assert_allclose(y[0], 2 * (a @ b), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y[0], y[1])


def test_the_shard_type_is_halved_along_the_split_axis():
    for kernel, shape in ((up_down, (8, 64)), (left_right, (16, 32)), (whole, (16, 64))):
        region = kernel.compile().program.function(f"{kernel.__name__}_mm")
        (call,) = [n for n in walk(region.body) if isinstance(n, Call) and n.op == "aiv_shard"]
        assert call.type.shape == shape


@pl.jit
def outside_split(a: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[:, :] = pl.aiv_shard(a)  # ERR:outside
    return y


def test_aiv_shard_needs_a_split_loop():
    compile_error(outside_split, PyptoSyntaxError, "must be used inside a `for aiv_id in "
                  "pl.split_aiv(2, mode=...)` loop", HERE, "outside", "pl.aiv_shard")


@pl.jit
def odd_rows(a: pl.Tensor[[15, 64], pl.FP32], y: pl.Out[pl.Tensor[[15, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            part = pl.aiv_shard(pl.load(a, [0, 0], [15, 64]))
            y = pl.store(pl.mul(part, 2.0), [lane * 8, 0], y)
    return y


def test_an_odd_extent_gives_lane_0_the_ceiling_half():
    # the real IR's contract (pto-isa's *_ODD split): both lanes hold a ceil(15/2) = 8-row
    # box; lane 0 fills 8 rows, lane 1 the remaining 7 (its valid extent)
    region = odd_rows.compile().program.function("odd_rows_r")
    (call,) = [n for n in walk(region.body) if isinstance(n, Call) and n.op == "aiv_shard"]
    assert call.type.shape == (8, 64)
    a = np.random.default_rng(3).standard_normal((15, 64)).astype(np.float32)
    y = np.full((15, 64), np.nan, np.float32)
    odd_rows(a, y)
    np.testing.assert_allclose(y, 2 * a, rtol=1e-6)


@pl.jit
def three_d(a: pl.Tensor[[2, 16, 64], pl.FP32], y: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            part = pl.aiv_shard(pl.load(a, [0, 0, 0], [2, 16, 64]))  # ERR:rank
    return y


@pl.jit
def ragged_columns(a: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            part = pl.aiv_shard(pl.load(a, [0, 0], [16, 64], valid_shape=[16, 60]))  # ERR:cols
    return y


def test_a_split_crossing_needs_a_2d_operand_with_whole_columns_for_left_right():
    compile_error(three_d, InvalidOperationError, "pl.aiv_shard in a UP_DOWN region takes a "
                  "2-D operand", HERE, "rank", "pl.load")
    compile_error(ragged_columns, InvalidOperationError, "LEFT_RIGHT splits the columns, but "
                  "only 60 of the 64 columns are valid", HERE, "cols", "pl.load")

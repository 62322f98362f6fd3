"""Control flow as the real parser defines it: if / while conditions are Bool-typed
scalars (`if 1:` is an error, `if True:` is not), a natural `while cond:` loop carries
the names its body rebinds, and break / continue leave only pl.range and while loops
(InvalidOperationError elsewhere). Each error is checked at its `# ERR:<tag>` token."""
import numpy as np
import pytest
from frontend_helpers import compile_error

import pypto.language as pl
from pypto.errors import InvalidOperationError, PyptoTypeError

HERE = __file__
N = 16


@pl.jit
def if_int(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        if 1:  # ERR:if_int
            y[0:N, 0:N] = pl.mul(x[0:N, 0:N], 2.0)
    return y


@pl.jit
def while_int(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [N, N])
        while 1:  # ERR:while_int
            t = pl.add(t, 1.0)
        pl.store(t, [0, 0], y)
    return y


@pl.jit
def if_true(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        if True:
            y[0:N, 0:N] = pl.mul(x[0:N, 0:N], 2.0)
    return y


@pl.jit
def natural_while(x: pl.Tensor[[N, N], pl.FP32], n: pl.Scalar[pl.INT64],
                  y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [N, N])
        i: pl.Scalar[pl.INT64] = 0
        while i < n:
            t = pl.add(t, 1.0)
            i = i + 1
            if i == 3:
                break
        pl.store(t, [0, 0], y)
    return y


@pl.jit
def break_in_unroll(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.unroll(4):
        continue  # ERR:unroll
    return y


@pl.jit
def break_in_split(a: pl.Tensor[[64, N], pl.FP32], out: pl.Out[pl.Tensor[[64, N], pl.FP32]]):
    for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
        t: pl.Tile[[32, N], pl.FP32] = pl.load(a, [lane * 32, 0], [32, N])
        out = pl.store(t, [lane * 32, 0], out)
        break  # ERR:split
    return out


def test_integer_conditions_are_rejected():
    compile_error(if_int, PyptoTypeError, "if condition must be a Bool-typed scalar, got int 1",
                  HERE, "if_int", "1")
    compile_error(while_int, PyptoTypeError, "while condition must be a Bool-typed scalar",
                  HERE, "while_int", "1")


def test_bool_literal_condition_is_a_compile_time_branch():
    x = np.ones((N, N), np.float32)
    y = np.zeros_like(x)
    if_true(x, y)
    assert (y == 2).all()


@pytest.mark.parametrize("n, want", [(0, 0.0), (2, 2.0), (7, 3.0)])
def test_natural_while_loop_carries_its_rebound_names(n, want):
    x = np.zeros((N, N), np.float32)
    y = np.full_like(x, -1)
    natural_while(x, n, y)
    assert (y == want).all()


def test_loop_exits_outside_range_and_while_are_invalid_operations():
    compile_error(break_in_unroll, InvalidOperationError,
                  "'continue' is not supported in an unrolled loop (pl.unroll)", HERE, "unroll",
                  "continue")


def test_break_inside_split_aiv_is_an_invalid_operation():
    compile_error(break_in_split, InvalidOperationError,
                  "'break' not supported inside pl.split_aiv", HERE, "split", "break")

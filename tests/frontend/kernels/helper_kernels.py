"""Inline helpers defined in another file than their caller: errors inside them must be
located in this file."""
import pypto.language as pl

N = 64
T = 16


@pl.jit.inline
def broken_helper(x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="helper"):
        a = x[0:T, :]
        y[0:T, :] = pl.exp(a) * 2.0  # ERR:helper_op
    return y


@pl.jit
def calls_broken_helper(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = broken_helper(x, y)
    return y

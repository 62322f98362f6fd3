"""Seed: inline helpers, one holding a region, one called inside a region."""
import pypto.language as pl

N = 64
T = 16


@pl.jit.inline
def scale_add(a, b, alpha):
    return pl.add(pl.mul(a, alpha), b)


@pl.jit.inline
def rows_block(x: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
               y: pl.Tensor[[N, N], pl.FP32]):
    for r in pl.parallel(0, N, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            a = x[r:r + T, :]
            b = w[r:r + T, :]
            y[r:r + T, :] = scale_add(a, b, 0.5)
    return y


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = rows_block(x, w, y)
    return y

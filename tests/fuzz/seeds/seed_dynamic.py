"""Seed: a dynamic row count with a valid-shape tail block."""
import pypto.language as pl

M = pl.dynamic("M")
COLS = 64
TR = 32
DYN = {"M": 80}


@pl.jit
def kernel(x: pl.Tensor[[M, COLS], pl.FP32], bias: pl.Tensor[[1, COLS], pl.FP32],
           y: pl.Out[pl.Tensor[[M, COLS], pl.FP32]]):
    x.bind_dynamic(0, M)
    y.bind_dynamic(0, M)
    n = pl.tensor.dim(x, 0)
    for r in pl.range(0, n, TR):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tail_rows"):
            rows = pl.min(TR, n - r)
            t = pl.slice(x, [TR, COLS], [r, 0], valid_shape=[rows, COLS])
            y[r:r + TR, :] = pl.col_expand_add(pl.mul(t, 3.0), bias[:, :])
    return y

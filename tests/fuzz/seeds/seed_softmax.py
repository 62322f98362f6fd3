"""Seed: row softmax over row blocks (pl.parallel + pl.at, row reductions, expands)."""
import pypto.language as pl

ROWS = 128
COLS = 64
TR = 32


@pl.jit
def kernel(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, TR):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_rows"):
            t = x[r:r + TR, :]
            mx = pl.row_max(t)
            e = pl.exp(pl.row_expand_sub(t, mx))
            s = pl.row_sum(e)
            y[r:r + TR, :] = pl.row_expand_div(e, s)
    return y

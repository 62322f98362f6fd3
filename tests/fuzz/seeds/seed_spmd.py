"""Seed: SPMD blocks in both forms (loop form and `with pl.spmd` + get_block_idx)."""
import pypto.language as pl

N = 64
T = 16
BLOCKS = N // T


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[1, N], pl.FP32],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]], z: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(BLOCKS, name_hint="scale"):
        t = x[b * T:b * T + T, :]
        y[b * T:b * T + T, :] = pl.col_expand_mul(pl.mul(t, 2.0), w[:, :])
    with pl.spmd(BLOCKS, name_hint="shift"):
        i = pl.tile.get_block_idx()
        u = y[i * T:i * T + T, :]
        z[i * T:i * T + T, :] = pl.add(pl.abs(u), 1.0)
    return z

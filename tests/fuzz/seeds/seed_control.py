"""Seed: scratch tensor, loop carry with init_values/yield_, if/else on data, a while loop,
a cast and column reductions, plus an incore kernel launched with pl.spmd_submit."""
import pypto.language as pl

N = 32
T = 16
STEPS = 3


@pl.jit.incore
def bump(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    b = pl.tile.get_block_idx()
    y[b * T:b * T + T, :] = pl.add(x[b * T:b * T + T, :], 1.0)
    return y


@pl.jit
def kernel(x: pl.Tensor[[N, N], pl.FP32], flag: pl.Tensor[[1, 1], pl.INT32],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]], s: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    tmp = pl.create_tensor([N, N], pl.FP32)
    tmp, tid = pl.spmd_submit(bump, x, tmp, core_num=N // T)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="carry"):
        acc = pl.full([T, N], pl.FP32, 0.0)
        for k, (a,) in pl.range(0, STEPS, init_values=(acc,)):
            a2 = pl.add(a, tmp[0:T, :])
            a_out = pl.yield_(a2)
        for (i, w) in pl.while_(init_values=(0, a_out)):
            pl.cond(i < 2)
            w2 = pl.mul(w, 0.5)
            i2 = i + 1
            i_out, w_out = pl.yield_(i2, w2)
        y[0:T, :] = w_out
    f = pl.read(flag, [0, 0])
    if f > 0:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="pos"):
            y[T:N, :] = pl.cast(pl.cast(tmp[T:N, :], pl.INT32, mode="floor"), pl.FP32)
    else:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="neg"):
            y[T:N, :] = pl.neg(tmp[T:N, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="colsum"):
        s[:, :] = pl.col_sum(y[:, :])
    return y

"""Seed: a scalar parameter, pl.unroll and pl.pipeline loops, explicit load/store,
set_validshape + fillpad before a reduction, and a column broadcast."""
import pypto.language as pl

R = 32
C = 128
TC = 32
SCALARS = {"cols": 100}


@pl.jit
def kernel(x: pl.Tensor[[R, C], pl.FP32], cols: pl.Scalar[pl.INDEX],
           m: pl.Out[pl.Tensor[[R, 1], pl.FP32]], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="masked_max"):
        t = pl.load(x, [0, 0], [R, C])
        t = pl.set_validshape(t, R, cols)
        t = pl.fillpad(t, pad_value=pl.PadValue.min)
        tmp = pl.create_tile([R, C], pl.FP32)
        pl.store(pl.row_max(t, tmp), [0, 0], m)
    for h in pl.unroll(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="halves"):
            for c in pl.pipeline(0, C, TC, stage=2):
                u = x[h * 16:h * 16 + 16, c:c + TC]
                y[h * 16:h * 16 + 16, c:c + TC] = pl.maximum(u, pl.sqrt(pl.abs(u)))
    return y

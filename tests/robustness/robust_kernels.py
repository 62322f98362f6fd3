"""Kernels for the "nothing is lost" tests (module level: the frontend reads their source)."""
import pypto.language as pl

N = 64
T = 16


@pl.jit
def writes_then_faults(x: pl.Tensor[[N, N], pl.FP32], off: pl.Scalar[pl.INDEX],
                       y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
                       z: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
        y[:, :] = pl.add(x[:, :], 1.0)
        z[:, :] = pl.add(z[:, :], x[:, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
        y[0:T, :] = x[off:off + T, :]
    return y


@pl.jit
def writes_its_input(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="clobber"):
        t = pl.add(x[:, :], 1.0)
        x[:, :] = t
        y[:, :] = t
    return y


@pl.jit
def out_then_scalar(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
                    k: pl.Scalar[pl.INT32], w: pl.Tensor[[N, N], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y[:, :] = pl.add(x[:, :], w[:, :])
    return y


@pl.jit
def two_outputs(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
                z: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y[:, :] = x[:, :]
        z[:, :] = pl.neg(x[:, :])
    return y


@pl.jit
def mixed_dtypes(a: pl.Tensor[[N, N], pl.BF16], b: pl.Tensor[[N, N], pl.INT8],
                 c: pl.Tensor[[N, N], pl.BOOL], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[0:T, :] = pl.exp(a[0:T, :]) * 2.0  # a compile error: Python operator on a tile
    return y


@pl.jit
def partly_written(x: pl.Tensor[[N, N], pl.FP32], i: pl.Tensor[[N, N], pl.INT32],
                   y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
                   j: pl.Out[pl.Tensor[[N, N], pl.INT32]]):
    """Leaves the bottom of both outputs unwritten: residue (NaN / seeded garbage)."""
    tmp = pl.create_tensor([N, N], pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top"):
        tmp[0:T, :] = pl.mul(x[0:T, :], 3.0)
        y[0:T, :] = tmp[0:T, :]
        j[0:T, :] = i[0:T, :]
    return y


@pl.jit
def random_bits(x: pl.Tensor[[16, 32], pl.FP32], r: pl.Out[pl.Tensor[[16, 32], pl.UINT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rng"):
        r[:, :] = pl.random(7, 11, 0, 0, 0, 0, [16, 32])
    return r

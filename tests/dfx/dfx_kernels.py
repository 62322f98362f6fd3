"""Kernels the DFX tests run (defined in a file: the frontend reads their source)."""
import numpy as np

import pypto.language as pl
from pypto.golden import ScalarSpec, TensorSpec

ROWS, COLS, TILE = 128, 64, 32


@pl.jit
def softmax(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_rows"):
            tile = x[r : r + TILE, :]
            e = pl.exp(pl.row_expand_sub(tile, pl.row_max(tile)))
            y[r : r + TILE, :] = pl.row_expand_div(e, pl.row_sum(e))
    return y


def softmax_specs():
    rng = np.random.default_rng(0)
    return [TensorSpec("x", [ROWS, COLS], np.float32,
                       init_value=lambda: rng.standard_normal((ROWS, COLS)).astype(np.float32)),
            TensorSpec("y", [ROWS, COLS], np.float32, is_output=True)]


def softmax_golden(v):
    e = np.exp(v["x"] - v["x"].max(axis=1, keepdims=True))
    v["y"][:] = e / e.sum(axis=1, keepdims=True)


@pl.jit
def scale_inplace(x: pl.InOut[pl.Tensor[[64, 32], pl.FP32]], a: pl.Scalar[pl.FP32]):
    for r in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            x[r : r + 32, :] = pl.mul(x[r : r + 32, :], a)
    return x


def scale_specs():
    return [TensorSpec("x", [64, 32], np.float32, is_output=True,
                       init_value=lambda: np.arange(64 * 32, dtype=np.float32).reshape(64, 32)),
            ScalarSpec("a", np.float32, 1.5)]


def scale_golden(v):
    v["x"][:] *= v["a"]


@pl.jit
def matmul(a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
           c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        c[:, :] = pl.matmul(a[:, :], b[:, :])
    return c


@pl.jit
def staged(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    tmp = pl.create_tensor([64, 32], dtype=pl.FP32)
    pl.dump_tag(tmp)
    for r in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
            tmp[r : r + 32, :] = pl.mul(x[r : r + 32, :], 2.0)
    for r in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="inc"):
            y[r : r + 32, :] = pl.add(tmp[r : r + 32, :], 1.0)
    return y


@pl.jit
def listed(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top", dumps=[x]):
        y[0:32, :] = pl.mul(x[0:32, :], 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bottom"):
        y[32:64, :] = pl.mul(x[32:64, :], 2.0)
    return y


def staged_specs():
    return [TensorSpec("x", [64, 32], np.float32,
                       init_value=lambda: np.arange(64 * 32, dtype=np.float32).reshape(64, 32)),
            TensorSpec("y", [64, 32], np.float32, is_output=True)]


def staged_golden(v):
    v["y"][:] = v["x"] * 2 + 1


def listed_golden(v):
    v["y"][:] = v["x"] * 2

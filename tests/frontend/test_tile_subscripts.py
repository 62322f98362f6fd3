"""Subscripts of on-chip tiles follow the real parser: a compile-time lower bound, a
static upper past the tile's extent clamps to it, a run-time upper keeps the static
extent and narrows the valid shape; writes lift a narrowed value into its window, and a
tensor source must have the window's rank. Each error located."""
from __future__ import annotations

import numpy as np
from frontend_helpers import compile_error

import pypto.language as pl
from pypto.errors import PyptoTypeError, UnsupportedFeatureError

HERE = __file__
R, C = 16, 64


@pl.jit
def prefix(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
           n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        head = t[:, :n]  # a run-time prefix: static [R, C], valid [R, n]
        wide = t[:, :256]  # clamps to the tile's 64 columns
        y = pl.store(pl.add(head, wide), [0, 0], y)
    return y


def test_a_run_time_upper_narrows_the_valid_shape_and_a_static_one_clamps():
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    for n in (40, 64):
        y = np.full((R, C), 7.0, np.float32)
        prefix(x, y, n)
        np.testing.assert_array_equal(y[:, :n], 2 * x[:, :n])
        # never written: a direct call's pl.Out keeps the caller's values (out_start)
        assert (y[:, n:] == 7.0).all()


@pl.jit
def dynamic_lower(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
                  s: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        u = t[:, s:]  # ERR:lower
        y = pl.store(u, [0, 0], y)
    return y


@pl.jit
def empty(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [R, C])
        u = t[:, 10:5]  # ERR:empty
        y = pl.store(u, [0, 0], y)
    return y


@pl.jit
def rank_down(out: pl.InOut[pl.Tensor[[R, C], pl.FP32]], src: pl.Tensor[[32], pl.FP32]):
    out[0:1, 0:32] = src  # ERR:rank
    return out


def test_tile_subscript_errors():
    z = np.zeros((R, C), np.float32)
    compile_error(dynamic_lower, UnsupportedFeatureError, "dynamic lower bounds are not "
                  "supported in a tile subscript", HERE, "lower", "s:", args=(z, z, 3))
    compile_error(empty, UnsupportedFeatureError, "a tile subscript must produce a positive "
                  "static extent", HERE, "empty", "10:5", args=(z, z))
    compile_error(rank_down, PyptoTypeError, "the source of a write into a 2-D window of 'out' "
                  "must be 2D", HERE, "rank", "out[0:1", args=(z, np.zeros(32, np.float32)))


@pl.jit
def lift(x: pl.Tensor[[4, 8, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8, 8], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0, 0], [4, 8, 8])
        src = pl.load(x, [0, 0, 0], [1, 8, 8])
        flat = pl.reshape(src, [8, 8])
        narrowed = pl.set_validshape(flat, 4, 4)
        t[2, :, :] = narrowed  # writes the valid [4, 4] corner of plane 2
        y = pl.store(t, [0, 0, 0], y)
    return y


def test_a_narrowed_tile_lifts_into_its_window():
    x = np.arange(4 * 8 * 8, dtype=np.float32).reshape(4, 8, 8)
    y = np.zeros_like(x)
    lift(x, y)
    want = x.copy()
    want[2, :4, :4] = x[0, :4, :4]
    np.testing.assert_array_equal(y, want)


# --- the dtype of a subscript write ----------------------------------------------------


@pl.jit
def int_tile_into_float_tile(x: pl.Tensor[[16, 16], pl.FP32], i: pl.Tensor[[16, 16], pl.INT32],
                             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="w"):
        t = pl.load(x, [0, 0], [16, 16])
        t[0:8, :] = pl.load(i, [0, 0], [8, 16])  # ERR:tile_dtype
        y = pl.store(t, [0, 0], y)
    return y


def test_a_write_into_a_tile_keeps_its_dtype():
    # tile.assemble: one dtype (or the FP32 -> BF16 / FP16 drain)
    err = compile_error(int_tile_into_float_tile, PyptoTypeError, "cannot write a pl.INT32 "
                        "value into the tile 't' (pl.FP32)", HERE, "tile_dtype", "t[0:8, :]")
    assert err.hint == "convert it first with pl.cast(value, pl.FP32)"


@pl.jit
def half_into_float_tensor(x: pl.Tensor[[16, 16], pl.FP16],
                           y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="w"):
        y[0:16, :] = pl.mul(x[0:16, :], 0.5)  # FP32 (the float literal), into FP32
        y[0:8, :] = x[0:8, :]  # FP16 into FP32: the write converts (no dtype rule there)
    return y


def test_a_write_into_a_tensor_converts_to_its_dtype():
    x = np.random.default_rng(4).standard_normal((16, 16)).astype(np.float16)
    y = np.zeros((16, 16), np.float32)
    half_into_float_tensor(x, y)
    np.testing.assert_array_equal(y[0:8], x[0:8].astype(np.float32))
    np.testing.assert_allclose(y[8:], x[8:].astype(np.float32) * 0.5, rtol=1e-6)

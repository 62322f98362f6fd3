"""The fast paths of pl.cast (`pypto.ops.cast_fast`) give the bits of the general rounding
(`_round_to_float`, float64 frexp / ldexp) on every exponent, tie and special value."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pypto.ir import dtypes
from pypto.ops.cast import _round_to_float, cast_array
from pypto.ops.cast_fast import narrow

BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(autouse=True)
def _quiet_nan_casts():
    with np.errstate(all="ignore"):  # as in a simulation run (NaN -> bf16 warns)
        yield


def _general(a: np.ndarray, target: np.dtype, mode: str) -> np.ndarray:
    return _round_to_float(a.astype(np.float64), target, mode)


def _bits(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1).view(np.uint8)


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and bool((_bits(x) == _bits(y)).all())


def _every_upper_half() -> np.ndarray:
    """float32 values with every upper 16 bits (sign, exponent: zeros, subnormals, normals,
    infinities, NaNs), each with lower halves below, at and above a tie."""
    hi = np.arange(1 << 16, dtype=np.uint32) << 16
    lows = np.array([0, 1, 0x4000, 0x7FFF, 0x8000, 0x8001, 0xC000, 0xFFFF], np.uint32)
    return (hi[:, None] | lows[None, :]).reshape(-1).view(np.float32)


@pytest.mark.parametrize("mode", ["round", "rint", "none"])
def test_fp32_to_bf16_every_exponent_and_tie(mode):
    x = _every_upper_half()
    fast = narrow(x, BF16, mode, lambda v: _general(v, BF16, mode))
    assert fast is not None
    assert _same(fast, _general(x, BF16, mode))
    strided = x.reshape(-1, 8)[:, ::3]
    assert _same(cast_array(strided, dtypes.BF16, mode), _general(strided, BF16, mode))


def test_fp32_to_bf16_ties_and_nan():
    x = np.array([0x3F808000, 0x3F818000, 0xBF808000, 0x7F7F8000, 0x7FC00001, 0xFFC00000],
                 np.uint32).view(np.float32)
    away = cast_array(x, dtypes.BF16, "round").view(np.uint16)
    even = cast_array(x, dtypes.BF16, "rint").view(np.uint16)
    assert list(away[:4]) == [0x3F81, 0x3F82, 0xBF81, 0x7F80]  # the last overflows to inf
    assert list(even[:4]) == [0x3F80, 0x3F82, 0xBF80, 0x7F80]
    assert np.isnan(away[4:].view(BF16).astype(np.float32)).all()


def test_fp32_to_bf16_other_modes_take_the_general_path():
    x = np.array([1.0], np.float32)
    for mode in ("floor", "ceil", "trunc", "odd"):
        assert narrow(x, BF16, mode, lambda v: v) is None


@pytest.mark.parametrize("target", [np.dtype(np.float16), BF16, np.dtype(np.float32)])
@pytest.mark.parametrize("src", [np.int8, np.uint8, np.int16, np.int32, np.uint32])
def test_exact_integers_every_mode(target, src):
    bound = {np.dtype(np.float16): 2048, BF16: 256, np.dtype(np.float32): 1 << 24}[target]
    info = np.iinfo(src)
    a = np.arange(max(int(info.min), -bound), min(int(info.max), bound) + 1).astype(src)
    for mode in ("round", "rint", "none", "floor", "ceil", "trunc", "odd"):
        got = narrow(a, target, mode, lambda v: v)
        assert got is not None and _same(got, _general(a, target, mode))


def test_inexact_integers_round_in_the_general_path():
    a = np.array([2049, 2051, -2051, 7], np.int32)
    assert narrow(a, np.dtype(np.float16), "round", lambda v: v) is None
    got = cast_array(a, dtypes.FP16, "round")
    assert list(got.astype(np.int64)) == [2050, 2052, -2052, 7]  # ties away from zero
    assert list(cast_array(a, dtypes.FP16, "rint").astype(np.int64)) == [2048, 2052, -2052, 7]


def test_int32_to_fp32_nearest_even_anywhere():
    edges = np.array([2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24 + 1), 2 ** 31 - 1, -2 ** 31,
                      2 ** 30 + 64, 2 ** 30 + 192, 123], np.int64).astype(np.int32)
    rng = np.random.default_rng(3)
    a = np.concatenate([edges, rng.integers(-2 ** 31, 2 ** 31, 1 << 16).astype(np.int32)])
    f32 = np.dtype(np.float32)
    for mode in ("rint", "none"):
        got = narrow(a, f32, mode, lambda v: v)
        assert got is not None and _same(got, _general(a, f32, mode))
    assert list(got[:7].astype(np.int64)) == [2 ** 24, 2 ** 24 + 4, -(2 ** 24), 2 ** 31, -2 ** 31,
                                              2 ** 30 + 0, 2 ** 30 + 256]
    assert narrow(a, f32, "round", lambda v: v) is None  # ties away: the general path

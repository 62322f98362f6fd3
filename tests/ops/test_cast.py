"""pl.cast numerics against independent numpy / ml_dtypes / bit-level expressions."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from pypto.ir import dtypes
from pypto.ops.registry import OpError
from tests.ops.helpers import BF16, FP16, FP32, INT8, INT32, attr, impl, rule, scalar, tensor, tile

MODES = ["none", "rint", "round", "floor", "ceil", "trunc", "odd"]


def cast(x, dt, mode="round"):
    return impl("cast", x, dt, mode)


# --- float -> int ------------------------------------------------------------------------

TIES = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.25, -3.75, 7.0, -7.0], np.float32)


def _ref_int(x, mode):
    out = []
    for v in x.astype(np.float64):
        if mode in ("rint", "none"):
            r = round(v)  # Python rounds half to even
        elif mode == "round":
            r = math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)
        elif mode == "floor":
            r = math.floor(v)
        elif mode == "ceil":
            r = math.ceil(v)
        elif mode == "trunc":
            r = math.trunc(v)
        else:  # odd
            t = math.trunc(v)
            r = t if t == v or t % 2 else t + (1 if v > 0 else -1)
        out.append(r)
    return np.array(out)


@pytest.mark.parametrize("mode", MODES)
def test_float_to_int_ties_every_mode(mode):
    got = cast(TIES, dtypes.INT32, mode)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, _ref_int(TIES, mode))


def test_default_mode_is_ties_away_from_zero():
    got = cast(np.array([2.5, -2.5, 0.5, -0.5], np.float32), dtypes.INT32)
    np.testing.assert_array_equal(got, [3, -3, 1, -1])
    # numpy / torch round half to even; the hardware default does not
    assert not np.array_equal(got, np.rint([2.5, -2.5, 0.5, -0.5]))


def test_mode_codes_match_names():
    x = np.array([2.5, -1.5, 1.2], np.float32)
    for code, name in enumerate(MODES):
        np.testing.assert_array_equal(cast(x, dtypes.INT32, code), cast(x, dtypes.INT32, name))


@pytest.mark.parametrize("mode", MODES)
def test_float_to_int_saturates_and_nan_is_zero(mode):
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9], np.float32)
    got = cast(x, dtypes.INT32, mode)
    np.testing.assert_array_equal(got, [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31])
    x8 = np.array([300.0, -300.0, 127.4, -128.6, 126.5], np.float32)
    got8 = cast(x8, dtypes.INT8, mode)
    assert got8.dtype == np.int8
    assert got8[0] == 127 and got8[1] == -128


def test_bf16_to_int8_path():
    x = np.array([1.5, -2.5, 100.0, 1000.0], ml_dtypes.bfloat16)
    np.testing.assert_array_equal(cast(x, dtypes.INT8, "rint"), [2, -2, 100, 127])
    np.testing.assert_array_equal(cast(x, dtypes.INT8), [2, -3, 100, 127])


# --- float -> narrower float -------------------------------------------------------------


def _bf16_bits(x):
    return np.asarray(x, ml_dtypes.bfloat16).view(np.uint16)


def _f32_from_bits(bits):
    return np.array(bits, np.uint32).view(np.float32)


def test_fp32_to_bf16_rint_matches_ml_dtypes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4096).astype(np.float32) * 1e3
    got = cast(x, BF16, "rint")
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_fp32_to_bf16_exact_ties():
    # low 16 bits exactly 0x8000: halfway between two bf16 values
    hi = np.array([0x3F80, 0x3F81, 0xBF80, 0xBF81], np.uint32)
    x = _f32_from_bits((hi << 16) | 0x8000)
    away = hi + 1  # magnitude grows for both signs (sign-magnitude format)
    even = np.where(hi % 2 == 0, hi, hi + 1)
    np.testing.assert_array_equal(cast(x, BF16, "round").view(np.uint16), away)
    np.testing.assert_array_equal(cast(x, BF16, "rint").view(np.uint16), even)
    np.testing.assert_array_equal(cast(x, BF16, "none").view(np.uint16), even)
    np.testing.assert_array_equal(cast(x, BF16, "trunc").view(np.uint16), hi)
    pos = (hi & 0x8000) == 0
    np.testing.assert_array_equal(cast(x, BF16, "floor").view(np.uint16), np.where(pos, hi, hi + 1))
    np.testing.assert_array_equal(cast(x, BF16, "ceil").view(np.uint16), np.where(pos, hi + 1, hi))
    np.testing.assert_array_equal(cast(x, BF16, "odd").view(np.uint16), hi | 1)


def test_fp32_to_bf16_nan_inf_and_overflow():
    big = _f32_from_bits([0x7F7FFFFF])[0]  # fp32 max rounds past bf16 max
    x = np.array([np.nan, np.inf, -np.inf, big, -big], np.float32)
    r = cast(x, BF16, "round").astype(np.float32)
    assert np.isnan(r[0]) and r[1] == np.inf and r[2] == -np.inf
    assert r[3] == np.inf and r[4] == -np.inf
    bf_max = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    t = cast(x, BF16, "trunc").astype(np.float32)
    assert t[3] == bf_max and t[4] == -bf_max
    f = cast(x, BF16, "floor").astype(np.float32)
    assert f[3] == bf_max and f[4] == -np.inf
    c = cast(x, BF16, "ceil").astype(np.float32)
    assert c[3] == np.inf and c[4] == -bf_max


def test_fp32_to_fp16_modes_against_neighbours():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(2000) * 100).astype(np.float32)
    rne = x.astype(np.float16)  # numpy rounds to nearest even, exactly
    got = cast(x, FP16, "rint")
    np.testing.assert_array_equal(got, rne)
    lo = np.where(rne.astype(np.float32) > x, np.nextafter(rne, np.float16(-np.inf)), rne)
    hi = np.where(rne.astype(np.float32) < x, np.nextafter(rne, np.float16(np.inf)), rne)
    np.testing.assert_array_equal(cast(x, FP16, "floor"), lo)
    np.testing.assert_array_equal(cast(x, FP16, "ceil"), hi)
    np.testing.assert_array_equal(cast(x, FP16, "trunc"), np.where(x >= 0, lo, hi))
    odd = cast(x, FP16, "odd")
    exact = lo == hi
    assert np.all(exact | (odd.view(np.uint16) % 2 == 1))


def test_fp32_to_fp16_overflow_and_subnormal():
    x = np.array([65519.0, 65520.0, 1e6, 1e-8, -1e-8], np.float32)
    r = cast(x, FP16, "round")
    assert r[0] == np.float16(65504) and np.isinf(r[1]) and np.isinf(r[2])
    assert r[3] == 0 and r[4] == 0
    o = cast(x, FP16, "odd")
    assert o[2] == np.float16(65504)
    assert o[3] == np.float16(2.0 ** -24) and o[4] == -np.float16(2.0 ** -24)


def test_fp32_to_fp8_saturates():
    x = np.array([1000.0, -1000.0, 0.3, np.nan], np.float32)
    r = cast(x, dtypes.FP8E4M3FN, "rint").astype(np.float32)
    assert r[0] == 448 and r[1] == -448
    assert r[2] == np.float32(np.float32(0.3).astype(ml_dtypes.float8_e4m3fn))
    assert np.isnan(r[3])


# --- int -> float, int -> int ---------------------------------------------------------------


def test_int32_to_fp32_rounding():
    x = np.array([2**24 + 1, -(2**24 + 1), 2**24 + 3, 7], np.int32)
    np.testing.assert_array_equal(cast(x, FP32, "round"), [2**24 + 2, -(2**24 + 2), 2**24 + 4, 7])
    np.testing.assert_array_equal(cast(x, FP32, "rint"), x.astype(np.float32))
    np.testing.assert_array_equal(cast(x, FP32, "trunc"), [2**24, -(2**24), 2**24 + 2, 7])


def test_int_narrowing_saturates():
    x = np.array([70000, -70000, 5, 127, 128], np.int32)
    np.testing.assert_array_equal(cast(x, dtypes.INT16), [32767, -32768, 5, 127, 128])
    np.testing.assert_array_equal(cast(x, INT8), [127, -128, 5, 127, 127])
    np.testing.assert_array_equal(cast(np.array([-1, 3], np.int32), dtypes.UINT32), [0, 3])
    np.testing.assert_array_equal(cast(np.array([2**32 - 1], np.uint32), INT32), [2**31 - 1])


def test_widening_is_exact():
    x = np.array([1.5, -3.25, 1e-3], ml_dtypes.bfloat16)
    np.testing.assert_array_equal(cast(x, FP32), x.astype(np.float32))
    i8 = np.array([-128, 127], np.int8)
    np.testing.assert_array_equal(cast(i8, INT32), [-128, 127])


def test_scalar_cast():
    assert impl("cast", 7, INT32) == 7
    assert impl("cast", 2.5, INT32) == 3
    assert impl("cast", 3e9, INT32) == 2**31 - 1


# --- type rule ---------------------------------------------------------------------------------


def test_cast_rule_types():
    t = rule("cast", tensor([4, 8], FP32), attr(BF16))
    assert t.dtype == BF16 and t.shape == (4, 8)
    k = rule("cast", tile([4, 8], FP32), attr(INT8), attr("rint"))
    assert k.dtype == INT8


def test_cast_rule_errors():
    with pytest.raises(OpError, match="unknown cast mode") as e:
        rule("cast", tensor([4], FP32), attr(INT32), attr("nearest"))
    assert e.value.arg == "mode"
    with pytest.raises(OpError, match="dtype"):
        rule("cast", tensor([4], FP32), attr("int32"))
    with pytest.raises(OpError, match=r"scalar pl.cast accepts only the default mode"):
        rule("cast", scalar(FP32), attr(INT32), attr("floor"))

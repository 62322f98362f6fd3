"""`pl.cast`: dtype conversion with the hardware's rounding modes.

Modes (name or int): none 0, rint 1 (ties to even), round 2 (ties away from
zero; the default, unlike numpy/torch), floor 3, ceil 4, trunc 5, odd 6.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir.dtypes import DType
from pypto.ir.types import ScalarType
from pypto.ops.numeric import is_float_np
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import dtype_arg, like, py_value, shaped, type_of

MODES = {"none": 0, "rint": 1, "round": 2, "floor": 3, "ceil": 4, "trunc": 5, "odd": 6}
MODE_NAMES = {v: k for k, v in MODES.items()}


def mode_name(mode: Any) -> str:
    m = py_value(mode)
    if isinstance(m, str) and m in MODES:
        return m
    if isinstance(m, int) and m in MODE_NAMES:
        return MODE_NAMES[m]
    raise OpError(f"unknown cast mode {m!r}; use one of {', '.join(MODES)}", arg="mode")


def _cast(x, target_type, mode="round"):
    """Convert `x` to `target_type`, rounding with `mode`."""
    dt = dtype_arg(target_type, "target_type")
    mode_name(mode)
    t = type_of(x)
    if isinstance(t, ScalarType) or isinstance(x, (int, float)):
        return ScalarType(dt)
    return like(shaped(x, "x"), dtype=dt)


def _round_float(x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "round":
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    if mode == "rint":
        return np.rint(x)
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    if mode in ("trunc", "none"):
        return np.trunc(x)
    # round to odd: truncate, then make the result odd when inexact
    t = np.trunc(x)
    inexact = t != x
    return np.where(inexact & (np.mod(t, 2) == 0), t + np.sign(x), t)


def _to_bf16(x: np.ndarray, mode: str) -> np.ndarray:
    """fp32 -> bf16 by bit arithmetic so every rounding mode is exact."""
    import ml_dtypes

    f = np.ascontiguousarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    low = bits & 0xFFFF
    keep = bits >> 16
    neg = (bits >> 31) & 1
    if mode == "round":
        keep = keep + (low >= 0x8000)
    elif mode == "rint":
        keep = keep + ((low > 0x8000) | ((low == 0x8000) & (keep & 1 == 1)))
    elif mode == "floor":
        keep = keep + ((low != 0) & (neg == 1))
    elif mode == "ceil":
        keep = keep + ((low != 0) & (neg == 0))
    elif mode == "odd":
        keep = keep | (low != 0)
    nan = np.isnan(f)
    out = (keep & 0xFFFF).astype(np.uint16)
    out[nan] = 0x7FC0
    return out.view(ml_dtypes.bfloat16)


def cast_array(x: Any, dt: DType, mode: str = "round") -> Any:
    a = np.asarray(x)
    target = dt.np
    if dt.is_int() or dt.name == "BOOL":
        if is_float_np(a.dtype):
            r = _round_float(a.astype(np.float64), mode)
            info = np.iinfo(target) if dt.name != "BOOL" else None
            if info is not None:
                r = np.clip(np.nan_to_num(r), info.min, info.max)
            return r.astype(target)
        return a.astype(target)
    if dt.name == "BF16" and a.dtype == np.float32 and mode != "none":
        return _to_bf16(a, mode)
    if is_float_np(a.dtype) and mode in ("round",) and a.dtype.itemsize > target.itemsize:
        return _ties_away(a, target)
    return a.astype(target)


def _ties_away(a: np.ndarray, target: np.dtype) -> np.ndarray:
    """Nearest rounding with ties away from zero, for float narrowing numpy rounds to even."""
    wide = a.astype(np.float64)
    near = wide.astype(target)
    back = near.astype(np.float64)
    # Only exact ties differ from ties-to-even: the value sits halfway between
    # `near` and its neighbour away from `near`.
    away = np.nextafter(near, np.where(wide > back, np.inf, -np.inf).astype(target))
    tie = (np.abs(wide - back) == np.abs(away.astype(np.float64) - wide)) & (wide != back)
    pick_away = tie & (np.abs(away.astype(np.float64)) > np.abs(back))
    return np.where(pick_away, away, near).astype(target)


def _cast_impl(x, target_type, mode="round"):
    m = mode if isinstance(mode, str) else MODE_NAMES.get(mode, "round")
    if isinstance(x, (int, float, bool, np.generic)):
        r = cast_array(np.asarray(x), target_type, m)
        return r.item()
    return cast_array(x, target_type, m)


defop("cast", unit=Unit.VECTOR, impl=_cast_impl,
      names=("pl.cast", "pl.tensor.cast", "pl.tile.cast"))(_cast)

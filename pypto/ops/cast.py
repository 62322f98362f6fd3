"""`pl.cast`: dtype conversion with the hardware's rounding modes.

Modes (name or int): none 0, rint 1 (ties to even), round 2 (ties away from
zero; the default, unlike numpy/torch), floor 3, ceil 4, trunc 5, odd 6
(round to odd: an inexact result takes whichever neighbour is odd).

Numerics (all conversions are computed exactly, then rounded once):

* `none` rounds like `rint` when the conversion loses precision and is exact
  otherwise (the vector unit's CAST_NONE).
* float -> integer: round with the mode, then **saturate** to the target range;
  NaN converts to 0, +inf / -inf to the maximum / minimum.
* integer -> narrower integer (and signed <-> unsigned): **saturate**.
* anything -> narrower float (fp32 -> bf16/fp16/fp8/fp4, int32 -> fp32 …):
  round with the mode. Overflow follows IEEE directed rounding for formats with
  an infinity (nearest modes give ±inf, floor/ceil/trunc/odd stop at the largest
  finite value on the side they round toward zero); formats without an infinity
  (FP8E4M3FN, FP4) saturate to their largest finite value. NaN stays NaN.
* anything -> BOOL: nonzero is true.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from pypto.ir import dtypes
from pypto.ir.dtypes import DType
from pypto.ir.types import ScalarType
from pypto.ops.cast_fast import narrow
from pypto.ops.facts import Batch, Family
from pypto.ops.numeric import is_float_np
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import dtype_arg, like, py_value, shaped, type_of

MODES = {"none": 0, "rint": 1, "round": 2, "floor": 3, "ceil": 4, "trunc": 5, "odd": 6}
MODE_NAMES = {v: k for k, v in MODES.items()}


def mode_name(mode: Any) -> str:
    m = py_value(mode)
    if isinstance(m, str) and m in MODES:
        return m
    if isinstance(m, int) and not isinstance(m, bool) and m in MODE_NAMES:
        return MODE_NAMES[m]
    raise OpError(f"unknown cast mode {m!r}; use one of {', '.join(MODES)} (or 0-6)", arg="mode")


def _cast(x, target_type, mode="round"):
    """Convert `x` to `target_type`, rounding with `mode` (default "round": nearest,
    ties away from zero). Float -> int and int -> narrower int saturate."""
    dt = dtype_arg(target_type, "target_type")
    m = mode_name(mode)
    t = type_of(x)
    if isinstance(t, ScalarType) or (isinstance(x, (int, float)) and not isinstance(x, bool)):
        if m != "round":
            raise OpError("a scalar pl.cast accepts only the default mode", arg="mode",
                          hint="drop mode=, or cast a tile/tensor instead")
        return ScalarType(dt)
    if t is None:
        raise OpError(f"pl.cast needs a tensor, tile or scalar, got {x!r}", arg="x")
    s = shaped(x, "x")
    if dt == dtypes.TASK_ID or s.dtype == dtypes.TASK_ID:
        raise OpError("TASK_ID handles are not numbers and cannot be cast", arg="target_type")
    return like(s, dtype=dt)


# --- rounding kernels -----------------------------------------------------------------


def _round_int(q: np.ndarray, mode: str) -> np.ndarray:
    """Round float64 values to integers (as float64) with a cast mode."""
    if mode == "round":
        return np.copysign(np.floor(np.abs(q) + 0.5), q)
    if mode in ("rint", "none"):
        return np.rint(q)
    if mode == "floor":
        return np.floor(q)
    if mode == "ceil":
        return np.ceil(q)
    if mode == "trunc":
        return np.trunc(q)
    # odd: exact values stay; otherwise take the odd one of the two neighbours
    with np.errstate(invalid="ignore"):
        t = np.trunc(q)
        inexact = t != q
        even = np.fmod(t, 2) == 0
        return np.where(inexact & even, t + np.sign(q), t)


_DTYPE_NAMES: dict = {}  # dtype -> dtype.name, which numpy computes in Python each time


def _dtype_name(dt: np.dtype) -> str:
    r = _DTYPE_NAMES.get(dt)
    if r is None:
        r = _DTYPE_NAMES[dt] = dt.name
    return r


_NO_INF = {"float8_e4m3fn", "float4_e2m1fn"}
_FLOAT_LIMITS: dict = {}  # float dtype -> (nmant, minexp, max): ml_dtypes.finfo is slow


def _round_to_float(x: np.ndarray, target: np.dtype, mode: str) -> np.ndarray:
    """Round exact float64 values into float format `target` with `mode`."""
    limits = _FLOAT_LIMITS.get(target)
    if limits is None:
        fi = ml_dtypes.finfo(target)
        limits = _FLOAT_LIMITS[target] = int(fi.nmant), int(fi.minexp), float(fi.max)
    nmant, emin, fmax = limits
    target_name = _dtype_name(target)
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(x) & (x != 0)
    with np.errstate(all="ignore"):
        _, e2 = np.frexp(np.where(finite, x, 1.0))
        ulp_exp = np.maximum(e2 - 1, emin) - nmant
        q = np.ldexp(np.where(finite, x, 0.0), -ulp_exp)
        r = np.ldexp(_round_int(q, mode), ulp_exp)
    out = np.where(finite, r, x)
    over = finite & (np.abs(out) > fmax)
    if over.any():
        pos = out > 0
        if target_name in _NO_INF:
            big = np.copysign(fmax, out)
        elif mode in ("round", "rint", "none"):
            big = np.copysign(np.inf, out)
        elif mode == "floor":
            big = np.where(pos, fmax, -np.inf)
        elif mode == "ceil":
            big = np.where(pos, np.inf, -fmax)
        else:  # trunc, odd: toward zero never reaches infinity
            big = np.copysign(fmax, out)
        out = np.where(over, big, out)
    if target_name in _NO_INF:
        inf = np.isinf(x)
        if target_name == "float4_e2m1fn":  # no NaN either: NaN -> 0, inf saturates
            out = np.where(np.isnan(x), 0.0, np.where(inf, np.copysign(fmax, x), out))
        else:
            out = np.where(inf, np.nan, out)
    return out.astype(target)


def _saturate_float_to_int(r: np.ndarray, target: np.dtype) -> np.ndarray:
    info = np.iinfo(target)
    r = np.where(np.isnan(r), 0.0, r)
    # float64 cannot hold every 64-bit bound exactly; compare before converting.
    hi = r >= float(info.max)
    lo = r <= float(info.min)
    safe = np.where(hi | lo, 0.0, r)
    out = safe.astype(target)
    out[hi] = info.max
    out[lo] = info.min
    return out


# (source, target) integer dtypes -> None when the target holds every source value, else
# the (lo, hi) bounds to clip to (np.iinfo costs ~1 us a call, casts run per op)
_INT_BOUNDS: dict = {}


def _int_bounds(src_dt: np.dtype, target: np.dtype) -> tuple | None:
    key = (src_dt, target)
    if key not in _INT_BOUNDS:
        src, dst = np.iinfo(src_dt), np.iinfo(target)
        wide = np.iinfo(np.int64)
        _INT_BOUNDS[key] = None if src.min >= dst.min and src.max <= dst.max else \
            (max(int(dst.min), int(wide.min)), min(int(dst.max), int(wide.max)))
    return _INT_BOUNDS[key]


def _saturate_int(a: np.ndarray, target: np.dtype) -> np.ndarray:
    bounds = _int_bounds(a.dtype, target)
    if bounds is None:
        return a.astype(target)
    lo, hi = bounds
    if a.dtype == np.uint64:
        return np.minimum(a, np.uint64(hi)).astype(target)
    return np.clip(a.astype(np.int64), lo, hi).astype(target)


def _is_sub_byte(dt: np.dtype) -> bool:
    return _dtype_name(dt) in ("int4", "uint4")


_INT_DTYPES: dict = {}  # dtype -> is it an integer format (int4 / uint4 included)


def _is_int_np(dt: np.dtype) -> bool:
    r = _INT_DTYPES.get(dt)
    if r is None:
        r = _INT_DTYPES[dt] = dt.kind in "iu" or dt.name in ("int4", "uint4")
    return r


def cast_array(x: Any, dt: DType, mode: str = "round") -> np.ndarray:
    """Convert array `x` to dtype `dt` with rounding mode `mode` (see module doc)."""
    a = np.asarray(x)
    target = dt.np
    target_name = _dtype_name(target)
    if a.dtype == np.bool_:
        a = a.astype(np.int8)
    if dt == dtypes.BOOL:
        return a.astype(np.float64) != 0 if is_float_np(a.dtype) else a != 0
    src_float = is_float_np(a.dtype)
    if _is_int_np(target):
        if src_float:
            r = _round_int(a.astype(np.float64), mode)
            if target_name in ("int4", "uint4"):
                info = ml_dtypes.iinfo(target)
                return np.clip(np.nan_to_num(r), int(info.min), int(info.max)).astype(target)
            return _saturate_float_to_int(r, target)
        if target_name in ("int4", "uint4") or _dtype_name(a.dtype) in ("int4", "uint4"):
            info = ml_dtypes.iinfo(target)
            return np.clip(a.astype(np.int64), int(info.min), int(info.max)).astype(target)
        return _saturate_int(a, target)
    # float target
    if target_name == "float8_e8m0fnu":
        return a.astype(np.float32).astype(target)
    if a.dtype == target:
        return a.copy()
    if src_float and a.dtype.itemsize < target.itemsize and \
            _dtype_name(a.dtype) != "float8_e8m0fnu":
        return a.astype(target)  # widening float conversions are exact
    fast = narrow(a, target, mode, lambda v: _round_to_float(v.astype(np.float64), target, mode))
    if fast is not None:
        return fast
    if not src_float and a.dtype.itemsize > 4 and a.size and np.abs(a).max() > 2 ** 53:
        # 64-bit integers beyond 2**53: go through Python ints to stay exact.
        vals = np.array([float(int(v)) for v in a.reshape(-1)]).reshape(a.shape)
        return _round_to_float(vals, target, mode)
    return _round_to_float(a.astype(np.float64), target, mode)


_INT64 = np.dtype(np.int64)
_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


# np_name of a target dtype -> how a Python integer casts into it: None (unchanged), the
# (lo, hi) it saturates to, or False (not a plain integer dtype: the general path)
_SCALAR_INT_TARGET: dict[str, tuple | bool | None] = {}


def _scalar_int_target(target_type: DType) -> tuple | bool | None:
    target = target_type.np
    r = _SCALAR_INT_TARGET[target_type.np_name] = \
        _int_bounds(_INT64, target) if target.kind in "iu" and not _is_sub_byte(target) \
        else False
    return r


def _cast_impl(x, target_type, mode="round"):
    tx = type(x)
    if (tx is int or tx is bool) and _INT64_MIN <= x <= _INT64_MAX:
        # a Python integer into an integer dtype (scalar index arithmetic in loops): the
        # int64 -> target saturation below, without building 0-d arrays (~10 us)
        bounds = _SCALAR_INT_TARGET.get(target_type.np_name, True)
        if bounds is True:
            bounds = _scalar_int_target(target_type)
        if bounds is not False:
            x = int(x)
            return x if bounds is None else min(max(x, bounds[0]), bounds[1])
    m = mode if isinstance(mode, str) else MODE_NAMES.get(int(mode), "round")
    if isinstance(x, (bool, int, float, np.generic)):
        if isinstance(x, (float, np.floating)):
            src = np.asarray(x, dtype=np.float64)
        else:
            src = np.asarray(int(x), dtype=np.int64) if not isinstance(x, np.generic) \
                else np.asarray(x)
        r = cast_array(src, target_type, m)
        return r.item() if r.ndim == 0 else r
    return cast_array(x, target_type, m)


def _cast_ints(x, target_type, mode="round"):
    """`_cast_impl` of many integer scalars at once (`x`: an int64 array of them; the
    simulator's batched blocks): into an integer dtype, each saturated into its range as
    `_cast_impl` does one; None for any other target."""
    target = getattr(target_type, "np", None)
    if target is None or target.kind not in "iu" or _is_sub_byte(target):
        return None
    bounds = _int_bounds(_INT64, target)
    return x if bounds is None else np.clip(x, bounds[0], bounds[1])


# convert: an element-type conversion, which the cube's Acc -> Mat drain can also do
defop("cast", unit=Unit.VECTOR, impl=_cast_impl, converts=True,
      names=("pl.cast", "pl.tensor.cast", "pl.tile.cast"),
      batch=Batch(Family.UFUNC, int_array=_cast_ints))(_cast)

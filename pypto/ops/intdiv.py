"""Integer division's one defined result, the same on every host.

numpy leaves integer division by zero to the host: a float quotient of ±inf or NaN cast
to an integer type is undefined (INT_MIN on x86, other values elsewhere), and integer
`//` by zero gives 0. Kernels get one answer instead, the one `pl.cast` gives the float
quotient (saturate, NaN -> 0):

* `x / 0` and `x // 0`: the largest value of the result type for x > 0, the smallest
  for x < 0, and 0 for 0 / 0;
* `x % 0` (`pl.rem`, `pl.fmod`, scalar `%`): 0 (numpy's own answer, fmod's NaN cast);
* every other quotient truncates toward zero (the vector unit's TDIV; scalar `//`
  floors, as Python does) and saturates to the result type (INT_MIN / -1 -> INT_MAX).

Integer scalars are held as Python integers of the scalar unit's width (INDEX / INT64),
so a scalar quotient saturates to the int64 range. Float division follows IEEE (±inf,
NaN), for scalars too. The simulator's `div` check reports where a kernel divides an
integer by zero (`pypto.sim.checks.divide`); the results here are what it computes
whether or not the check is on.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from pypto.ops.cast import _saturate_float_to_int

_I64 = np.iinfo(np.int64)
_I64_MIN, _I64_MAX = int(_I64.min), int(_I64.max)


def is_int_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "iu"


def _is_int_value(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "iu"
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def divide_int(a: np.ndarray, b: Any, dtype: np.dtype | None = None) -> np.ndarray:
    """`a / b` for an integer array `a` as integers of `dtype` (default: numpy's result
    type of the operands; `a`'s dtype for a scalar `b`): truncated toward zero, and
    saturated - a division by zero gives the type's max / min by the sign of `a`, 0 for
    0 / 0."""
    out = np.dtype(dtype) if dtype is not None else (
        np.result_type(a.dtype, b.dtype) if isinstance(b, np.ndarray) else a.dtype)
    if out.kind not in "iu":
        out = a.dtype
    info = np.iinfo(out)
    if not _is_int_value(b):  # a float divisor: the float quotient, cast as pl.cast does
        with np.errstate(all="ignore"):
            q = np.trunc(np.true_divide(a.astype(np.float64), np.float64(b)
                                        if not isinstance(b, np.ndarray) else b))
        return _saturate_float_to_int(np.asarray(q, np.float64), out)
    unsigned = out.kind == "u" and info.bits == 64
    work = np.uint64 if unsigned else np.int64
    x = a.astype(work, copy=False)
    y = np.asarray(b).astype(work, copy=False)
    zero = y == 0
    safe = np.where(zero, 1, y).astype(work, copy=False)
    with np.errstate(all="ignore"):
        q = np.floor_divide(x, safe)
        if not unsigned:  # floor -> toward zero where the signs differ and it is inexact
            q = q + (((x - q * safe) != 0) & ((x < 0) != (safe < 0)))
            # the one overflow of int64 division
            q = np.where((x == _I64.min) & (safe == -1), _I64.max, q)
    if zero.any():
        hi, lo, nil = (np.array(v, dtype=work) for v in (info.max, max(int(info.min), 0)
                                                           if unsigned else info.min, 0))
        q = np.where(zero, np.where(x > 0, hi, np.where(x < 0, lo, nil)), q)
    if not unsigned:
        q = np.clip(q, int(info.min), int(info.max))
    return q.astype(out)


def true_quotient(a: Any, b: Any) -> Any:
    """`a / b` as the vector unit divides: an integer array by integers (or by a float
    scalar) gives integers by the rules above, anything else numpy's true division."""
    if is_int_array(a) and not (isinstance(b, np.ndarray) and b.dtype.kind not in "iu"):
        return divide_int(a, b)
    return np.true_divide(a, b)


def scalar_quotient(a: Any, b: Any, floor: bool) -> Any:
    """Scalar `a / b` (`floor`: `a // b`) by the rules above."""
    if floor and type(a) is int and type(b) is int and b > 0:  # (index arithmetic)
        q = a // b
        return q if _I64_MIN <= q <= _I64_MAX else min(max(q, _I64_MIN), _I64_MAX)
    if _is_int_value(a) and _is_int_value(b):
        a, b = int(a), int(b)
        if b == 0:
            return _I64.max if a > 0 else _I64.min if a < 0 else 0
        q = a // b if floor else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return min(max(q, int(_I64.min)), int(_I64.max))
    if b != 0:
        return a // b if floor else a / b
    a, b = float(a), float(b)
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def scalar_remainder(a: Any, b: Any) -> Any:
    """Scalar `a % b` (Python's sign rule); 0 (integers) or NaN (floats) for b == 0."""
    if b == 0:
        return 0 if _is_int_value(a) and _is_int_value(b) else math.nan
    return a % b


__all__ = ["divide_int", "is_int_array", "scalar_quotient", "scalar_remainder", "true_quotient"]

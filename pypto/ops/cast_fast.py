"""Fast paths of `pl.cast`'s narrowing conversions that give exactly the bits of the
general rounding (`pypto.ops.cast._round_to_float`, which computes in float64 with
frexp / ldexp: ~130 ns an element, the largest single cost of a quantised layer's
simulation).

* float32 -> bfloat16 with a nearest mode (round: ties away from zero; rint / none:
  ties to even). bfloat16 is the upper half of a float32 (same sign, exponent and
  leading mantissa bits, subnormals included), so rounding to it is integer arithmetic
  on the bits: add half of the dropped part (ties away: 0x8000, on the magnitude bits:
  the sign is untouched below NaN's patterns) or half minus one plus the kept part's
  last bit (ties to even), then drop the lower 16 bits. A carry moves into the
  exponent as rounding up a binade does, and past the largest finite value it gives
  the infinity both nearest modes give. NaNs go through the general rounding.
* an integer array into float16 / bfloat16 / float32 whose values all fit the
  target's mantissa (|v| <= 2**(nmant + 1)): every value is exact, so every mode
  gives the plain conversion.
* int32 (or narrower) into float32 with rint / none: int32 -> float64 is exact, and
  numpy's float64 -> float32 conversion rounds to nearest, ties to even, once.

`narrow(a, target, mode)` is the fast result, or None when no fast path applies.
"""
from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np

_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_HALF_AWAY = np.uint32(0x8000)
_HALF_EVEN = np.uint32(0x7FFF)
_ONE = np.uint32(1)
_NEAREST = ("round", "rint", "none")
# the largest magnitude an integer may have for every integer up to it to be exact
_EXACT_INT = {_F16: 2 ** 11, _BF16: 2 ** 8, _F32: 2 ** 24}
# integer dtypes whose every value float64 holds exactly
_SMALL_INTS = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                     np.uint32)}


def _f32_to_bf16(x: np.ndarray, mode: str,
                 general: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    u = x.view(np.uint32)
    if mode == "round":
        r = u + _HALF_AWAY
    else:
        r = (u >> 16) & _ONE
        r += _HALF_EVEN
        r += u
    r >>= 16
    out = r.astype(np.uint16).view(_BF16)
    nan = np.isnan(x)
    if nan.any():
        out[nan] = general(x[nan])
    return out


def narrow(a: np.ndarray, target: np.dtype, mode: str,
           general: Callable[[np.ndarray], np.ndarray]) -> np.ndarray | None:
    """`a` converted into the float dtype `target` with `mode` by a fast path (None:
    none applies); `general(values)` is the general rounding of some of `a`'s values
    (the NaNs of a float32 -> bfloat16 conversion)."""
    src = a.dtype
    if src == _F32:
        if target == _BF16 and mode in _NEAREST:
            return _f32_to_bf16(a, mode, general)
        return None
    if src.kind not in "iu" or src not in _SMALL_INTS:
        return None
    if target == _F32 and mode in ("rint", "none"):
        return a.astype(np.float64).astype(_F32)
    bound = _EXACT_INT.get(target)
    if bound is None or a.size == 0:
        return None
    if int(a.max()) > bound or int(a.min()) < -bound:
        return None
    exact = a.astype(_F32)  # (numpy's direct integer -> float16 conversion is slower)
    if target == _BF16:  # an exact value's lower 16 bits are zero
        return (exact.view(np.uint32) >> 16).astype(np.uint16).view(_BF16)
    return exact if target == _F32 else exact.astype(target)


__all__ = ["narrow"]

"""What fresh device memory and padding hold, and how big a tensor may be.

* Fresh device memory is *residue*, not zeros: NaN for floats and a fixed, seeded
  garbage byte pattern for integers, as a real allocator would leave it.
* Padding: the part of a loaded tile outside its valid shape holds a pad value
  (`pad_scalar`), written by `fill_outside`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.span import Span
from pypto.ops.padding import pad_scalar as fill_value

GIB = 1 << 30
MAX_TENSOR_BYTES = 8 * GIB

# --- residue ------------------------------------------------------------------------

_PATTERN_BYTES = 4096


def _garbage_bytes(seed: int) -> np.ndarray:
    return np.random.default_rng(0x5EED ^ seed).integers(0, 256, _PATTERN_BYTES, dtype=np.uint8)


_HAS_NAN: dict[np.dtype, bool] = {}


def has_nan(dt: np.dtype) -> bool:
    """Can dtype `dt` hold a NaN? (cached per dtype: it ran for every Out argument)"""
    r = _HAS_NAN.get(dt)
    if r is None:
        r = _HAS_NAN[dt] = _has_nan_uncached(dt)
    return r


def _has_nan_uncached(dt: np.dtype) -> bool:
    if np.dtype(dt).kind in "iub":  # integers have no NaN (and casting one warns)
        return False
    try:
        with np.errstate(invalid="ignore"):
            return bool(np.isnan(np.array(np.nan, dtype=np.float32).astype(dt)))
    except (TypeError, ValueError):
        return False


def check_size(shape: Any, dtype: Any, what: str, span: Span | None = None) -> None:
    """Refuse a tensor past the simulator's per-tensor limit (or of negative extent)."""
    n = 1
    for d in shape:
        if d < 0:
            raise SimulationError(f"{what} has a negative extent: shape {list(shape)}", span)
        n *= int(d)
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes > MAX_TENSOR_BYTES:
        raise SimulationError(
            f"{what} of shape {list(shape)} ({np.dtype(dtype).name}) needs "
            f"{nbytes / GIB:.1f} GiB, more than the simulator's 8 GiB limit per tensor", span,
            hint="shrink the problem size for simulation; the simulator holds every tensor "
                 "in host memory")


def residue(shape: Any, dtype: Any, seed: int = 0) -> np.ndarray:
    """Uninitialised device memory: NaN for floats, seeded garbage for everything else."""
    dt = np.dtype(dtype)
    shape = tuple(int(d) for d in shape)
    if (dt.kind == "f" or (dt.kind == "V" and has_nan(dt)) or _is_ml_float(dt)) and has_nan(dt):
        return np.full(shape, np.nan, dtype=dt)
    n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    pat = _garbage_bytes(seed)
    reps = -(-n // _PATTERN_BYTES) if n else 0
    raw = np.tile(pat, reps)[:n] if n else np.zeros(0, np.uint8)
    if dt == np.bool_:
        return (raw & 1).astype(np.bool_).reshape(shape)
    return raw.view(dt).reshape(shape).copy()


def fill_residue(a: np.ndarray, seed: int = 0) -> None:
    """Overwrite `a` in place with what `residue` would allocate."""
    if has_nan(a.dtype):
        a.fill(np.nan)
    else:
        np.copyto(a, residue(a.shape, a.dtype, seed))


def _is_ml_float(dt: np.dtype) -> bool:
    return dt.name in ("bfloat16",) or dt.name.startswith("float8") or dt.name.startswith("float4")


# --- padding ------------------------------------------------------------------------


def pad_scalar(dt: np.dtype, mode: str) -> Any:
    """The fill value of PadValue `mode` ('zero', 'max', 'min', 'nan') for dtype `dt`:
    the one `fillpad` uses (`pypto.ops.padding.pad_scalar`: +-inf for floats), or NaN
    poison."""
    if mode == "nan":
        return np.nan if has_nan(dt) else 0
    return fill_value(np.dtype(dt), mode)


def fill_outside(a: np.ndarray, valid: Any, value: Any) -> None:
    """Write `value` into every element of `a` outside the origin-anchored box `valid`."""
    nd = a.ndim
    for ax in range(nd):
        v = valid[ax]
        if v < a.shape[ax]:
            idx: list[slice] = [slice(None)] * nd
            for prev in range(ax):
                idx[prev] = slice(0, valid[prev])
            idx[ax] = slice(v, None)
            a[tuple(idx)] = value


__all__ = [
    "MAX_TENSOR_BYTES",
    "check_size",
    "fill_outside",
    "fill_residue",
    "has_nan",
    "pad_scalar",
    "residue",
]

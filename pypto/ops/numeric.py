"""Numeric helpers for op implementations: compute precision and rounding."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.dtypes import DType

_F32 = np.dtype(np.float32)


def compute_dtype(dt: np.dtype) -> np.dtype:
    """Precision the vector unit computes in: narrow floats widen to fp32."""
    if dt.kind == "V" or (dt.itemsize < 4 and _is_float(dt)):
        return _F32
    return dt


# dtype -> is it a float format; `dtype.name` costs ~3 us in numpy and casts ask per call
_FLOAT_DTYPES: dict = {}


def _is_float(dt: np.dtype) -> bool:
    r = _FLOAT_DTYPES.get(dt)
    if r is None:
        name = dt.name
        r = _FLOAT_DTYPES[dt] = dt.kind == "f" or name == "bfloat16" or \
            name.startswith(("float8", "float4"))
    return r


def is_float_np(dt: np.dtype) -> bool:
    r = _FLOAT_DTYPES.get(dt)
    return _is_float(np.dtype(dt)) if r is None else r


def tile_scalar(tile: Any, s: Any) -> Any:
    """The scalar operand `s` of a tensor-scalar op on the float tile `tile`, as the
    hardware takes it: rounded to the tile's dtype (pto's TADDS, TMULS, TDIVS, TMAXS,
    TCMPS ... take it as `TileData::DType`), in the precision the op computes in (a
    narrow float widens to fp32 exactly). An integer scalar on an integer tile is
    converted as C converts it (two's complement, wrapping: -3 on a UINT8 tile is
    253); a float scalar on an integer tile, and a tile operand, are returned as they
    are (the integer tensor rule promotes with a float literal)."""
    if not isinstance(tile, np.ndarray) or isinstance(s, (bool, np.bool_)) or \
            not (isinstance(s, (int, float, np.number)) or
                 (isinstance(s, np.ndarray) and s.ndim == 0)):
        return s
    dt = tile.dtype
    if dt.kind in "iu":
        if isinstance(s, np.ndarray) or not isinstance(s, (int, np.integer)):
            return s
        bits = dt.itemsize * 8
        v = int(s) & ((1 << bits) - 1)
        if dt.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return dt.type(v)
    if not is_float_np(dt):
        return s
    if _QUIET.depth:
        r = dt.type(s)
    else:
        with np.errstate(over="ignore"):  # (past the dtype's range: inf, as the hardware)
            r = dt.type(s)
    w = compute_dtype(dt)
    return r if w is dt else w.type(r)


def as_array(x: Any) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else np.asarray(x)


class _Quiet(threading.local):
    """How deep this thread is in code that ignores numpy's floating-point errors for
    its whole extent (`quiet_fp`, a simulator run): impls then skip their own
    np.errstate (~1.5 us per op). Per thread, as numpy's error state is: another
    thread's run says nothing about this one."""

    depth = 0


_QUIET = _Quiet()


def fp_quiet() -> bool:
    """Does this thread ignore numpy's floating-point errors already (`quiet_fp`)?"""
    return _QUIET.depth > 0


class quiet_fp:
    """Context manager: ignore numpy floating-point errors in this thread until exit
    (re-entrant)."""

    __slots__ = ("_old",)

    def __enter__(self) -> quiet_fp:
        self._old = np.seterr(all="ignore")
        _QUIET.depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        _QUIET.depth -= 1
        np.seterr(**self._old)


_NARROW: dict = {}


def _widen(x: np.ndarray) -> np.ndarray:
    dt = x.dtype
    w = _NARROW.get(dt)
    if w is None:
        w = _NARROW[dt] = compute_dtype(dt)
    return x if w is dt else x.astype(w, copy=False)


def elementwise(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a numpy ufunc-style function so that narrow float operands are widened
    to the compute precision (fp32). Rounding the result to the op's declared
    dtype is the interpreter's job: it casts every op result to the dtype the
    op's type rule declared, so promotion and rounding live in one place."""
    nd = np.ndarray
    quiet = _QUIET

    def run(*xs: Any) -> Any:
        arr = False
        args = []
        for x in xs:
            if isinstance(x, nd):
                arr = True
                x = _widen(x)
            args.append(x)
        if not arr:
            return fn(*xs)
        if quiet.depth:
            return fn(*args)
        with np.errstate(all="ignore"):
            return fn(*args)

    return run


def to_dtype(x: Any, dt: DType) -> np.ndarray:
    return np.asarray(x).astype(dt.np, copy=False)


# --- run-time valid shapes ------------------------------------------------------------


class ValidArray(np.ndarray):
    """An ndarray that carries the run-time valid shape of the tile/tensor it holds.

    Ops whose result depends on the valid region (`fillpad`, `store`/`assemble`,
    `part_*`) read it with `valid_shape(x)`; the ops that set one
    (`set_validshape`, `slice`/`load` with `valid_shape=`) return `with_valid(...)`.
    A value without the attribute is fully valid. The attribute survives
    same-shape copies (`astype`, elementwise results keep the lhs valid shape) and
    is dropped whenever the shape changes.
    """

    valid: tuple | None = None
    # set (by `tile_window`) on a window of an on-chip tile: it shares the tile's storage,
    # so an op that writes its operand in place (matmul_acc's accumulator) writes the
    # tile; never inherited by derived arrays
    tile_window: bool = False

    def __array_finalize__(self, obj: Any) -> None:
        v = getattr(obj, "valid", None)
        self.valid = v if v is not None and getattr(obj, "shape", None) == self.shape else None


def with_valid(x: Any, valid: Any) -> np.ndarray:
    """`x` (not copied) tagged with valid shape `valid` (None or full shape: untagged)."""
    a = np.asarray(x)
    if valid is None:
        return a
    v = tuple(int(d) for d in valid)
    if v == a.shape:
        return a.view(np.ndarray) if isinstance(a, ValidArray) else a
    out = a.view(ValidArray)
    out.valid = v
    return out


def valid_shape(x: Any) -> tuple:
    """The run-time valid shape of an array (its full shape when untagged)."""
    v = getattr(x, "valid", None)
    shape = np.shape(x)
    if v is None or len(v) != len(shape):
        return tuple(shape)
    return tuple(min(int(a), int(b)) for a, b in zip(v, shape))


def tile_window(x: np.ndarray) -> np.ndarray:
    """`x` (a view of an on-chip tile, not copied) marked as such, its valid shape kept."""
    out = x.view(ValidArray)
    out.valid = getattr(x, "valid", None)
    out.tile_window = True
    return out


def is_tile_window(x: Any) -> bool:
    return isinstance(x, ValidArray) and x.tile_window


def plain(x: Any) -> np.ndarray:
    """`x` as a plain ndarray (drops a ValidArray tag)."""
    return x.view(np.ndarray) if isinstance(x, ValidArray) else np.asarray(x)

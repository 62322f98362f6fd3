"""The simulated device memory: global buffers, allocator residue, views, padding.

* Every tensor in global memory (an uploaded parameter, an `Out` buffer, a
  `pl.create_tensor` result, a value a task returns to orchestration) is one
  `GlobalBuffer` owning a C-contiguous numpy array in the declared dtype.
* Views (orchestration slices) are numpy views of that array; `locate` maps any
  view back to its buffer and the origin of the window, so accesses can be
  checked, recorded in the trace and blamed.
* Fresh device memory is *residue*, not zeros: NaN for floats and a fixed,
  seeded garbage byte pattern for integers, as a real allocator would leave it.
* Valid shapes are tracked by the interpreter next to each value (see
  `pypto.sim.interp`); here are the helpers that fill padding and clip windows.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.errors import SimulationError
from pypto.ops.padding import pad_scalar as fill_value

GIB = 1 << 30
MAX_TENSOR_BYTES = 8 * GIB


class GlobalBuffer:
    """One allocation in simulated global memory."""

    __slots__ = ("name", "array", "direction", "host", "uid", "writer", "kind")

    def __init__(self, name: str, array: np.ndarray, direction: str | None, host: Any,
                 uid: int, kind: str):
        self.name = name
        self.array = array
        self.direction = direction  # "In" / "Out" / "InOut" for parameters, else None
        self.host = host
        self.uid = uid
        self.kind = kind  # "param", "tensor" (create_tensor), "result" (returned by a task)
        # Per element: the id of the write event that wrote it last (0: none). Allocated on
        # the first traced write (np.zeros maps lazily-zeroed pages: cheap).
        self.writer = None

    def track_writers(self) -> np.ndarray:
        if self.writer is None:
            self.writer = np.zeros(self.array.shape, dtype=np.int32)
        return self.writer

    def __repr__(self) -> str:
        return f"<GlobalBuffer {self.name} {list(self.array.shape)} {self.array.dtype}>"


# --- residue ------------------------------------------------------------------------

_PATTERN_BYTES = 4096


def _garbage_bytes(seed: int) -> np.ndarray:
    return np.random.default_rng(0x5EED ^ seed).integers(0, 256, _PATTERN_BYTES, dtype=np.uint8)


_HAS_NAN: dict = {}


def _has_nan(dt: np.dtype) -> bool:
    r = _HAS_NAN.get(dt)  # cached per dtype (sim speed: this ran for every Out argument)
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


def check_size(shape: tuple, dtype: np.dtype, what: str, span: Any = None) -> None:
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


def residue(shape: tuple, dtype: np.dtype, seed: int = 0) -> np.ndarray:
    """Uninitialised device memory: NaN for floats, seeded garbage for everything else."""
    dt = np.dtype(dtype)
    shape = tuple(int(d) for d in shape)
    if dt.kind == "f" or (dt.kind == "V" and _has_nan(dt)) or _is_ml_float(dt):
        if _has_nan(dt):
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
    if _has_nan(a.dtype):
        a.fill(np.nan)
    else:
        np.copyto(a, residue(a.shape, a.dtype, seed))


def _is_ml_float(dt: np.dtype) -> bool:
    return dt.name in ("bfloat16",) or dt.name.startswith("float8") or dt.name.startswith("float4")


# --- views --------------------------------------------------------------------------


def root_of(a: np.ndarray) -> np.ndarray:
    """The array that owns `a`'s memory (the end of its chain of bases)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def origin_of(view: np.ndarray, root: np.ndarray) -> tuple | None:
    """The index of `view[0, ..., 0]` in `root` when `view` is a rectangular window of
    `root` with the same axis order; None when it is some other view (a reshape)."""
    if view is root:
        return (0,) * root.ndim
    if view.ndim != root.ndim or view.strides != root.strides:
        return None
    off = view.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    item = root.itemsize
    if off % item:
        return None
    flat = off // item
    if root.size == 0:
        return (0,) * root.ndim
    if not 0 <= flat < root.size:
        return None
    if not root.flags.c_contiguous:
        return None
    return tuple(int(i) for i in np.unravel_index(flat, root.shape))


# --- padding ------------------------------------------------------------------------


def pad_scalar(dt: np.dtype, mode: str) -> Any:
    """The fill value of PadValue `mode` ('zero', 'max', 'min', 'nan') for dtype `dt`:
    the one `fillpad` uses (`pypto.ops.padding.pad_scalar`), or NaN poison."""
    if mode == "nan":
        return np.nan if _has_nan(dt) else 0
    return fill_value(np.dtype(dt), mode)


def fill_outside(a: np.ndarray, valid: tuple, value: Any) -> None:
    """Write `value` into every element of `a` outside the origin-anchored box `valid`."""
    nd = a.ndim
    for ax in range(nd):
        v = valid[ax]
        if v < a.shape[ax]:
            idx = [slice(None)] * nd
            for prev in range(ax):
                idx[prev] = slice(0, valid[prev])
            idx[ax] = slice(v, None)
            a[tuple(idx)] = value


def valid_box(valid: tuple) -> tuple:
    return tuple(slice(0, int(v)) for v in valid)

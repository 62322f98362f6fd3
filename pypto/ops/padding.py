"""Padding: `fillpad` family and `expand_clone`.

Elements outside the valid region take the pad value (zero, +inf / -inf for floats,
the integer range's max / min); the result is fully valid.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from pypto.ir.options import PadValue
from pypto.ir.types import TileType
from pypto.ops.facts import Batch, Family, TagRule, View
from pypto.ops.numeric import plain
from pypto.ops.numeric import valid_shape as valid_shape_of
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (
    dims_arg,
    like,
    py_value,
    shaped,
)
from pypto.ops.rules import public_names as _names

# --- padding ------------------------------------------------------------------------


def pad_kind(x: Any, arg: str = "pad_value") -> str:
    """'zero' | 'max' | 'min' from a PadValue or its literal sugar (0, inf, -inf)."""
    v = py_value(x)
    name = getattr(v, "name", None)
    if name is not None and isinstance(v, PadValue):
        if name == "null":
            raise OpError("fillpad needs a pad value: PadValue.null means 'no padding'", arg=arg,
                          hint="use pl.PadValue.zero, .max or .min")
        return name
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if v == 0:
            return "zero"
        if v == float("inf"):
            return "max"
        if v == float("-inf"):
            return "min"
    raise OpError(f"pad_value must be a pl.PadValue (zero, max, min) or 0 / math.inf / "
                  f"-math.inf, got {v!r}", arg=arg)


def pad_scalar(dtype: np.dtype, kind: str) -> Any:
    """The fill value: 0; for max / min, +-inf in a float format that has infinities
    (what the hardware's pad fills and the real toolchain's runtime tests expect), else
    the format's largest / smallest value (integers, bool, fp8 e4m3fn / e8m0)."""
    if kind == "zero":
        return np.zeros((), dtype=dtype)[()]
    if dtype == np.bool_:
        return kind == "max"
    if dtype.kind in "iu":
        ints = np.iinfo(dtype)
        return ints.max if kind == "max" else ints.min
    floats = ml_dtypes.finfo(dtype)
    inf = np.array(np.inf if kind == "max" else -np.inf).astype(dtype)
    if np.isinf(inf.astype(np.float32)):
        return inf[()]
    return floats.max if kind == "max" else floats.min


def _fill_outside(a: np.ndarray, valid: tuple, kind: str) -> np.ndarray:
    out = np.array(plain(a), copy=True)
    fill = pad_scalar(out.dtype, kind)
    for axis, v in enumerate(valid):
        if v < out.shape[axis]:
            idx = [slice(None)] * out.ndim
            idx[axis] = slice(int(v), None)
            out[tuple(idx)] = fill
    return out


def _fillpad(x, pad_value=None):
    """Same shape; every element outside the valid region becomes 0 (zero), +inf (max)
    or -inf (min) - an integer type's largest / smallest value. The result is fully
    valid. Pad with the identity of the reduction that follows (min before row_max,
    zero before row_sum)."""
    t = shaped(x, "x")
    if pad_value is not None:
        pad_kind(pad_value)
    return like(t, valid_shape=None)


def _fillpad_impl(x, pad_value=None):
    kind = "zero" if pad_value is None else _runtime_pad(pad_value)
    return _fill_outside(x, valid_shape_of(x), kind)


def _runtime_pad(v: Any) -> str:
    name = getattr(v, "name", None)
    if name in ("zero", "max", "min"):
        return name
    if v == 0:
        return "zero"
    return "max" if v > 0 else "min"


# untagged: the result is fully valid, a plain array (the batch's tag rules read this)
defop("fillpad", unit=Unit.VECTOR, impl=_fillpad_impl, view=View.WINDOW,
      names=_names("fillpad"), batch=Batch(Family.TAG_ONLY, tag_rule=TagRule.PAD))(_fillpad)


def _fillpad_inplace(tile, pad_value=None):
    """`fillpad` that reuses the tile's buffer."""
    t = shaped(tile, "tile")
    if not isinstance(t, TileType):
        raise OpError("fillpad_inplace is a tile op", arg="tile")
    if pad_value is not None:
        pad_kind(pad_value)
    return like(t, valid_shape=None)


def _fillpad_inplace_impl(tile, pad_value=None):
    kind = "zero" if pad_value is None else _runtime_pad(pad_value)
    filled = _fill_outside(tile, valid_shape_of(tile), kind)
    plain(tile)[...] = filled
    return plain(tile)


defop("fillpad_inplace", unit=Unit.VECTOR, impl=_fillpad_inplace_impl, writes="tile",
      names=("pl.tile.fillpad_inplace",))(_fillpad_inplace)


def _fillpad_expand(x, shape, pad_value=None):
    """A new, larger value of `shape`: the source's valid region copied to the top-left,
    every other element the pad value."""
    t = shaped(x, "x")
    dims = dims_arg(shape, "shape")
    if len(dims) != t.rank:
        raise OpError(f"fillpad_expand needs a rank-{t.rank} shape, got {len(dims)} dims",
                      arg="shape")
    for i, (a, b) in enumerate(zip(dims, t.shape)):
        if isinstance(a, int) and isinstance(b, int) and a < b:
            raise OpError(f"fillpad_expand cannot shrink axis {i} ({b} -> {a})", arg="shape")
    if pad_value is not None:
        pad_kind(pad_value)
    return like(t, shape=dims, valid_shape=None)


def _fillpad_expand_impl(x, shape, pad_value=None):
    kind = "zero" if pad_value is None else _runtime_pad(pad_value)
    a = plain(x)
    v = valid_shape_of(x)
    out = np.full([int(d) for d in shape], pad_scalar(a.dtype, kind), dtype=a.dtype)
    region = tuple(slice(0, int(d)) for d in v)
    out[region] = a[region]
    return out


defop("fillpad_expand", unit=Unit.VECTOR, impl=_fillpad_expand_impl,
      names=_names("fillpad_expand"))(_fillpad_expand)


def _expand_clone(src, target):
    """`src` broadcast to `target`'s shape, written into `target` (in place, as the
    real compiler lowers it: a loop of stores into the target); returns the target."""
    s = shaped(src, "src")
    t = shaped(target, "target")
    if s.rank != t.rank:
        raise OpError(f"expand_clone needs equal ranks, got {s} and {t}", arg="src")
    for i, (a, b) in enumerate(zip(s.shape, t.shape)):
        if isinstance(a, int) and isinstance(b, int) and a not in (1, b):
            raise OpError(f"expand_clone cannot broadcast axis {i} from {a} to {b}", arg="src")
    return like(t, dtype=s.dtype, valid_shape=None)


def _expand_clone_impl(src: Any, target: Any) -> np.ndarray:
    out = plain(target)
    out[...] = np.broadcast_to(plain(src), out.shape)
    return out


defop("expand_clone", unit=Unit.VECTOR, impl=_expand_clone_impl, writes="target",
      names=("pl.expand_clone", "pl.tensor.expand_clone"))(_expand_clone)

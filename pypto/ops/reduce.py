"""Row / column reductions and broadcasts (vector unit).

Row reductions collapse the last axis to size 1 (`[M, N] -> [M, 1]`), column
reductions axis -2 (`-> [1, N]`). Only the valid region takes part: a tile narrowed to
a valid shape `[r, c]` reduces its first `c` columns (row reductions) or `r` rows
(column reductions), as the hardware's TROW*/TCOL* instructions do and the real
toolchain's tests assert; the result's valid shape is `[r, 1]` / `[1, c]`, so a store
writes only those rows / columns. (The elements of the result past that valid shape
reduce the same valid columns / rows of the padding; they are never stored.)
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import TileType
from pypto.ops.facts import Batch, Family, Ufunc
from pypto.ops.intdiv import true_quotient
from pypto.ops.numeric import (
    _QUIET,
    _widen,
    compute_dtype,
    elementwise,
    plain,
    valid_shape,
    with_valid,
)
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import like, same_family, scalar_like, scratch, shaped, type_of

_NS = ("pl.{0}", "pl.tensor.{0}", "pl.tile.{0}")


def _names(name: str) -> tuple[str, ...]:
    return tuple(n.format(name) for n in _NS)


def _reduced(x: Any, axis: int, arg: str = "x"):
    t = shaped(x, arg)
    if t.rank < 2 and axis == -2:
        raise OpError("column reductions need a tensor of rank >= 2", arg=arg)
    shape = list(t.shape)
    shape[axis] = 1
    valid: tuple | None = None
    if t.valid_shape is not None:  # the reduced axis keeps its one element
        kept = list(t.valid_shape)
        kept[axis] = 1
        valid = None if tuple(kept) == tuple(shape) else tuple(kept)
    return like(t, shape=tuple(shape), valid_shape=valid)


def _valid_part(x: np.ndarray, axis: int) -> tuple[np.ndarray, tuple | None]:
    """The part of `x` a reduction along `axis` reads (its valid extent on that axis;
    the other axes whole), and the result's valid shape (None: fully valid)."""
    v = valid_shape(x)
    data = plain(x)
    if v == data.shape:
        return data, None
    n = v[axis]
    if 0 < n < data.shape[axis]:
        index = [slice(None)] * data.ndim
        index[axis] = slice(0, n)
        data = data[tuple(index)]
    out_valid = list(v)
    out_valid[axis] = 1
    return data, tuple(out_valid)


_REDUCTION = Batch(Family.REDUCE)
_UFUNC = {np.sum: np.add.reduce, np.max: np.maximum.reduce, np.min: np.minimum.reduce,
          np.prod: np.multiply.reduce}


def _reduce_impl(fn: Callable, axis: int) -> Callable:
    quiet = _QUIET
    # plain ndarrays go straight to the ufunc's reduce (what np.sum / np.max call, minus
    # ~2 us of dispatch); subclasses (valid-shape tags) keep the numpy function
    red = _UFUNC[fn]
    nd = np.ndarray

    def run(x: np.ndarray, *_: Any) -> np.ndarray:
        x = _widen(x)
        if type(x) is nd:
            if quiet.depth:
                return red(x, axis=axis, keepdims=True)
            with np.errstate(all="ignore"):
                return red(x, axis=axis, keepdims=True)
        data, valid = _valid_part(x, axis)  # a valid-shape tag: reduce the valid part
        if quiet.depth:  # the simulator ignores floating-point errors for the whole run
            return with_valid(red(data, axis=axis, keepdims=True), valid)
        with np.errstate(all="ignore"):
            return with_valid(red(data, axis=axis, keepdims=True), valid)

    return run


def _arg_impl(fn: Callable, axis: int) -> Callable:
    def run(x: Any, tmp_tile: Any = None) -> np.ndarray:
        data, valid = _valid_part(np.asanyarray(x), axis)
        idx = fn(data.astype(compute_dtype(data.dtype)), axis=axis)
        return with_valid(np.expand_dims(idx, axis).astype(np.int32), valid)

    return run


for _name, _fn, _uf, _axis in (("row_sum", np.sum, np.add, -1),
                               ("row_max", np.max, np.maximum, -1),
                               ("row_min", np.min, np.minimum, -1),
                               ("row_prod", np.prod, np.multiply, -1)):
    def _row(x, tmp_tile=None, _axis=_axis, _n=_name):
        _tmp_rule(x, tmp_tile, f"pl.{_n}", required=True)
        return _reduced(x, _axis)

    _row.__doc__ = f"`{_name}`: reduce the last axis with {_fn.__name__}, keeping it as size 1."
    defop(_name, unit=Unit.VECTOR, impl=_reduce_impl(_fn, _axis), names=_names(_name),
          batch=_REDUCTION if _fn is not np.prod else None, ufunc=Ufunc(_uf, 1, _axis))(_row)

def _col_sum(x, tmp_tile=None):
    """`col_sum`: reduce axis -2 with a sum, keeping it as size 1. The tile form may take
    a scratch `tmp_tile` (x's shape and dtype) selecting the binary-tree reduction."""
    _tmp_rule(x, tmp_tile, "pl.col_sum", required=False)
    return _reduced(x, -2)


def _col_sum_impl() -> Callable:
    wide = _reduce_impl(np.sum, -2)

    def run(x: Any, tmp_tile: Any = None) -> np.ndarray:
        a = np.asanyarray(x)
        if compute_dtype(a.dtype) is a.dtype:
            return wide(a)
        return _narrow_col_sum(a, tree=tmp_tile is not None)

    return run


def _narrow_col_sum(a: np.ndarray, tree: bool) -> np.ndarray:
    """col_sum of an fp16 / bf16 tile: the vector unit (TCOLSUM) adds rows in the tile's
    own precision, rounding every add - one row after another, or, given a scratch
    tile, as a binary tree (rows paired 0+1, 2+3, ...; an odd last row joins row 0)."""
    data, valid = _valid_part(a, -2)
    dt = data.dtype
    buf = data.astype(np.float32)

    def add(p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return (p + q).astype(dt).astype(np.float32)

    n = buf.shape[-2]
    if not tree:
        acc = buf[..., 0:1, :]
        for i in range(1, n):
            acc = add(acc, buf[..., i:i + 1, :])
        return with_valid(acc.astype(dt), valid)
    while n > 1:
        half = n // 2
        buf[..., :half, :] = add(buf[..., 0:2 * half:2, :], buf[..., 1:2 * half:2, :])
        if n % 2:
            buf[..., 0:1, :] = add(buf[..., 0:1, :], buf[..., n - 1:n, :])
        n = half
    return with_valid(buf[..., 0:1, :].astype(dt), valid)


defop("col_sum", unit=Unit.VECTOR, impl=_col_sum_impl(), batch=_REDUCTION,
      ufunc=Ufunc(np.add, 1, -2), names=_names("col_sum"))(_col_sum)

for _name, _fn, _uf in (("col_max", np.max, np.maximum), ("col_min", np.min, np.minimum),
                        ("col_prod", np.prod, np.multiply)):
    def _col(x):
        return _reduced(x, -2)

    _col.__doc__ = f"`{_name}`: reduce axis -2 with {_fn.__name__}, keeping it as size 1."
    defop(_name, unit=Unit.VECTOR, impl=_reduce_impl(_fn, -2), names=_names(_name),
          batch=_REDUCTION if _fn is not np.prod else None, ufunc=Ufunc(_uf, 1, -2))(_col)


def _tmp_rule(x: Any, tmp: Any, op: str, *, required: bool) -> None:
    """Tile reductions take caller-owned scratch; tensor reductions forbid it."""
    scratch(x, tmp, op, "tmp_tile", required=required)
    tt = type_of(tmp)
    xt = type_of(x)
    if isinstance(tt, TileType) and isinstance(xt, TileType):
        if tt.dtype != xt.dtype or tt.rank != xt.rank:
            raise OpError(f"{op} scratch must have the input's dtype and rank ({xt}), got {tt}",
                          arg="tmp_tile")
        for a, b in zip(tt.shape, xt.shape):
            if isinstance(a, int) and isinstance(b, int) and a < b:
                raise OpError(f"{op} scratch {tt} is smaller than the input {xt}",
                              arg="tmp_tile")


def _arg_rule(axis: int, op: str = "argmax"):
    def rule(x, tmp_tile=None):
        _tmp_rule(x, tmp_tile, op, required=True)
        t = _reduced(x, axis)
        return like(t, dtype=dtypes.INT32)

    return rule


for _name, _argfn, _axis in (("row_argmax", np.argmax, -1), ("row_argmin", np.argmin, -1),
                             ("col_argmax", np.argmax, -2), ("col_argmin", np.argmin, -2)):
    _r = _arg_rule(_axis, f"pl.{_name}")

    def _arg_sig(x, tmp_tile=None, _r=_r):
        return _r(x, tmp_tile)

    _arg_sig.__doc__ = (f"`{_name}`: INT32 index of the extreme element along axis {_axis} "
                        "(the first one on ties; NaN counts as the extreme).")
    defop(_name, unit=Unit.VECTOR, impl=_arg_impl(_argfn, _axis), names=_names(_name))(_arg_sig)


# --- row / column broadcasts --------------------------------------------------------


def _expand_rule(kind: str):
    def rule(x, vec, tmp=None):
        t = shaped(x, "x")
        v = shaped(vec, "row_vec" if kind == "row" else "col_vec")
        same_family(t, v, "vec")
        if t.rank < 2 or v.rank < 2:
            raise OpError(f"{kind}_expand ops need operands of rank >= 2, got {t} and {v}",
                          arg="vec")
        # The ranks may differ (tiles are flattened to 2-D: leading dims merge into rows),
        # so a row vector holds one value per row of x - `[16, 1]` for a [1, 1, 16, 128]
        # x - and a column vector is 1 on every axis but the last.
        shape_hint = "[rows, 1]" if kind == "row" else "[1, cols]"
        ones = [v.shape[-1]] if kind == "row" else \
            [v.shape[-2]] if v.rank == t.rank else list(v.shape[:-1])
        if kind == "row" and _packed_row_carrier(v):
            ones = []  # one 32-byte block per row, repeated across the columns
        if any(isinstance(d, int) and d != 1 for d in ones):
            raise OpError(f"the {kind} vector must have shape {shape_hint} (or one 32-byte "
                          f"block per row), got {v}" if kind == "row" else
                          f"the {kind} vector must have shape {shape_hint}, got {v}", arg="vec")
        axis = -2 if kind == "row" else -1  # the axis the vector runs along must match x's
        if isinstance(v.shape[axis], int) and isinstance(t.shape[axis], int) and \
                v.shape[axis] != t.shape[axis]:
            raise OpError(f"the {kind} vector {v} does not match {t} on axis {t.rank + axis}",
                          arg="vec")
        if kind == "row" and v.rank != t.rank:
            rows_v, rows_t = v.shape[:-1], t.shape[:-1]
            if all(isinstance(d, int) for d in rows_v + rows_t) and \
                    math.prod(rows_v) != math.prod(rows_t):
                raise OpError(f"the row vector {v} does not hold one value per row of {t}",
                              arg="vec")
        return like(t)

    return rule


def _packed_row_carrier(v: Any) -> bool:
    """A row vector given as one 32-byte block per row (`[rows, 32 / element bytes]`):
    the vector unit (TROWEXPAND*) reads the whole block and repeats it across the
    destination's columns; a `[rows, 1]` vector is the one-lane case."""
    last = v.shape[-1]
    return isinstance(last, int) and last > 1 and last * v.dtype.nbytes == 32


def _as_vector(x: Any, vec: Any, kind: str) -> Any:
    """`vec` shaped to broadcast against `x` when their ranks differ (see the rule), a
    packed row carrier repeated across x's columns."""
    if not isinstance(x, np.ndarray) or not isinstance(vec, np.ndarray):
        return vec
    if kind == "row" and vec.ndim == x.ndim and 1 < vec.shape[-1] != x.shape[-1]:
        reps = -(-x.shape[-1] // vec.shape[-1])
        return np.tile(plain(vec), (1,) * (vec.ndim - 1) + (reps,))[..., :x.shape[-1]]
    if vec.ndim == x.ndim:
        return vec
    if kind == "row":
        return vec.reshape(x.shape[:-1] + (1,))
    return vec.reshape((1,) * (x.ndim - 1) + vec.shape[-1:])


_EXPAND: dict[str, Callable] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": true_quotient,
    "max": np.maximum, "min": np.minimum, "expdif": lambda a, b: np.exp(a - b),
}

for _kind in ("row", "col"):
    for _op, _fn in _EXPAND.items():
        _name = f"{_kind}_expand_{_op}"
        _r = _expand_rule(_kind)

        def _sig(x, vec, tmp=None, _r=_r):
            return _r(x, vec, tmp)

        _sig.__doc__ = (f"`{_name}(x, vec)`: combine every {'row' if _kind == 'row' else 'column'}"
                        f" of x with the matching element of the {_kind} vector.")
        _impl = elementwise(_fn)
        defop(_name, unit=Unit.VECTOR,
              impl=lambda x, vec, tmp=None, _impl=_impl, _k=_kind: _impl(x, _as_vector(x, vec, _k)),
              names=_names(_name), batch=Batch(Family.UFUNC),
              divisor="vec" if _op == "div" else None,
              # (integer division aside - pypto.ops.intdiv - the quotient is np.true_divide)
              ufunc=Ufunc(_fn) if isinstance(_fn, np.ufunc) else
              Ufunc(np.true_divide) if _op == "div" else None)(_sig)


def _row_expand(target, row_vec):
    """Broadcast `row_vec` ([M, 1]) to `target`'s shape; target only supplies the shape."""
    t = shaped(target, "target")
    shaped(row_vec, "row_vec")
    return like(t, dtype=shaped(row_vec, "row_vec").dtype)


def _col_expand(target, col_vec):
    """Broadcast `col_vec` ([1, N]) to `target`'s shape; target only supplies the shape."""
    t = shaped(target, "target")
    return like(t, dtype=shaped(col_vec, "col_vec").dtype)


def _broadcast_vector(target: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """`vec` repeated to `target`'s shape. A batched launch gives either operand leading
    batch axes (extent 1 along an axis it does not vary on), so the result takes both
    operands' batch axes; one block's operands broadcast to exactly target's shape."""
    shape = target.shape if vec.ndim <= target.ndim else \
        vec.shape[:vec.ndim - target.ndim] + target.shape
    try:
        return np.broadcast_to(vec, shape).copy()
    except ValueError:
        if vec.ndim != target.ndim or vec.ndim <= 2:
            raise
        # same rank, both batched: the leading (batch) axes broadcast both ways, the
        # vector's last two axes to target's
        lead = np.broadcast_shapes(target.shape[:-2], vec.shape[:-2])
        return np.broadcast_to(vec, lead + target.shape[-2:]).copy()


defop("row_expand", unit=Unit.VECTOR, impl=_broadcast_vector, batch=Batch(Family.EXPAND),
      names=_names("row_expand"))(_row_expand)
defop("col_expand", unit=Unit.VECTOR, impl=_broadcast_vector, batch=Batch(Family.EXPAND),
      names=_names("col_expand"))(_col_expand)


def _expands(target, scalar):
    """A tensor/tile of `target`'s shape and dtype filled with `scalar`."""
    t = shaped(target, "target")
    if not scalar_like(scalar):
        raise OpError(f"pl.expands fills with a scalar, got {type_of(scalar)}", arg="scalar",
                      hint="broadcast a vector with pl.row_expand / pl.col_expand")
    return like(t)


defop("expands", unit=Unit.VECTOR,
      impl=lambda target, scalar: np.full(target.shape, scalar, dtype=target.dtype),
      names=_names("expands"))(_expands)


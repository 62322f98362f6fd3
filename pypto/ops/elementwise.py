"""Elementwise binary and unary ops (vector unit), table-driven.

Each binary op takes a tensor/tile on the left and a tensor/tile *or* a scalar on
the right (the "s" forms of real pypto, e.g. `pl.add(t, 1.0)` = `tensor.adds`).
Scalar ∘ scalar through `pl.add` is plain scalar arithmetic.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.nodes import Const
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ops.facts import Batch, Family, Ufunc
from pypto.ops.intdiv import is_int_array, true_quotient
from pypto.ops.numeric import (
    compute_dtype,
    elementwise,
    plain,
    tile_scalar,
    valid_shape,
    with_valid,
)
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (
    broadcast_shapes,
    like,
    py_value,
    same_family,
    scalar_dtype,
    scalar_like,
    scratch,
    shaped,
    type_of,
)


def _tensor_scalar_dtype(a: TensorType, rhs: Any) -> Any:
    """The result dtype of a tensor-by-scalar op. A float tensor keeps its dtype, as the
    hardware does: the real toolchain types `tensor.adds(fp16, 0.5)` FP32 (its parser
    makes a float literal an FP32 constant and `tensor.adds` / `muls` / `divs` ...
    promote), but lowers it to `tile.adds`, whose result keeps the tile's dtype, and the
    instruction takes the scalar in that dtype (`pypto.ops.numeric.tile_scalar`); so
    every scalar form rounds per op on an FP16 / BF16 tile, as the tile-tile ops do
    (docs/reliability.md, "Tensor-scalar forms"). An integer tensor: an int literal is
    a placeholder that takes the tensor's dtype, a float literal an FP32 constant that
    promotes it (the real toolchain's tensor rule, kept)."""
    if a.dtype.is_float():
        return a.dtype
    value = py_value(rhs)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        dt = scalar_dtype(rhs)
    elif isinstance(value, float) and not (isinstance(rhs, Const) and
                                           scalar_dtype(rhs) != dtypes.INDEX):
        dt = dtypes.FP32
    else:
        dt = scalar_dtype(rhs) if isinstance(rhs, Const) else a.dtype
    if dt == dtypes.INDEX:  # an index placeholder (a bare int) takes the tensor's dtype
        return a.dtype
    return dtypes.promote(a.dtype, dt)


def _scalar_in_tile(fn: Callable) -> Callable:
    """A binary impl whose scalar right operand on a float tile is first rounded to the
    tile's dtype (`tile_scalar`); tile-tile calls pass through."""

    def run(lhs: Any, rhs: Any, *rest: Any) -> Any:
        if not isinstance(rhs, np.ndarray) or rhs.ndim == 0:
            rhs = tile_scalar(lhs, rhs)
        return fn(lhs, rhs, *rest)

    return run


def _binary_rule(op_name: str, *, int_only: bool = False, keep_lhs_dtype: bool = False,
                 keep_scalar_dtype: bool = False):
    def rule(lhs, rhs):
        lt = type_of(lhs)
        if isinstance(lt, ScalarType) and scalar_like(rhs):
            return ScalarType(dtypes.promote(lt.dtype, scalar_dtype(rhs)))
        a = shaped(lhs, "lhs")
        if int_only and not a.dtype.is_int():
            raise OpError(f"pl.{op_name} needs integer operands, got {a.dtype!r}", arg="lhs")
        if scalar_like(rhs):
            if keep_lhs_dtype or keep_scalar_dtype or not isinstance(a, TensorType):
                return like(a)
            return like(a, dtype=_tensor_scalar_dtype(a, rhs))
        b = shaped(rhs, "rhs")
        same_family(a, b, "rhs")
        shape = broadcast_shapes(a.shape, b.shape)
        dt = a.dtype if keep_lhs_dtype else dtypes.promote(a.dtype, b.dtype)
        return like(a, shape=shape, dtype=dt,
                    valid_shape=a.valid_shape if shape == a.shape else None)

    rule.__name__ = op_name
    return rule


# Ops whose impl acts on trailing axes only (the batch engine stacks blocks on leading
# axes) and, for float32 / float64 operands of their own dtype, is exactly a numpy ufunc.
_BATCHABLE = frozenset(["add", "sub", "mul", "maximum", "minimum", "adds", "subs", "muls",
                        "divs", "maximums", "minimums", "neg", "abs", "exp", "sqrt", "rsqrt",
                        "recip", "log", "relu", "sin", "cos"])
_ELEMENTWISE = Batch(Family.UFUNC)
_UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
          "minimum": np.minimum, "adds": np.add, "subs": np.subtract, "muls": np.multiply,
          "divs": np.divide, "maximums": np.maximum, "minimums": np.minimum}


def _register_binary(name: str, fn: Callable, doc: str, *, extra_names: tuple = (),
                     int_only: bool = False, keep_lhs_dtype: bool = False,
                     keep_scalar_dtype: bool = False, divisor: str | None = None) -> None:
    rule = _binary_rule(name, int_only=int_only, keep_lhs_dtype=keep_lhs_dtype,
                        keep_scalar_dtype=keep_scalar_dtype)

    def sig(lhs, rhs):  # the op's public signature
        return rule(lhs, rhs)

    sig.__doc__ = doc
    names = (f"pl.{name}", f"pl.tensor.{name}", f"pl.tile.{name}") + extra_names
    ufunc = Ufunc(_UFUNC[name]) if name in _UFUNC else None
    impl = elementwise(fn) if int_only else _scalar_in_tile(elementwise(fn))
    defop(name, unit=Unit.VECTOR, impl=impl, names=names, ufunc=ufunc,
          batch=_ELEMENTWISE if name in _BATCHABLE else None, divisor=divisor)(sig)


_BINARY: dict[str, tuple[Callable, str]] = {
    "add": (np.add, "Elementwise `lhs + rhs`; `rhs` may be a scalar."),
    "sub": (np.subtract, "Elementwise `lhs - rhs`; `rhs` may be a scalar."),
    "mul": (np.multiply, "Elementwise `lhs * rhs`; `rhs` may be a scalar."),
    "maximum": (np.maximum, "Elementwise maximum; `rhs` may be a scalar."),
    "minimum": (np.minimum, "Elementwise minimum; `rhs` may be a scalar."),
    "fmod": (np.fmod, "C-style remainder with the sign of the dividend."),
}

# `tensor.subs` keeps the tensor's dtype in the real toolchain (the other scalar forms
# promote with the scalar's)
for _name, (_fn, _doc) in _BINARY.items():
    _register_binary(_name, _fn, _doc, divisor="rhs" if _name == "fmod" else None,
                     keep_scalar_dtype=_name == "sub")

# Scalar-right spellings that exist as separate public names in real pypto. (Integer
# division by zero has one defined result: `pypto.ops.intdiv`; numpy's fmod gives it.)
for _name, _base in (("adds", np.add), ("subs", np.subtract), ("muls", np.multiply),
                     ("divs", true_quotient), ("maximums", np.maximum),
                     ("minimums", np.minimum), ("fmods", np.fmod)):
    _register_binary(_name, _base, f"`{_name}(lhs, scalar)`: the scalar form of "
                     f"`{_name[:-1]}`.", divisor="rhs" if _name in ("divs", "fmods") else None,
                     keep_scalar_dtype=_name == "subs")


_TDIV_DTYPES = (dtypes.INT16, dtypes.INT32, dtypes.FP16, dtypes.FP32)


def _div(lhs, rhs, high_precision=False):
    """Elementwise `lhs / rhs`; `rhs` may be a scalar. Tile / tile division needs one
    dtype (INT16, INT32, FP16 or FP32) and identical shapes; integers truncate."""
    hp = bool(py_value(high_precision))
    lt, rt = type_of(lhs), type_of(rhs)
    if isinstance(lt, TileType):
        if scalar_like(rhs):
            if hp:
                raise OpError("high_precision= is not available for tile / scalar division",
                              arg="high_precision")
        elif isinstance(rt, TileType):
            if lt.dtype != rt.dtype:
                raise OpError(f"tile division needs identical dtypes, got {lt.dtype!r} and "
                              f"{rt.dtype!r}", arg="rhs", hint="pl.cast one operand first")
            if lt.dtype not in _TDIV_DTYPES:
                raise OpError(f"tile division supports INT16, INT32, FP16 and FP32, not "
                              f"{lt.dtype!r}", arg="lhs", hint="pl.cast to pl.FP32 first")
            if tuple(lt.shape) != tuple(rt.shape) or lt.valid_shape != rt.valid_shape:
                raise OpError(f"tile division needs identical shapes, got {lt} and {rt}",
                              arg="rhs", hint="use pl.row_expand_div / pl.col_expand_div to "
                              "divide by a row or column vector")
    return _binary_rule("div")(lhs, rhs)


_true_divide = elementwise(np.true_divide)


def _div_impl(lhs: Any, rhs: Any, high_precision: bool = False) -> Any:
    if is_int_array(lhs):
        # Integer tiles divide truncating toward zero, as the hardware's TDIV does; by
        # zero they saturate (`pypto.ops.intdiv`)
        return true_quotient(lhs, rhs)
    if not isinstance(rhs, np.ndarray) or rhs.ndim == 0:
        rhs = tile_scalar(lhs, rhs)
    return _true_divide(lhs, rhs)


defop("div", unit=Unit.VECTOR, impl=_div_impl, batch=_ELEMENTWISE, ufunc=Ufunc(np.true_divide),
      divisor="rhs",
      names=("pl.div", "pl.tensor.div", "pl.tile.div"))(_div)


# --- bitwise ------------------------------------------------------------------------

for _name, _fn in (("and_", np.bitwise_and), ("or_", np.bitwise_or), ("shl", np.left_shift),
                   ("shr", np.right_shift)):
    _register_binary(_name, _fn, f"Bitwise `{_name.rstrip('_')}` on integer operands.",
                     int_only=True, keep_lhs_dtype=True)
for _name, _fn in (("ands", np.bitwise_and), ("ors", np.bitwise_or), ("shls", np.left_shift),
                   ("shrs", np.right_shift)):
    _register_binary(_name, _fn, f"Bitwise `{_name[:-1].rstrip('_')}` with a scalar operand.",
                     int_only=True, keep_lhs_dtype=True)


def _xor(lhs, rhs, tmp=None):
    """Bitwise xor (tile form needs a scratch `tmp`; the tensor form takes none)."""
    scratch(lhs, tmp, "pl.xor")
    return _binary_rule("xor", int_only=True, keep_lhs_dtype=True)(lhs, rhs)


def _xors(lhs, rhs, tmp=None):
    """Bitwise xor with a scalar (tile form needs a scratch `tmp`)."""
    scratch(lhs, tmp, "pl.xors")
    return _binary_rule("xors", int_only=True, keep_lhs_dtype=True)(lhs, rhs)


defop("xor", unit=Unit.VECTOR, impl=lambda lhs, rhs, tmp=None: np.bitwise_xor(lhs, rhs),
      names=("pl.xor", "pl.tensor.xor", "pl.tile.xor"))(_xor)
defop("xors", unit=Unit.VECTOR, impl=lambda lhs, rhs, tmp=None: np.bitwise_xor(lhs, rhs),
      names=("pl.xors", "pl.tensor.xors", "pl.tile.xors"))(_xors)


# --- unary --------------------------------------------------------------------------


def _unary_rule(name: str, *, float_only: bool = False, fp32_only: bool = False):
    def rule(x):
        t = shaped(x, "x")
        if fp32_only and t.dtype != dtypes.FP32:
            raise OpError(f"pl.{name} accepts FP32 only, got {t.dtype!r}", arg="x",
                          hint=f"pl.cast the operand to pl.FP32 before pl.{name}")
        if float_only and not t.dtype.is_float():
            raise OpError(f"pl.{name} needs a floating-point operand, got {t.dtype!r}", arg="x",
                          hint="pl.cast the operand to pl.FP32 first")
        return like(t)

    return rule


def _rsqrt(x: Any) -> Any:
    return 1.0 / np.sqrt(x)


_UNARY: dict[str, tuple[Callable, str, dict]] = {
    "neg": (np.negative, "Elementwise `-x`.", {}),
    "abs": (np.abs, "Elementwise `|x|`.", {}),
    "exp": (np.exp, "Elementwise `e**x`.", {"float_only": True}),
    "sqrt": (np.sqrt, "Elementwise square root.", {"float_only": True}),
    "sin": (np.sin, "Elementwise sine (radians); FP32 only.", {"fp32_only": True}),
    "cos": (np.cos, "Elementwise cosine (radians); FP32 only.", {"fp32_only": True}),
    "relu": (lambda x: np.maximum(x, 0), "Elementwise `max(0, x)`.", {}),
    "not_": (np.invert, "Bitwise NOT (INT16/UINT16).", {}),
}

for _name, (_fn, _doc, _kw) in _UNARY.items():
    _r = _unary_rule(_name, **_kw)

    def _sig(x, _r=_r):
        return _r(x)

    _sig.__doc__ = _doc
    _uf = {"neg": np.negative, "abs": np.abs, "exp": np.exp}.get(_name)
    defop(_name, unit=Unit.VECTOR, impl=elementwise(_fn),
          batch=_ELEMENTWISE if _name in _BATCHABLE else None,
          ufunc=Ufunc(_uf, 1) if _uf is not None else None,
          names=(f"pl.{_name}", f"pl.tensor.{_name}", f"pl.tile.{_name}"))(_sig)


def _hp_unary(name: str, fn: Callable, doc: str, tile_high_precision: bool = False) -> None:
    """A float unary op with the tensor option `high_precision=` (the tile forms of
    log and recip take it too, as the real pl.tile.log / pl.tile.recip do; rsqrt's
    tile form takes a scratch tile instead). The simulator computes in fp32 either way."""
    rule = _unary_rule(name, float_only=True)

    def sig(x, high_precision=False, tmp=None):
        scratch(x, tmp, f"pl.{name}", required=False)
        if not tile_high_precision and isinstance(type_of(x), TileType) and \
                high_precision is not False and getattr(high_precision, "value", high_precision):
            raise OpError(f"high_precision= is a tensor-level option of pl.{name}; the tile form "
                          "takes a scratch tile `tmp` instead", arg="high_precision")
        return rule(x)

    sig.__doc__ = doc
    impl = elementwise(fn)
    defop(name, unit=Unit.VECTOR, impl=lambda x, high_precision=False, tmp=None: impl(x),
          batch=Batch(Family.UFUNC, tag_arity=1),  # (the other operands change nothing)
          names=(f"pl.{name}", f"pl.tensor.{name}", f"pl.tile.{name}"))(sig)


_hp_unary("rsqrt", _rsqrt, "Elementwise `1/sqrt(x)`.")
_hp_unary("recip", np.reciprocal, "Elementwise `1/x` (FP16/FP32).", tile_high_precision=True)
_hp_unary("log", np.log, "Elementwise natural logarithm.", tile_high_precision=True)


def _lrelu(x, slope):
    """Leaky relu: `max(x, slope*x)`."""
    return like(shaped(x, "x"))


defop("lrelu", unit=Unit.VECTOR, batch=_ELEMENTWISE,
      impl=_scalar_in_tile(elementwise(lambda x, s: np.maximum(x, x * s))),
      names=("pl.lrelu", "pl.tile.lrelu"))(_lrelu)


# --- partial (valid-region aware) binaries ------------------------------------------------


def _part_impl(fn: Callable) -> Callable:
    def run(lhs: Any, rhs: Any) -> Any:
        va, vb = valid_shape(lhs), valid_shape(rhs)
        a = plain(lhs).astype(compute_dtype(np.asarray(lhs).dtype), copy=False)
        b = plain(rhs).astype(compute_dtype(np.asarray(rhs).dtype), copy=False)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a2, b2 = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
        with np.errstate(all="ignore"):
            out = np.array(fn(a2, b2))
        in_a = _region_mask(shape, va)
        in_b = _region_mask(shape, vb)
        out = np.where(in_a & ~in_b, a2, np.where(in_b & ~in_a, b2, out))
        valid = tuple(max(x, y) for x, y in zip(_pad_rank(va, len(shape)),
                                                _pad_rank(vb, len(shape))))
        return with_valid(out, valid)

    return run


def _pad_rank(v: tuple, rank: int) -> tuple:
    return (1,) * (rank - len(v)) + tuple(v)


def _region_mask(shape: tuple, valid: tuple) -> np.ndarray:
    valid = _pad_rank(valid, len(shape))
    m = np.ones(shape, dtype=bool)
    for axis, v in enumerate(valid):
        idx = np.arange(shape[axis]) < v
        m &= idx.reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return m


for _name, _fn in (("part_add", np.add), ("part_mul", np.multiply), ("part_max", np.maximum),
                   ("part_min", np.minimum)):
    def _psig(lhs, rhs, _n=_name):
        a = shaped(lhs, "lhs")
        b = shaped(rhs, "rhs")
        same_family(a, b, "rhs")
        return like(a, shape=broadcast_shapes(a.shape, b.shape), dtype=dtypes.promote(a.dtype,
                                                                                     b.dtype))

    _psig.__doc__ = (f"`{_name}(lhs, rhs)`: {_fn.__name__} over the union of both valid regions; "
                     "where only one operand is valid the result copies it (TPART*). No scalar "
                     "form.")
    defop(_name, unit=Unit.VECTOR, impl=_part_impl(_fn),
          names=(f"pl.{_name}", f"pl.tensor.{_name}", f"pl.tile.{_name}"))(_psig)


# --- three-operand tile ops --------------------------------------------------------------


def _tile_only(x: Any, arg: str, op: str):
    t = shaped(x, arg)
    if not isinstance(t, TileType):
        raise OpError(f"{op} is a tile op; '{arg}' is a tensor", arg=arg,
                      hint="load the tensor into a tile with pl.load first")
    return t


def _ternary_rule(op: str, scalar_mid: bool):
    def rule(lhs, rhs, rhs2):
        a = _tile_only(lhs, "lhs", op)
        if scalar_mid:
            if not scalar_like(rhs):
                raise OpError(f"{op} takes a scalar as its second operand, got {type_of(rhs)}",
                              arg="rhs")
        else:
            b = _tile_only(rhs, "rhs", op)
            if b.dtype != a.dtype:
                raise OpError(f"{op} needs operands of one dtype, got {a.dtype!r} and "
                              f"{b.dtype!r}", arg="rhs")
        c = _tile_only(rhs2, "rhs2", op)
        if c.dtype != a.dtype:
            raise OpError(f"{op} needs operands of one dtype, got {a.dtype!r} and {c.dtype!r}",
                          arg="rhs2")
        return like(a)

    return rule


for _name, _scalar, _fn, _sym in (("addc", False, lambda a, b, c: a + b + c, "lhs + rhs + rhs2"),
                                  ("subc", False, lambda a, b, c: a - b - c, "lhs - rhs - rhs2"),
                                  ("addsc", True, lambda a, b, c: a + b + c,
                                   "lhs + scalar + rhs2"),
                                  ("subsc", True, lambda a, b, c: a - b - c,
                                   "lhs - scalar - rhs2")):
    _r3 = _ternary_rule(f"pl.{_name}", _scalar)

    def _tsig(lhs, rhs, rhs2, _r3=_r3):
        return _r3(lhs, rhs, rhs2)

    _tsig.__doc__ = f"Tile `{_sym}` in one instruction."
    _impl3 = elementwise(_fn)
    if _scalar:  # (the scalar in the middle, in the tile's dtype)
        _impl3 = (lambda f: lambda a, s, c: f(a, tile_scalar(a, s), c))(_impl3)
    defop(_name, unit=Unit.VECTOR, impl=_impl3, batch=_ELEMENTWISE,
          names=(f"pl.{_name}", f"pl.tile.{_name}"))(_tsig)


def _rem(lhs, rhs, tmp):
    """Tile remainder `lhs % rhs` (TREM: sign of the divisor, like Python/torch `%`);
    needs a scratch `tmp` of lhs's shape and dtype."""
    a = _tile_only(lhs, "lhs", "pl.rem")
    b = _tile_only(rhs, "rhs", "pl.rem")
    _check_tmp_like(a, tmp, "pl.rem")
    if a.dtype != b.dtype:
        raise OpError(f"pl.rem needs operands of one dtype, got {a.dtype!r} and {b.dtype!r}",
                      arg="rhs")
    return like(a, shape=broadcast_shapes(a.shape, b.shape))


def _rems(lhs, rhs, tmp):
    """Tile remainder by a scalar `lhs % s` (sign of the divisor); needs a scratch `tmp`."""
    a = _tile_only(lhs, "lhs", "pl.rems")
    if not scalar_like(rhs):
        raise OpError(f"pl.rems takes a scalar divisor, got {type_of(rhs)}", arg="rhs")
    _check_tmp_like(a, tmp, "pl.rems")
    return like(a)


def _check_tmp_like(a, tmp, op: str) -> None:
    t = type_of(tmp)
    if not isinstance(t, TileType):
        raise OpError(f"{op} needs a scratch tile 'tmp' of the operand's shape and dtype",
                      arg="tmp", hint="pass pl.create_tile(shape, dtype)")
    if t.dtype != a.dtype or tuple(t.shape) != tuple(a.shape):
        raise OpError(f"{op} scratch must match the operand ({a}), got {t}", arg="tmp")


_rem_impl = elementwise(lambda a, b: np.remainder(a, b))
defop("rem", unit=Unit.VECTOR, impl=lambda lhs, rhs, tmp: _rem_impl(lhs, rhs),
      names=("pl.rem", "pl.tile.rem"), divisor="rhs")(_rem)
defop("rems", unit=Unit.VECTOR,
      impl=lambda lhs, rhs, tmp: _rem_impl(lhs, tile_scalar(lhs, rhs)),
      names=("pl.rems", "pl.tile.rems"), divisor="rhs")(_rems)


def _prelu(tile, slope, tmp):
    """Parametric relu: `x if x > 0 else x * slope` with a per-element `slope` tile;
    needs a scratch `tmp`."""
    a = _tile_only(tile, "tile", "pl.prelu")
    b = _tile_only(slope, "slope", "pl.prelu")
    if b.dtype != a.dtype:
        raise OpError(f"pl.prelu slope must have the input dtype {a.dtype!r}, got {b.dtype!r}",
                      arg="slope")
    if not isinstance(type_of(tmp), TileType):
        raise OpError("pl.prelu needs a scratch tile 'tmp'", arg="tmp")
    broadcast_shapes(a.shape, b.shape, "slope")
    return like(a)


_prelu_fn = elementwise(lambda x, s: np.where(x > 0, x, x * s))
defop("prelu", unit=Unit.VECTOR, impl=lambda tile, slope, tmp: _prelu_fn(tile, slope),
      names=("pl.prelu", "pl.tile.prelu"))(_prelu)

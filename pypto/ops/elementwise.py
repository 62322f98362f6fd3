"""Elementwise binary and unary ops (vector unit), table-driven.

Each binary op takes a tensor/tile on the left and a tensor/tile *or* a scalar on
the right (the "s" forms of real pypto, e.g. `pl.add(t, 1.0)` = `tensor.adds`).
Scalar ∘ scalar through `pl.add` is plain scalar arithmetic.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import ScalarType, TileType
from pypto.ops.numeric import elementwise
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (broadcast_shapes, like, same_family, scalar_dtype, scalar_like,
                             shaped, type_of)


def _binary_rule(op_name: str, *, int_only: bool = False, keep_lhs_dtype: bool = False):
    def rule(lhs, rhs):
        lt = type_of(lhs)
        if isinstance(lt, ScalarType) and scalar_like(rhs):
            return ScalarType(dtypes.promote(lt.dtype, scalar_dtype(rhs)))
        a = shaped(lhs, "lhs")
        if int_only and not a.dtype.is_int():
            raise OpError(f"pl.{op_name} needs integer operands, got {a.dtype!r}", arg="lhs")
        if scalar_like(rhs):
            return like(a)
        b = shaped(rhs, "rhs")
        same_family(a, b, "rhs")
        shape = broadcast_shapes(a.shape, b.shape)
        dt = a.dtype if keep_lhs_dtype else dtypes.promote(a.dtype, b.dtype)
        return like(a, shape=shape, dtype=dt, valid_shape=a.valid_shape if shape == a.shape else None)

    rule.__name__ = op_name
    return rule


def _register_binary(name: str, fn: Callable, doc: str, *, extra_names: tuple = (),
                     int_only: bool = False, keep_lhs_dtype: bool = False) -> None:
    rule = _binary_rule(name, int_only=int_only, keep_lhs_dtype=keep_lhs_dtype)

    def sig(lhs, rhs):  # the op's public signature
        return rule(lhs, rhs)

    sig.__doc__ = doc
    names = (f"pl.{name}", f"pl.tensor.{name}", f"pl.tile.{name}") + extra_names
    defop(name, unit=Unit.VECTOR, impl=elementwise(fn), names=names)(sig)


_BINARY: dict[str, tuple[Callable, str]] = {
    "add": (np.add, "Elementwise `lhs + rhs`; `rhs` may be a scalar."),
    "sub": (np.subtract, "Elementwise `lhs - rhs`; `rhs` may be a scalar."),
    "mul": (np.multiply, "Elementwise `lhs * rhs`; `rhs` may be a scalar."),
    "maximum": (np.maximum, "Elementwise maximum; `rhs` may be a scalar."),
    "minimum": (np.minimum, "Elementwise minimum; `rhs` may be a scalar."),
    "fmod": (np.fmod, "C-style remainder with the sign of the dividend."),
}

for _name, (_fn, _doc) in _BINARY.items():
    _register_binary(_name, _fn, _doc)

# Scalar-right spellings that exist as separate public names in real pypto.
for _name, _base in (("adds", np.add), ("subs", np.subtract), ("muls", np.multiply),
                     ("divs", np.divide), ("maximums", np.maximum), ("minimums", np.minimum),
                     ("fmods", np.fmod)):
    _register_binary(_name, _base, f"`{_name}(lhs, scalar)`: the scalar form of "
                     f"`{_name[:-1]}`.")


def _div(lhs, rhs, high_precision=False):
    """Elementwise `lhs / rhs`; `rhs` may be a scalar."""
    return _binary_rule("div")(lhs, rhs)


def _div_impl(lhs: Any, rhs: Any, high_precision: bool = False) -> Any:
    if isinstance(lhs, np.ndarray) and lhs.dtype.kind in "iu":
        # Integer tiles divide truncating toward zero, as the hardware's TDIV does.
        with np.errstate(all="ignore"):
            return np.trunc(np.true_divide(lhs, rhs)).astype(lhs.dtype)
    return elementwise(np.true_divide)(lhs, rhs)


defop("div", unit=Unit.VECTOR, impl=_div_impl,
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
    """Bitwise xor (tile form takes a scratch `tmp`)."""
    return _binary_rule("xor", int_only=True, keep_lhs_dtype=True)(lhs, rhs)


def _xors(lhs, rhs, tmp=None):
    """Bitwise xor with a scalar (tile form takes a scratch `tmp`)."""
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
    defop(_name, unit=Unit.VECTOR, impl=elementwise(_fn),
          names=(f"pl.{_name}", f"pl.tensor.{_name}", f"pl.tile.{_name}"))(_sig)


def _hp_unary(name: str, fn: Callable, doc: str) -> None:
    rule = _unary_rule(name, float_only=True)

    def sig(x, high_precision=False, tmp=None):
        if isinstance(type_of(x), TileType) and high_precision is not False and \
                getattr(high_precision, "value", high_precision):
            raise OpError(f"high_precision= is a tensor-level option of pl.{name}; the tile form "
                          "takes a scratch tile `tmp` instead", arg="high_precision")
        return rule(x)

    sig.__doc__ = doc
    impl = elementwise(fn)
    defop(name, unit=Unit.VECTOR, impl=lambda x, high_precision=False, tmp=None: impl(x),
          names=(f"pl.{name}", f"pl.tensor.{name}", f"pl.tile.{name}"))(sig)


_hp_unary("rsqrt", _rsqrt, "Elementwise `1/sqrt(x)`.")
_hp_unary("recip", np.reciprocal, "Elementwise `1/x` (FP16/FP32).")
_hp_unary("log", np.log, "Elementwise natural logarithm.")


def _lrelu(x, slope):
    """Leaky relu: `max(x, slope*x)`."""
    return like(shaped(x, "x"))


defop("lrelu", unit=Unit.VECTOR,
      impl=elementwise(lambda x, s: np.maximum(x, x * s)),
      names=("pl.lrelu", "pl.tile.lrelu"))(_lrelu)

"""Builders for type-rule tests: IR expressions of a given type."""
from __future__ import annotations

from pypto.ir import dtypes
from pypto.ir.nodes import Attr, Const, ListExpr, Var
from pypto.ir.types import MemorySpace, ScalarType, TensorType, TileType
from pypto.ops.registry import get

FP32, BF16, FP16, INT8, INT16, INT32, UINT32, UINT8 = (
    dtypes.FP32, dtypes.BF16, dtypes.FP16, dtypes.INT8, dtypes.INT16, dtypes.INT32,
    dtypes.UINT32, dtypes.UINT8)


def tensor(shape, dtype=FP32, name="t", valid=None):
    return Var(name, TensorType(tuple(shape), dtype, valid))


def tile(shape, dtype=FP32, name="k", memory=MemorySpace.Vec, valid=None):
    return Var(name, TileType(tuple(shape), dtype, valid, memory))


def scalar(dtype=FP32, name="s"):
    return Var(name, ScalarType(dtype))


def lit(v):
    return Const(v, ScalarType(dtypes.FP32 if isinstance(v, float) else dtypes.INDEX))


def lst(*items):
    return ListExpr(tuple(lit(i) if isinstance(i, (int, float)) else i for i in items))


def attr(v):
    return Attr(v)


def rule(op, *args, **kwargs):
    """Run op's type rule the way the parser does (defaults applied)."""
    d = get(op)
    bound = d.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return d.type_rule(**bound.arguments)


def impl(op, *args, **kwargs):
    """Call op's numpy implementation with arguments in signature order."""
    d = get(op)
    bound = d.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return d.impl(*bound.arguments.values())

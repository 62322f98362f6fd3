"""Matrix multiply (cube unit).

Tensor-level `pl.matmul` keeps the promoted input dtype unless `out_dtype` is
given; the cube always accumulates in FP32 (INT32 for integer inputs) and the
result is rounded once to the declared dtype.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import TileType, MemorySpace
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import dims_equal, dtype_arg, like, py_value, same_family, shaped


def _operand_shape(t, trans: bool) -> tuple:
    if t.rank < 2:
        return (1,) + tuple(t.shape) if not trans else tuple(t.shape) + (1,)
    s = tuple(t.shape)
    return s[:-2] + (s[-1], s[-2]) if trans else s


def _acc_dtype(dt) -> Any:
    return dtypes.INT32 if dt.is_int() else dtypes.FP32


def _matmul(lhs, rhs, out_dtype=None, a_trans=False, b_trans=False, c_matrix_nz=False):
    """`lhs @ rhs` with optional transposes of either operand's last two axes."""
    a = shaped(lhs, "lhs")
    b = shaped(rhs, "rhs")
    same_family(a, b, "rhs")
    sa = _operand_shape(a, bool(py_value(a_trans)))
    sb = _operand_shape(b, bool(py_value(b_trans)))
    if dims_equal(sa[-1], sb[-2]) is False:
        raise OpError(f"matmul inner dims differ: lhs is {list(sa)} and rhs is {list(sb)}",
                      arg="rhs", hint="check the K extents (or pass a_trans/b_trans)")
    batch = sa[:-2] if len(sa) >= len(sb) else sb[:-2]
    shape = tuple(batch) + (sa[-2], sb[-1])
    if isinstance(a, TileType):
        if a.dtype != b.dtype:
            raise OpError(f"tile matmul operands need identical dtypes, got {a.dtype!r} and "
                          f"{b.dtype!r}", arg="rhs")
        return TileType(shape, _acc_dtype(a.dtype), None, MemorySpace.Acc)
    dt = dtype_arg(out_dtype, "out_dtype") if out_dtype is not None else \
        dtypes.promote(a.dtype, b.dtype)
    return like(a, shape=shape, dtype=dt, valid_shape=None)


def _mm(lhs: np.ndarray, rhs: np.ndarray, a_trans: bool, b_trans: bool) -> np.ndarray:
    acc = np.int64 if lhs.dtype.kind in "iu" else np.float32
    a = lhs.astype(acc, copy=False)
    b = rhs.astype(acc, copy=False)
    if a_trans:
        a = np.swapaxes(a, -1, -2)
    if b_trans:
        b = np.swapaxes(b, -1, -2)
    out = np.matmul(a, b)
    return out.astype(np.int32) if acc is np.int64 else out


defop("matmul", unit=Unit.CUBE,
      impl=lambda lhs, rhs, out_dtype=None, a_trans=False, b_trans=False, c_matrix_nz=False:
      _mm(lhs, rhs, a_trans, b_trans),
      names=("pl.matmul", "pl.tensor.matmul", "pl.tile.matmul"))(_matmul)


def _matmul_acc(acc, lhs, rhs, a_trans=False, b_trans=False, init_cond=None):
    """`acc += lhs @ rhs`; `acc` must be FP32 (float inputs) or INT32 (integer inputs)."""
    c = shaped(acc, "acc")
    if c.dtype not in (dtypes.FP32, dtypes.INT32):
        raise OpError(f"matmul_acc needs an FP32 or INT32 accumulator, got {c.dtype!r}",
                      arg="acc", hint="create the accumulator with pl.matmul(..., "
                      "out_dtype=pl.FP32)")
    r = _matmul(lhs, rhs, None, a_trans, b_trans)
    if dims_equal(r.shape[-1], c.shape[-1]) is False or \
            dims_equal(r.shape[-2], c.shape[-2]) is False:
        raise OpError(f"matmul_acc product shape {list(r.shape)} does not match the accumulator "
                      f"{list(c.shape)}", arg="acc")
    return c


def _matmul_acc_impl(acc, lhs, rhs, a_trans=False, b_trans=False, init_cond=None):
    prod = _mm(lhs, rhs, a_trans, b_trans)
    if init_cond:
        return prod
    return acc + prod


defop("matmul_acc", unit=Unit.CUBE, impl=_matmul_acc_impl,
      names=("pl.matmul_acc", "pl.tensor.matmul_acc", "pl.tile.matmul_acc"))(_matmul_acc)


def _matmul_bias(lhs, rhs, bias):
    """`lhs @ rhs + bias` with `bias` of shape [1, N]."""
    return _matmul(lhs, rhs)


defop("matmul_bias", unit=Unit.CUBE,
      impl=lambda lhs, rhs, bias: _mm(lhs, rhs, False, False) + bias,
      names=("pl.matmul_bias", "pl.tile.matmul_bias"))(_matmul_bias)


def _batch_matmul(lhs, rhs):
    """Batched `[..., M, K] @ [..., K, N]` with batch broadcasting."""
    return _matmul(lhs, rhs)


defop("batch_matmul", unit=Unit.CUBE, impl=lambda lhs, rhs: _mm(lhs, rhs, False, False),
      names=("pl.batch_matmul", "pl.tile.batch_matmul"))(_batch_matmul)

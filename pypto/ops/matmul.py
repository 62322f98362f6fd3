"""Matrix multiply (cube unit).

Tensor-level `pl.matmul` keeps the promoted input dtype unless `out_dtype` is
given; the cube always accumulates in FP32 (INT32 for integer inputs) and the
result is rounded once to the declared dtype.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, TileType
from pypto.ops.facts import Batch, Family, Matmul
from pypto.ops.numeric import is_tile_window, plain
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import dims_equal, dtype_arg, like, py_value, same_family, shaped


def _operand_shape(t, trans: bool) -> tuple:
    if t.rank < 2:
        return (1,) + tuple(t.shape) if not trans else tuple(t.shape) + (1,)
    s = tuple(t.shape)
    return s[:-2] + (s[-1], s[-2]) if trans else s


def _acc_dtype(dt) -> Any:
    return dtypes.INT32 if dt.is_int() else dtypes.FP32


_TILE_REMEDY = {  # (why the tile form has no such flag, what to write instead)
    "a_trans": ("a transposed tile is a zero-copy view (pl.tile.transpose_view), not a flag",
                "pass pl.tile.transpose_view(lhs, ...) as lhs"),
    "b_trans": ("a transposed tile is a zero-copy view (pl.tile.transpose_view), not a flag",
                "pass pl.tile.transpose_view(rhs, ...) as rhs"),
    "c_matrix_nz": ("the result layout is fixed by its Acc tile type",
                    "drop c_matrix_nz=; it is a tensor-level flag"),
}


def _tensor_only_flags(**flags: Any) -> None:
    """The transpose / layout flags say what a tensor (which has no layout) cannot; on
    tiles the layout is the operand's type, so a flag the tile form cannot honour is
    refused rather than dropped (the real `pl.matmul` does the same)."""
    for name, value in flags.items():
        if py_value(value):
            why, fix = _TILE_REMEDY[name]
            raise OpError(f"'{name}' is not supported for Tile operands: {why}", arg=name,
                          hint=fix)


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
        _tensor_only_flags(a_trans=a_trans, b_trans=b_trans, c_matrix_nz=c_matrix_nz)
        if a.dtype != b.dtype:
            raise OpError(f"tile matmul operands need identical dtypes, got {a.dtype!r} and "
                          f"{b.dtype!r}", arg="rhs")
        return TileType(shape, _acc_dtype(a.dtype), None, MemorySpace.Acc)
    dt = dtype_arg(out_dtype, "out_dtype") if out_dtype is not None else \
        dtypes.promote(a.dtype, b.dtype)
    return like(a, shape=shape, dtype=dt, valid_shape=None)


@functools.lru_cache(maxsize=256)  # (sim speed: np.iinfo costs ~10 us; called per matmul)
def _exact_float_acc(lhs: np.dtype, rhs: np.dtype, k: int) -> Any:
    """A float dtype whose BLAS matmul gives the exact integer sums of an integer matmul
    with inner extent `k`, else None.

    numpy's integer matmul is a naive loop (no BLAS): an int8 [64,128] @ [64,128,512]
    takes ~0.5 s. When every product and every partial sum is an integer below the float's
    2**mantissa bound, a float matmul is exact in any summation order, so its result
    equals the int64 accumulation bit for bit."""
    if lhs.kind not in "iu" or rhs.kind not in "iu" or lhs.itemsize > 2 or rhs.itemsize > 2:
        return None
    la, lb = np.iinfo(lhs), np.iinfo(rhs)
    bound = k * max(-la.min, la.max) * max(-lb.min, lb.max)
    if bound <= 2 ** 24:
        return np.float32
    if bound <= 2 ** 53:
        return np.float64
    return None


def _mm(lhs: np.ndarray, rhs: np.ndarray, a_trans: bool, b_trans: bool) -> np.ndarray:
    if lhs.dtype.kind not in "iu":
        # the cube accumulates in float32; float64 operands are the precision shadow's
        # (`pypto.precision`), which wants the exact product
        wide = lhs.dtype == np.float64 or rhs.dtype == np.float64
        return _product(lhs, rhs, a_trans, b_trans, np.float64 if wide else np.float32)
    k = lhs.shape[-2] if a_trans and lhs.ndim >= 2 else lhs.shape[-1]
    acc = _exact_float_acc(lhs.dtype, rhs.dtype, k) or np.int64
    prod = _product(lhs, rhs, a_trans, b_trans, acc)
    if acc is np.float32:  # exact integers within +-2**24: int32 holds them as they are
        return prod.astype(np.int32)
    # the int64 accumulation wraps to int32; an exact float result is that same integer
    return prod.astype(np.int64, copy=False).astype(np.int32)


# Widened operands above this many bytes are multiplied a slice of batch axes at a time.
WIDEN_LIMIT = 1 << 28


def _product(lhs: np.ndarray, rhs: np.ndarray, a_trans: bool, b_trans: bool, acc: Any
             ) -> np.ndarray:
    """`lhs @ rhs` computed in `acc`. A batched run stacks every block's tile along
    leading axes, often as a view of a whole weight tensor: widening all of it at once
    (int8 expert weights to float32: 4x a model's weights) is what memory cannot afford,
    so above `WIDEN_LIMIT` the leading batch axes are walked in slices. Each 2-D product
    is the same BLAS call either way (the same trailing shape and strides), so the
    result is bit-identical."""
    width = np.dtype(acc).itemsize
    if (lhs.size + rhs.size) * width > WIDEN_LIMIT and min(lhs.ndim, rhs.ndim) >= 2 \
            and max(lhs.ndim, rhs.ndim) > 2:
        return _sliced_product(lhs, rhs, a_trans, b_trans, acc)
    return _whole_product(lhs, rhs, a_trans, b_trans, acc)


def _sliced_product(lhs: np.ndarray, rhs: np.ndarray, a_trans: bool, b_trans: bool,
                    acc: Any) -> np.ndarray:
    rank = max(lhs.ndim, rhs.ndim)
    a = lhs.reshape((1,) * (rank - lhs.ndim) + lhs.shape)
    b = rhs.reshape((1,) * (rank - rhs.ndim) + rhs.shape)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    # walk as few leading axes as bring one slice's widened operands under the limit
    per = (a.size + b.size) * np.dtype(acc).itemsize
    lead = 0
    while lead < len(batch) and per > WIDEN_LIMIT:
        per //= max(1, batch[lead])
        lead += 1
    out: np.ndarray | None = None
    for idx in np.ndindex(*batch[:lead]):
        pa = _product_slice(a, idx)
        pb = _product_slice(b, idx)
        part = _whole_product(pa, pb, a_trans, b_trans, acc)
        if out is None:
            out = np.empty(batch[:lead] + part.shape, dtype=part.dtype)
        out[idx] = part
    assert out is not None
    return out


def _product_slice(x: np.ndarray, idx: tuple) -> np.ndarray:
    """x at the leading batch index `idx` (an axis of extent 1 broadcasts)."""
    return x[tuple(0 if x.shape[d] == 1 else i for d, i in enumerate(idx))]


def _whole_product(lhs: np.ndarray, rhs: np.ndarray, a_trans: bool, b_trans: bool, acc: Any
                   ) -> np.ndarray:
    a = lhs.astype(acc, copy=False)
    b = rhs.astype(acc, copy=False)
    if a_trans:
        a = np.swapaxes(a, -1, -2)
    if b_trans:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)


defop("matmul", unit=Unit.CUBE, matmul=Matmul(l0_tiled=True), batch=Batch(Family.MATMUL),
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
    out = prod if init_cond else acc + prod
    if is_tile_window(acc):
        # the accumulator is a window of a larger Acc tile (pl.tile.slice): the MAD
        # accumulates into that tile's L0C in place
        plain(acc)[...] = out
        return acc
    return out


defop("matmul_acc", unit=Unit.CUBE, impl=_matmul_acc_impl,
      matmul=Matmul(acc="acc", l0_tiled=True),
      batch=Batch(Family.MATMUL),
      names=("pl.matmul_acc", "pl.tensor.matmul_acc", "pl.tile.matmul_acc"))(_matmul_acc)


def _matmul_bias(lhs, rhs, bias):
    """`lhs @ rhs + bias` with `bias` of shape [1, N]."""
    return _matmul(lhs, rhs)


defop("matmul_bias", unit=Unit.CUBE, matmul=Matmul(l0_tiled=True),
      impl=lambda lhs, rhs, bias: _mm(lhs, rhs, False, False) + bias,
      names=("pl.matmul_bias", "pl.tile.matmul_bias"))(_matmul_bias)


def _batch_matmul(lhs, rhs):
    """Batched `[..., M, K] @ [..., K, N]` with batch broadcasting."""
    return _matmul(lhs, rhs)


defop("batch_matmul", unit=Unit.CUBE, matmul=Matmul(l0_tiled=True),
      impl=lambda lhs, rhs: _mm(lhs, rhs, False, False),
      names=("pl.batch_matmul", "pl.tile.batch_matmul"))(_batch_matmul)


def _batch_matmul_acc(acc, lhs, rhs):
    """Batched `acc += lhs @ rhs`; acc's batch shape must equal the broadcast batch shape
    of the operands, its dtype FP32 (float inputs) or INT32 (integer inputs)."""
    c = shaped(acc, "acc")
    r = _matmul(lhs, rhs)
    if c.dtype != _acc_dtype(shaped(lhs, "lhs").dtype):
        raise OpError(f"batch_matmul_acc needs a {_acc_dtype(shaped(lhs, 'lhs').dtype)!r} "
                      f"accumulator, got {c.dtype!r}", arg="acc")
    if c.rank != len(r.shape) or any(dims_equal(a, b) is False for a, b in zip(c.shape, r.shape)):
        raise OpError(f"batch_matmul_acc product shape {list(r.shape)} does not match the "
                      f"accumulator {list(c.shape)}", arg="acc")
    return c


defop("batch_matmul_acc", unit=Unit.CUBE, matmul=Matmul(acc="acc", l0_tiled=True),
      impl=lambda acc, lhs, rhs: acc + _mm(lhs, rhs, False, False),
      names=("pl.tile.batch_matmul_acc",))(_batch_matmul_acc)


_GEMV_DTYPES = (dtypes.INT8, dtypes.FP16, dtypes.BF16, dtypes.FP32)
_ACC_PHASES = ("unspecified", "partial", "final")


def _gemv_rule(lhs, rhs, acc_phase, op: str):
    a = shaped(lhs, "lhs")
    b = shaped(rhs, "rhs")
    for t, n in ((a, "lhs"), (b, "rhs")):
        if not isinstance(t, TileType) or t.rank != 2:
            raise OpError(f"{op} takes 2-D tiles", arg=n)
    if a.dtype != b.dtype or a.dtype not in _GEMV_DTYPES:
        raise OpError(f"{op} needs operands of one dtype among INT8, FP16, BF16, FP32; got "
                      f"{a.dtype!r} and {b.dtype!r}", arg="rhs")
    if isinstance(a.shape[0], int) and a.shape[0] != 1:
        raise OpError(f"{op} multiplies a row vector [1, K], got lhs {list(a.shape)}", arg="lhs",
                      hint="use pl.matmul for M > 1")
    if dims_equal(a.shape[1], b.shape[0]) is False:
        raise OpError(f"{op} inner dims differ: lhs {list(a.shape)}, rhs {list(b.shape)}",
                      arg="rhs")
    ph = py_value(acc_phase)
    if ph not in _ACC_PHASES:
        raise OpError(f"acc_phase must be one of {', '.join(_ACC_PHASES)}, got {ph!r}",
                      arg="acc_phase")
    return TileType((1, b.shape[1]), _acc_dtype(a.dtype), None, MemorySpace.Acc)


def _gemv(lhs, rhs, acc_phase="unspecified"):
    """Row vector times matrix on the cube: `[1, K] @ [K, N]` -> `[1, N]` in Acc (FP32, or
    INT32 for INT8 inputs)."""
    return _gemv_rule(lhs, rhs, acc_phase, "pl.gemv")


def _gemv_acc(acc, lhs, rhs, acc_phase="unspecified"):
    """`acc += lhs @ rhs` for a row vector `lhs` ([1, K])."""
    r = _gemv_rule(lhs, rhs, acc_phase, "pl.gemv_acc")
    c = shaped(acc, "acc")
    if c.dtype != r.dtype or dims_equal(c.shape[-1], r.shape[-1]) is False:
        raise OpError(f"gemv_acc accumulator must be {r}, got {c}", arg="acc")
    return c


def _gemv_bias(lhs, rhs, bias, acc_phase="unspecified"):
    """`lhs @ rhs + bias` for a row vector `lhs`; bias `[1, N]` in the accumulator dtype."""
    r = _gemv_rule(lhs, rhs, acc_phase, "pl.gemv_bias")
    b = shaped(bias, "bias")
    if dims_equal(b.shape[-1], r.shape[-1]) is False:
        raise OpError(f"gemv_bias bias must be [1, {r.shape[-1]}], got {list(b.shape)}",
                      arg="bias")
    return r


defop("gemv", unit=Unit.CUBE, matmul=Matmul(),
      impl=lambda lhs, rhs, acc_phase="unspecified": _mm(lhs, rhs, False, False),
      names=("pl.gemv", "pl.tile.gemv"))(_gemv)
defop("gemv_acc", unit=Unit.CUBE, matmul=Matmul(acc="acc"),
      impl=lambda acc, lhs, rhs, acc_phase="unspecified": acc + _mm(lhs, rhs, False, False),
      names=("pl.gemv_acc", "pl.tile.gemv_acc"))(_gemv_acc)
defop("gemv_bias", unit=Unit.CUBE, matmul=Matmul(),
      impl=lambda lhs, rhs, bias, acc_phase="unspecified":
      _mm(lhs, rhs, False, False) + np.asarray(bias).astype(np.float32
                                                            if lhs.dtype.kind not in "iu"
                                                            else np.int32),
      names=("pl.gemv_bias", "pl.tile.gemv_bias"))(_gemv_bias)

"""MX (microscaling) block-scaled matrix multiply: `pl.matmul_mx`, `_acc`, `_bias`.

An MX operand is a data tile of FP8E4M3FN values and a scale tile of FP8E8M0 codes, one
scale per group of 32 consecutive elements along K: element `lhs[m, k]` stands for
`lhs[m, k] * 2**(lhs_scale[m, k // 32] - 127)` and `rhs[k, n]` for
`rhs[k, n] * 2**(rhs_scale[k // 32, n] - 127)` (an E8M0 code of 255 is NaN). The cube
multiplies the scaled operands and accumulates in FP32 into an Acc tile:

    out[m, n] = sum_k lhs[m, k] * 2**(sa[m, k//32] - 127) * rhs[k, n] * 2**(sb[k//32, n] - 127)

Operands sit where the cube reads them: data in Left / Right, scales in LeftScale /
RightScale (`pl.move` from Mat), the result in Acc. Shapes follow the ISA: physical
M % 16 == 0, K % 64 == 0, N % 32 == 0, scales [M, ceil(K/32)] and [ceil(K/32), N].
An FP4 operand is cast to FP8E4M3FN first (`pl.cast`); native FP4 is not supported.

Scale tensors in GM are stored packed: `pl.MX_A_ZZ` (the A / left scales: blocks of 16
rows x 2 groups, row-major) and `pl.MX_B_NN` (the B / right scales: blocks of 16
columns x 2 groups). A tensor annotated with one of these layouts holds the packed
bytes; its indices are logical, and `pl.load` (into Mat, the only place it may go)
reads the logical window (`mx_logical` is the unpacking).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, TileType
from pypto.ops.facts import Matmul
from pypto.ops.numeric import plain
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import dims_equal, shaped

GROUP = 32  # elements of K sharing one scale
MX_LAYOUTS = ("MX_A_ZZ", "MX_B_NN")
SCALE_DTYPES = (dtypes.FP8E8M0, dtypes.UINT8)
_BLOCK, _PAIR = 16, 2  # the packing: 16 rows (A) / columns (B) by 2 scale groups


# --- the GM packing of scale tensors ----------------------------------------------------


def packing_error(shape: tuple, layout: str) -> str | None:
    """Why a scale tensor of `shape` cannot be packed in `layout` (None: it can)."""
    if len(shape) != 2:
        return f"an {layout} scale tensor is 2-D, got rank {len(shape)}"
    rows, cols = shape
    blocked, grouped = (rows, cols) if layout == "MX_A_ZZ" else (cols, rows)
    what = ("rows", "columns") if layout == "MX_A_ZZ" else ("columns", "rows")
    if isinstance(blocked, int) and blocked % _BLOCK:
        return f"{layout} packs blocks of {_BLOCK} {what[0]}; the tensor has {blocked}"
    if isinstance(grouped, int) and grouped % _PAIR:
        return f"{layout} packs scale groups in pairs; the tensor has {grouped} {what[1]}"
    return None


def _packed_index(shape: tuple[int, int], layout: str) -> np.ndarray:
    """For each logical (row, col) of a scale tensor, its flat position in the packing."""
    rows, cols = shape
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    if layout == "MX_A_ZZ":  # logical [M, G]: blocks (m // 16, g // 2) of 16 x 2, row-major
        return ((r // _BLOCK) * (cols // _PAIR) + c // _PAIR) * (_BLOCK * _PAIR) \
            + (r % _BLOCK) * _PAIR + c % _PAIR
    # MX_B_NN, logical [G, N]: blocks (n // 16, g // 2) of 16 columns x 2 groups
    return ((c // _BLOCK) * (rows // _PAIR) + r // _PAIR) * (_BLOCK * _PAIR) \
        + (c % _BLOCK) * _PAIR + r % _PAIR


def mx_logical(packed: np.ndarray, layout: str) -> np.ndarray:
    """The logical scale matrix held by the packed bytes `packed` of `layout`."""
    return packed.reshape(-1)[_packed_index(packed.shape, layout)]


def mx_packed(logical: np.ndarray, layout: str) -> np.ndarray:
    """The packed bytes of the logical scale matrix `logical` (inverse of `mx_logical`)."""
    out = np.empty(logical.size, dtype=logical.dtype)
    out[_packed_index(logical.shape, layout).reshape(-1)] = logical.reshape(-1)
    return out.reshape(logical.shape)


# --- the matmul ---------------------------------------------------------------------


def _tile(x: Any, arg: str, memory: MemorySpace, op: str) -> TileType:
    t = shaped(x, arg)
    if not isinstance(t, TileType) or t.rank != 2:
        raise OpError(f"{op} takes 2-D tiles; '{arg}' is {t}", arg=arg)
    if t.memory != memory:
        raise OpError(f"'{arg}' of {op} must be in {memory.value}, got {t.memory.value}",
                      arg=arg, hint=f"pl.move(x, target_memory=pl.Mem.{memory.value})")
    return t


def _groups(k: Any) -> Any:
    return -(-k // GROUP) if isinstance(k, int) else None


def _mx_rule(lhs, lhs_scale, rhs, rhs_scale, op: str) -> TileType:
    a = _tile(lhs, "lhs", MemorySpace.Left, op)
    sa = _tile(lhs_scale, "lhs_scale", MemorySpace.LeftScale, op)
    b = _tile(rhs, "rhs", MemorySpace.Right, op)
    sb = _tile(rhs_scale, "rhs_scale", MemorySpace.RightScale, op)
    for t, arg in ((a, "lhs"), (b, "rhs")):
        if t.dtype != dtypes.FP8E4M3FN:
            fp4 = "; native FP4 matmul is not supported: pl.cast the FP4 tile to " \
                  "pl.FP8E4M3FN first" if t.dtype == dtypes.FP4 else ""
            raise OpError(f"{op} requires {arg} dtype FP8E4M3FN, got {t.dtype!r}{fp4}", arg=arg)
    for t, arg in ((sa, "lhs_scale"), (sb, "rhs_scale")):
        if t.dtype != dtypes.FP8E8M0:
            raise OpError(f"{op} requires {arg} dtype FP8E8M0, got {t.dtype!r}", arg=arg)
    m, k = a.shape
    k2, n = b.shape
    for d, arg, mult, what in ((m, "lhs", 16, "M"), (k, "lhs", 64, "K"), (n, "rhs", 32, "N")):
        if isinstance(d, int) and d % mult:
            raise OpError(f"{op} requires physical {what} divisible by {mult}, got {what}={d}",
                          arg=arg)
    if dims_equal(k, k2) is False:
        raise OpError(f"{op} requires matching K, got lhs K={k} and rhs K={k2}", arg="rhs")
    g = _groups(k)
    want = {"lhs_scale": (m, g), "rhs_scale": (g, n)}
    for t, arg in ((sa, "lhs_scale"), (sb, "rhs_scale")):
        for have, need in zip(t.shape, want[arg]):
            if need is not None and dims_equal(have, need) is False:
                raise OpError(f"{op} requires {arg} of shape {list(want[arg])} (one scale per "
                              f"{GROUP} elements of K), got {list(t.shape)}", arg=arg)
    valid = None
    if a.valid_shape is not None or b.valid_shape is not None:
        valid = ((a.valid_shape or a.shape)[0], (b.valid_shape or b.shape)[1])
    return TileType((m, n), dtypes.FP32, valid, MemorySpace.Acc)


def scaled_product(lhs: np.ndarray, lhs_scale: np.ndarray, rhs: np.ndarray,
                   rhs_scale: np.ndarray) -> np.ndarray:
    """The MX product in float64 (every scaled FP8 product is exact there)."""
    k = lhs.shape[-1]
    group = np.arange(k) // GROUP
    a = plain(lhs).astype(np.float64) * plain(lhs_scale).astype(np.float64)[:, group]
    b = plain(rhs).astype(np.float64) * plain(rhs_scale).astype(np.float64)[group, :]
    return a @ b


def _matmul_mx(lhs, lhs_scale, rhs, rhs_scale):
    """MX block-scaled `lhs @ rhs` into a new FP32 Acc tile (see the module docstring)."""
    return _mx_rule(lhs, lhs_scale, rhs, rhs_scale, "pl.matmul_mx")


def _matmul_mx_acc(acc, lhs, lhs_scale, rhs, rhs_scale):
    """`acc += ` the MX block-scaled product; `acc` is an FP32 Acc tile, updated in place."""
    c = shaped(acc, "acc")
    if not isinstance(c, TileType) or c.rank != 2 or c.dtype != dtypes.FP32:
        raise OpError(f"pl.matmul_mx_acc needs a 2-D FP32 accumulator tile, got {c}", arg="acc")
    r = _mx_rule(lhs, lhs_scale, rhs, rhs_scale, "pl.matmul_mx_acc")
    if any(dims_equal(x, y) is False for x, y in zip(c.shape, r.shape)):
        raise OpError(f"pl.matmul_mx_acc product shape {list(r.shape)} does not match the "
                      f"accumulator {list(c.shape)}", arg="acc")
    return c


def _matmul_mx_bias(lhs, lhs_scale, rhs, rhs_scale, bias):
    """The MX block-scaled product plus `bias`, an FP32 [1, N] tile in Bias memory."""
    r = _mx_rule(lhs, lhs_scale, rhs, rhs_scale, "pl.matmul_mx_bias")
    t = shaped(bias, "bias")
    if not isinstance(t, TileType) or t.rank != 2 or t.dtype != dtypes.FP32:
        raise OpError(f"pl.matmul_mx_bias needs a 2-D FP32 bias tile, got {t}", arg="bias")
    if dims_equal(t.shape[0], 1) is False or dims_equal(t.shape[1], r.shape[1]) is False:
        raise OpError(f"pl.matmul_mx_bias requires bias shape [1, {r.shape[1]}], got "
                      f"{list(t.shape)}", arg="bias")
    return r


def _mx_acc_impl(acc, lhs, lhs_scale, rhs, rhs_scale):
    out = plain(acc).astype(np.float64) + scaled_product(lhs, lhs_scale, rhs, rhs_scale)
    return out.astype(np.float32)


defop("matmul_mx", unit=Unit.CUBE, matmul=Matmul(),
      impl=lambda lhs, lhs_scale, rhs, rhs_scale:
      scaled_product(lhs, lhs_scale, rhs, rhs_scale).astype(np.float32),
      names=("pl.matmul_mx", "pl.tile.matmul_mx"))(_matmul_mx)
defop("matmul_mx_acc", unit=Unit.CUBE, matmul=Matmul(acc="acc"), impl=_mx_acc_impl,
      names=("pl.matmul_mx_acc", "pl.tile.matmul_mx_acc"))(_matmul_mx_acc)
defop("matmul_mx_bias", unit=Unit.CUBE, matmul=Matmul(),
      impl=lambda lhs, lhs_scale, rhs, rhs_scale, bias:
      (scaled_product(lhs, lhs_scale, rhs, rhs_scale)
       + plain(bias).astype(np.float64)).astype(np.float32),
      names=("pl.matmul_mx_bias", "pl.tile.matmul_mx_bias"))(_matmul_mx_bias)

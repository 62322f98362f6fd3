"""Hardware sorting: `sort32` (TSORT32) and `mrgsort` (TMRGSORT formats 1 and 2).

Layout: a sorted FP32 row is a sequence of **(value, index) pairs** interleaved
lane by lane, `[v0, i0, v1, i1, …]`, so the last dimension is twice the number of
elements. The index lanes hold the 32 bits of a UINT32 index stored as-is in an
FP32 lane (bit reinterpretation, not a value conversion): extract them with
`pl.gather(pairs, mask_pattern=P1010, output_dtype=pl.INT32 | pl.UINT32)`, and the
values with `mask_pattern=P0101`.

Order: **descending**, and **stable**: equal values keep their input order (the
earlier element, or the element of the earlier run / list, comes first). NaN
sorts after every number (it is treated as smaller than -inf); +0.0 and -0.0
compare equal.

FP16 sources: the result is FP16 with the same doubled width; an index lane holds
the low 16 bits of the index (the type system gives a pair two FP16 lanes).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir import dtypes
from pypto.ir.nodes import Call, Const
from pypto.ir.types import ScalarType, TileType
from pypto.ops.numeric import plain
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import dims_equal, given, like, py_value, same_family, shaped, type_of

_SORT_DTYPES = (dtypes.FP16, dtypes.FP32)
_BITS = {np.dtype(np.float32): np.uint32, np.dtype(np.float16): np.uint16}


def _check_sort_dtype(t, arg: str, op: str) -> None:
    if t.dtype not in _SORT_DTYPES:
        raise OpError(f"{op} sorts FP16 or FP32 values, got {t.dtype!r}", arg=arg,
                      hint="pl.cast the scores to pl.FP32 first")


# --- sort32 ------------------------------------------------------------------------------


def _sort32(src, idx):
    """Sort every 32-element block of the last axis **descending** (stable), carrying
    `idx` along: the result interleaves `(value, idx)` pairs, so its last dim is twice
    `src`'s. `idx` (UINT32, src's shape) is input only; its bits land in the odd lanes."""
    s = shaped(src, "src")
    i = shaped(idx, "idx")
    same_family(s, i, "idx")
    _check_sort_dtype(s, "src", "pl.sort32")
    if s.rank < 1:
        raise OpError("pl.sort32 needs at least a 1-D source", arg="src")
    last = s.shape[-1]
    if isinstance(last, int) and (last <= 0 or last % 32):
        raise OpError(f"pl.sort32 sorts 32-element blocks: the last dim must be a positive "
                      f"multiple of 32, got {last}", arg="src",
                      hint="pad the row with pl.fillpad / PadValue.min to a multiple of 32")
    if i.dtype not in (dtypes.UINT32, dtypes.INT32):
        raise OpError(f"pl.sort32 needs a UINT32 index operand, got {i.dtype!r}", arg="idx",
                      hint="build it with pl.arange(0, shape, dtype=pl.UINT32)")
    if i.rank != s.rank or any(dims_equal(a, b) is False for a, b in zip(i.shape, s.shape)):
        raise OpError(f"pl.sort32 idx must have src's shape {list(s.shape)}, got "
                      f"{list(i.shape)}", arg="idx")
    out_last = last * 2 if isinstance(last, int) else last
    return like(s, shape=tuple(s.shape[:-1]) + (out_last,), valid_shape=None)


def _desc_order(values: np.ndarray) -> np.ndarray:
    """Stable descending argsort along the last axis (NaN last, ±0 equal)."""
    v = values.astype(np.float64)
    key = np.where(np.isnan(v), np.inf, -v)  # ascending on -v is descending on v
    key = np.where(key == 0, 0.0, key)  # -0.0 == +0.0
    return np.argsort(key, axis=-1, kind="stable")


def pack_pairs(values: np.ndarray, index_bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Interleave values and raw index bits into the pair layout of `dtype`."""
    bits_t = _BITS[np.dtype(dtype)]
    out_bits = np.empty(values.shape[:-1] + (values.shape[-1] * 2,), dtype=bits_t)
    out_bits[..., 0::2] = np.ascontiguousarray(values.astype(dtype)).view(bits_t)
    out_bits[..., 1::2] = index_bits.astype(bits_t)
    return out_bits.view(dtype)


def unpack_pairs(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, raw index bits) of a pair-layout array."""
    p = np.ascontiguousarray(plain(pairs))
    bits_t = _BITS[p.dtype]
    return p[..., 0::2], p.view(bits_t)[..., 1::2]


def _sort32_impl(src, idx):
    s = np.asarray(plain(src))
    out_dtype = np.dtype(np.float16) if s.dtype == np.float16 else np.dtype(np.float32)
    n = s.shape[-1]
    blocks = s.reshape(s.shape[:-1] + (n // 32, 32))
    order = _desc_order(blocks)
    vals = np.take_along_axis(blocks, order, axis=-1).reshape(s.shape)
    ibits = np.asarray(plain(idx)).astype(np.int64) & 0xFFFFFFFF
    ib = np.take_along_axis(ibits.reshape(blocks.shape), order, axis=-1).reshape(s.shape)
    if out_dtype == np.float16:
        ib = ib & 0xFFFF
    return pack_pairs(vals.astype(out_dtype), ib, out_dtype)


defop("sort32", unit=Unit.VECTOR, impl=_sort32_impl, float_bits=True,
      names=("pl.sort32", "pl.tensor.sort32", "pl.tile.sort32"))(_sort32)


# --- mrgsort -----------------------------------------------------------------------------


def _mrgsort(src0, src1=None, src2=None, src3=None, tmp=None, *, exhausted=False,
             block_len=None):
    """Merge descending (value, index) pair runs, keeping the pair layout.

    Format 1, `mrgsort(src, block_len=B)`: the last axis holds runs of `B` lanes
    (`B/2` pairs; `B` a positive multiple of 64); every 4 consecutive runs merge into
    one run of `4*B` lanes (a trailing group of 2-3 runs merges what it has).
    Format 2, `mrgsort(a, b[, c[, d]], tmp)`: merge 2-4 sorted lists; the tile form
    needs a scratch `tmp` whose shape is the result's, the tensor form concatenates.
    Ties keep the earlier run / list first. `exhausted=True` stops a format-2 merge
    as soon as one list runs out (the rest of the result is zero).
    """
    s0 = shaped(src0, "src0")
    _check_sort_dtype(s0, "src0", "pl.mrgsort")
    srcs = [x for x in (src1, src2, src3) if given(x)]
    if given(block_len):
        if srcs or given(tmp):
            raise OpError("mrgsort format 1 (block_len=) and format 2 (src1, …, tmp) are "
                          "mutually exclusive", arg="block_len")
        bt = type_of(block_len)
        if isinstance(bt, ScalarType):
            if not bt.dtype.is_int():
                raise OpError(f"block_len must be an integer, got {bt.dtype!r}", arg="block_len")
            bl = py_value(block_len)
            if isinstance(bl, int) and (bl <= 0 or bl % 64):
                raise OpError(f"block_len must be a positive multiple of 64, got {bl}",
                              arg="block_len", hint="one sorted 32-element block is 64 lanes")
        elif isinstance(py_value(block_len), int) and not isinstance(py_value(block_len), bool):
            bl = py_value(block_len)
            if bl <= 0 or bl % 64:
                raise OpError(f"block_len must be a positive multiple of 64, got {bl}",
                              arg="block_len", hint="one sorted 32-element block is 64 lanes")
        else:
            raise OpError(f"block_len must be an integer, got {block_len!r}", arg="block_len")
        return like(s0, valid_shape=None)
    if (given(src2) and not given(src1)) or (given(src3) and not given(src2)):
        raise OpError("mrgsort format 2 lists must be passed in order src0, src1, src2, src3",
                      arg="src1")
    if not srcs:
        raise OpError("mrgsort needs block_len= (format 1) or at least two lists (format 2)",
                      arg="src1", hint="pl.mrgsort(s, block_len=64) or pl.mrgsort(a, b)")
    types = [s0]
    for n, x in zip(("src1", "src2", "src3"), srcs):
        t = shaped(x, n)
        same_family(s0, t, n)
        if t.dtype != s0.dtype:
            raise OpError(f"mrgsort lists need one dtype, got {s0.dtype!r} and {t.dtype!r}",
                          arg=n)
        if t.rank != s0.rank or any(dims_equal(a, b) is False
                                    for a, b in zip(t.shape[:-1], s0.shape[:-1])):
            raise OpError(f"mrgsort lists must agree on every axis but the last: "
                          f"{list(s0.shape)} vs {list(t.shape)}", arg=n)
        types.append(t)
    if isinstance(s0, TileType):
        tt = type_of(tmp)
        if not isinstance(tt, TileType):
            raise OpError("the tile form of mrgsort format 2 needs a scratch tile 'tmp' "
                          "(the result's shape)", arg="tmp",
                          hint="pl.mrgsort(a, b, tmp=pl.create_tile([1, n], pl.FP32))")
        return TileType(tt.shape, s0.dtype, None, s0.memory)
    if given(tmp):
        raise OpError("mrgsort on tensors takes no 'tmp' (the compiler allocates it)", arg="tmp")
    lasts = [t.shape[-1] for t in types]
    total = lasts[0]
    for d in lasts[1:]:
        total = total + d if isinstance(total, int) and isinstance(d, int) else _dim_add(total, d)
    return like(s0, shape=tuple(s0.shape[:-1]) + (total,), valid_shape=None)


def _dim_add(a: Any, b: Any) -> Any:
    def ir(d: Any) -> Any:
        return Const(d, ScalarType(dtypes.INDEX)) if isinstance(d, int) else d

    return Call("scalar.add", (ir(a), ir(b)), (), ScalarType(dtypes.INDEX))


def merge_rows(lists: list[np.ndarray], stop_when_exhausted: bool = False) -> np.ndarray:
    """Stable descending merge of pair-layout lists along the last axis."""
    vals, bits = zip(*(unpack_pairs(x) for x in lists))
    v = np.concatenate(vals, axis=-1)
    b = np.concatenate(bits, axis=-1)
    order = _desc_order(v)
    mv = np.take_along_axis(v, order, axis=-1)
    mb = np.take_along_axis(b, order, axis=-1)
    out = pack_pairs(mv, mb, v.dtype)
    if stop_when_exhausted and len(lists) > 1:
        # Position (in pairs) at which some list has emitted its last element.
        sizes = np.cumsum([0] + [x.shape[-1] for x in vals])
        src_of = np.searchsorted(sizes, order, side="right") - 1
        flat_out = out.reshape(-1, out.shape[-1])
        flat_src = src_of.reshape(-1, src_of.shape[-1])
        for r in range(flat_src.shape[0]):
            counts = np.zeros(len(lists), dtype=np.int64)
            need = np.diff(sizes)
            stop = flat_src.shape[1]
            for k, s in enumerate(flat_src[r]):
                counts[s] += 1
                if counts[s] == need[s]:
                    stop = k + 1
                    break
            flat_out[r, 2 * stop:] = 0
        out = flat_out.reshape(out.shape)
    return out


def _mrgsort_impl(src0, src1=None, src2=None, src3=None, tmp=None, exhausted=False,
                  block_len=None):
    s0 = np.asarray(plain(src0))
    if block_len is not None:
        bl = int(block_len)
        n = s0.shape[-1]
        runs = [(a, min(a + bl, n)) for a in range(0, n, bl)]
        out = s0.copy()
        for g in range(0, len(runs), 4):
            group = runs[g:g + 4]
            lo, hi = group[0][0], group[-1][1]
            if len(group) > 1:
                out[..., lo:hi] = merge_rows([s0[..., a:b] for a, b in group])
        return out
    lists = [s0] + [np.asarray(plain(x)) for x in (src1, src2, src3) if x is not None]
    merged = merge_rows(lists, bool(exhausted))
    if tmp is None:
        return merged
    shape = np.shape(tmp)
    out = np.zeros(shape, dtype=merged.dtype)
    w = min(shape[-1], merged.shape[-1])
    out[..., :w] = merged[..., :w]
    return out


defop("mrgsort", unit=Unit.VECTOR, impl=_mrgsort_impl, float_bits=True,
      names=("pl.mrgsort", "pl.tensor.mrgsort", "pl.tile.mrgsort"))(_mrgsort)

"""What the real compiler's AutoTileMatmulL0 does to a region's cube buffers, as far as
the on-chip budget is concerned (reference §3 pass 15, `15-auto_tile_matmul_l0.md`).

The compiler rewrites a matmul whose operands it placed itself (Mat-resident, not a
manual `pl.Mem.Left` / `Right` tile) into L0-sized pieces. Two consequences matter
for the buffer estimate and the side classification; this module finds both:

* **Output tiling.** When the accumulator's physical L0C footprint exceeds L0C, the
  output is cut into an `[m, n]` grid and each sub-tile is drained on its own, so only
  one sub-tile is ever live in L0C. This applies to a fresh `matmul` / `matmul_bias`
  and to the canonical split-K chain (`acc = matmul(..)` on the first block,
  `matmul_acc(acc, ..)` after, carried through a loop), when every use of the result is
  a drain the pass can place per sub-tile: a store / assemble to GM, or a folded cast
  feeding another matmul (Mat scratch).
* **Cast fold.** `pl.cast(c, BF16 | FP16, mode="rint")` of an FP32 matmul result whose
  every use is a matmul operand is folded into the Acc -> Mat writeback (FIXPIPE
  narrows ties to even): it runs on the cube and its result lives in Mat, so it is not a
  vector op and the accumulator never crosses to the vector side.

The sub-tile kept for the estimate is a legal one, not the roofline choice: the largest
`[m, n]` reached by halving the longer side (in multiples of the 16-element fractal)
until `align(m, l0c_m_align) * n * bytes` fits L0C.
"""
from __future__ import annotations

from typing import Any

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, ShapedType
from pypto.ops.cast import mode_name
from pypto.ops.facts import Role
from pypto.ops.registry import Unit, get
from pypto.passes.dataflow import Dataflow, Storage

_ALLOCS = (Role.ALLOC_TENSOR, Role.ALLOC_TILE)
_MANUAL_L0 = (MemorySpace.Left, MemorySpace.Right)
FRACTAL = 16


def _l0_tiled(op: Any) -> bool:
    m = get(op.op).matmul
    return m is not None and m.l0_tiled


def _is_cube_operand(op: Any, param: str) -> bool:
    d = get(op.op)
    return d.unit is Unit.CUBE and d.matmul is not None and param in (d.matmul.lhs,
                                                                      d.matmul.rhs)


def folded_casts(flow: Dataflow) -> frozenset[str]:
    """Results of the casts the compiler folds into an Acc -> Mat writeback."""
    consumers = flow.consumers()
    out = set()
    for op in flow.ops:
        if not get(op.op).converts:
            continue
        src = op.operand("x")
        producer = flow.producer.get(src or "")
        t, r = flow.types.get(src or ""), flow.types.get(op.result)
        if producer is None or get(producer.op).unit is not Unit.CUBE:
            continue
        if not (isinstance(t, ShapedType) and isinstance(r, ShapedType)):
            continue
        if t.dtype != dtypes.FP32 or r.dtype not in (dtypes.BF16, dtypes.FP16):
            continue
        if mode_name(op.arg("mode") if op.arg("mode") is not None else "round") != "rint":
            continue
        uses = consumers.get(op.result, ())
        if uses and all(_is_cube_operand(use, p) for use, p in uses):
            out.add(op.result)
    return frozenset(out)


def l0c_m_align(dtype: Any) -> int:
    """Rows of L0C an accumulator's M is padded to (reference §6: 32 for INT32)."""
    return 32 if dtype == dtypes.INT32 else FRACTAL


def _up(n: int, a: int) -> int:
    return -(-n // a) * a


def output_subtile(m: int, n: int, dtype: Any, capacity: int) -> tuple[int, int]:
    """A legal `[m, n]` output sub-tile whose physical footprint fits `capacity`."""
    size = dtype.nbytes
    am = l0c_m_align(dtype)
    while _up(m, am) * n * size > capacity and (m > FRACTAL or n > FRACTAL):
        if n >= m and n > FRACTAL:
            n = _up(-(-n // 2), FRACTAL)
        else:
            m = _up(-(-m // 2), FRACTAL)
    return m, n


def tiled_accumulators(flow: Dataflow, storage: Storage, capacity: int,
                       folded: frozenset[str]) -> dict[str, int]:
    """Storage root of each accumulator the compiler M/N-tiles -> bytes of the L0C
    sub-tile it keeps instead."""
    consumers = flow.consumers()
    members: dict[str, list[str]] = {}
    for v in flow.types:
        members.setdefault(storage.root(v), []).append(v)
    out: dict[str, int] = {}
    for root, vs in members.items():
        producers = [flow.producer[v] for v in vs if v in flow.producer]
        if not any(_l0_tiled(p) for p in producers):
            continue
        if not all(_l0_tiled(p) or get(p.op).role in _ALLOCS
                   or get(p.op).unit is Unit.META for p in producers):
            continue
        if any(_manual_l0(flow, p) for p in producers if _l0_tiled(p)):
            continue
        if not all(_placeable(flow, storage, root, use, p, folded)
                   for v in vs for use, p in consumers.get(v, ())):
            continue
        t = flow.types[vs[0]]
        shape = tuple(getattr(t, "shape", ()))
        if len(shape) < 2 or not all(isinstance(s, int) for s in shape):
            continue
        # a batched product is lowered to one 2-D matmul per batch, each drained alone
        m, n = shape[-2:]
        size = t.dtype.nbytes
        batches = 1
        for b in shape[:-2]:
            batches *= b
        if batches * _up(m, l0c_m_align(t.dtype)) * n * size <= capacity:
            continue
        sm, sn = output_subtile(m, n, t.dtype, capacity)
        out[root] = _up(sm, l0c_m_align(t.dtype)) * sn * size
    return out


def batch_staging(op: Any, flow: Dataflow, storage: Storage, capacity: int) -> dict[str, int]:
    """Bytes of Mat each GM operand of the batched matmul `op` is staged in, when the
    compiler loads it one batch at a time: the whole operands do not fit Mat (L1)
    together (FlattenTileNdTo2D's whole-fit gate). Empty when it loads them whole."""
    d = get(op.op)
    if d.matmul is None:
        return {}
    staged: dict[str, tuple[int, int]] = {}
    for param in (d.matmul.lhs, d.matmul.rhs):
        v = op.operand(param)
        t = flow.types.get(v or "")
        if v is None or not storage.in_gm(v) or not isinstance(t, ShapedType):
            continue
        shape = tuple(t.shape)
        n = t.nbytes()
        if len(shape) < 3 or n is None or not all(isinstance(s, int) for s in shape[:-2]):
            continue
        batches = 1
        for b in shape[:-2]:
            batches *= b
        staged[v] = (n, -(-n // batches))
    if not staged or sum(whole for whole, _ in staged.values()) <= capacity:
        return {}
    return {v: one for v, (_, one) in staged.items()}


def _manual_l0(flow: Dataflow, op: Any) -> bool:
    d = get(op.op)
    for param in (d.matmul.lhs, d.matmul.rhs) if d.matmul else ():
        t = flow.types.get(op.operand(param) or "")
        if getattr(t, "memory", None) in _MANUAL_L0:
            return True
    return False


def _placeable(flow: Dataflow, storage: Storage, root: str, use: Any, param: str,
               folded: frozenset[str]) -> bool:
    """A use of the accumulator that the pass can serve one sub-tile at a time."""
    d = get(use.op)
    if _l0_tiled(use) and d.matmul is not None and param == d.matmul.acc:
        return True  # the split-K chain accumulating into it
    if use.result in folded:
        return True
    if d.window_write is not None and param == d.window_write.source:
        target = use.operand(d.window_write.tensor)
        return target is not None and storage.in_gm(target)
    if d.unit is Unit.META or d.unit is Unit.ORCH:
        return storage.root(use.result) == root  # a carry / copy of it
    return False


__all__ = ["FRACTAL", "batch_staging", "folded_casts", "l0c_m_align", "output_subtile",
           "tiled_accumulators"]

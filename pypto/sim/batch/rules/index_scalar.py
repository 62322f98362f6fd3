"""Index arithmetic (`Family.INDEX_SCALAR`): the integers that differ per block.

* the block index (`pl.get_block_idx()`) and `+ - *` of integer scalars on it stay an
  `Aff` (base + a step per batch axis: the offsets of a strided view); `// %` by a
  constant and anything else become one integer per block, an int64 array over the
  batch axes (`scalars.SCALAR`, by the op's `symbol`); a division by a zero gives the
  batch up (the block-by-block run reports it);
* `pl.read` of an integer at an index that varies: one element per block (a gather),
  in block order, bounds-checked as block by block (a bad index abandons the batch);
  of each block's own tile at one index, its element per block (`_tile_element`).
  Under a condition that differs per block, the blocks not taking the branch read at
  an index inside the tensor (`predicate.clip`).

No partial tiles: these are scalars.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Const
from pypto.ir.types import ScalarType
from pypto.ops.facts import Family, Role
from pypto.ops.registry import OpDef, get
from pypto.sim.batch import masks
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.footprints import Access
from pypto.sim.batch.forms import BLOCK
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.predicate import clip
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.scalars import AFFINE_SYMBOLS, DIV_SYMBOLS, SCALAR, int_result, int_scalar
from pypto.sim.batch.state import (
    Aff,
    Fallback,
    NotBatchable,
    gather_index,
    lo_at,
)
from pypto.sim.engine.intrinsics.common import SiteId

# -- admission ---------------------------------------------------------------------------


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    if op.role is Role.ELEMENT_READ:
        return _admit_read(an, e, op)
    if op.role is Role.BLOCK_INDEX:
        return BLOCK in an.varying
    vargs = [an.is_var(x) for x in e.args]
    if not any(vargs):
        return False
    sym = op.symbol
    if sym in AFFINE_SYMBOLS:
        if not all(int_scalar(x) for x in e.args) or not isinstance(e.type, ScalarType):
            raise NotBatchable("varying non-integer scalar arithmetic")
        return True
    assert sym in DIV_SYMBOLS, f"index arithmetic {e.op}"
    d = e.args[1]
    if vargs[1] or not (isinstance(d, Const) and isinstance(d.value, int) and d.value):
        raise NotBatchable("varying division")
    if not int_scalar(e.args[0]):
        raise NotBatchable("varying non-integer scalar arithmetic")
    return True


def _admit_read(an: Analysis, e: Call, op: OpDef) -> bool:
    vargs = [an.is_var(v) for v in e.args]
    if not vargs[0] and any(vargs) and int_result(e):
        # a gather of integers (token ids, expert indices): one element per block, read
        # from a tensor at an index that varies
        an.opaque(e.args[0], False, e.op)
        t = an.resolve(e.args[0])
        if t is not None:
            an.accesses.append(Access(t, [None], None, False))
        return True
    if vargs[0] and not any(vargs[1:]) and int_result(e) and \
            an.resolve(e.args[0]) is None and an.view_of(e.args[0]) is None:
        # an integer of each block's own tile at the same index (a mask row's flag, say):
        # one element per block (`_tile_element`)
        return True
    if any(vargs):
        raise NotBatchable(f"varying {e.op}")
    an.opaque(e.args[0], False, e.op)
    t = an.resolve(e.args[0])  # (pl.read takes the tensor first)
    if t is not None:
        an.accesses.append(Access(t, [None], None, False))
    return False


# -- the cores ---------------------------------------------------------------------------


def core(lo: Lowering, e: Call) -> Core | None:
    op = get(e.op)
    if op.role is Role.BLOCK_INDEX:
        return bscalar(lo, e, None) if BLOCK in lo.plan.varying else None
    if not any(lo.vary(x) for x in e.args):
        return None
    if op.role is Role.ELEMENT_READ:
        return bread(lo, e)
    return bscalar(lo, e, SCALAR[op.symbol or ""])


def bscalar(lo: Lowering, e: Call, fn: Callable | None) -> Core:
    """Integer arithmetic (or a comparison) on varying scalars (`fn`), or the block index
    (None)."""
    opdef = get(e.op)
    acct = lo.accountant(e, opdef, list(range(len(e.args)))) if lo.settings.trace else None

    def core(f: BatchFrame, args: list) -> Any:
        st = f.batch
        r = fn(args, st) if fn is not None else st.blk
        if type(r) is not Aff:
            r = st.materialize(r)
        if acct is not None and f.rec is not None:
            acct(f.rec, f.costs, args, 0)
        return r

    return Core("args", core, list(e.args))


def bread(lo: Lowering, e: Call) -> Core:
    """`pl.read` of an integer at an index that varies: one element per block (a gather),
    in block order, bounds-checked as block by block (a bad index abandons the batch:
    the block-by-block rerun reports it)."""
    cast = lo.caster(e.type, "pl.read")
    tracing = lo.settings.trace
    sid = SiteId(e.span, "read")
    site: list = [None]

    def core(f: BatchFrame, args: list) -> Any:
        st = f.batch
        a, offset = args
        if type(a) is not np.ndarray:
            masks.refuse(st, a)
            raise Fallback("a tagged source")
        offs = list(offset) if isinstance(offset, (list, tuple)) else [offset]
        if len(offs) == a.ndim - st.nb:  # each block's own tile, the same index
            return _tile_element(st, a, offs)
        if len(offs) != a.ndim:
            raise Fallback("a flat element index")
        if (a.dtype.kind in "iu" and a.dtype.itemsize <= 4) or a.dtype == np.int64:
            # (the Python int of every element fits an int64: at affine offsets one
            # strided view, else one fancy index)
            one = (1,) * a.ndim
            try:
                w = st.window_at(site, a, offs, one, False)
                if w is None:
                    w = a[gather_index(st, offs, one, a.shape)]
            except Fallback:
                if st.pred is None:
                    raise
                # under a condition: the blocks not taking the branch read anywhere
                w = a[gather_index(st, clip(st, offs, one, a.shape), one, a.shape)]
            w = w.reshape(w.shape[:st.nb])
            out = w.astype(np.int64) if w.shape == st.bs else \
                np.broadcast_to(w, st.bs).astype(np.int64)
        else:
            if st.pred is not None:
                raise Fallback("a read of other integers under a condition")
            out = np.empty(st.bs, dtype=np.int64)
            for idx in st.indices():
                lo_ = lo_at(offs, idx)
                if any(not 0 <= i < d for i, d in zip(lo_, a.shape)):
                    raise Fallback("out of bounds")
                v = a[lo_].item()
                out[idx] = cast(v) if cast is not None else v
        if tracing and st.log is not None:
            run = f.run
            buf, origin = run.memory.locate(a)
            if buf is not None and run.trace is not None:
                st.log.append((a, buf, origin, offs, (1,) * a.ndim, False, sid, ()))
        return out

    return Core("args", core, [e.args[0], e.args[1]])


def _tile_element(st: Any, a: np.ndarray, offs: list) -> np.ndarray:
    """The integer at the uniform index `offs` of each block's tile `a` (leading batch
    axes): one int64 per block, as block by block reads it (a tile holds no GM: nothing
    is traced)."""
    if not all(type(o) is int or isinstance(o, np.integer) for o in offs):
        raise Fallback("a varying index into a varying tile")
    if not ((a.dtype.kind in "iu" and a.dtype.itemsize <= 4) or a.dtype == np.int64):
        raise Fallback("a read of other integers from a varying tile")
    rank = len(offs)
    if any(not 0 <= int(o) < d for o, d in zip(offs, a.shape[a.ndim - rank:])):
        raise Fallback("out of bounds")
    w = a[(slice(None),) * st.nb + tuple(int(o) for o in offs)]
    return np.broadcast_to(w, st.bs).astype(np.int64)


RULE = Rule(Family.INDEX_SCALAR, admit, core, always=True)

__all__ = ["RULE", "bread", "bscalar"]

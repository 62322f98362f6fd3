"""The batched cores of scalar values that differ per block (mixed into
`compiler.BatchCompiler`): integer arithmetic and the block index (`Aff` where it stays
affine, else one value per block), comparisons (`predicate.compare`: one bool per
block), integer scalar ops computed per block (`scalars.per_block_scalar`), and
`pl.read` of an integer at a varying index (a gather of one element per block; under
a condition that differs per block, the blocks not taking the branch read at an index
inside the tensor: `predicate.clip`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call
from pypto.ops.registry import get
from pypto.sim.batch import masks
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.predicate import clip
from pypto.sim.batch.state import Aff, Fallback, gather_index, lo_at, scalar_at
from pypto.sim.engine.intrinsics.common import SiteId


class ScalarCores:
    """The batched cores of varying scalars (see the module docstring)."""

    # (provided by compiler.BatchCompiler)
    settings: Any
    accountant: Callable
    caster: Callable

    def bscalar(self, e: Call, fn: Callable | None) -> Core:
        """Integer arithmetic on varying scalars (`fn`), or the block index (None)."""
        opdef = get(e.op)
        acct = self.accountant(e, opdef, list(range(len(e.args)))) if self.settings.trace \
            else None

        def core(f: BatchFrame, args: list) -> Any:
            st = f.batch
            r = fn(args, st) if fn is not None else st.blk
            if type(r) is not Aff:
                r = st.materialize(r)
            if acct is not None and f.rec is not None:
                acct(f.rec, f.costs, args, 0)
            return r

        return Core("args", core, list(e.args))

    def bper_block(self, e: Call) -> Core:
        """Integer scalar arithmetic the batch computes block by block (`per_block_scalar`):
        the op's impl and cast on each block's operands, as block-by-block execution
        computes them; an integer array over the batch axes."""
        opdef = get(e.op)
        impl = opdef.impl
        assert impl is not None
        names = opdef.params
        public = [i for i, p in enumerate(names) if not p.startswith("_") and i < len(e.args)]
        cast = self.caster(e.type, f"pl op '{e.op}'")
        acct = self.accountant(e, opdef, public) if self.settings.trace else None
        # the op over integer arrays, one call for all blocks (the registry's
        # `Batching.int_array` fact: min / max, integer casts), when it has one
        whole = opdef.batch.int_array if opdef.batch is not None else None

        def core(f: BatchFrame, args: list) -> Any:
            st = f.batch
            r = whole(*[st.materialize(a) for a in args]) if whole is not None else None
            if r is not None:
                if acct is not None and f.rec is not None:
                    z = (0,) * st.nb
                    acct(f.rec, f.costs, [scalar_at(a, z) for a in args], scalar_at(r, z))
                return r
            out = np.empty(st.bs, dtype=np.int64)
            first = None
            for idx in st.indices():
                vals = [scalar_at(a, idx) for a in args]
                r = impl(*vals)
                if cast is not None:
                    r = cast(r)
                out[idx] = r
                if first is None:
                    first = (vals, r)
            if acct is not None and f.rec is not None and first is not None:
                acct(f.rec, f.costs, *first)
            return out

        return Core("args", core, [e.args[i] for i in public])

    def bread(self, e: Call) -> Core:
        """`pl.read` of an integer at an index that varies: one element per block (a
        gather), in block order, bounds-checked as block by block (a bad index abandons
        the batch: the block-by-block rerun reports it)."""
        cast = self.caster(e.type, "pl.read")
        tracing = self.settings.trace
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
                    lo = lo_at(offs, idx)
                    if any(not 0 <= i < d for i, d in zip(lo, a.shape)):
                        raise Fallback("out of bounds")
                    v = a[lo].item()
                    out[idx] = cast(v) if cast is not None else v
            if tracing and st.log is not None:
                run = f.run
                buf, origin = run.memory.locate(a)
                if buf is not None and run.trace is not None:
                    st.log.append((a, buf, origin, offs, (1,) * a.ndim, False,
                                   sid, ()))
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


__all__ = ["ScalarCores"]

"""Tensors each block of a batch has its own of, written or windowed at uniform offsets.

A loop body run batched (`body.py`) hands a launch's fresh result to the next launch of
the same iteration as a `Stack`: one tensor per iteration along the batch axes. A region
taking one may read a window of it or write into it at offsets that are the same in
every block: that is a slice past the batch axes, each block's own tensor (no footprints
to prove disjoint). Likewise a tile of the region that a varying value is written into
becomes varying: each block's own, along the batch axes (only when the old value dies at
the write: block by block the write is in place, and nothing else may see the
difference). decode_front's per-head body (`s4_q_nope_latent_proj` assembling into the
tile the previous launch returned, `s4_v_proj` into its own accumulator, `s4_v_assemble`
taking the first row of the previous launch's result) is what this batches.

`OwnAnalysis` is the plan's side (`plan._Analyzer`), `OwnCores` the batched cores
(`compiler.BatchCompiler`). Traced, a Stack's accesses are logged with a `StackRead` in
place of the array: the replay records them against the tensor that iteration's task was
passed, as block by block.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Var
from pypto.ir.types import ShapedType, TileType, Type
from pypto.ops.registry import get
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.masks import refuse
from pypto.sim.batch.scalars import const_ints
from pypto.sim.batch.state import Fallback, StackRead
from pypto.sim.batch.ufuncs import broadcast_shape
from pypto.sim.engine.intrinsics.common import SiteId, falsy_const, is_cube
from pypto.sim.engine.values import Env
from pypto.sim.trace.costs import gm_cycles, note_drain, note_gm, note_onchip_copy


class NotBatchable(Exception):
    pass


def static_shape(t: Type | None) -> tuple | None:
    if isinstance(t, ShapedType):
        return t.static_shape()
    return None


class OwnAnalysis:
    """The plan's admission of windows and writes of tensors each block has its own of."""

    # (provided by plan._Analyzer)
    varying: set
    ptypes: dict
    stacked: set
    uses: dict
    inits: dict
    resolve: Callable
    is_var: Callable
    valid_ok: Callable
    tile_view: Callable
    view_of: Callable
    merge_uses: Callable  # (predicate.PredicateAnalysis)

    def stack_window(self, e: Call, src: Any, a: dict, extras: list) -> bool:
        """A window at uniform offsets of a varying tensor: of a parameter that is each
        iteration's own tensor (a fresh result of an earlier launch of a batched loop
        body, `body.Stack`) or of a value of the region (a named one or an op's result),
        whole windows only; the result varies. A window of an on-chip tile is a view of
        the tile's storage (`intrinsics.windows`): admitted while nothing writes into
        it in place (`tile_views`)."""
        rd = get(e.op).window_read
        assert rd is not None
        p = self.resolve(src)
        if (p is not None and p not in self.varying) or \
                not isinstance(src, (Var, Call)) or self.view_of(src) is not None:
            raise NotBatchable("window of a varying value")
        if p is not None and not isinstance(src, Var):
            raise NotBatchable("window of a varying tensor written in the same expression")
        if self.is_var(a[rd.offset]) or any(not falsy_const(x) for x in extras) or \
                const_ints(a[rd.shape]) is None or not self.valid_ok(e.type):
            raise NotBatchable("window of a varying tensor at varying offsets or with a "
                               "valid shape")
        if isinstance(getattr(src, "type", None), TileType) and \
                not self.valid_ok(getattr(src, "type", None)):
            raise NotBatchable("window of a partially valid varying tile")
        return True

    def in_place_target(self, t: Any) -> None:
        """Refuse an in-place write into `t` when `t` is a view of a tile's storage (a
        window of it, or what carries one): block by block the write reaches the tile
        through the view; batched, the view is not tracked."""
        seen = set()
        while t is not None and id(t) not in seen:
            seen.add(id(t))
            if self.tile_view(t):
                raise NotBatchable("an in-place write into a window of a tile")
            t = self.inits.get(t.name) if isinstance(t, Var) else None

    def stack_write(self, tgt: Any, src: Any, a: dict, off_n: str) -> bool:
        """A window write at uniform offsets into a varying tensor: only into a parameter
        that is each iteration's own tensor (`body.Stack`: written in place, the same
        window in every iteration's); the result is that parameter again."""
        p = self.resolve(tgt)
        if p is None or p not in self.varying or \
                isinstance(getattr(tgt, "type", None), TileType):
            raise NotBatchable("writing a varying value")
        shape = static_shape(getattr(src, "type", None))
        tt = self.ptypes.get(p)
        if self.is_var(a[off_n]) or not falsy_const(a.get("atomic")) or \
                not falsy_const(a.get("shapes")) or shape is None or \
                not self.valid_ok(getattr(src, "type", None)) or tt is None or \
                len(tt.shape) != len(shape):
            raise NotBatchable("writing a varying tensor at varying offsets, atomically or "
                               "with a partially valid or reshaped value")
        self.is_var(src)
        self.stacked.add(p)
        return True

    def local_write(self, tgt: Any, src: Any, a: dict, off_n: str) -> bool:
        """A window write at uniform offsets of a varying value into a tile of the region
        (not a parameter): the tile becomes varying (each block's own, along the batch
        axes). Only when the tile dies at the write (nothing else reads the old value,
        which block by block would see the write in place)."""
        def dies(v: Any) -> bool:
            # (under a mask, the other branches' yields of the old tile keep it for the
            # blocks outside the mask, which the masked write leaves alone)
            if isinstance(v, Call):
                return True
            if not isinstance(v, Var) or \
                    self.uses.get(v.name, 0) != 2 + self.merge_uses(v.name):
                return False
            init = self.inits.get(v.name)
            return init is None or dies(init)

        self.in_place_target(tgt)
        shape = static_shape(getattr(src, "type", None))
        tshape = static_shape(getattr(tgt, "type", None))
        if self.is_var(a[off_n]) or not dies(tgt) or not falsy_const(a.get("atomic")) or \
                not falsy_const(a.get("shapes")) or shape is None or tshape is None or \
                len(shape) != len(tshape) or not self.valid_ok(getattr(tgt, "type", None)):
            # (a partial source writes its valid part: `mask_ops.TaggedCores.tagged_local`)
            raise NotBatchable("a varying write into a local tile")
        self.is_var(src)
        return True


class OwnCores:
    """The batched cores of those windows and writes (see the module docstring)."""

    # (provided by compiler.BatchCompiler)
    settings: Any
    plan: Any
    func: Any
    cube_vars: Any
    const: Callable

    def bstack_window(self, e: Call, src: Any, shape: Any, offset: Any) -> Core:
        """A window at uniform offsets of a tensor each iteration has its own of (a
        `body.Stack` parameter) or of a varying value of the region: the same window of
        every block's, one slice past the batch axes. The trace records a read of a
        Stack as a read of that iteration's tensor (`StackRead`: the replay finds the
        array the iteration's task was passed), a window of a tensor of the region as an
        on-chip copy; a window of an on-chip tile is a view of its storage, no copy and
        no cost, as block by block (`intrinsics.windows`)."""
        _, shp_v = self.const(shape)
        shp = tuple(int(d) for d in shp_v)
        out_static = e.type.static_shape() if isinstance(e.type, ShapedType) else None
        tracing = self.settings.trace
        platform = self.settings.platform
        sid = SiteId(e.span, e.op)
        param = self.stack_param(src) if isinstance(src, Var) else None
        of_tile = isinstance(getattr(src, "type", None), TileType)

        rank = len(shp)

        def core(f: BatchFrame, a: Any, offs: list, env: Env | None = None) -> Any:
            st = f.batch
            nb = st.nb
            if type(a) is not np.ndarray or a.ndim not in (rank, rank + nb) or \
                    len(offs) != rank or (param is not None and a.ndim != rank + nb):
                raise Fallback("a window of a varying tensor of another rank")
            offs = [int(o) for o in offs]
            lead = a.ndim - rank
            if any(o < 0 or o + d > n for o, d, n in zip(offs, shp, a.shape[lead:])):
                raise Fallback("a window past its tensor")
            w = a[(slice(None),) * lead + tuple(slice(o, o + d) for o, d in zip(offs, shp))]
            if of_tile:
                if out_static is not None and w.shape[lead:] != out_static:
                    raise Fallback("reshape")
                return w
            w = w.copy()
            if out_static is not None and w.shape[lead:] != out_static:
                raise Fallback("reshape")
            rec = f.rec
            if tracing and rec is not None:
                nbytes = math.prod(shp) * a.itemsize
                if param is None:  # a tile of the region: an on-chip copy
                    note_onchip_copy(platform, f.costs, nbytes)
                elif st.log is not None and f.run.trace is not None:
                    st.log.append((param, None, None, offs, shp, False, sid,
                                   ()))
                    note_gm(rec, f.costs, "gm_read", nbytes,
                            gm_cycles(platform, a[(0,) * nb], list(shp), nbytes))
            return w

        return Core("window", core, [src, offset])

    def stack_param(self, e: Var) -> StackRead | None:
        """The parameter (a `body.Stack`) the varying tensor `e` is; None for a tensor of
        the region."""
        name = self.plan.alias.get(e.name)
        if name is None:
            return None
        return StackRead([p.var.name for p in self.func.params].index(name))

    def blocal_write(self, e: Call, target: Any, source: Any, offset: Any) -> Core:
        """A window write at uniform offsets of a varying value into a tile of the region
        (`Plan.local_write`): each block's tile along the batch axes, written in place
        when it already is one writable array per block, else made so first (the old
        value dies here: the plan checked that nothing else reads it)."""
        shp = tuple(source.type.static_shape())
        rank = len(shp)
        tracing = self.settings.trace
        platform = self.settings.platform

        def core(f: BatchFrame, tgt: Any, offs: list, fargs: list, src_of: Callable) -> Any:
            st = f.batch
            nb = st.nb
            src = src_of()
            if type(tgt) is not np.ndarray or type(src) is not np.ndarray or \
                    tgt.ndim not in (rank, rank + nb) or src.ndim not in (rank, rank + nb) \
                    or src.shape[src.ndim - rank:] != shp or len(offs) != rank:
                refuse(st, [tgt, src])
                raise Fallback("a tagged value or a rank mismatch")
            offs = [int(o) for o in offs]
            if any(o < 0 or o + d > n for o, d, n in zip(offs, shp, tgt.shape[tgt.ndim - rank:])):
                raise Fallback("out of bounds")
            lead = broadcast_shape([tgt.shape[:tgt.ndim - rank] or (1,) * nb,
                                    src.shape[:src.ndim - rank] or (1,) * nb])
            if st.pred is not None:  # (the blocks of the mask write theirs only)
                lead = st.bs
            own = tgt.ndim == rank + nb and tgt.shape[:nb] == lead and tgt.flags.writeable \
                and all(k == 1 or sd != 0 for k, sd in zip(lead, tgt.strides))
            if not own:
                full = np.empty(lead + tgt.shape[tgt.ndim - rank:], tgt.dtype)
                full[...] = tgt
                tgt = full
            box = (slice(None),) * nb + tuple(slice(o, o + d) for o, d in zip(offs, shp))
            pred = st.pred
            if pred is None:
                tgt[box] = src
            else:  # under a condition: the blocks taking it only (the others keep theirs)
                view = tgt[box]
                view[pred] = np.broadcast_to(src, view.shape)[pred]
            if tracing and f.rec is not None:
                note_onchip_copy(platform, f.costs, math.prod(shp) * src.itemsize)
            return tgt

        return Core("write", core, [target, offset, [], source])

    def bstack_write(self, e: Call, target: Var, source: Any, offset: Any) -> Core:
        """A window write at uniform offsets into a tensor each iteration has its own of
        (a `body.Stack` parameter, made writable by the loop body): one slice assignment
        past the batch axes; traced as a write of each iteration's tensor."""
        shp = tuple(source.type.static_shape())
        tracing = self.settings.trace
        platform = self.settings.platform
        sid = SiteId(e.span, e.op)
        param = self.stack_param(target)
        from_cube = (isinstance(source, Var) and source.name in self.cube_vars) or \
            (isinstance(source, Call) and is_cube(source))

        def core(f: BatchFrame, tgt: Any, offs: list, fargs: list, src_of: Callable) -> Any:
            st = f.batch
            nb = st.nb
            src = src_of()
            if type(tgt) is not np.ndarray or type(src) is not np.ndarray or \
                    not tgt.flags.writeable:
                refuse(st, [tgt, src])
                raise Fallback("a tagged or read-only value")
            if tgt.ndim != nb + len(shp) or len(offs) != len(shp) or \
                    src.shape[src.ndim - len(shp):] != shp:
                raise Fallback("rank mismatch")
            offs = [int(o) for o in offs]
            if any(o < 0 or o + d > n for o, d, n in zip(offs, shp, tgt.shape[nb:])):
                raise Fallback("out of bounds")
            tgt[(slice(None),) * nb + tuple(slice(o, o + d) for o, d in zip(offs, shp))] = src
            rec = f.rec
            if tracing and rec is not None and st.log is not None and f.run.trace is not None:
                st.log.append((param, None, None, offs, shp, True, sid, ()))
                nbytes = math.prod(shp) * tgt.itemsize
                note_gm(rec, f.costs, "gm_write", nbytes,
                        gm_cycles(platform, tgt[(0,) * nb], list(shp), nbytes))
                if from_cube:
                    note_drain(platform, rec, f.costs, shp, src.itemsize)
            return tgt

        return Core("write", core, [target, offset, [], source])


__all__ = ["NotBatchable", "OwnAnalysis", "OwnCores", "static_shape"]

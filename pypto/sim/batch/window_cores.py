"""The batched cores of window reads and writes at varying offsets (`WindowCores`, a
part of `compiler.BatchCompiler`).

A read is all blocks' windows as one strided view (a fancy index where the offsets are
not affine); a write assigns all blocks' windows at once, or computes the op it writes
straight into them (`ufuncs.fused`, a row gather: `gathers.rows_into`). Partial tiles
(a valid shape, a clamp) go through `mask_windows`; under a condition only the blocks
taking the branch write (`predicate.masked_write`). Traced, each core logs its accesses
for the replay and charges their costs once for all blocks.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Const, Var
from pypto.ir.types import ShapedType
from pypto.sim.batch import mask_windows, masks
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.gathers import rows_into
from pypto.sim.batch.masks import as_masked, declares_valid, relanked_shape, tagged, written_extent
from pypto.sim.batch.predicate import clip, masked_write
from pypto.sim.batch.state import Fallback, gather_index, store_windows, write_each_block
from pypto.sim.batch.ufuncs import elementwise_ufunc, fused
from pypto.sim.device.fill import pad_scalar
from pypto.sim.engine.intrinsics.common import SiteId, falsy_const, is_cube
from pypto.sim.engine.values import Env, pad_mode
from pypto.sim.trace.costs import gm_cycles, note_drain, note_gm, note_onchip_copy


class WindowCores:
    """Window reads and writes at varying offsets (see the module docstring)."""

    # (provided by compiler.BatchCompiler)
    settings: Any
    plan: Any
    cube_vars: Any
    merging: set
    const: Callable
    expr: Callable
    vary: Callable
    read_only: Callable

    def bwindow(self, e: Call, src: Any, shape: Any, offset: Any, opname: str,
                valid: Any = None, clamp: Any = None, pad: Any = None) -> Core:
        """A window read at varying offsets: all blocks' windows as one strided view. With
        a valid shape or clamp, partial tiles are `masks.Masked` (`mask_windows.read`;
        traced, each block's valid part is its access)."""
        _, shp_v = self.const(shape)
        shp = tuple(int(d) for d in shp_v)
        out_static = e.type.static_shape() if isinstance(e.type, ShapedType) else None
        tracing = self.settings.trace
        platform = self.settings.platform
        sid = SiteId(e.span, opname)
        # A window of a tensor this region never writes (and which overlaps no written
        # argument, checked at launch) can stay a view: no batched op writes in place.
        p = self.plan.alias.get(src.name) if isinstance(src, Var) else None
        copy = p is None or p in self.plan.written
        site: list = [None]

        guarded = not (falsy_const(valid) and falsy_const(clamp))
        valid_f = self.expr(valid) if guarded and not falsy_const(valid) else None
        clamp_f = self.expr(clamp) if guarded and not falsy_const(clamp) else None
        # the pad of a partial tile, as block by block (`intrinsics.windows`)
        ok, padv = self.const(pad) if pad is not None else (True, None)
        pad_of = (pad_mode(padv) if ok else None) or self.settings.config.padding

        def core(f: BatchFrame, a: Any, offs: list, env: Env | None = None) -> Any:
            st = f.batch
            if type(a) is not np.ndarray:
                masks.refuse(st, a)
                raise Fallback("a tagged source")
            if len(offs) != a.ndim or len(shp) != a.ndim:
                raise Fallback("rank mismatch")
            if guarded:
                if env is None or st.pred is not None:
                    raise Fallback("a window with a valid shape outside a closure or under "
                                   "a condition")
                vals = valid_f(env) if valid_f is not None else None
                clamped = bool(clamp_f(env)) if clamp_f is not None else False
                if vals is not None and (not isinstance(vals, (list, tuple)) or
                                         len(vals) != len(shp)):
                    raise Fallback("a valid shape of another rank")
                m = mask_windows.read(st, a, offs, shp, vals, clamped,
                                      pad_scalar(a.dtype, pad_of))
                if m is not None:
                    if out_static is not None and out_static != shp:
                        masks.refuse(st, m)
                    if tracing and f.rec is not None:  # (the valid parts are the accesses)
                        mask_windows.charge(f, mask_windows.extents(st, m, shp),
                                            lambda ext: note(f, a, offs, ext))
                    return m
            nb = st.nb
            try:
                w = st.window_at(site, a, offs, shp, False)
                if w is None:  # offsets not affine: a gather (one fancy index for all blocks)
                    w = a[gather_index(st, offs, shp, a.shape)]
                elif copy:
                    w = w.copy()
            except Fallback:
                if st.pred is None:
                    raise
                # under a condition: the blocks not taking the branch read anywhere inside
                w = a[gather_index(st, clip(st, offs, shp, a.shape), shp, a.shape)]
            if out_static is not None and w.shape[nb:] != out_static:
                if math.prod(out_static) != math.prod(shp):
                    raise Fallback("reshape")
                w = w.reshape(w.shape[:nb] + out_static)
            if tracing and f.rec is not None:
                note(f, a, offs, shp)
            return w

        def note(f: BatchFrame, a: np.ndarray, offs: list, ext: tuple) -> None:
            """The trace's access and cost of all blocks' reads of extent `ext`."""
            run = f.run
            st = f.batch
            rec = f.rec
            assert rec is not None
            buf, origin = run.memory.locate(a)
            nbytes = math.prod(ext) * a.itemsize
            if buf is not None and st.log is not None and run.trace is not None:
                st.log.append((a, buf, origin, list(offs), ext, False, sid, ()))
                note_gm(rec, f.costs, "gm_read", nbytes,
                        gm_cycles(platform, a, list(ext), nbytes))
            else:
                note_onchip_copy(platform, f.costs, nbytes)

        return Core("window", core, [src, offset])

    def bwrite(self, e: Call, target: Any, source: Any, offset: Any, opname: str) -> Core:
        """A window write at varying offsets (or of a varying value)."""
        shp = tuple(source.type.static_shape())
        # a value of another rank than the target (`pl.assemble` of a [1, R, N] product
        # into a 2-D tensor): written as the intrinsic writes it, its leading unit axes
        # dropped or added (`relanked`; the plan admits only that, of a whole tile)
        tt = getattr(target, "type", None)
        vrank, relank = len(shp), None
        if isinstance(tt, ShapedType) and len(tt.shape) != vrank:
            relank = relanked_shape(shp, len(tt.shape))
            shp = relank or shp  # (None: not admitted by the plan, "rank mismatch" below)
        srank = len(shp)
        tracing = self.settings.trace
        platform = self.settings.platform
        sid = SiteId(e.span, opname)
        from_cube = (isinstance(source, Var) and source.name in self.cube_vars) or \
            (isinstance(source, Call) and is_cube(source))
        # (a source whose type declares a valid shape: only in a batch where it is whole
        # in every block - else the write keeps what lies outside the valid part - its
        # entries being names or constants, evaluated with the operands)
        st_t = getattr(source, "type", None)
        svalid = list(st_t.valid_shape) if isinstance(source, Call) and \
            isinstance(st_t, ShapedType) and st_t.valid_shape is not None and \
            declares_valid(st_t) else []
        into = None if tracing or relank is not None or not isinstance(source, Call) or \
            not self.vary(source) \
            or not all(isinstance(v, (Var, Const, int)) for v in svalid) \
            else fused(source, shp)
        # the operands of the fused op, evaluated before the write (pure: names, constants)
        uf = elementwise_ufunc(source) if into is not None else None
        fused_ops = list(source.args[:uf.arity]) + svalid if uf is not None else []
        nsv = len(svalid) if uf is not None else 0
        gathers = False
        if into is None and not tracing and relank is None and isinstance(source, Call) and \
                self.vary(source) and not declares_valid(source.type):
            # a row gather: the rows straight into the destination windows
            take = rows_into(source, shp, self.read_only)
            if take is not None:
                into, fused_ops = take
                gathers = True
        site: list = [None]
        merging = id(e) in self.merging
        # the footprint the plan proved disjoint: the valid part a source's type declares
        bound = shp if relank is not None else written_extent(source.type) or shp
        whole = bound == shp

        def core(f: BatchFrame, tgt: Any, offs: list, fargs: list, src_of: Callable) -> Any:
            st = f.batch
            if relank is not None:
                src_of = relanked(src_of, vrank, relank)
            if not whole and (merging or st.pred is not None):
                raise Fallback("a partial tile written under a condition")
            if merging and st.merge is not None:  # (made with the other branch's: `merged`)
                st.merge.append((into, gathers, site, shp, tgt, offs, fargs, src_of, st.pred))
                return tgt
            if st.pred is not None:  # under a condition: only the blocks taking it write
                src = src_of()
                if tagged(src):
                    raise Fallback("a tagged tile written under a condition")
                masked_write(st, site, tgt, offs, src, shp)
                if tracing:  # (the replay records it for the blocks of the mask only)
                    _trace_write(f, tgt, offs, src, shp)
                return tgt
            if into is not None:
                if not nsv:
                    if into(st, tgt, fargs, offs):
                        return tgt
                elif masks.whole_in_all(st, fargs[-nsv:], shp) and \
                        into(st, tgt, fargs[:-nsv], offs):
                    return tgt
            src = src_of()
            if tagged(src) and type(tgt) is np.ndarray and len(offs) == tgt.ndim and \
                    as_masked(src).data.shape[-srank:] == shp:
                m = as_masked(src)  # (each block's valid part)
                groups = mask_windows.write(st, tgt, offs, m, shp, bound)
                if tracing:
                    mask_windows.charge(f, groups, lambda ext: _trace_write(f, tgt, offs, m.data,
                                                                            ext))
                return tgt
            if type(tgt) is not np.ndarray or type(src) is not np.ndarray or not whole:
                masks.refuse(st, src)
                raise Fallback("a tagged value, or a whole tile where a partial one was due")
            nb = st.nb
            if len(offs) != tgt.ndim or src.shape[-srank:] != shp or \
                    src.ndim not in (srank, srank + nb):
                raise Fallback("rank mismatch")
            view = st.window_at(site, tgt, offs, shp, True)
            if view is not None:
                store_windows(st, view, src, tgt, offs, shp)
            else:
                write_each_block(st, tgt, offs, src, shp, list(st.indices()))
            if tracing:
                _trace_write(f, tgt, offs, src, shp)
            return tgt

        def _trace_write(f: BatchFrame, tgt: Any, offs: list, src: Any, ext: tuple) -> None:
            run = f.run
            st = f.batch
            buf, origin = run.memory.locate(tgt)
            if buf is not None and st.log is not None and run.trace is not None:
                st.log.append((tgt, buf, origin, list(offs), ext, True, sid,
                               ()))
                rec = f.rec
                if rec is not None:
                    nbytes = math.prod(ext) * tgt.itemsize
                    note_gm(rec, f.costs, "gm_write", nbytes,
                            gm_cycles(platform, tgt, list(ext), nbytes))
                    if from_cube:
                        note_drain(platform, rec, f.costs, ext, src.itemsize)

        return Core("write", core, [target, offset, fused_ops, source])


def relanked(src_of: Callable, vrank: int, shp: tuple) -> Callable:
    """`src_of` giving its (plain, batched) value in the shape it is written with."""

    def get() -> Any:
        src = src_of()
        if type(src) is not np.ndarray or src.ndim < vrank:
            raise Fallback("a tagged value of another rank")
        return src.reshape(src.shape[:src.ndim - vrank] + shp)

    return get


__all__ = ["WindowCores", "relanked"]

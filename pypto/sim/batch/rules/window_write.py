"""Window writes (`Family.WINDOW_WRITE`: assemble, store): all blocks' windows at once.

* Into the region's tensors at offsets (or of a value) that differ per block (`bwrite`):
  all blocks' windows assigned at once, or the written op computed straight into them
  (`ufuncs.fused`; a row gather: `gathers.rows_into`). A partial source writes each
  block's valid part (`write_partial`); under a condition only the blocks taking
  the branch write (`predicate.masked_write`; their final writes of one window in both
  branches made as one: `merged`). A value of another rank than the target is written
  as the intrinsic writes it, its leading unit axes dropped or added (`relanked`).
* Into a tensor each iteration has its own of (`bstack_write`: a `body.Stack`
  parameter), at uniform offsets: one slice assignment past the batch axes.
* Into a tile of the region, of a varying value or under a condition (`blocal_write`):
  the tile becomes each block's own along the batch axes - only where the old value
  dies at the write (block by block the write is in place, and nothing else may see the
  difference); a partial source writes its valid part (`local_write_partial`).

Traced, each core logs its accesses for the replay and charges their costs once for all
blocks. Admission notes the write's footprint (the valid part a source's type declares)
for the proof that blocks write disjoint windows.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Const, Var
from pypto.ir.types import ShapedType, TileType
from pypto.ops.facts import Family
from pypto.ops.registry import OpDef, get
from pypto.sim.batch import mask_windows, masks
from pypto.sim.batch.codegen import Core
from pypto.sim.batch.footprints import Access
from pypto.sim.batch.frame import BatchFrame
from pypto.sim.batch.gathers import rows_into
from pypto.sim.batch.mask_windows import after, clipped, extents, leading_whole
from pypto.sim.batch.masks import (
    Masked,
    _at,
    _cell,
    _per_block,
    as_masked,
    declares_valid,
    refuse,
    relanked_shape,
    tagged,
    written_extent,
)
from pypto.sim.batch.predicate import masked_write
from pypto.sim.batch.rules.rule import Analysis, Lowering, Rule
from pypto.sim.batch.rules.window_read import stack_param
from pypto.sim.batch.state import (
    BatchState,
    Fallback,
    NotBatchable,
    store_windows,
    write_each_block,
)
from pypto.sim.batch.ufuncs import broadcast_shape, elementwise_ufunc, fused
from pypto.sim.engine.intrinsics.common import SiteId, falsy_const, is_cube
from pypto.sim.trace.costs import gm_cycles, note_drain, note_gm, note_onchip_copy

# -- admission ---------------------------------------------------------------------------


def admit(an: Analysis, e: Call, op: OpDef, a: dict, vargs: list | None) -> bool:
    wr = op.window_write
    assert wr is not None
    tgt_n, src_n, off_n = wr.tensor, wr.source, wr.offset
    tgt = a[tgt_n]
    src = a.get(src_n)
    if an.is_var(tgt):
        if an.resolve(tgt) is None:
            return _local_write(an, tgt, src, a, off_n)
        return _stack_write(an, tgt, src, a, off_n)
    an.opaque(tgt, True, e.op)
    vs = an.is_var(src)
    vo = an.is_var(a[off_n])
    t = an.resolve(tgt)
    # (a tile whose type declares a constant valid shape writes its valid part: that is
    # its footprint, checked per run by `bwrite`)
    shape = written_extent(getattr(src, "type", None))
    if an.under and t is None and not (vs or vo):
        # (under a mask a tile write makes the tile each block's own: the blocks outside
        # it keep the old one)
        return _local_write(an, tgt, src, a, off_n)
    if vs or vo:
        if t is None:
            if not vo:
                return _local_write(an, tgt, src, a, off_n)
            raise NotBatchable("a varying write into a local tile")
        if not falsy_const(a.get("atomic")) or not falsy_const(a.get("shapes")):
            raise NotBatchable("atomic / reshaping write")
        if shape is None:  # (a partial tile writes its valid part: `mask_windows`)
            raise NotBatchable("write of a tile of a dynamic shape")
        tt = an.ptypes.get(t)
        st = getattr(src, "type", None)
        if tt is not None and len(tt.shape) != len(shape) and \
                isinstance(st, ShapedType) and shape == st.static_shape():
            # (a whole tile of another rank: written as the intrinsic writes it,
            # `masks.relanked_shape`)
            shape = relanked_shape(shape, len(tt.shape)) or shape
        if tt is None or len(tt.shape) != len(shape):
            raise NotBatchable("write of a value of another rank")
    if t is not None:
        an.accesses.append(Access(t, an.offsets(a[off_n]), shape, True))
    return False  # the result is the (uniform) target


def _stack_write(an: Analysis, tgt: Any, src: Any, a: dict, off_n: str) -> bool:
    """A window write at uniform offsets into a varying tensor: only into a parameter
    that is each iteration's own tensor (`body.Stack`: written in place, the same window
    in every iteration's); the result is that parameter again."""
    p = an.resolve(tgt)
    if p is None or p not in an.varying or isinstance(getattr(tgt, "type", None), TileType):
        raise NotBatchable("writing a varying value")
    shape = static_shape(getattr(src, "type", None))
    tt = an.ptypes.get(p)
    if an.is_var(a[off_n]) or not falsy_const(a.get("atomic")) or \
            not falsy_const(a.get("shapes")) or shape is None or \
            not an.valid_ok(getattr(src, "type", None)) or tt is None or \
            len(tt.shape) != len(shape):
        raise NotBatchable("writing a varying tensor at varying offsets, atomically or "
                           "with a partially valid or reshaped value")
    an.is_var(src)
    an.stacked.add(p)
    return True


def _local_write(an: Analysis, tgt: Any, src: Any, a: dict, off_n: str) -> bool:
    """A window write at uniform offsets of a varying value into a tile of the region
    (not a parameter): the tile becomes varying (each block's own, along the batch
    axes). Only when the tile dies at the write (nothing else reads the old value, which
    block by block would see the write in place)."""
    def dies(v: Any) -> bool:
        # (under a mask, the other branches' yields of the old tile keep it for the
        # blocks outside the mask, which the masked write leaves alone)
        if isinstance(v, Call):
            return True
        if not isinstance(v, Var) or an.uses.get(v.name, 0) != 2 + an.merge_uses(v.name):
            return False
        init = an.inits.get(v.name)
        return init is None or dies(init)

    an.in_place_target(tgt)
    shape = static_shape(getattr(src, "type", None))
    tshape = static_shape(getattr(tgt, "type", None))
    if an.is_var(a[off_n]) or not dies(tgt) or not falsy_const(a.get("atomic")) or \
            not falsy_const(a.get("shapes")) or shape is None or tshape is None or \
            len(shape) != len(tshape) or not an.valid_ok(getattr(tgt, "type", None)):
        # (a partial source writes its valid part: `tagged_local`)
        raise NotBatchable("a varying write into a local tile")
    an.is_var(src)
    return True


def static_shape(t: Any) -> tuple | None:
    return t.static_shape() if isinstance(t, ShapedType) else None


# -- the cores ---------------------------------------------------------------------------


def core(lo: Lowering, e: Call) -> Core | None:
    op = get(e.op)
    wr = op.window_write
    assert wr is not None
    a = dict(zip(op.params, e.args))
    tgt = a[wr.tensor]
    local = not (isinstance(tgt, Var) and tgt.name in lo.plan.alias)
    if local and (lo.vary(tgt) or lo.vary(a[wr.source]) or lo.masked):
        return tagged_local(lo, e, blocal_write(lo, e, tgt, a[wr.source], a[wr.offset]))
    if lo.vary(tgt):
        return bstack_write(lo, e, tgt, a[wr.source], a[wr.offset])
    src = a[wr.source]
    if lo.vary(src) or lo.vary(a[wr.offset]):
        return bwrite(lo, e, a[wr.tensor], src, a[wr.offset], e.op)
    return None


def bwrite(lo: Lowering, e: Call, target: Any, source: Any, offset: Any, opname: str
           ) -> Core:
    """A window write at varying offsets (or of a varying value)."""
    shp = tuple(source.type.static_shape())
    # a value of another rank than the target (`pl.assemble` of a [1, R, N] product into
    # a 2-D tensor): written as the intrinsic writes it, its leading unit axes dropped or
    # added (`relanked`; the plan admits only that, of a whole tile)
    tt = getattr(target, "type", None)
    vrank, relank = len(shp), None
    if isinstance(tt, ShapedType) and len(tt.shape) != vrank:
        relank = relanked_shape(shp, len(tt.shape))
        shp = relank or shp  # (None: not admitted by the plan, "rank mismatch" below)
    srank = len(shp)
    tracing = lo.settings.trace
    platform = lo.settings.platform
    sid = SiteId(e.span, opname)
    from_cube = (isinstance(source, Var) and source.name in lo.cube_vars) or \
        (isinstance(source, Call) and is_cube(source))
    # (a source whose type declares a valid shape: only in a batch where it is whole in
    # every block - else the write keeps what lies outside the valid part - its entries
    # being names or constants, evaluated with the operands)
    st_t = getattr(source, "type", None)
    svalid = list(st_t.valid_shape) if isinstance(source, Call) and \
        isinstance(st_t, ShapedType) and st_t.valid_shape is not None and \
        declares_valid(st_t) else []
    into = None if tracing or relank is not None or not isinstance(source, Call) or \
        not lo.vary(source) or not all(isinstance(v, (Var, Const, int)) for v in svalid) \
        else fused(source, shp)
    # the operands of the fused op, evaluated before the write (pure: names, constants)
    uf = elementwise_ufunc(source) if into is not None else None
    fused_ops = list(source.args[:uf.arity]) + svalid if uf is not None else []
    nsv = len(svalid) if uf is not None else 0
    gathers = False
    if into is None and not tracing and relank is None and isinstance(source, Call) and \
            lo.vary(source) and not declares_valid(source.type):
        # a row gather: the rows straight into the destination windows
        take = rows_into(source, shp, lo.read_only)
        if take is not None:
            into, fused_ops = take
            gathers = True
    site: list = [None]
    merging = id(e) in lo.merging
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
            groups = write_partial(st, tgt, offs, m, shp, bound)
            if tracing:
                mask_windows.charge(f, groups, lambda ext: _trace_write(f, tgt, offs, m.data,
                                                                        ext))
            return tgt
        if type(tgt) is not np.ndarray or type(src) is not np.ndarray or not whole:
            refuse(st, src)
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
            st.log.append((tgt, buf, origin, list(offs), ext, True, sid, ()))
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


def blocal_write(lo: Lowering, e: Call, target: Any, source: Any, offset: Any) -> Core:
    """A window write at uniform offsets of a varying value into a tile of the region
    (admitted by `_local_write`): each block's tile along the batch axes, written in
    place when it already is one writable array per block, else made so first (the old
    value dies here: the plan checked that nothing else reads it)."""
    shp = tuple(source.type.static_shape())
    rank = len(shp)
    tracing = lo.settings.trace
    platform = lo.settings.platform

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


def tagged_local(lo: Lowering, e: Call, plain: Core) -> Core:
    """`plain` (`blocal_write`'s core of the write `e` into a tile of the region) taking
    a tagged source too: its valid part per block (`local_write_partial`), an
    on-chip copy of that many bytes."""
    w = get(e.op).window_write
    assert w is not None
    source = e.args[get(e.op).params.index(w.source)]
    shp = tuple(source.type.static_shape())
    fn = plain.fn
    tracing = lo.settings.trace
    platform = lo.settings.platform

    def core(f: BatchFrame, tgt: Any, offs: list, fargs: list, src_of: Callable) -> Any:
        src = src_of()
        if not tagged(src):
            return fn(f, tgt, offs, fargs, lambda: src)
        m = as_masked(src)
        r, groups = local_write_partial(f.batch, tgt, offs, m, shp)
        if tracing and f.rec is not None:
            size = m.data.itemsize
            mask_windows.charge(f, groups, lambda ext: note_onchip_copy(
                platform, f.costs, math.prod(ext) * size))
        return r

    return Core("write", core, plain.operands)


def bstack_write(lo: Lowering, e: Call, target: Var, source: Any, offset: Any) -> Core:
    """A window write at uniform offsets into a tensor each iteration has its own of (a
    `body.Stack` parameter, made writable by the loop body): one slice assignment past
    the batch axes; traced as a write of each iteration's tensor."""
    shp = tuple(source.type.static_shape())
    tracing = lo.settings.trace
    platform = lo.settings.platform
    sid = SiteId(e.span, e.op)
    param = stack_param(lo, target)
    from_cube = (isinstance(source, Var) and source.name in lo.cube_vars) or \
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


# -- partial tiles ---------------------------------------------------------------------


def write_partial(st: BatchState, tgt: np.ndarray, offs: list, src: Masked, shp: tuple,
          bound: tuple) -> list:
    """Write each block's valid part of `src` into its window `offs` of `tgt` (block by
    block: the valid part only, checked against the tensor; a fault raises Fallback and
    the rerun reports it). Logs undo copies and deferred-fill boxes like any write.
    `bound`: the extents the plan proved the blocks' footprints disjoint with (a valid
    part past them gives the batch up). Returns the groups of blocks by extent
    (`extents`) for the trace."""
    bs = st.bs
    groups = extents(st, src, shp)
    if any(e > b for _, ext in groups for e, b in zip(ext, bound)):
        raise Fallback("a valid part past the footprint of the plan")
    if len(groups) == 1:  # one extent for all blocks: one strided view
        ext = groups[0][1]
        data = src.data[(Ellipsis,) + tuple(slice(0, e) for e in ext)]
        view = st.window(tgt, offs, ext, True)
        if view is not None:
            store_windows(st, view, data, tgt, offs, ext)
        else:
            write_each_block(st, tgt, offs, np.broadcast_to(data, bs + ext), ext,
                             list(np.ndindex(*bs)))
        return groups
    los = [_per_block(st, o) for o in offs]
    exts = {idx: v for idx, v in src.tags.items() if v is not None and v != shp}
    data = np.broadcast_to(src.data, bs + tuple(shp))
    k = leading_whole(bs, list(exts))
    scalar = BatchState((), False, False, False)
    if k:  # the leading whole tiles: one strided view (bounds-checked there)
        sub = st if k == bs[0] else BatchState((k,) + bs[1:], False, False, False)
        view = sub.window(tgt, offs, shp, True)
        if view is None:
            k = 0
        else:
            store_windows(st, view, data[:k], tgt, offs, shp, sub)
    for idx in after(bs, k):
        e = clipped(exts.get(idx), shp)
        lo = [_at(x, idx) for x in los]
        if any(o < 0 or o + x > d for o, x, d in zip(lo, e, tgt.shape)):
            raise Fallback("out of bounds")
        box = tuple(slice(o, o + x) for o, x in zip(lo, e))
        if st.undo is not None:
            st.undo.append((tgt[box], tgt[box].copy()))
        tgt[box] = data[idx][tuple(slice(0, x) for x in e)]
        if st.wlog is not None:
            st.wlog.append((tgt, lo, tuple(e), None, scalar))
    return groups


def local_write_partial(st: BatchState, tgt: Any, offs: list, src: Masked, shp: tuple) -> tuple:
    """`blocal_write` of a tagged source: each block's valid part of `src` into
    its own tile `tgt` at the uniform offsets `offs` (block by block the write is in
    place and the old tile dies there). Returns (the tiles, the groups of blocks by
    extent for the trace)."""
    nb, rank = st.nb, len(shp)
    if st.pred is not None or type(tgt) is not np.ndarray or \
            tgt.ndim not in (rank, rank + nb) or src.data.ndim not in (rank, rank + nb) \
            or src.data.shape[-rank:] != shp or len(offs) != rank:
        raise Fallback("a tagged write into a local tile under a condition or of another rank")
    offs = [int(o) for o in offs]
    groups = extents(st, src, shp)
    tshape = tgt.shape[tgt.ndim - rank:]
    for _, ext in groups:
        if any(o < 0 or o + x > n for o, x, n in zip(offs, ext, tshape)):
            raise Fallback("out of bounds")
    lead = st.bs if len(groups) > 1 else \
        broadcast_shape([tgt.shape[:tgt.ndim - rank] or (1,) * nb,
                         src.data.shape[:src.data.ndim - rank] or (1,) * nb])
    own = tgt.ndim == rank + nb and tgt.shape[:nb] == lead and tgt.flags.writeable \
        and all(k == 1 or sd != 0 for k, sd in zip(lead, tgt.strides))
    if not own:
        full = np.empty(lead + tshape, tgt.dtype)
        full[...] = tgt
        tgt = full
    if len(groups) == 1:
        ext = groups[0][1]
        cut = tuple(slice(0, e) for e in ext)
        tgt[(slice(None),) * nb + tuple(slice(o, o + e) for o, e in zip(offs, ext))] = \
            src.data[(Ellipsis,) + cut]
        return tgt, groups
    data = np.broadcast_to(src.data, st.bs + shp) if src.data.ndim == rank + nb else src.data
    for mask, ext in groups:
        assert mask is not None
        box = tuple(slice(o, o + e) for o, e in zip(offs, ext))
        cut = tuple(slice(0, e) for e in ext)
        for idx in zip(*np.nonzero(mask)):
            part = data[_cell(data, idx)] if data.ndim == rank + nb else data
            tgt[tuple(int(i) for i in idx) + box] = part[cut]
    return tgt, groups


RULE = Rule(Family.WINDOW_WRITE, admit, core, always=True)

__all__ = ["RULE", "blocal_write", "bstack_write", "bwrite", "relanked", "tagged_local"]

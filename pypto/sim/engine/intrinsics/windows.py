"""Window reads (slice / load): views in orchestration, copies (loads) in a region.

A load copies only the valid extent and fills the rest of the tile with the pad value
(`pad_value=` of `pl.slice`, else zero like the reference CPU backend, or NaN with
`SimConfig(padding="nan")`). Every window is checked against the extent of its tensor
(`checks=("oob",)`), naming the tensor, the region, the block and the offending
window; with `oob_reads="warn"` a read past the end is recorded and the overhang reads
fresh memory, as the device would.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Var
from pypto.ir.types import ShapedType, TileType
from pypto.ops.mx import MX_LAYOUTS, mx_logical
from pypto.ops.numeric import plain, tile_window, with_valid
from pypto.ops.registry import get
from pypto.sim.device.fill import fill_outside, pad_scalar
from pypto.sim.engine.function import Compiler
from pypto.sim.engine.intrinsics.common import SiteId, args_of, falsy_const, fmt_window, is_none
from pypto.sim.engine.values import FRAME, Env, Expr, pad_mode
from pypto.sim.faults import source_name
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.trace.costs import gm_cycles, note_gm, note_onchip_copy


def window_read(fc: Compiler, e: Call, target: str | None) -> Expr:
    """slice / load: a window read as a view in orchestration (a load copies: it makes a
    tile) and as a copy in a region."""
    op = get(e.op)
    w = op.window_read
    assert w is not None
    a = args_of(e)
    inner = _window(fc, e, src=a[w.tensor], shape=a[w.shape], offset=a[w.offset],
                    valid=a.get("valid_shape"), clamp=a.get("clamp"), pad=a.get("pad_value"),
                    drop=a.get("drop_dims"), opname=e.op)
    layout = getattr(getattr(a[w.tensor], "type", None), "layout", "ND")
    if fc.in_region or op.view is not None:
        read = inner
    else:
        def read(env: Env) -> Any:
            return inner(env).copy()
    if layout in MX_LAYOUTS:  # a load of packed MX scales (slices of them are refused)
        return _mx_window(fc, read, a[w.tensor], a[w.offset], layout)
    return read


def _window(fc: Compiler, e: Call, *, src: Any, shape: Any, offset: Any, valid: Any,
            clamp: Any, pad: Any, drop: Any, opname: str) -> Expr:
    st = fc.settings
    span = e.span
    src_f = fc.expr(src)
    shape_f = fc.expr(shape)
    off_f = fc.expr(offset)
    valid_f = None if is_none(valid) else fc.expr(valid)
    clamp_f = None if falsy_const(clamp) else fc.expr(clamp)
    ok, padv = fc.const(pad) if pad is not None else (True, None)
    mode = pad_mode(padv) if ok else None
    default_pad = st.config.padding
    ok, drop_v = fc.const(drop) if drop is not None else (True, None)
    drop_dims = [int(d) for d in (drop_v or [])] if ok else []
    # in a region a window of a GM tensor is a load into a new tile (a copy); a window of
    # an on-chip tile (pl.tile.slice) is a view of that tile's storage
    of_tile = fc.in_region and isinstance(getattr(src, "type", None), TileType)
    copy = fc.in_region and not of_tile
    check = st.check_oob
    warn_reads = st.warn_oob_reads
    tname = source_name(src.name) if isinstance(src, Var) else "<temporary>"
    tracing = st.trace
    out_static = e.type.static_shape() if isinstance(e.type, ShapedType) else None
    site = SiteId(span, opname)
    ok, shp_v = fc.const(shape)
    shp_c = [int(d) for d in shp_v] if ok else None
    uninit = st.check_uninit
    simple = clamp_f is None and not drop_dims and not uninit
    nd_t = np.ndarray
    add = operator.add

    def run(env: Env) -> Any:
        a = src_f(env)
        shp = shp_c if shp_c is not None else [int(d) for d in shape_f(env)]
        off = [int(o) for o in off_f(env)]
        vs = None
        if simple and type(a) is nd_t and len(off) == a.ndim == len(shp) and (
                valid_f is None or _covers(vs := valid_f(env), shp)):
            # fast path: a plain, fully valid (no valid shape, or one covering the whole
            # window: the tail tiles' guard in full tiles), in-bounds window
            for o, s, d in zip(off, shp, a.shape):
                if o < 0 or o + s > d:
                    break
            else:
                w = a[tuple(map(slice, off, map(add, off, shp)))]
                if copy:
                    w = w.copy()
                    if tracing:
                        fr = env[FRAME]
                        if fr.rec is not None:
                            _trace_read(fr, a, off, shp, site)
                if out_static is not None and w.shape != out_static:
                    w = w.reshape(out_static)
                return tile_window(w) if of_tile else w
        fr = env[FRAME]
        sv = getattr(a, "valid", None)
        if type(a) is not np.ndarray:
            a = plain(a)
        nd = a.ndim
        if len(shp) != nd or len(off) != nd:
            raise fr.fault(f"{opname} of a rank-{nd} tensor with {len(shp)} sizes and "
                           f"{len(off)} offsets", span, tensor=tname)
        ext = shp
        if valid_f is not None:
            if vs is None:  # (evaluated once: it may count ops in the trace)
                vs = valid_f(env)
            ext = [min(s, int(v)) for s, v in zip(ext, vs)]
        if sv is not None and len(sv) == nd:
            ext = [max(0, min(x, int(v) - o)) for x, v, o in zip(ext, sv, off)]
        if clamp_f is not None and clamp_f(env):
            ext = [max(0, min(x, s - o)) for x, s, o in zip(ext, a.shape, off)]
        if check and not copy and all(o >= 0 for o in off):
            # An orchestration view reads nothing: one reaching past the tensor's end is
            # the runtime's view metadata (a ChipTensor of that shape), fine as long as no
            # kernel touches the overhang. It ends where the data does; a kernel reading or
            # writing past that meets the check at its own load or store.
            ext = [max(0, min(x, d - o)) for x, d, o in zip(ext, a.shape, off)]
        if check:
            past = [ax for ax in range(nd) if off[ax] < 0 or off[ax] + ext[ax] > a.shape[ax]]
            if past and copy and warn_reads:
                fr.run.oob.note(span, opname, tname, a.shape, fmt_window(off, ext),
                                tuple(past), fr.region, fr.block)
            elif past:
                ax = past[0]
                raise fr.fault(
                    f"out-of-bounds {opname}: window {fmt_window(off, ext)} of '{tname}' "
                    f"(shape {list(a.shape)}) runs past axis {ax} (extent {a.shape[ax]})",
                    span, tensor=tname, indices=fmt_window(off, ext),
                    hint="clip the window (valid_shape=[...] with the remaining extent) "
                         "or pass clamp=True to read zeros past the end",
                    note="the device reads whatever follows the tensor in GM; without the "
                         "'oob' check (PYPTO_SIM_CHECKS=ub) the simulator reads residue "
                         "there" if copy else None)
        if uninit and copy:
            fr.run.uninit.read(fr, a, tuple(slice(o, o + x) for o, x in zip(off, ext)), span,
                               opname, tname)
        partial = ext != shp
        valid = None
        over = copy and any(o < 0 or o + x > d for o, x, d in zip(off, ext, a.shape))
        if over:
            # Unchecked (no "oob" check, or oob_reads="warn"): the DMA reads whatever lies
            # past the tensor; the window keeps its shape, the overhang is fresh memory.
            w = fr.run.memory.new_fresh(shp, a.dtype)
            lo = [max(0, -o) for o in off]
            hi = [max(lo_, min(x, d - o)) for lo_, x, d, o in zip(lo, ext, a.shape, off)]
            w[tuple(slice(l_, h) for l_, h in zip(lo, hi))] = \
                a[tuple(slice(o + l_, o + h) for o, l_, h in zip(off, lo, hi))]
            if partial:
                fill_outside(w, ext, pad_scalar(a.dtype, mode or default_pad))
                valid = ext
        elif not partial:
            w = a[tuple(slice(o, o + s) for o, s in zip(off, shp))]
            if copy:
                w = w.copy()
        elif copy:
            w = np.empty(shp, dtype=a.dtype)
            box = tuple(slice(0, x) for x in ext)
            w[box] = a[tuple(slice(o, o + x) for o, x in zip(off, ext))]
            fill_outside(w, ext, pad_scalar(a.dtype, mode or default_pad))
            valid = ext
        else:
            # An orchestration view cannot reach past the tensor: it ends where the data does.
            hi = [min(o + s, d) for o, s, d in zip(off, shp, a.shape)]
            w = a[tuple(slice(o, h) for o, h in zip(off, hi))]
            valid = ext
        if copy and tracing and fr.rec is not None:
            _trace_read(fr, a, off, ext, site)
        if drop_dims:
            w = w.reshape([s for i, s in enumerate(w.shape) if i not in drop_dims])
            if valid is not None:
                valid = [v for i, v in enumerate(valid) if i not in drop_dims]
        if out_static is not None and w.shape != out_static and w.size == math.prod(out_static):
            w = w.reshape(out_static)
            if valid is not None and len(valid) < len(out_static):
                valid = [1] * (len(out_static) - len(valid)) + list(valid)
        if valid is not None:
            w = with_valid(w, valid)
        return tile_window(w) if of_tile else w

    return run


def _mx_window(fc: Compiler, inner: Expr, src: Any, offset: Any, layout: str) -> Expr:
    """A load of packed MX scales: the window `inner` read (checked and traced as any
    load), holding the logical codes of the window (`pypto.ops.mx`)."""
    src_f = fc.expr(src)
    off_f = fc.expr(offset)

    def run(env: Env) -> Any:
        w = inner(env)
        full = mx_logical(plain(src_f(env)), layout)
        off = [int(o) for o in off_f(env)]
        ext = getattr(w, "valid", None) or w.shape
        ext = [max(0, min(int(x), d - o)) for x, d, o in zip(ext, full.shape, off)]
        plain(w)[tuple(slice(0, x) for x in ext)] = \
            full[tuple(slice(o, o + x) for o, x in zip(off, ext))]
        return w

    return run


def _covers(valid: Any, shp: list[int]) -> bool:
    """Does the valid shape `valid` cover the whole window `shp`?"""
    if len(valid) != len(shp):
        return False
    return all(int(v) >= s for v, s in zip(valid, shp))


def _trace_read(fr: TaskFrame, a: np.ndarray, off: list[int], ext: list[int],
                site: SiteId) -> None:
    """A traced window read in a region: the access, and its GM (or on-chip) cost."""
    run = fr.run
    rec = fr.rec
    assert rec is not None and run.trace is not None
    buf, origin = run.memory.locate(a)
    nbytes = math.prod(ext) * a.itemsize
    if buf is not None:
        fr.record(a, buf, origin, tuple(off), tuple(ext), False, site)
        note_gm(rec, fr.costs, "gm_read", nbytes,
                gm_cycles(run.settings.platform, a, ext, nbytes))
    else:  # a tile read from another tile: an on-chip copy
        note_onchip_copy(run.settings.platform, fr.costs, nbytes)


__all__ = ["window_read"]

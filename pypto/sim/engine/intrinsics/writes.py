"""Window writes (store / assemble): a value written into a box of a tensor.

Only the source's valid region is written; every write is checked against the extent
of its target (writes past the end always fault: they would corrupt a neighbour); an
atomic-add write accumulates in a wide dtype. Traced writes record the access, the
last writers and the GM (and L0C drain) cost.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Var
from pypto.ops.numeric import plain
from pypto.ops.registry import get
from pypto.sim.engine.function import Compiler
from pypto.sim.engine.intrinsics.common import SiteId, args_of, fmt_window, is_cube, is_none
from pypto.sim.engine.values import FRAME, Env, Expr
from pypto.sim.faults import source_name
from pypto.sim.trace.costs import gm_cycles, note_drain, note_gm, note_onchip_copy


def window_write(fc: Compiler, e: Call, target: str | None) -> Expr:
    """assemble / store: a value written into a window of a tensor."""
    w = get(e.op).window_write
    assert w is not None
    a = args_of(e)
    return _writer(fc, e, target=a[w.tensor], source=a[w.source], offset=a[w.offset],
                   atomic=a.get("atomic"), shapes=a.get("shapes"), opname=e.op)


def _writer(fc: Compiler, e: Call, *, target: Any, source: Any, offset: Any, atomic: Any,
            shapes: Any, opname: str) -> Expr:
    st = fc.settings
    span = e.span
    tgt_f = fc.expr(target)
    src_f = fc.expr(source)
    off_f = fc.expr(offset)
    shapes_f = None if is_none(shapes) else fc.expr(shapes)
    ok, at = fc.const(atomic) if atomic is not None else (True, None)
    atomic_add = ok and at is not None and (getattr(at, "name", "") == "Add" or
                                            (isinstance(at, int) and at == 1))
    check = st.check_oob
    tname = source_name(target.name) if isinstance(target, Var) else "<temporary>"
    sname = source_name(source.name) if isinstance(source, Var) else "<temporary>"
    tracing = st.trace
    platform = st.platform
    site = SiteId(span, opname)
    from_cube = (isinstance(source, Var) and source.name in fc.cube_vars) or \
        (isinstance(source, Call) and is_cube(source))
    in_region = fc.in_region
    nd_t = np.ndarray
    add = operator.add
    uninit = st.check_uninit
    fast_ok = shapes_f is None and not atomic_add and not uninit

    def traced(fr: Any, tgt: np.ndarray, off: list, ext: Any, src: np.ndarray,
               data_nbytes: int) -> None:
        """The access, last writers and costs of the write of `src` (its valid part:
        `ext`, `data_nbytes` bytes) at `off` into `tgt`."""
        buf, origin = fr.run.memory.locate(tgt)
        rec = fr.rec
        if buf is not None:
            fr.record(tgt, buf, origin, tuple(off), tuple(ext), True, site, atomic_add)
            if in_region and rec is not None:
                nbytes = math.prod(ext) * tgt.itemsize
                note_gm(rec, fr.costs, "gm_write", nbytes,
                        gm_cycles(platform, tgt, ext, nbytes))
                if from_cube:
                    note_drain(platform, rec, fr.costs, ext, src.itemsize)
        elif in_region and rec is not None:
            note_onchip_copy(platform, fr.costs, data_nbytes)

    def run(env: Env) -> Any:
        tgt = tgt_f(env)
        src = src_f(env)
        off = [int(o) for o in off_f(env)]
        if fast_ok and type(src) is nd_t and type(tgt) is nd_t and src.ndim == tgt.ndim \
                == len(off):
            # fast path: a plain, fully valid source written in bounds
            for o, s, d in zip(off, src.shape, tgt.shape):
                if o < 0 or o + s > d:
                    break
            else:
                tgt[tuple(map(slice, off, map(add, off, src.shape)))] = src
                if tracing:
                    traced(env[FRAME], tgt, off, src.shape, src, src.nbytes)
                return tgt
        fr = env[FRAME]
        if not isinstance(src, np.ndarray):
            src = np.asarray(src)
        sv = getattr(src, "valid", None)
        if type(src) is not np.ndarray:
            src = plain(src)
        if type(tgt) is not np.ndarray:
            tgt = plain(tgt)
        nd = tgt.ndim
        if shapes_f is not None:
            shp = [int(s) for s in shapes_f(env)]
            if len(shp) == nd and src.shape != tuple(shp) and src.size == math.prod(shp):
                src = src.reshape(shp)
                sv = None
        if src.ndim < nd:
            lead = (1,) * (nd - src.ndim)
            src = src.reshape(lead + src.shape)
            if sv is not None:
                sv = lead + tuple(sv)
        elif src.ndim > nd:
            extra = src.ndim - nd
            if all(d == 1 for d in src.shape[:extra]):
                src = src.reshape(src.shape[extra:])
                if sv is not None:
                    sv = tuple(sv)[extra:]
            else:
                raise fr.fault(f"{opname} of a rank-{src.ndim} value into the rank-{nd} "
                               f"tensor '{tname}'", span, tensor=tname)
        if len(off) != nd:
            raise fr.fault(f"{opname} into the rank-{nd} tensor '{tname}' with {len(off)} "
                           "offsets", span, tensor=tname)
        ext = list(src.shape) if sv is None else [min(int(v), s) for v, s in zip(sv, src.shape)]
        if check:
            for ax in range(nd):
                o, x = off[ax], ext[ax]
                if o < 0 or o + x > tgt.shape[ax]:
                    raise fr.fault(
                        f"out-of-bounds {opname}: writing a {list(ext)} block at "
                        f"{fmt_window(off, ext)} into '{tname}' (shape {list(tgt.shape)}) "
                        f"runs past axis {ax} (extent {tgt.shape[ax]})",
                        span, tensor=tname, indices=fmt_window(off, ext),
                        hint="clip the tile's valid shape for the tail (pl.set_validshape or "
                             "valid_shape= on the load) or fix the offset")
        idx = tuple(slice(o, o + x) for o, x in zip(off, ext))
        data = src if sv is None else src[tuple(slice(0, x) for x in ext)]
        track = fr.run.uninit if uninit else None
        if track is not None:
            track.read(fr, src, tuple(slice(0, x) for x in ext), span, opname, sname)
            if atomic_add:
                track.read(fr, tgt, idx, span, f"atomic-add {opname}", tname)
        if atomic_add:
            wide = np.float64 if tgt.dtype.kind not in "iub" else np.int64
            tgt[idx] = (tgt[idx].astype(wide) + data.astype(wide)).astype(tgt.dtype)
        else:
            tgt[idx] = data
        if track is not None:
            track.wrote(tgt, idx)
        if tracing:
            traced(fr, tgt, off, ext, src, data.nbytes)
        return tgt

    return run


__all__ = ["window_write"]

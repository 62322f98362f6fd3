"""The memory model's ops: windows (slice/load), writes (store/assemble), element
reads and writes, allocation, valid shapes and task handles.

`intrinsic(op)` gives, for an op whose registry facts make it part of the memory model
(a `Window`, or one of the allocation / element / valid-shape / task-join roles), a
factory `(compiler, call, target_name) -> closure` used instead of the op's impl. The
closures

* read windows as *views* in orchestration and as *copies* (loads) in a region;
* honour valid shapes: a load copies only the valid extent and fills the rest of
  the tile with the pad value (`pad_value=` of `pl.slice`, else zero like the
  reference CPU backend, or NaN with `SimConfig(padding="nan")`); a store or
  assemble writes only the source's valid region;
* check every access against the extent of the tensor (`checks=("oob",)`),
  naming the tensor, the region, the block and the offending indices;
* record accesses, last writers and costs when tracing.
"""
from __future__ import annotations

import math
import operator
import re
from typing import Any, Callable

import numpy as np

from pypto.ir.nodes import Attr, Call, Const, Var
from pypto.ir.types import ShapedType
from pypto.ops.numeric import plain, with_valid
from pypto.ops.facts import Role
from pypto.ops.registry import OpDef, Unit, get
from pypto.sim.memory import check_size, fill_outside, pad_scalar


def _args(e: Call) -> dict:
    return dict(zip(get(e.op).params, e.args))


def _name_of(x: Any) -> str:
    """The user's name of a value (without the `__N` suffix SSA renaming adds)."""
    if not isinstance(x, Var):
        return "<temporary>"
    return re.sub(r"__\d+$", "", x.name)


def _is_none(x: Any) -> bool:
    return x is None or (isinstance(x, (Attr, Const)) and x.value is None)


def _falsy_const(x: Any) -> bool:
    return x is None or (isinstance(x, (Attr, Const)) and not x.value)


def _fmt_window(off: list, ext: list) -> str:
    return "[" + ", ".join(f"{o}:{o + e}" for o, e in zip(off, ext)) + "]"


class _SiteId:
    """The trace's number of one op call site, remembered for the trace it came from:
    `Trace.site` hashes the span (a dataclass, ~1 us) on every traced access."""

    __slots__ = ("key", "sid", "trace")

    def __init__(self, span: Any, op: str):
        self.key = (span, op)
        self.trace = None
        self.sid = -1

    def of(self, trace: Any) -> int:
        if self.trace is not trace:
            self.sid = trace.site(*self.key)
            self.trace = trace
        return self.sid


def _mte2_cost(m: Any, a: np.ndarray, ext: list, nbytes: int) -> float:
    p = m.platform
    g = p.gm_granule
    if not ext:
        return nbytes / p.gm_bpc
    contiguous = list(ext[1:]) == list(a.shape[1:])
    if contiguous:
        eff = math.ceil(nbytes / g) * g
    else:
        row = ext[-1] * a.itemsize
        rows = nbytes // row if row else 0
        eff = rows * math.ceil(row / g) * g
    return eff / p.gm_bpc


def _note_mte(m: Any, kind: str, nbytes: int, cycles: float) -> None:
    rec = m.cur
    if rec is None:
        return
    rec.op_counts["mte"] = rec.op_counts.get("mte", 0) + 1
    rec.units.add("mte")
    rec.bytes[kind] += nbytes
    m.bc["mte2" if kind == "gm_read" else "mte3"] += cycles


# --- windows ------------------------------------------------------------------------


def _window(fc: Any, e: Call, *, src: Any, shape: Any, offset: Any, valid: Any, clamp: Any,
            pad: Any, drop: Any, opname: str) -> Callable:
    m = fc.m
    span = e.span
    src_f = fc.expr(src)
    shape_f = fc.expr(shape)
    off_f = fc.expr(offset)
    valid_f = None if _is_none(valid) else fc.expr(valid)
    clamp_f = None if _falsy_const(clamp) else fc.expr(clamp)
    ok, padv = fc.const(pad) if pad is not None else (True, None)
    from pypto.sim.interp import _pad_mode

    pad_mode = _pad_mode(padv) if ok else None
    default_pad = m.cfg.padding
    ok, drop_v = fc.const(drop) if drop is not None else (True, None)
    drop_dims = [int(d) for d in (drop_v or [])] if ok else []
    copy = fc.in_region
    check = m.check_oob
    warn_reads = m.cfg.oob_reads == "warn"
    from pypto.sim.sanitizers.oob import note_oob_read
    tname = _name_of(src)
    tracing = m.trace_on
    out_t = e.type if isinstance(e.type, ShapedType) else None
    out_static = out_t.static_shape() if out_t is not None else None
    site = _SiteId(span, opname)
    ok, shp_v = fc.const(shape)
    shp_c = [int(d) for d in shp_v] if ok else None
    uninit = m.uninit  # checks=("uninit",): pypto.sim.sanitizers.uninit
    simple = clamp_f is None and not drop_dims and uninit is None
    nd_t = np.ndarray
    add = operator.add

    def run(env: dict) -> Any:
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
                    if tracing and m.cur is not None:
                        _trace_read(m, a, off, shp, site)
                if out_static is not None and w.shape != out_static:
                    w = w.reshape(out_static)
                return w
        sv = getattr(a, "valid", None)
        if type(a) is not np.ndarray:
            a = plain(a)
        nd = a.ndim
        if len(shp) != nd or len(off) != nd:
            raise m.fault(f"{opname} of a rank-{nd} tensor with {len(shp)} sizes and "
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
        if check:
            past = [ax for ax in range(nd) if off[ax] < 0 or off[ax] + ext[ax] > a.shape[ax]]
            if past and copy and warn_reads:
                note_oob_read(m, span, opname, tname, a.shape, _fmt_window(off, ext),
                              tuple(past))
            elif past:
                ax = past[0]
                raise m.fault(
                    f"out-of-bounds {opname}: window {_fmt_window(off, ext)} of '{tname}' "
                    f"(shape {list(a.shape)}) runs past axis {ax} (extent {a.shape[ax]})",
                    span, tensor=tname, indices=_fmt_window(off, ext),
                    hint="clip the window (valid_shape=[...] with the remaining extent) "
                         "or pass clamp=True to read zeros past the end",
                    note="the device reads whatever follows the tensor in GM; without the "
                         "'oob' check (PYPTO_SIM_CHECKS=ub) the simulator reads residue "
                         "there" if copy else None)
        if uninit is not None and copy:
            uninit.read(a, tuple(slice(o, o + x) for o, x in zip(off, ext)), span, opname, tname)
        partial = ext != shp
        valid = None
        over = copy and any(o < 0 or o + x > d for o, x, d in zip(off, ext, a.shape))
        if over:
            # Unchecked (no "oob" check, or oob_reads="warn"): the DMA reads whatever lies
            # past the tensor; the window keeps its shape, the overhang is fresh memory.
            w = np.zeros(shp, a.dtype) if m.cfg.uninit == "zero" else m.new_residue(shp, a.dtype)
            lo = [max(0, -o) for o in off]
            hi = [max(lo_, min(x, d - o)) for lo_, x, d, o in zip(lo, ext, a.shape, off)]
            w[tuple(slice(l_, h) for l_, h in zip(lo, hi))] = \
                a[tuple(slice(o + l_, o + h) for o, l_, h in zip(off, lo, hi))]
            if partial:
                fill_outside(w, ext, pad_scalar(a.dtype, pad_mode or default_pad))
                valid = ext
        elif not partial:
            w = a[tuple(slice(o, o + s) for o, s in zip(off, shp))]
            if copy:
                w = w.copy()
        elif copy:
            w = np.empty(shp, dtype=a.dtype)
            box = tuple(slice(0, x) for x in ext)
            w[box] = a[tuple(slice(o, o + x) for o, x in zip(off, ext))]
            fill_outside(w, ext, pad_scalar(a.dtype, pad_mode or default_pad))
            valid = ext
        else:
            # An orchestration view cannot reach past the tensor: it ends where the data does.
            hi = [min(o + s, d) for o, s, d in zip(off, shp, a.shape)]
            w = a[tuple(slice(o, h) for o, h in zip(off, hi))]
            valid = ext
        if copy and tracing and m.cur is not None:
            _trace_read(m, a, off, ext, site)
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
        return w

    return run


def _covers(valid: Any, shp: list) -> bool:
    """Does the valid shape `valid` cover the whole window `shp`?"""
    if len(valid) != len(shp):
        return False
    for v, s in zip(valid, shp):
        if int(v) < s:
            return False
    return True


def _trace_read(m: Any, a: np.ndarray, off: list, ext: list, site: _SiteId) -> None:
    buf, origin = m.locate(a)
    nbytes = math.prod(ext) * a.itemsize
    if buf is not None:
        m.record(a, buf, origin, tuple(off), tuple(ext), False, site.of(m.trace))
        _note_mte(m, "gm_read", nbytes, _mte2_cost(m, a, ext, nbytes))
    else:  # a tile read from another tile: an on-chip copy
        m.bc["vector"] += m.platform.vector_issue_cycles + nbytes / m.platform.vector_bpc


def _window_read(fc: Any, e: Call, target: Any) -> Callable:
    """slice / load: a window read as a view in orchestration (a load copies: it makes a
    tile) and as a copy in a region."""
    op = get(e.op)
    w = op.window
    a = _args(e)
    inner = _window(fc, e, src=a[w.tensor], shape=a[w.shape], offset=a[w.offset],
                    valid=a.get("valid_shape"), clamp=a.get("clamp"), pad=a.get("pad_value"),
                    drop=a.get("drop_dims"), opname=e.op)
    if fc.in_region or op.view is not None:
        return inner

    def load_copy(env: dict) -> Any:
        return inner(env).copy()
    return load_copy


# --- writes -------------------------------------------------------------------------


def _writer(fc: Any, e: Call, *, target: Any, source: Any, offset: Any, atomic: Any,
            shapes: Any, opname: str) -> Callable:
    m = fc.m
    span = e.span
    tgt_f = fc.expr(target)
    src_f = fc.expr(source)
    off_f = fc.expr(offset)
    shapes_f = None if _is_none(shapes) else fc.expr(shapes)
    ok, at = fc.const(atomic) if atomic is not None else (True, None)
    atomic_add = ok and at is not None and (getattr(at, "name", "") == "Add" or
                                            (isinstance(at, int) and at == 1))
    check = m.check_oob
    tname = _name_of(target)
    tracing = m.trace_on
    site = _SiteId(span, opname)
    from_cube = isinstance(source, Var) and source.name in fc.cube_vars or \
        (isinstance(source, Call) and _is_cube(source))
    in_region = fc.in_region
    nd_t = np.ndarray
    add = operator.add
    uninit = m.uninit  # checks=("uninit",): pypto.sim.sanitizers.uninit
    fast_ok = shapes_f is None and not atomic_add and not tracing and uninit is None

    def run(env: dict) -> Any:
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
                return tgt
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
                raise m.fault(f"{opname} of a rank-{src.ndim} value into the rank-{nd} "
                              f"tensor '{tname}'", span, tensor=tname)
        if len(off) != nd:
            raise m.fault(f"{opname} into the rank-{nd} tensor '{tname}' with {len(off)} "
                          "offsets", span, tensor=tname)
        ext = list(src.shape) if sv is None else [min(int(v), s) for v, s in zip(sv, src.shape)]
        if check:
            for ax in range(nd):
                o, x = off[ax], ext[ax]
                if o < 0 or o + x > tgt.shape[ax]:
                    raise m.fault(
                        f"out-of-bounds {opname}: writing a {list(ext)} block at "
                        f"{_fmt_window(off, ext)} into '{tname}' (shape {list(tgt.shape)}) "
                        f"runs past axis {ax} (extent {tgt.shape[ax]})",
                        span, tensor=tname, indices=_fmt_window(off, ext),
                        hint="clip the tile's valid shape for the tail (pl.set_validshape or "
                             "valid_shape= on the load) or fix the offset")
        idx = tuple(slice(o, o + x) for o, x in zip(off, ext))
        data = src if sv is None else src[tuple(slice(0, x) for x in ext)]
        if uninit is not None:
            uninit.read(src, tuple(slice(0, x) for x in ext), span, opname, _name_of(source))
            if atomic_add:
                uninit.read(tgt, idx, span, f"atomic-add {opname}", tname)
        if atomic_add:
            wide = np.float64 if tgt.dtype.kind not in "iub" else np.int64
            tgt[idx] = (tgt[idx].astype(wide) + data.astype(wide)).astype(tgt.dtype)
        else:
            tgt[idx] = data
        if uninit is not None:
            uninit.wrote(tgt, idx)
        if tracing:
            buf, origin = m.locate(tgt)
            if buf is not None:
                m.record(tgt, buf, origin, tuple(off), tuple(ext), True, site.of(m.trace),
                         atomic_add)
                if in_region and m.cur is not None:
                    nbytes = math.prod(ext) * tgt.itemsize
                    _note_mte(m, "gm_write", nbytes, _mte2_cost(m, tgt, ext, nbytes))
                    if from_cube:
                        p = m.platform
                        rows = math.prod(ext[:-1]) if len(ext) > 1 else 1
                        row_bytes = (ext[-1] if ext else 1) * src.itemsize
                        m.bc["fix"] += p.fix_fixed_cycles + rows * max(p.fix_row_floor,
                                                                       row_bytes / p.fix_bpc)
                        m.cur.bytes["l0c_drain"] += math.prod(ext) * src.itemsize
            elif in_region and m.cur is not None:
                m.bc["vector"] += m.platform.vector_issue_cycles + data.nbytes / \
                    m.platform.vector_bpc
        return tgt

    return run


def _is_cube(c: Call) -> bool:
    try:
        return get(c.op).unit is Unit.CUBE
    except KeyError:
        return False


def _window_write(fc: Any, e: Call, target: Any) -> Callable:
    """assemble / store: a value written into a window of a tensor."""
    w = get(e.op).window
    a = _args(e)
    return _writer(fc, e, target=a[w.tensor], source=a[w.source], offset=a[w.offset],
                   atomic=a.get("atomic"), shapes=a.get("shapes"), opname=e.op)


# --- element access -----------------------------------------------------------------


def _element_index(m: Any, a: np.ndarray, offset: Any, span: Any, tname: str, what: str,
                   check: bool) -> tuple:
    idx = offset if isinstance(offset, (list, tuple)) else [offset]
    idx = [int(i) for i in idx]
    if len(idx) == 1 and a.ndim != 1:
        flat = idx[0]
        if check and not 0 <= flat < a.size:
            raise m.fault(f"out-of-bounds {what}: flat index {flat} of '{tname}' "
                          f"(shape {list(a.shape)}, {a.size} elements)", span, tensor=tname,
                          indices=[flat])
        return tuple(int(i) for i in np.unravel_index(flat, a.shape))
    if len(idx) != a.ndim:
        raise m.fault(f"{what} of the rank-{a.ndim} tensor '{tname}' with {len(idx)} indices",
                      span, tensor=tname, indices=idx)
    if check:
        for ax, (i, d) in enumerate(zip(idx, a.shape)):
            if not 0 <= i < d:
                raise m.fault(f"out-of-bounds {what}: index {idx} of '{tname}' (shape "
                              f"{list(a.shape)}) is outside axis {ax} (extent {d})", span,
                              tensor=tname, indices=idx)
    return tuple(idx)


def _read(fc: Any, e: Call, target: Any) -> Callable:
    m = fc.m
    a = _args(e)
    src_f, off_f = fc.expr(a["src"]), fc.expr(a["offset"])
    span = e.span
    tname = _name_of(a["src"])
    cast = fc.caster(e.type, "pl.read", e.span)
    check = m.check_oob
    tracing = m.trace_on
    site = _SiteId(span, "read")

    uninit = m.uninit

    def run(env: dict) -> Any:
        arr = src_f(env)
        idx = _element_index(m, arr, off_f(env), span, tname, "read", check)
        if uninit is not None:
            uninit.read(arr, tuple(slice(i, i + 1) for i in idx), span, "pl.read", tname)
        v = arr[idx].item()
        if tracing:
            buf, origin = m.locate(arr)
            if buf is not None:
                m.record(arr, buf, origin, idx, (1,) * len(idx), False, site.of(m.trace))
        return cast(v) if cast is not None else v

    return run


def _write(fc: Any, e: Call, target: Any) -> Callable:
    m = fc.m
    a = _args(e)
    dst_f, off_f, val_f = fc.expr(a["dst"]), fc.expr(a["offset"]), fc.expr(a["value"])
    span = e.span
    tname = _name_of(a["dst"])
    check = m.check_oob
    tracing = m.trace_on
    site = _SiteId(span, "write")

    def run(env: dict) -> Any:
        arr = dst_f(env)
        idx = _element_index(m, arr, off_f(env), span, tname, "write", check)
        arr[idx] = val_f(env)
        if m.uninit is not None:
            m.uninit.wrote(arr, tuple(slice(i, i + 1) for i in idx))
        if tracing:
            buf, origin = m.locate(arr)
            if buf is not None:
                m.record(arr, buf, origin, idx, (1,) * len(idx), True, site.of(m.trace))
        return arr

    return run


# --- allocation ---------------------------------------------------------------------


def _create_tensor(fc: Any, e: Call, target: Any) -> Callable:
    m = fc.m
    a = _args(e)
    shape_f = fc.expr(a["shape"])
    ok, dt = fc.const(a["dtype"])
    init = a.get("init_value")
    init_f = None if _is_none(init) else fc.expr(init)
    span = e.span
    in_region = fc.in_region
    name = target or "tensor"

    def run(env: dict) -> Any:
        shp = [int(d) for d in shape_f(env)]
        npdt = dt.np
        check_size(shp, npdt, f"pl.create_tensor '{name}'", span)
        if init_f is not None:
            arr = np.full(shp, init_f(env), dtype=npdt)
        elif m.cfg.uninit == "zero":
            arr = np.zeros(shp, dtype=npdt)
        else:
            arr = m.new_residue(shp, npdt)
        if not in_region:
            m.register(name, arr, None, None, "tensor")
        if init_f is None and m.uninit is not None:
            m.uninit.fresh(arr, name, "pl.create_tensor")
        return arr

    return run


def _create_tile(fc: Any, e: Call, target: Any) -> Callable:
    m = fc.m
    a = _args(e)
    shape_f = fc.expr(a["shape"])
    ok, dt = fc.const(a["dtype"])
    span = e.span

    tname = target or "tile"

    def run(env: dict) -> Any:
        shp = [int(d) for d in shape_f(env)]
        check_size(shp, dt.np, "pl.create_tile", span)
        if m.cfg.uninit == "zero":
            t = np.zeros(shp, dtype=dt.np)
        else:
            t = m.new_residue(shp, dt.np)
        if m.uninit is not None:
            m.uninit.fresh(t, re.sub(r"__\d+$", "", tname), "pl.create_tile")
        return t

    return run


# --- valid shapes -------------------------------------------------------------------


def _set_validshape(fc: Any, e: Call, target: Any) -> Callable:
    m = fc.m
    a = _args(e)
    x_f = fc.expr(a["x"])
    r_f, c_f = fc.expr(a["valid_rows"]), fc.expr(a["valid_cols"])
    span = e.span
    tname = _name_of(a["x"])

    def run(env: dict) -> Any:
        x = x_f(env)
        r, c = int(r_f(env)), int(c_f(env))
        if not (0 <= r <= x.shape[0] and 0 <= c <= x.shape[1]):
            raise m.fault(f"set_validshape({r}, {c}) on '{tname}' of physical shape "
                          f"{list(x.shape)}: a valid shape must lie inside the physical shape",
                          span, tensor=tname, indices=[r, c])
        return with_valid(plain(x), (r, c))

    return run


def _task_dummy(fc: Any, e: Call, target: Any) -> Callable:
    m = fc.m
    deps_f = [fc.expr(d, tolerant=True) for d in e.args]
    span = e.span
    from pypto.sim.interp import _flatten_deps

    def run(env: dict) -> Any:
        return m.dummy_task(_flatten_deps([f(env) for f in deps_f]), span)

    return run


_BY_ROLE: dict[Role, Callable] = {
    Role.ELEMENT_READ: _read,
    Role.ELEMENT_WRITE: _write,
    Role.ALLOC_TENSOR: _create_tensor,
    Role.ALLOC_TILE: _create_tile,
    Role.SET_VALID: _set_validshape,
    Role.TASK_JOIN: _task_dummy,
}


def intrinsic(op: OpDef) -> Callable | None:
    """The memory model's factory for `op`, or None when its registry impl runs it."""
    if op.window is not None:
        return _window_write if op.window.write else _window_read
    return _BY_ROLE.get(op.role) if op.role is not None else None

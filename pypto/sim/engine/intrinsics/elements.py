"""Element access (pl.read / pl.write): one element of a tensor, by index or flat index."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.ir.nodes import Call, ListExpr, Var
from pypto.ir.span import Span
from pypto.sim.engine.function import Compiler
from pypto.sim.engine.intrinsics.common import SiteId
from pypto.sim.engine.values import FRAME, Env, Expr
from pypto.sim.faults import source_name
from pypto.sim.machine.frame import TaskFrame


def _element_index(fr: TaskFrame, a: np.ndarray, offset: Any, span: Span | None, tname: str,
                   what: str, check: bool) -> tuple[int, ...]:
    if type(offset) is list and len(offset) == a.ndim:  # (the common case, quickly)
        t = tuple(map(int, offset))
        if not check:
            return t
        for i, d in zip(t, a.shape):
            if not 0 <= i < d:
                break  # (the general path below reports it)
        else:
            return t
    idx = offset if isinstance(offset, (list, tuple)) else [offset]
    idx = [int(i) for i in idx]
    if len(idx) == 1 and a.ndim != 1:
        flat = idx[0]
        if check and not 0 <= flat < a.size:
            raise fr.fault(f"out-of-bounds {what}: flat index {flat} of '{tname}' "
                           f"(shape {list(a.shape)}, {a.size} elements)", span, tensor=tname,
                           indices=[flat])
        return tuple(int(i) for i in np.unravel_index(flat, a.shape))
    if len(idx) != a.ndim:
        raise fr.fault(f"{what} of the rank-{a.ndim} tensor '{tname}' with {len(idx)} indices",
                       span, tensor=tname, indices=idx)
    if check:
        for ax, (i, d) in enumerate(zip(idx, a.shape)):
            if not 0 <= i < d:
                raise fr.fault(f"out-of-bounds {what}: index {idx} of '{tname}' (shape "
                               f"{list(a.shape)}) is outside axis {ax} (extent {d})", span,
                               tensor=tname, indices=idx)
    return tuple(idx)


Indexer = Callable[[TaskFrame, Env, np.ndarray], tuple[int, ...]]


def _indexer(fc: Compiler, offset: Any, span: Span | None, tname: str, what: str,
             check: bool) -> Indexer:
    """The closure giving the checked index of an element access at `offset` (evaluated
    in order, then converted and checked as `_element_index` does; an offset list of one
    or two of a tensor of that rank, in bounds, without its calls)."""
    items = offset.items if isinstance(offset, ListExpr) else None
    if items is not None and len(items) == 1:
        f0 = fc.expr(items[0])

        def index1(fr: TaskFrame, env: Env, a: np.ndarray) -> tuple[int, ...]:
            a0 = f0(env)
            sh = a.shape
            if len(sh) == 1:
                i0 = int(a0)
                if not check or 0 <= i0 < sh[0]:
                    return (i0,)
            return _element_index(fr, a, [a0], span, tname, what, check)

        return index1
    if items is not None and len(items) == 2:
        f0, f1 = fc.expr(items[0]), fc.expr(items[1])

        def index2(fr: TaskFrame, env: Env, a: np.ndarray) -> tuple[int, ...]:
            a0 = f0(env)
            a1 = f1(env)
            sh = a.shape
            if len(sh) == 2:
                i0 = int(a0)
                i1 = int(a1)
                if not check or (0 <= i0 < sh[0] and 0 <= i1 < sh[1]):
                    return (i0, i1)
            return _element_index(fr, a, [a0, a1], span, tname, what, check)

        return index2
    off_f = fc.expr(offset)

    def index(fr: TaskFrame, env: Env, a: np.ndarray) -> tuple[int, ...]:
        return _element_index(fr, a, off_f(env), span, tname, what, check)

    return index


def _name(x: Any) -> str:
    return source_name(x.name) if isinstance(x, Var) else "<temporary>"


def element_read(fc: Compiler, e: Call, target: str | None) -> Expr:
    """pl.read: one element of a tensor (the tensor is its first argument)."""
    src, offset = e.args[0], e.args[1]
    src_f = fc.expr(src)
    span = e.span
    tname = _name(src)
    st = fc.settings
    check, tracing, uninit = st.check_oob, st.trace, st.check_uninit
    index = _indexer(fc, offset, span, tname, "read", check)
    cast = fc.caster(e.type, "pl.read")
    site = SiteId(span, "read")

    def run(env: Env) -> Any:
        fr = env[FRAME]
        arr = src_f(env)
        idx = index(fr, env, arr)
        if uninit:
            fr.run.uninit.read(fr, arr, tuple(slice(i, i + 1) for i in idx), span, "pl.read",
                               tname)
        v = arr[idx].item()
        if tracing:
            buf, origin = fr.run.memory.locate(arr)
            if buf is not None:
                fr.record(arr, buf, origin, idx, (1,) * len(idx), False,
                          site)
        return cast(v) if cast is not None else v

    return run


def element_write(fc: Compiler, e: Call, target: str | None) -> Expr:
    """pl.write: one element of a tensor, in place (`dst, offset, value`)."""
    dst, offset, value = e.args[0], e.args[1], e.args[2]
    dst_f = fc.expr(dst)
    span = e.span
    tname = _name(dst)
    st = fc.settings
    check, tracing, uninit = st.check_oob, st.trace, st.check_uninit
    index = _indexer(fc, offset, span, tname, "write", check)
    val_f = fc.expr(value)
    site = SiteId(span, "write")

    def run(env: Env) -> Any:
        fr = env[FRAME]
        arr = dst_f(env)
        idx = index(fr, env, arr)
        arr[idx] = val_f(env)
        if uninit:
            fr.run.uninit.wrote(arr, tuple(slice(i, i + 1) for i in idx))
        if tracing:
            buf, origin = fr.run.memory.locate(arr)
            if buf is not None:
                fr.record(arr, buf, origin, idx, (1,) * len(idx), True, site)
        return arr

    return run


__all__ = ["element_read", "element_write"]

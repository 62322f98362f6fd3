"""Element access (pl.read / pl.write): one element of a tensor, by index or flat index."""
from __future__ import annotations

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


def _offsets(fc: Compiler, offset: Any) -> Expr:
    """The closure of an element access's offsets (a list display of one or two is
    evaluated without a comprehension's frame)."""
    if isinstance(offset, ListExpr) and len(offset.items) in (1, 2):
        fns = [fc.expr(i) for i in offset.items]
        if len(fns) == 1:
            f0 = fns[0]
            return lambda env: [f0(env)]
        f0, f1 = fns
        return lambda env: [f0(env), f1(env)]
    return fc.expr(offset)


def _name(x: Any) -> str:
    return source_name(x.name) if isinstance(x, Var) else "<temporary>"


def element_read(fc: Compiler, e: Call, target: str | None) -> Expr:
    """pl.read: one element of a tensor (the tensor is its first argument)."""
    src, offset = e.args[0], e.args[1]
    src_f, off_f = fc.expr(src), _offsets(fc, offset)
    span = e.span
    tname = _name(src)
    cast = fc.caster(e.type, "pl.read")
    st = fc.settings
    check, tracing, uninit = st.check_oob, st.trace, st.check_uninit
    site = SiteId(span, "read")

    def run(env: Env) -> Any:
        fr = env[FRAME]
        arr = src_f(env)
        idx = _element_index(fr, arr, off_f(env), span, tname, "read", check)
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
    dst_f, off_f, val_f = fc.expr(dst), _offsets(fc, offset), fc.expr(value)
    span = e.span
    tname = _name(dst)
    st = fc.settings
    check, tracing, uninit = st.check_oob, st.trace, st.check_uninit
    site = SiteId(span, "write")

    def run(env: Env) -> Any:
        fr = env[FRAME]
        arr = dst_f(env)
        idx = _element_index(fr, arr, off_f(env), span, tname, "write", check)
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

"""The nested-inline reshape-back rule, checked when one inline function calls another."""
from __future__ import annotations

from typing import Any

from pypto.errors import DynamicShapeError
from pypto.ir.nodes import Assign, Call, CallFunc, Const, Function, ListExpr, Return, Var
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ops.facts import Role
from pypto.ops.registry import get


def _is_reshape(e: Any) -> bool:
    return isinstance(e, Call) and get(e.op).role is Role.RESHAPE


def _written_buffer(e: Any) -> Any:
    """The argument an in-place op (assemble, store, write: its registry `writes`) writes
    into and returns, else None."""
    if not isinstance(e, Call):
        return None
    op = get(e.op)
    return e.args[op.params.index(op.writes)] if op.writes is not None else None


def check_reshape_back(func: Function, call_span: Span) -> None:
    """An inline nested in another inline must not end by reshaping a view of one of its
    parameters back with a run-time shape: the data is already in the caller's buffer, and
    the reshaped-back value carries a dynamic shape the runtime cannot map."""
    if not func.body or not isinstance(func.body[-1], Return):
        return
    defs: dict[int, Any] = {}
    for n in walk(func.body):
        if isinstance(n, Assign) and len(n.targets) == 1:
            defs[n.targets[0].uid] = n.value
    params = {prm.var.uid for prm in func.params}
    ret = func.body[-1]
    for value in ret.values:
        e = defs.get(value.uid, value) if isinstance(value, Var) else value
        if not _is_reshape(e):
            continue
        shape = e.args[1]
        if not (isinstance(shape, ListExpr) and
                any(not isinstance(d, Const) for d in shape.items)):
            continue
        src, views = e.args[0], 0
        for _ in range(1000):
            if not isinstance(src, Var) or src.uid not in defs:
                break
            d = defs[src.uid]
            if isinstance(d, Var):
                src = d
            elif _is_reshape(d):
                views += 1
                src = d.args[0]
            elif _written_buffer(d) is not None:
                src = _written_buffer(d)
            elif isinstance(d, CallFunc):
                src = next((a for a in d.args if isinstance(a, Var) and a.type == d.type), None)
            else:
                break
        if views and isinstance(src, Var) and src.uid in params:
            raise DynamicShapeError(
                f"inline function '{func.attr('source_name', func.name)}' is nested in another "
                f"inline and ends by reshaping a view of its parameter '{src.name}' back with a "
                "run-time shape", ret.span,
                hint=f"the data is already in '{src.name}': return '{src.name}' itself instead "
                     "of the reshaped-back view",
                note=f"called from an inline function at {call_span}")

"""Allocation (pl.create_tensor / pl.create_tile), valid shapes and task handles."""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir.nodes import Call, Var
from pypto.ops.numeric import plain, with_valid
from pypto.sim.device.fill import check_size
from pypto.sim.engine.function import Compiler
from pypto.sim.engine.intrinsics.common import args_of, is_none
from pypto.sim.engine.values import FRAME, Env, Expr, flatten_deps
from pypto.sim.faults import source_name


def create_tensor(fc: Compiler, e: Call, target: str | None) -> Expr:
    """A fresh GM tensor (registered as a global buffer in orchestration): filled with
    init_value, or fresh memory (residue / zeros) the uninit check tracks."""
    a = args_of(e)
    shape_f = fc.expr(a["shape"])
    _, dt = fc.const(a["dtype"])
    init = a.get("init_value")
    init_f = None if is_none(init) else fc.expr(init)
    span = e.span
    in_region = fc.in_region
    name = target or "tensor"
    uninit = fc.settings.check_uninit
    loops = tuple(fc.loop_vars)  # (the alloc task's iteration, for the runtime's scopes)

    def run(env: Env) -> Any:
        fr = env[FRAME]
        shp = [int(d) for d in shape_f(env)]
        npdt = dt.np
        check_size(shp, npdt, f"pl.create_tensor '{name}'", span)
        if init_f is not None:
            arr = np.full(shp, init_f(env), dtype=npdt)
        else:
            arr = fr.run.memory.new_fresh(shp, npdt)
        if not in_region:
            buf = fr.run.memory.register(name, arr, None, None, "tensor")
            if fr.run.trace is not None:
                fr.run.trace.note_buffer(buf)
                fr.run.trace.note_alloc(name, buf.uid, span,
                                        tuple((v, env[v]) for v in loops if v in env))
        if init_f is None and uninit:
            fr.run.uninit.fresh(arr, name, "pl.create_tensor")
        return arr

    return run


def create_tile(fc: Compiler, e: Call, target: str | None) -> Expr:
    """A fresh on-chip tile: fresh memory (residue / zeros) the uninit check tracks."""
    a = args_of(e)
    shape_f = fc.expr(a["shape"])
    _, dt = fc.const(a["dtype"])
    span = e.span
    tname = source_name(target) if target else "tile"
    uninit = fc.settings.check_uninit

    def run(env: Env) -> Any:
        fr = env[FRAME]
        shp = [int(d) for d in shape_f(env)]
        check_size(shp, dt.np, "pl.create_tile", span)
        t = fr.run.memory.new_fresh(shp, dt.np)
        if uninit:
            fr.run.uninit.fresh(t, tname, "pl.create_tile")
        return t

    return run


def set_validshape(fc: Compiler, e: Call, target: str | None) -> Expr:
    """A new valid shape over the same tile (it must lie inside the physical shape)."""
    a = args_of(e)
    x_f = fc.expr(a["x"])
    r_f, c_f = fc.expr(a["valid_rows"]), fc.expr(a["valid_cols"])
    span = e.span
    x = a["x"]
    tname = source_name(x.name) if isinstance(x, Var) else "<temporary>"

    def run(env: Env) -> Any:
        t = x_f(env)
        r, c = int(r_f(env)), int(c_f(env))
        if not (0 <= r <= t.shape[0] and 0 <= c <= t.shape[1]):
            raise env[FRAME].fault(
                f"set_validshape({r}, {c}) on '{tname}' of physical shape {list(t.shape)}: a "
                "valid shape must lie inside the physical shape", span, tensor=tname,
                indices=[r, c])
        return with_valid(plain(t), (r, c))

    return run


def task_join(fc: Compiler, e: Call, target: str | None) -> Expr:
    """pl.system.task_dummy: a task that only joins its dependencies."""
    deps_f = [fc.expr(d, tolerant=True) for d in e.args]
    span = e.span

    def run(env: Env) -> Any:
        return env[FRAME].run.dummy_task(flatten_deps([f(env) for f in deps_f]), span)

    return run


__all__ = ["create_tensor", "create_tile", "set_validshape", "task_join"]

"""Compiling a Group function (`@pl.function(type=pl.FunctionType.Group)`): its body calls
its AIC and AIV functions, which run at the same time as one core group
(`pypto.sim.machine.group`), each in a frame of its own, instead of one after the other.

The vector function runs on two AIV lanes when it says so - `dual_aiv_dispatch=True`,
or a split mode (`split=pl.SplitMode.UP_DOWN / LEFT_RIGHT`) with a body that reads its
lane (`pl.tile.get_subblock_idx()`); otherwise on one lane, which for a split function
written at full width stands for both lanes' halves.
"""
from __future__ import annotations

from typing import Any

from pypto.errors import SimulationError
from pypto.ir.nodes import (
    Assign,
    Attr,
    Call,
    CallFunc,
    Const,
    Eval,
    Function,
    GetItem,
    Return,
    Var,
)
from pypto.ir.options import SplitMode
from pypto.ir.transform import walk
from pypto.ops.facts import Role
from pypto.ops.registry import get
from pypto.sim.engine.function import Compiler, Host
from pypto.sim.engine.values import FRAME, Env, Stmt
from pypto.sim.machine.group import CoreGroup, Member
from pypto.sim.machine.sync import CoreSync


def aiv_lanes(func: Function) -> int:
    """How many AIV lanes run the vector function `func` (see the module docstring)."""
    if func.attr("dual_aiv_dispatch"):
        return 2
    split = func.attr("split")
    if isinstance(split, (Attr, Const)):
        split = split.value
    if split is not None and SplitMode(int(split)) is not SplitMode.NONE:
        reads_lane = any(isinstance(n, Call) and get(n.op).role is Role.SUBBLOCK_INDEX
                         for n in walk(func.body))
        return 2 if reads_lane else 1
    return 1


def reserved_buffers(funcs: list[Function]) -> dict[tuple[str, str], tuple[int, int]]:
    """(function, name) -> (size, base) of every pl.reserve_buffer of the members (their
    arguments are compile-time constants)."""
    out = {}
    for f in funcs:
        for n in walk(f.body):
            if isinstance(n, Call) and get(n.op).role is Role.RESERVE_BUFFER:
                a = dict(zip(get(n.op).params, n.args))
                name, size, base = a["name"], a["size"], a["base"]
                if isinstance(name, Attr) and isinstance(size, Const) and \
                        isinstance(base, Const):
                    out[(f.attr("source_name", f.name), str(name.value))] = \
                        (int(size.value), int(base.value))
    return out


def _runner(cf: Any, args: list, frame: Any) -> Any:
    """The member's run: its function called in its own frame."""
    return lambda: cf.call(args, frame)


def compile_group(fc: Compiler, host: Host, func: Function, body: Any) -> Stmt:
    """The closure running Group function `func` (its statement compiler `body`)."""
    calls: list[tuple[CallFunc, tuple]] = []
    rest = []
    for s in func.body:
        call = s.value if isinstance(s, Assign) else s.expr if isinstance(s, Eval) else None
        if isinstance(call, CallFunc) and not call.launch:
            calls.append((call, s.targets if isinstance(s, Assign) else ()))
        elif isinstance(s, Return) or (isinstance(s, Assign) and
                                       isinstance(s.value, (Var, GetItem))):
            rest.append(s)  # naming and returning the members' results
        else:
            raise SimulationError("a Group function runs its AIC and AIV functions; it holds "
                                  "no other statements", s.span,
                                  hint="move the work into the AIC or AIV function")
    argfns = [[fc.expr(a, tolerant=True) for a in c.args] for c, _ in calls]
    tail = body(tuple(rest))

    def run(env: Env) -> Any:
        fr = env[FRAME]
        cfs = [host.function(c.func) for c, _ in calls]
        for cf in cfs:
            host.check_budget(cf, fr.region or func.name, func.span)
        funcs = [cf.func for cf in cfs]
        lanes = max((aiv_lanes(f) for f in funcs if f.attr("core_type") == "aiv"), default=1)
        group = CoreGroup(fr.region or f"'{func.name}'", lanes, reserved_buffers(funcs))
        frames = []
        for cf, fns, (call, _) in zip(cfs, argfns, calls):
            side = cf.func.attr("core_type") or "aic"
            args = [f(env) for f in fns]
            for lane in range(lanes if side == "aiv" else 1):
                mf = fr.for_block(fr.block_idx)
                mf.subblock_idx = lane
                mf.group = group
                mf._sync = CoreSync(group.events, group)
                frames.append(mf)
                group.members.append(Member(cf.func.attr("source_name", call.func), side, lane,
                                            _runner(cf, args, mf)))
        results = group.run()
        for mf in frames:  # the group's block costs: every member's pipes
            for k, v in mf.costs.items():
                fr.costs[k] = fr.costs.get(k, 0.0) + v
        i = 0
        for cf, (_, targets) in zip(cfs, calls):
            r = results[i]
            i += lanes if cf.func.attr("core_type") == "aiv" else 1
            for t, v in zip(targets, r if len(targets) > 1 else (r[0] if r else None,)):
                env[t.name] = v
        return tail(env)

    return run


__all__ = ["aiv_lanes", "compile_group", "reserved_buffers"]

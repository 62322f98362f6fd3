"""CheckDistributed: where the multi-card (`pld`) ops may appear.

After inlining every op sits in the function that runs it, so the rules are exact:

* the control-plane ops of the host (`pld.alloc_window_buffer`, `pld.window`,
  `pld.world_size`) run only in the `@pl.jit.host` function: a device knows its rank
  and group through `pld.get_comm_ctx` / `pld.rank` / `pld.nranks` instead;
* a host collective cannot synthesise its signal inside a loop (the host builtin is not
  self-clearing), and a device-side `pld.tensor.allreduce` always names its signal;
* a host function dispatches per-device functions (`chip(..., device=r)`); it runs no
  InCore region of its own.
"""
from __future__ import annotations

from typing import Any

from pypto.errors import InvalidOperationError, ScopeError
from pypto.ir.nodes import Call, CallFunc, For, FunctionKind, Program, Scope, ScopeKind, While
from pypto.ir.transform import walk
from pypto.ops.registry import get
from pypto.passes.base import Pass, PassContext


def _public(op: str) -> str:
    names = get(op).names
    return min(names, key=len) if names else op


_BODIES = ("then_body", "else_body", "body")


def _calls(body: Any, loops: int = 0):
    """(call, number of loops around it) for every op call in `body`."""
    for s in body:
        inner = loops + 1 if isinstance(s, (For, While)) else loops
        own = tuple(getattr(s, f) for f in s.__dataclass_fields__ if f not in _BODIES + ("span",))
        for n in walk(own):
            if isinstance(n, Call):
                yield n, loops
        for f in _BODIES:
            if hasattr(s, f):
                yield from _calls(getattr(s, f), inner)


class CheckDistributed(Pass):
    name = "check_distributed"
    summary = "host-only pld ops stay on the host; collectives have their signals"

    def run(self, program: Program, ctx: PassContext) -> Program:
        for f in program.functions:
            host = f.kind is FunctionKind.HOST
            for call, loops in _calls(f.body):
                opdef = get(call.op)
                if opdef.extra.get("host_only") and not host:
                    raise ScopeError(
                        f"{_public(call.op)} is host-side work: it runs in the @pl.jit.host "
                        f"function, not in '{f.attr('source_name', f.name)}'", call.span,
                        hint="a kernel reads its rank and group size with "
                             "ctx = pld.get_comm_ctx(window); pld.rank(ctx), pld.nranks(ctx)")
                if opdef.extra.get("signal_param") and not _has_signal(call, opdef):
                    if not host:
                        raise InvalidOperationError(
                            f"{_public(call.op)} in device code needs its signal window "
                            "(only the host may omit it)", call.span,
                            hint="pass a window-bound INT32 [nranks, 1] signal")
                    if loops:
                        raise InvalidOperationError(
                            f"{_public(call.op)} inside a loop of the host needs an explicit "
                            "signal window (the signal the host synthesises is not reusable "
                            "across iterations)", call.span,
                            hint="allocate an INT32 [world_size, 1] window and pass it")
            if host:
                for n in walk(f.body):
                    if isinstance(n, Scope) and n.kind in (ScopeKind.INCORE, ScopeKind.SPMD):
                        raise ScopeError(
                            "a @pl.jit.host function runs on the host: it dispatches "
                            "per-device functions and runs no InCore region itself", n.span,
                            hint="move the region into a @pl.jit function and dispatch it "
                                 "with device=r")
                    if isinstance(n, CallFunc) and n.launch and \
                            n.launch_attr("kind") != "device":
                        raise ScopeError(
                            "a @pl.jit.host function cannot launch an InCore kernel: it "
                            "dispatches a per-device @pl.jit function with device=r", n.span)
        return program


def _has_signal(call: Call, opdef: Any) -> bool:
    i = list(opdef.params).index(opdef.extra["signal_param"])
    if i >= len(call.args):
        return False
    a = call.args[i]
    return getattr(a, "value", a) is not None

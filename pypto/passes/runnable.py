"""CheckRunnable: what compiles as with the real toolchain, and cannot run here.

The real parser and pass pipeline accept three things a run of the simulator cannot give
a meaning to. They compile here too, with a warning; running the program is refused
before anything runs, with a located error at the first one (`refusal_error`, raised
where the simulator builds the program's executable). Published as
`ctx.analyses["refusals"]`.

* A kernel called from inside a kernel: a `pl.at` region, a `with pl.spmd` body that
  reads its block index (the real parser wraps the whole body, the call included, in
  an InCore carrier) or an InCore function calls an InCore function. The real outliner
  keeps the call in the outlined InCore function (no pass inlines an InCore callee)
  and its PTO code generator has no code for it ("No codegen registered for operation:
  <kernel>"): the real toolchain refuses it at code generation, so do we, at the same
  stage (a `ScopeError`, as before this was accepted).
* `with pl.at(level=pl.Level.HOST)` (any level above CORE_GROUP): host-level code of
  a multi-card system, which the real compiler outlines into a function of that level
  and hands to its distributed code generator. The simulator runs the regions of one
  card (`NotSimulatableError`).
* A `pl.Out` parameter rebound to a new value inside a `pl.at` region (found by the
  parser): the value never reaches the output buffer; the real code generator fails on
  it (`PartialCodegenError`, real `examples/utils/error_handling.py`), so a run is
  refused with `OutRebindError`, which is one.
* A host `SubWorker` (`@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)`):
  a Python callback the real runtime runs in a forked host worker; an abstract one
  (`...` body) is bound only at run time (`prepare(callbacks={...})`). The simulator
  has no host workers and nothing to bind (`NotSimulatableError`).

Runs after outlining: a kernel call inside a kernel is then a call without launch in an
InCore function, wherever it was written.
"""
from __future__ import annotations

from pypto.errors import NotSimulatableError, OutRebindError, ScopeError, UserError
from pypto.ir.nodes import CallFunc, Function, Program, Scope, ScopeKind
from pypto.ir.refusal import Refusal
from pypto.ir.transform import walk
from pypto.passes.base import Pass, PassContext

_KINDS = {"scope": ScopeError, "simulator": NotSimulatableError, "codegen": OutRebindError}


def refusal_error(r: Refusal) -> UserError | NotSimulatableError | OutRebindError:
    """The error a run of a program with `r` raises."""
    return _KINDS[r.kind](r.message, r.span, r.hint, note=r.note)


def _name(f: Function) -> str:
    return str(f.attr("source_name", f.name))


def _kernel_calls(program: Program) -> list[Refusal]:
    funcs = {f.name: f for f in program.functions}
    out = []
    for f in program.functions:
        if not f.kind.is_region or f.attr("group"):
            continue  # (a Group function runs its AIC / AIV members: that is its body)
        for n in walk(f.body):
            callee = funcs.get(n.func) if isinstance(n, CallFunc) else None
            if callee is None or n.launch or not callee.kind.is_region:
                continue
            region = f.attr("region")
            where = ("the body of this `with pl.spmd` reads its block index, so the whole "
                     "body, this call included, is one per-block kernel" if region == "spmd"
                     else "it stands in a pl.at region, which is one kernel" if region == "at"
                     else f"it stands in the InCore function {_name(f)}")
            out.append(Refusal(
                "scope", f"the InCore kernel {_name(callee)} is called from inside a kernel "
                f"({where}); a kernel cannot call another kernel", n.span,
                f"dispatch {_name(callee)} from orchestration code (a `with pl.spmd(n):` "
                "holding only the call, which reads its block index itself), or make it "
                "@pl.jit.inline / @pl.inline to splice it into this kernel",
                "the program compiles, as with the real compiler, which outlines the kernel "
                "with the call in it; its code generator has no code for a call between "
                "kernels, so the program cannot run"))
    return out


def _host_code(program: Program) -> list[Refusal]:
    out = []
    for f in program.functions:
        if f.attr("role") == "SubWorker":
            abstract = f.attr("requires_runtime_binding", False)
            what = ("an abstract SubWorker callback (a `...` body): the real runtime binds "
                    "its implementation when the program is prepared "
                    "(`prepare(callbacks={...})`)" if abstract else
                    "a host SubWorker: its body is Python the real runtime runs in a forked "
                    "host worker")
            out.append(Refusal(
                "simulator", f"{_name(f)} is {what}; the simulator has no host workers", f.span,
                "simulate the per-card functions it works with (each @pl.jit / Orchestration "
                "function) on their own, with numpy standing in for the callback",
                "the program compiles; running it needs the real multi-card runtime"))
        for n in walk(f.body):
            if isinstance(n, Scope) and n.kind is ScopeKind.HIERARCHY:
                level = n.attr("level")
                out.append(Refusal(
                    "simulator", f"a pl.at(level=pl.Level.{level}) scope runs at a level "
                    "above CORE_GROUP (host-level code of a multi-card system at HOST); the "
                    "simulator runs the CORE_GROUP regions of one card", n.span,
                    "write the work in a `with pl.at(level=pl.Level.CORE_GROUP, ...)` region, "
                    "or dispatch per-card functions from a @pl.jit.host function",
                    f"the program compiles: the real compiler outlines the scope into a "
                    f"{level}-level function for its distributed code generator"))
    return out


class CheckRunnable(Pass):
    name = "check_runnable"
    summary = "kernel calls in kernels, host-level code: a warning now, refused when run"

    def run(self, program: Program, ctx: PassContext) -> Program:
        found = list(ctx.analyses.get("parse_refusals", ())) + _kernel_calls(program) + \
            _host_code(program)
        for r in found:
            ctx.warn(f"{r.message}: the program compiles, but running it is refused", r.span,
                     hint=r.hint)
        ctx.analyses["refusals"] = tuple(found)
        return program


__all__ = ["CheckRunnable", "Refusal", "refusal_error"]

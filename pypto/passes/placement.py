"""CheckPlacement: core work left in orchestration code compiles, and cannot run.

The real parser places no op: a compute op (`pl.add`, `pl.matmul`, ...) or a core-only
op (`pl.system.fence`, the pipe ops, ...) may stand in an orchestration body, beside
the `pl.at` / `pl.spmd` regions or in a function with none. Its compiler outlines the
regions, turns the Opaque parent into Orchestration and leaves such an op where it
is: a property verifier warns ("compute tensor op found in Orchestration function"),
and the orchestration code generator then refuses it (a misplaced op: it has no host
form). So here such a program parses and compiles, with a `PyptoWarning` at each
misplaced op; running it is refused before anything runs, with a located `ScopeError`
at the first one (`misplaced_error`, raised by the simulator when it builds the
program's executable). Published as `ctx.analyses["misplaced_ops"]`.

Runs after outlining: what is still in an Orchestration / Host / Opaque body then is
exactly what no region holds. Scalar arithmetic (`pl.max(a, b)` on scalars) is
control-plane work and stays allowed, as at parse time.
"""
from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import ScopeError
from pypto.ir.nodes import Call, FunctionKind, Program, Scope, ScopeKind
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType, ShapedType, TensorType
from pypto.ops.registry import Unit, get
from pypto.passes.base import Pass, PassContext

_ORCHESTRATION = (FunctionKind.ORCHESTRATION, FunctionKind.HOST, FunctionKind.OPAQUE)


@dataclass(frozen=True)
class MisplacedOp:
    """One op that needs a core, found in orchestration code of `function`."""

    public: str  # the op as the user spells it (`pl.add`)
    function: str
    core_only: bool  # a core-only op (a sync, a pipe op) rather than a compute op
    span: Span | None

    @property
    def message(self) -> str:
        if self.core_only:
            return f"{self.public} runs on a core of a kernel and cannot run in orchestration code"
        return f"{self.public} is a compute op and cannot run in orchestration code"

    @property
    def hint(self) -> str:
        if self.core_only:
            return "call it inside the pl.at / pl.spmd block (or an InCore function)"
        return ("wrap it in `with pl.at(level=pl.Level.CORE_GROUP, name_hint=...):` or a "
                "pl.spmd block")


def misplaced_error(op: MisplacedOp) -> ScopeError:
    """The error a run of a program with `op` raises (the real code generator's refusal)."""
    return ScopeError(op.message, op.span, op.hint,
                      note=f"it stands outside every region of {op.function}; the program "
                           "compiles (as with the real compiler, whose code generator then "
                           "refuses the op), but it cannot run")


# ops on a tensor that the orchestration code generator emits as a view of the runtime's
# tensor (simpler's `ChipTensor::transpose` swaps two axes' shapes and strides; real
# tests/st/runtime/control_flow/test_dyn_orch_shape.py transposes in orchestration)
_HOST_VIEWS = frozenset({"transpose"})


def _misplaced(call: Call, function: str) -> MisplacedOp | None:
    opdef = get(call.op)
    public = opdef.names[0] if opdef.names else call.op
    if opdef.incore_only:
        return MisplacedOp(public, function, True, call.span)
    if opdef.unit not in (Unit.VECTOR, Unit.CUBE):
        return None
    if opdef.name in _HOST_VIEWS and call.args and \
            isinstance(getattr(call.args[0], "type", None), TensorType):
        return None
    scalar = isinstance(call.type, ScalarType) and not any(
        isinstance(getattr(a, "type", None), ShapedType) for a in call.args)
    return None if scalar else MisplacedOp(public, function, False, call.span)


class CheckPlacement(Pass):
    name = "check_placement"
    summary = "core work outside every region: a warning now, refused when run"

    def run(self, program: Program, ctx: PassContext) -> Program:
        found: list[MisplacedOp] = []
        for fn in program.functions:
            if fn.kind not in _ORCHESTRATION:
                continue
            # host-level code (pl.at(level=HOST)) is not orchestration code of a card:
            # the simulator refuses it whole (passes/runnable.py)
            host = {id(n) for s in walk(fn.body)
                    if isinstance(s, Scope) and s.kind is ScopeKind.HIERARCHY
                    for n in walk(s.body)}
            for node in walk(fn.body):
                if isinstance(node, Call) and id(node) not in host:
                    op = _misplaced(node, fn.attr("source_name", fn.name))
                    if op is not None:
                        found.append(op)
        for op in found:
            ctx.warn(f"{op.message}: the program compiles, but running it is refused "
                     "(the real compiler's code generator has no host form for it)",
                     op.span, hint=op.hint)
        ctx.analyses["misplaced_ops"] = tuple(found)
        return program


__all__ = ["CheckPlacement", "MisplacedOp", "misplaced_error"]

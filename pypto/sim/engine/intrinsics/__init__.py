"""The memory model's ops (intrinsics): used instead of the registry impl of the ops
whose facts make them part of it.

* windows (`windows`: slice / load) read as *views* in orchestration and as *copies*
  (loads) in a region, honour valid shapes and padding, and are bounds-checked;
* writes (`writes`: store / assemble) write the source's valid region, checked;
* element access (`elements`: pl.read / pl.write), allocation, valid shapes and task
  joins (`alloc`);
* all of them record accesses, last writers and costs when tracing.

`intrinsic(op)` gives the factory `(compiler, call, target name) -> closure` of an op
with a `Window` fact or one of the roles below, else None.
"""
from __future__ import annotations

from collections.abc import Callable

from pypto.ir.nodes import Call
from pypto.ops.facts import Role
from pypto.ops.registry import OpDef
from pypto.sim.engine.function import Compiler
from pypto.sim.engine.intrinsics.alloc import create_tensor, create_tile, set_validshape, task_join
from pypto.sim.engine.intrinsics.elements import element_read, element_write
from pypto.sim.engine.intrinsics.windows import window_read
from pypto.sim.engine.intrinsics.writes import window_write
from pypto.sim.engine.values import Expr

Factory = Callable[[Compiler, Call, "str | None"], Expr]

_BY_ROLE: dict[Role, Factory] = {
    Role.ELEMENT_READ: element_read,
    Role.ELEMENT_WRITE: element_write,
    Role.ALLOC_TENSOR: create_tensor,
    Role.ALLOC_TILE: create_tile,
    Role.SET_VALID: set_validshape,
    Role.TASK_JOIN: task_join,
}


def intrinsic(op: OpDef) -> Factory | None:
    """The memory model's factory for `op`, or None when its registry impl runs it."""
    if op.window is not None:
        return window_write if op.window_write is not None else window_read
    return _BY_ROLE.get(op.role) if op.role is not None else None


__all__ = ["Factory", "intrinsic"]

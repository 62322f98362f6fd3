"""The multi-card forms of the language (`pypto.language.distributed`, `pld`):

* `buf = pld.alloc_window_buffer(...)`: a window buffer is named after the variable it
  is assigned to, so the call must be the right-hand side of a simple assignment;
* `chip(..., device=r)` in a `@pl.jit.host` function: dispatch the per-device `@pl.jit`
  function `chip` on rank `r`. The callee stays a function of its own (an orchestration
  function every rank runs); the call carries the rank as its `device` launch attribute.
"""
from __future__ import annotations

import ast
from typing import Any

from pypto.errors import InvalidOperationError, PyptoSyntaxError, PyptoTypeError, ScopeError
from pypto.frontend.dispatch import assign_construct, call_construct
from pypto.frontend.opcall import call_op
from pypto.frontend.values import is_ir, is_number
from pypto.ir.distributed import DistributedTensorType
from pypto.ir.nodes import CallFunc, FunctionKind
from pypto.ir.types import NONE, ScalarType, TensorType, TupleType
from pypto.language.distributed import alloc_window_buffer

ALLOC_OP = "pld.tensor.alloc_window_buffer"


def _call_args(p: Any, call: ast.Call) -> tuple[list, dict, list, dict]:
    args = [p.visit_expr(a) for a in call.args]
    kwargs = {k.arg: p.visit_expr(k.value) for k in call.keywords if k.arg is not None}
    kw_nodes = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred)
                                                         for a in call.args):
        raise p.error(PyptoSyntaxError, "pld.alloc_window_buffer takes plain arguments "
                      "(no *args / **kwargs)", call)
    return args, kwargs, list(call.args), kw_nodes


@assign_construct(alloc_window_buffer)
def _alloc_window_buffer(p: Any, construct: Any, target: ast.expr, call: ast.Call,
                         stmt: ast.AST) -> None:
    if not isinstance(target, ast.Name):
        raise p.error(PyptoSyntaxError, "assign pld.alloc_window_buffer(...) to one plain name: "
                      "the window buffer is named after it", target)
    if p.kind is not FunctionKind.HOST:
        raise _not_host(p, call)
    args, kwargs, arg_nodes, kw_nodes = _call_args(p, call)
    kwargs.setdefault("name", target.id)  # an explicit name= (as printed IR has) wins
    value = call_op(p, ALLOC_OP, args, kwargs, call, arg_nodes, kw_nodes,
                    public="pld.alloc_window_buffer")
    p.bind(target.id, value, target)


@call_construct(alloc_window_buffer)
def _alloc_outside_assignment(p: Any, call: ast.Call) -> Any:
    """Outside `buf = ...` the buffer has no variable to be named after; the printed IR
    form (`buf: pld.WindowBuffer = pld.tensor.alloc_window_buffer(..., name='buf')`)
    names it explicitly."""
    args, kwargs, arg_nodes, kw_nodes = _call_args(p, call)
    if "name" not in kwargs:
        raise p.error(PyptoSyntaxError, "pld.alloc_window_buffer(...) must be the right-hand "
                      "side of a simple assignment: the window buffer is named after the "
                      "variable", call,
                      hint="write `buf = pld.alloc_window_buffer(...)` in the @pl.jit.host "
                           "function and pass buf to pld.window")
    if p.kind is not FunctionKind.HOST:
        raise _not_host(p, call)
    return call_op(p, ALLOC_OP, args, kwargs, call, arg_nodes, kw_nodes,
                   public="pld.alloc_window_buffer")


def _not_host(p: Any, node: ast.AST) -> Exception:
    return p.error(ScopeError, "pld.alloc_window_buffer allocates a window on every rank, so "
                   "it belongs to the host: call it in the @pl.jit.host function", node,
                   hint="allocate in the @pl.jit.host function and pass pld.window(...) views "
                        "down to the per-device function")


# --- dispatch on a rank --------------------------------------------------------------


def dispatch_on_device(p: Any, fn: Any, kind: FunctionKind, values: list, device: Any,
                       node: ast.AST, device_node: ast.AST, self_object: Any = None
                       ) -> CallFunc:
    """`chip(args..., device=r)` in host code: the per-device function `chip` runs on rank
    `r`; `device` None: a call without device=, which the runtime hands to the chips
    round-robin in submit order. Returns the call (the statement handler emits it)."""
    name = getattr(fn, "__name__", "?")
    if p.kind is not FunctionKind.HOST:
        raise p.error(ScopeError, f"device= dispatches {name} on a rank; only a @pl.jit.host "
                      "function dispatches on devices", device_node,
                      hint="drop device= here, or dispatch from the @pl.jit.host function "
                           "(`for r in pl.range(pld.world_size()): chip(..., device=r)`)")
    if p.in_region:
        raise p.error(ScopeError, "device= dispatch cannot sit inside a region", node)
    if kind is FunctionKind.INCORE:
        raise p.error(InvalidOperationError, f"{name} is an InCore kernel: the host dispatches "
                      "a per-device @pl.jit function, which launches the kernel", node,
                      hint=f"wrap the call of {name} in a @pl.jit function and dispatch that "
                           "with device=r")
    if kind not in (FunctionKind.ORCHESTRATION, FunctionKind.OPAQUE):
        raise p.error(InvalidOperationError, f"{name} cannot be dispatched on a device: only a "
                      "per-device @pl.jit (orchestration) function can", node)
    dev = p.to_ir(device, device_node) if is_number(device) else device
    if device is not None and (not is_ir(dev) or not isinstance(dev.type, ScalarType)
                               or not dev.type.dtype.is_int()):
        raise p.error(PyptoTypeError, f"device= must be a rank index (an integer), got "
                      f"{getattr(dev, 'type', dev)!r}", device_node)
    values = [p.to_ir(v, node) if is_number(v) else v for v in values]
    for v in values:
        if not is_ir(v):
            raise p.error(PyptoTypeError, f"{name}(..., device=r): every argument must be a "
                          f"run-time value (a tensor, window or scalar), got {v!r}", node)
    func, fname = p.builder.chip_function(p, fn, values, self_object)
    _check_windows(p, func, values, node, name)
    rt = func.returns
    ret = NONE if not rt else rt[0] if len(rt) == 1 else TupleType(tuple(rt))
    launch = (("kind", "device"),) if dev is None else (("kind", "device"), ("device", dev))
    return CallFunc(fname, tuple(values), ret, p.span(node), launch=launch)


def _check_windows(p: Any, func: Any, values: list, node: ast.AST, name: str) -> None:
    """A window parameter takes a window (pld.window), and a window is never passed as a
    plain tensor: the real toolchain rejects both at compile time."""
    for prm, v in zip(func.params, values):
        want, got = prm.var.type, v.type
        if isinstance(want, DistributedTensorType) and not isinstance(got, DistributedTensorType):
            raise p.error(PyptoTypeError, f"{name}(): parameter '{prm.var.name}' is a "
                          f"pld.DistributedTensor (window-bound) but the argument is {got}", node,
                          hint="pass pld.window(buf, shape, dtype=...) of a window buffer "
                               "allocated with pld.alloc_window_buffer")
        if isinstance(got, DistributedTensorType) and isinstance(want, TensorType) and \
                not isinstance(want, DistributedTensorType):
            raise p.error(PyptoTypeError, f"{name}(): parameter '{prm.var.name}' is a plain "
                          f"pl.Tensor but the argument is the window {got}", node,
                          hint=f"annotate '{prm.var.name}' as pld.DistributedTensor[...]")

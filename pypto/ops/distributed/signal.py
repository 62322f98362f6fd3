"""Signals: `notify` deposits a value in a cell of a peer's window, `wait` blocks this
rank until a cell of its own window satisfies a comparison, `defer_wait` lets the task
finish while its completion waits for the cell.

A signal tensor is an ordinary window (usually `[nranks, 1]` INT32): the cells are
counters. With `NotifyOp.AtomicAdd` every notify is a credit, so `WaitCmp.Ge` is the
safe comparison (a fast peer can move a counter past the value a slow waiter looks
for; an `Eq` wait would then never return).
"""
from __future__ import annotations

from pypto.ir.distributed import NotifyOp, WaitCmp
from pypto.ir.types import NONE
from pypto.ops.distributed.rules import enum_arg, int_scalar_arg, offsets_arg, window_arg
from pypto.ops.distributed.runtime import comm
from pypto.ops.facts import Role
from pypto.ops.registry import OpError, Unit, defop


def _signal_window(x, arg):
    t = window_arg(x, arg)
    if not t.dtype.is_int():
        raise OpError(f"the signal window '{arg}' must hold integers (INT32 counters), "
                      f"got {t.dtype!r}", arg=arg)
    return t


def _notify(target, peer, offsets, value, *, op):
    """Deposit `value` in the cell `target[offsets]` of rank `peer`'s window:
    `op=pld.NotifyOp.AtomicAdd` adds it atomically, `pld.NotifyOp.Set` stores it."""
    t = _signal_window(target, "target")
    int_scalar_arg(peer, "peer")
    offsets_arg(offsets, t, "offsets")
    int_scalar_arg(value, "value")
    enum_arg(op, NotifyOp, "op")
    return NONE


defop("pld.system.notify", unit=Unit.SCALAR, role=Role.COMM, wants_ctx=True,
      impl=lambda target, peer, offsets, value, op, *, ctx:
      comm(ctx).notify(ctx, target, peer, offsets, value, op),
      names=("pld.system.notify",))(_notify)


def _wait(signal, offsets, expected, *, cmp):
    """Block this rank until its own cell `signal[offsets]` compares to `expected`
    (`cmp=pld.WaitCmp.Ge`: `>=`, `pld.WaitCmp.Eq`: `==`); the other ranks go on."""
    t = _signal_window(signal, "signal")
    offsets_arg(offsets, t, "offsets")
    int_scalar_arg(expected, "expected")
    enum_arg(cmp, WaitCmp, "cmp")
    return NONE


defop("pld.system.wait", unit=Unit.SCALAR, role=Role.COMM, wants_ctx=True,
      impl=lambda signal, offsets, expected, cmp, *, ctx:
      comm(ctx).wait(ctx, signal, offsets, expected, cmp),
      names=("pld.system.wait",))(_wait)


def _defer_wait(signal, offsets, expected, *, cmp):
    """Register a completion condition on this rank's own cell: the enclosing task may
    finish running, but its TaskId completes only once `signal[offsets] >= expected`
    (work that needs the data goes in a task depending on it). Only `WaitCmp.Ge`."""
    t = _signal_window(signal, "signal")
    offsets_arg(offsets, t, "offsets")
    int_scalar_arg(expected, "expected")
    if enum_arg(cmp, WaitCmp, "cmp") is not WaitCmp.Ge:
        raise OpError("supports only cmp=pld.WaitCmp.Ge (a monotonic counter)",
                      arg="cmp")
    return NONE


defop("pld.system.defer_wait", unit=Unit.SCALAR, role=Role.COMM, wants_ctx=True,
      impl=lambda signal, offsets, expected, cmp, *, ctx:
      comm(ctx).defer_wait(ctx, signal, offsets, expected, cmp),
      names=("pld.system.defer_wait",))(_defer_wait)

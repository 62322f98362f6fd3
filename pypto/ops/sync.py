"""`pl.system`'s synchronisation names: intra-core pipe flags and barriers, the GM fence
and cache invalidation, and the explicit cross-core events between a core group's
cube (AIC) and vector (AIV) sides.

What they mean in the simulator, which runs each core's ops in program order:

* `sync_src` / `sync_dst` (set_flag / wait_flag between two pipes of one core) order
  pipes that program order already orders, so a wait is satisfied by an earlier set of
  the same (set_pipe, wait_pipe, event_id) - and a wait with no such set is the hang it
  would be on hardware, reported as a fault at the wait.
* `bar_v` / `bar_m` / `bar_all` (pipe barriers) and `fence` (GM memory barrier) have
  nothing left to order: the simulator's pipes and GM are already in program order.
* `cacheinvalid` and `set_ffts` change no value the kernel can read (their arguments are
  checked as the real toolchain checks them).
* `sync_set` / `sync_wait` (cross-core events) signal and consume an event of the core
  group: a wait needs a signal before it (a deadlock fault otherwise), and an
  `ffts_mode=2` signal raised inside a `pl.split_aiv` region needs both AIV lanes.
  The bookkeeping lives with the running core (`ctx.sync`, `pypto.sim.machine.sync`).
"""
from __future__ import annotations

from enum import Enum
from typing import Any

from pypto.ir import dtypes
from pypto.ir.types import NONE, ScalarType, TensorType
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import dims_arg, is_static, py_value, type_of

PIPES = ("MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX", "ALL")
MAX_USER_EVENT = 13  # cross-core event ids 14 and 15 are reserved
FFTS_WORKSPACE_MIN = 256  # INT64 elements of the FFTS setup operand


def pipe_arg(x: Any, arg: str) -> str:
    v = py_value(x)
    if isinstance(v, Enum) and v.name in PIPES:
        return v.name
    raise OpError(f"'{arg}' must be a pl.PipeType (MTE1, MTE2, MTE3, M, V, S, FIX, ALL), got "
                  f"{v!r}", arg=arg)


def _flag_rule(set_pipe, wait_pipe, event_id):
    pipe_arg(set_pipe, "set_pipe")
    pipe_arg(wait_pipe, "wait_pipe")
    v = py_value(event_id)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise OpError(f"'event_id' must be a non-negative compile-time integer, got {v!r}",
                      arg="event_id")
    return NONE


def _sync_src(*, set_pipe, wait_pipe, event_id):
    """Set flag `event_id` from `set_pipe` for `wait_pipe` of the same core."""
    return _flag_rule(set_pipe, wait_pipe, event_id)


def _sync_dst(*, set_pipe, wait_pipe, event_id):
    """Wait on `wait_pipe` for flag `event_id` set by `set_pipe` of the same core."""
    return _flag_rule(set_pipe, wait_pipe, event_id)


defop("system.sync_src", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=lambda set_pipe, wait_pipe, event_id, *, ctx:
      ctx.sync.set_flag((set_pipe.name, wait_pipe.name, int(event_id))),
      names=("pl.system.sync_src",))(_sync_src)
defop("system.sync_dst", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=lambda set_pipe, wait_pipe, event_id, *, ctx:
      ctx.sync.wait_flag((set_pipe.name, wait_pipe.name, int(event_id)), ctx),
      names=("pl.system.sync_dst",))(_sync_dst)


for _name, _what in (("bar_v", "Barrier of the vector pipe."),
                     ("bar_m", "Barrier of the matrix (cube) pipe."),
                     ("bar_all", "Barrier of every pipe of the core."),
                     ("fence", "GM memory barrier: earlier GM writes are visible to later "
                               "reads by other cores.")):
    def _rule():
        return NONE
    _rule.__doc__ = _what + " Nothing to order in the simulator's program-order execution."
    defop(f"system.{_name}", unit=Unit.SCALAR, incore_only=True, impl=lambda: None,
          names=(f"pl.system.{_name}",))(_rule)


def _cacheinvalid(tensor=None, shapes=None, offsets=None):
    """Invalidate the whole GM address space (no arguments) or the cache line holding the
    base of the view `tensor[offsets : offsets + shapes]`. No value changes."""
    if tensor is None:
        if shapes is not None or offsets is not None:
            raise OpError("the whole-GM form takes no shapes/offsets; pass (tensor, shapes, "
                          "offsets) for the region form", arg="shapes")
        return NONE
    t = type_of(tensor)
    if not isinstance(t, TensorType):
        raise OpError(f"'tensor' must be a GM tensor, got {t}", arg="tensor")
    if shapes is None or offsets is None:
        raise OpError("the region form needs both shapes and offsets (or no arguments for "
                      "the whole-GM form)", arg="tensor")
    for name, value in (("shapes", shapes), ("offsets", offsets)):
        if len(dims_arg(value, name)) != t.rank:
            raise OpError(f"'{name}' must have one entry per axis of the rank-{t.rank} tensor",
                          arg=name)
    return NONE


defop("system.cacheinvalid", unit=Unit.SCALAR, incore_only=True,
      impl=lambda tensor=None, shapes=None, offsets=None: None,
      names=("pl.system.cacheinvalid",))(_cacheinvalid)


def _set_ffts(workspace):
    """Declare the A3 FFTS setup operand of explicit cross-core events (a 1-D INT64 GM
    tensor of at least 256 elements)."""
    t = type_of(workspace)
    if not isinstance(t, TensorType):
        raise OpError(f"the FFTS workspace must be a GM tensor, got {t}", arg="workspace")
    if t.dtype != dtypes.INT64:
        raise OpError(f"the FFTS workspace must have INT64 dtype, got {t.dtype!r}",
                      arg="workspace")
    if t.rank != 1:
        raise OpError(f"the FFTS workspace must be 1-D, got rank {t.rank}", arg="workspace")
    n = t.shape[0]
    if not isinstance(n, int) or n < FFTS_WORKSPACE_MIN:
        raise OpError(f"the FFTS workspace must have a static length of at least "
                      f"{FFTS_WORKSPACE_MIN} INT64 elements, got {n}", arg="workspace")
    return NONE


defop("system.set_ffts", unit=Unit.SCALAR, incore_only=True, impl=lambda workspace: None,
      names=("pl.system.set_ffts",))(_set_ffts)


def _event_rule(event_id, pipe, core_type, ffts_mode=None):
    v = py_value(event_id)
    t = type_of(event_id)
    if not is_static(event_id) and isinstance(t, ScalarType):
        if t.dtype != dtypes.INDEX:
            raise OpError(f"a run-time event id must be a pl.Scalar[pl.INDEX], got {t}",
                          arg="event_id")
    elif isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_USER_EVENT:
        raise OpError(f"event_id must be in the user range [0, {MAX_USER_EVENT}] (14 and 15 "
                      f"are reserved), got {v!r}", arg="event_id")
    pipe_arg(pipe, "pipe")
    m = py_value(ffts_mode)
    if m is not None and (isinstance(m, bool) or m not in (0, 1, 2)):
        raise OpError(f"ffts_mode must be 0, 1 or 2, got {m!r}", arg="ffts_mode")
    c = py_value(core_type)
    if c is not None and c not in ("aic", "aiv"):
        raise OpError(f"core_type must be 'aic' or 'aiv', got {c!r}", arg="core_type")
    return NONE


def _sync_set(event_id, *, pipe, ffts_mode=None, core_type=None):
    """Signal cross-core event `event_id` (0..13, or a run-time INDEX) of the core group
    from `pipe`; `ffts_mode=2` from the vector side is a reduction over both AIV lanes."""
    return _event_rule(event_id, pipe, core_type, ffts_mode)


def _sync_wait(event_id, *, pipe, core_type=None):
    """Wait on `pipe` for cross-core event `event_id` raised by the other side."""
    return _event_rule(event_id, pipe, core_type)


defop("system.sync_set", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=lambda event_id, pipe, ffts_mode=None, core_type=None, *, ctx:
      ctx.sync.set_event(int(event_id), ffts_mode, ctx),
      names=("pl.system.sync_set",))(_sync_set)
defop("system.sync_wait", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=lambda event_id, pipe, core_type=None, *, ctx:
      ctx.sync.wait_event(int(event_id), ctx),
      names=("pl.system.sync_wait",))(_sync_wait)

"""Collectives over window-bound tensors, each a composition of the primitives with
the real toolchain's self-clearing credit barrier on an INT32 `signal` window:

    barrier(g): notify(+1) every peer's cell for me; wait until my cell for every peer
                is >= g (g counts the barriers of this call, from 1)
    epilogue:   subtract the call's N credits from my cell of every peer (AtomicAdd -N)

so the signal is all zero again once every rank has finished the call, and the same
signal can serve the next call (also inside loops). Each returns its window, rebound.
"""
from __future__ import annotations

from pypto.ir.distributed import DistributedTensorType, ReduceOp
from pypto.ir.types import TensorType
from pypto.ops.distributed.rules import enum_arg, static_int, window_arg
from pypto.ops.distributed.runtime import comm
from pypto.ops.facts import Role
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import _describe, py_value, type_of

_FLOAT_REDUCE = ("FP32", "FP16", "BF16")


def _signal(signal):
    t = window_arg(signal, "signal")
    if not t.dtype.is_int():
        raise OpError(f"the signal window must hold INT32 counters, got {t.dtype!r}",
                      arg="signal")
    if t.rank not in (1, 2):
        raise OpError(f"the signal window has one cell per rank, [nranks] or "
                      f"[nranks, k]; got {t}", arg="signal")
    return t


def _given(x) -> bool:
    return x is not None and py_value(x) is not None


def _allreduce(target, signal=None, *, op=ReduceOp.Sum, mode="mesh", core_num=1):
    """Every rank's `target` becomes the element-wise reduction (`op`) of all ranks'.
    In host code the signal may be omitted (mesh mode): the run gives the call a
    private one."""
    t = window_arg(target, "target")
    if t.dtype.name not in _FLOAT_REDUCE and not t.dtype.is_int():
        raise OpError(f"cannot reduce {t.dtype!r} data", arg="target")
    enum_arg(op, ReduceOp, "op")
    m = py_value(mode)
    if m not in ("mesh", "ring"):
        raise OpError(f"mode must be \"mesh\" or \"ring\", got {m!r}", arg="mode")
    n = static_int(core_num, "core_num", minimum=1)
    if _given(signal):
        _signal(signal)
    elif m != "mesh":
        raise OpError("mode=\"ring\" needs an explicit signal window", arg="mode")
    if m == "ring" and n != 1:
        raise OpError("mode=\"ring\" runs on one core (core_num=1)", arg="core_num")
    return t


defop("pld.tensor.allreduce", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="target",
      signal_param="signal",
      impl=lambda target, signal=None, op=ReduceOp.Sum, mode="mesh", core_num=1, *, ctx:
      comm(ctx).allreduce(ctx, target, signal, op, mode, core_num),
      names=("pld.tensor.allreduce",))(_allreduce)


def _barrier(signal):
    """Every rank waits here until all ranks of the group have arrived."""
    return _signal(signal)


defop("pld.tensor.barrier", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="signal",
      impl=lambda signal, *, ctx: comm(ctx).barrier(ctx, signal),
      names=("pld.tensor.barrier",))(_barrier)


def _broadcast(target, signal, *, root):
    """Every rank's `target` becomes rank `root`'s (root stages its data first)."""
    t = window_arg(target, "target")
    _signal(signal)
    static_int(root, "root")
    return t


defop("pld.tensor.broadcast", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="target",
      impl=lambda target, signal, root, *, ctx: comm(ctx).broadcast(ctx, target, signal, root),
      names=("pld.tensor.broadcast",))(_broadcast)


def _local_input(x, arg: str, target, window: DistributedTensorType) -> None:
    t = type_of(x)
    if not isinstance(t, TensorType):
        raise OpError(f"'{arg}' must be a tensor (a window or a plain pl.Tensor), got "
                      f"{_describe(x)}", arg=arg)
    if t.dtype != window.dtype:
        raise OpError(f"'{arg}' has dtype {t.dtype!r}, the target {window.dtype!r}", arg=arg)
    if x is target or (getattr(x, "name", None) is not None and
                       getattr(x, "name", None) == getattr(target, "name", "")):
        raise OpError(f"'{arg}' must be a different buffer from 'target'", arg=arg)


def _allgather(local_data, target, signal):
    """Row `r` of every rank's `target` becomes rank `r`'s `local_data` ([1, SIZE])."""
    t = window_arg(target, "target")
    _signal(signal)
    _local_input(local_data, "local_data", target, t)
    return t


defop("pld.tensor.allgather", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="target",
      impl=lambda local_data, target, signal, *, ctx:
      comm(ctx).allgather(ctx, local_data, target, signal),
      names=("pld.tensor.allgather",))(_allgather)


def _reduce_scatter(target, signal, *, op=ReduceOp.Sum):
    """Each rank stages all `nranks` chunks (rows); afterwards row `r` of rank `r`'s
    `target` holds the reduction of row `r` over all ranks."""
    t = window_arg(target, "target")
    _signal(signal)
    enum_arg(op, ReduceOp, "op")
    return t


defop("pld.tensor.reduce_scatter", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="target",
      impl=lambda target, signal, op=ReduceOp.Sum, *, ctx:
      comm(ctx).reduce_scatter(ctx, target, signal, op),
      names=("pld.tensor.reduce_scatter",))(_reduce_scatter)


def _all_to_all(input, target, signal):
    """Row `d` of my `input` lands in row `me` of rank `d`'s `target` ([NR, SIZE])."""
    t = window_arg(target, "target")
    _signal(signal)
    _local_input(input, "input", target, t)
    return t


defop("pld.tensor.all_to_all", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="target",
      impl=lambda input, target, signal, *, ctx: comm(ctx).all_to_all(ctx, input, target, signal),
      names=("pld.tensor.all_to_all",))(_all_to_all)


def _all_to_all_v(input, target, signal, send_counts, recv_counts):
    """Variable-size all-to-all: rank `me` pushes its block of `target.shape[0] // NR`
    rows for rank `d` (rows `d*MAX ...` of `input`) into rows `me*MAX ...` of `d`'s
    `target`, and publishes `min(send_counts[d], MAX)` in `d`'s `recv_counts[me, 0]`."""
    t = window_arg(target, "target")
    _signal(signal)
    _local_input(input, "input", target, t)
    rc = window_arg(recv_counts, "recv_counts")
    sc = type_of(send_counts)
    if not isinstance(sc, TensorType) or not sc.dtype.is_int():
        raise OpError(f"'send_counts' must be an INT32 tensor, got "
                      f"{_describe(send_counts)}", arg="send_counts")
    if not rc.dtype.is_int():
        raise OpError(f"'recv_counts' must hold INT32 counts, got {rc.dtype!r}",
                      arg="recv_counts")
    return t


defop("pld.tensor.all_to_all_v", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="target",
      impl=lambda input, target, signal, send_counts, recv_counts, *, ctx:
      comm(ctx).all_to_all_v(ctx, input, target, signal, send_counts, recv_counts),
      names=("pld.tensor.all_to_all_v",))(_all_to_all_v)

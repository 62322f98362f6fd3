"""Window buffers, their per-rank views and the communication context.

`alloc_window_buffer` and `window` are host-side (control plane) ops: the host
allocates one symmetric buffer per rank and hands each rank a view of its own slice.
`get_comm_ctx` / `rank` / `nranks` read, inside a kernel, which rank runs it.
"""
from __future__ import annotations

from pypto.ir import dtypes
from pypto.ir.distributed import COMM_CTX, WINDOW_BUFFER, DistributedTensorType
from pypto.ir.nodes import ListExpr
from pypto.ir.types import ScalarType
from pypto.ops.distributed.rules import buffer_arg, ctx_arg, window_arg
from pypto.ops.distributed.runtime import comm
from pypto.ops.facts import Role
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import _describe, dims_arg, dtype_arg, py_value

_I64 = ScalarType(dtypes.INT64)
_I32 = ScalarType(dtypes.INT32)


def _alloc_window_buffer(size, *, dtype=None, name=""):
    """One symmetric allocation per rank: `size` bytes, or `[shape]` with `dtype=`.

    Must be the right-hand side of a simple assignment in a `@pl.jit.host` function:
    the buffer is named after the variable. Its view on each rank is made with
    `pld.window(buf, shape, dtype=...)`; every rank's window starts zeroed.
    """
    op = "pld.alloc_window_buffer"
    if not py_value(name):
        raise OpError("must be the right-hand side of a simple assignment "
                      "(`buf = pld.alloc_window_buffer(...)`): the buffer is named after "
                      "the variable", arg="name")
    if isinstance(size, (ListExpr, list, tuple)):
        if dtype is None or py_value(dtype) is None:
            raise OpError("a shape needs dtype= (the bytes are shape x dtype)",
                          arg="dtype", hint=f"{op}([rows, cols], dtype=pl.FP32)")
        dtype_arg(dtype, "dtype")
        dims = dims_arg(size, "size")
        if not dims:
            raise OpError("the shape must not be empty", arg="size")
        for i, d in enumerate(dims):
            if isinstance(d, int) and d <= 0:
                raise OpError(f"shape dimension [{i}] is {d}; every dimension must be "
                              "positive", arg="size")
        return WINDOW_BUFFER
    if dtype is not None and py_value(dtype) is not None:
        raise OpError("dtype= goes with a shape, not with a byte count", arg="dtype",
                      hint=f"{op}(nbytes) or {op}([rows, cols], dtype=...)")
    v = py_value(size)
    if isinstance(v, int) and not isinstance(v, bool):
        if v <= 0:
            raise OpError(f"the size must be a positive number of bytes, got {v}",
                          arg="size")
        return WINDOW_BUFFER
    t = getattr(size, "type", None)
    if not (isinstance(t, ScalarType) and t.dtype.is_int()):
        raise OpError(f"size must be a byte count or a shape list, got {_describe(size)}",
                      arg="size")
    return WINDOW_BUFFER


defop("pld.tensor.alloc_window_buffer", unit=Unit.ORCH, role=Role.COMM, orch_only=True,
      wants_ctx=True, host_only=True,
      impl=lambda size, dtype=None, name="", *, ctx: comm(ctx).alloc_window(ctx, size, dtype, name),
      names=("pld.tensor.alloc_window_buffer",))(_alloc_window_buffer)


def _window(buf, shape, *, dtype):
    """This rank's slice of a window buffer, viewed as a `pld.DistributedTensor`."""
    buffer_arg(buf, "buf")
    dims = dims_arg(shape, "shape")
    for i, d in enumerate(dims):
        if isinstance(d, int) and d <= 0:
            raise OpError(f"shape dimension [{i}] is {d}; every dimension must be "
                          "positive", arg="shape")
    return DistributedTensorType(dims, dtype_arg(dtype, "dtype"))


defop("pld.tensor.window", unit=Unit.ORCH, role=Role.COMM, orch_only=True, wants_ctx=True,
      host_only=True,
      impl=lambda buf, shape, dtype, *, ctx: comm(ctx).window(ctx, buf, shape, dtype),
      names=("pld.tensor.window", "pld.window"))(_window)


def _world_size():
    """The number of ranks of the run (`len(DistributedConfig.device_ids)`); host only."""
    return _I64


defop("pld.system.world_size", unit=Unit.ORCH, role=Role.COMM, orch_only=True, wants_ctx=True,
      host_only=True,
      impl=lambda *, ctx: comm(ctx).world_size(ctx),
      names=("pld.system.world_size", "pld.world_size"))(_world_size)


def _get_comm_ctx(dist_tensor):
    """The communication context of a window-bound tensor (read rank / nranks from it)."""
    window_arg(dist_tensor, "dist_tensor")
    return COMM_CTX


defop("pld.system.get_comm_ctx", unit=Unit.SCALAR, role=Role.COMM, wants_ctx=True,
      impl=lambda dist_tensor, *, ctx: comm(ctx).comm_ctx(ctx, dist_tensor),
      names=("pld.system.get_comm_ctx", "pld.get_comm_ctx"))(_get_comm_ctx)


def _rank(ctx):
    """This rank's index in its communication group (INT32)."""
    ctx_arg(ctx, "ctx")
    return _I32


defop("pld.system.rank", unit=Unit.SCALAR, impl=lambda ctx: ctx.rank,
      names=("pld.system.rank", "pld.rank"))(_rank)


def _nranks(ctx):
    """The number of ranks of the communication group (INT32)."""
    ctx_arg(ctx, "ctx")
    return _I32


defop("pld.system.nranks", unit=Unit.SCALAR, impl=lambda ctx: ctx.nranks,
      names=("pld.system.nranks", "pld.nranks"))(_nranks)

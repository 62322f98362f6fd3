"""Multi-card types and the communication enums (`pypto.language.distributed`, `pld`).

A *window buffer* is one symmetric allocation per rank: every rank owns the same
number of bytes at the same place in its own communication window, so a peer can
address "my slice of buffer B" on any other rank. `pld.alloc_window_buffer` makes the
handle (`WindowBufferType`), `pld.window` views this rank's slice as a tensor
(`DistributedTensorType`), and the cross-rank ops name a peer and reach into the same
view on that peer.

The enums are the ABI payloads of the cross-rank ops; their integer values are the
real toolchain's and may only grow at the end.
"""
from __future__ import annotations

from enum import IntEnum

from pypto.ir.record import record
from pypto.ir.types import TensorType, Type, _dims_str


@record
class DistributedTensorType(TensorType):
    """A tensor bound to this rank's slice of a window buffer (`pld.DistributedTensor`).

    Everything a `pl.Tensor` does works on it (loads, stores and slices act on the local
    slice); only a window-bound tensor may be the peer side of a cross-rank op.
    """

    def __str__(self) -> str:
        return f"pld.DistributedTensor[{_dims_str(self.shape)}, {self.dtype!r}]"


@record
class WindowBufferType(Type):
    """The handle `pld.alloc_window_buffer` returns: a symmetric allocation, viewed by
    `pld.window`. It has no shape or dtype of its own (the real toolchain types it as a
    plain pointer, `pl.Ptr`; here it prints as the annotation `pld.WindowBuffer`)."""

    def __str__(self) -> str:
        return "pld.WindowBuffer"


@record
class CommCtxType(Type):
    """The communication context of a window-bound tensor (`pld.get_comm_ctx`): this
    rank's index and the number of ranks of its group."""

    def __str__(self) -> str:
        return "pld.CommCtx"


WINDOW_BUFFER = WindowBufferType()
COMM_CTX = CommCtxType()


class NotifyOp(IntEnum):
    """How `pld.system.notify` deposits its value in the peer's signal cell."""

    AtomicAdd = 0  # add atomically: a credit counter (commutes with other adds)
    Set = 1  # plain store: never mix with AtomicAdd on the same cell


class WaitCmp(IntEnum):
    """The predicate `pld.system.wait` blocks on: `cell == expected` or `cell >= expected`."""

    Eq = 0
    Ge = 1


class ReduceOp(IntEnum):
    """The element-wise reduction of `pld.tensor.allreduce` / `reduce_scatter`."""

    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


def is_window(t: object) -> bool:
    """True for a window-bound tensor type."""
    return isinstance(t, DistributedTensorType)


__all__ = [
    "COMM_CTX",
    "WINDOW_BUFFER",
    "CommCtxType",
    "DistributedTensorType",
    "NotifyOp",
    "ReduceOp",
    "WaitCmp",
    "WindowBufferType",
    "is_window",
]

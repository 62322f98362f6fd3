"""Annotations of the `pld` namespace: `pld.DistributedTensor[[...], dtype]` for a
window-bound tensor parameter, and `pld.CommCtx` for a communication-context value."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.language.typing import Tensor, TensorAnnotation


@dataclass(frozen=True)
class DistributedTensorAnnotation(TensorAnnotation):
    """`pld.DistributedTensor[[d0, d1, ...], dtype]` (same forms as `pl.Tensor`)."""

    window = True


class _DistributedTensorMeta(type):
    def __getitem__(cls, key: Any) -> DistributedTensorAnnotation:
        items = key if isinstance(key, tuple) else (key,)
        # Printed IR may append a "window_buffer=<name>" note; it carries no meaning.
        if items and isinstance(items[-1], str) and items[-1].startswith("window_buffer="):
            items = items[:-1]
        if len(items) < 2:
            raise TypeError("pld.DistributedTensor needs [shape, dtype]")
        if not isinstance(items[0], (list, tuple)):
            raise TypeError("pld.DistributedTensor's shape must be a list such as [M, N]")
        # the same subscript forms as pl.Tensor (layout, view)
        ann = type(Tensor).__getitem__(Tensor, items)
        return DistributedTensorAnnotation(ann.shape, ann.dtype, ann.layout, ann.view)


class DistributedTensor(metaclass=_DistributedTensorMeta):
    """`pld.DistributedTensor[[d0, d1, ...], dtype]`: this rank's slice of a window buffer.

    Loads, stores and slices act on the local slice exactly as for a `pl.Tensor`; the
    cross-rank ops (`pld.tile.remote_load`, `pld.system.notify`, ...) reach the same
    slice on a peer.
    """

    def __init__(self, *_: Any, **__: Any):
        raise TypeError("pld.DistributedTensor is an annotation; window tensors are made in "
                        "the @pl.jit.host function with pld.window(buf, shape, dtype=...)")


class WindowBuffer:
    """`buf: pld.WindowBuffer = pld.alloc_window_buffer(...)`: the handle of a window
    buffer (what `pld.window` views)."""

    def __init__(self, *_: Any, **__: Any):
        raise TypeError("pld.WindowBuffer is an annotation; allocate a window buffer with "
                        "buf = pld.alloc_window_buffer(...) in the @pl.jit.host function")


class CommCtx:
    """`ctx: pld.CommCtx = pld.get_comm_ctx(window)`: read `pld.rank(ctx)`,
    `pld.nranks(ctx)` from it."""

    def __init__(self, *_: Any, **__: Any):
        raise TypeError("pld.CommCtx is an annotation; get a context with "
                        "pld.get_comm_ctx(window_tensor)")

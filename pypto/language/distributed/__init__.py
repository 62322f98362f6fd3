"""`import pypto.language.distributed as pld` — multi-card kernels on symmetric memory.

A `@pl.jit.host` function allocates window buffers (one symmetric allocation per
rank) and dispatches a per-device `@pl.jit` function on every rank::

    @pl.jit.host
    def run(x: pl.Tensor[[2, 1, 256], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, 256], pl.FP32]]):
        data_buf = pld.alloc_window_buffer([1, 256], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [1, 256], dtype=pl.FP32)
            chip(x[r], y[r], data, r, device=r)

Kernels exchange data with one-sided transfers (`pld.tile.remote_load`,
`pld.tile.remote_store`, `pld.tensor.put` / `get` and their tile forms through
explicit staging tiles, `pld.tile.put` / `get`) and synchronise with signals
(`pld.system.notify` / `wait`); the collectives (`pld.tensor.allreduce`, ...) are
compositions of both. Ops come in `pld.system.*`, `pld.tensor.*` and `pld.tile.*`,
the common ones also as the short form `pld.<op>`.
"""
from __future__ import annotations

import types as _types

from pypto.ir.distributed import CommCtxType, NotifyOp, ReduceOp, WaitCmp
from pypto.language.distributed.typing import CommCtx, DistributedTensor, WindowBuffer
from pypto.language.dsl import Construct as _Construct
from pypto.language.enums import AtomicType
from pypto.language.ops import build_namespaces as _build_namespaces

# `buf = pld.alloc_window_buffer(...)` is a construct: the parser names the buffer after
# the variable it is assigned to (pypto.frontend.distributed).
alloc_window_buffer = _Construct(
    "pld.alloc_window_buffer",
    "`buf = pld.alloc_window_buffer(nbytes)` or `(shape, dtype=...)`: one symmetric window "
    "allocation per rank, named after the variable; host (@pl.jit.host) code only.",
    "(size, *, dtype=None, name='')")


def _namespace(name: str, stubs: dict) -> _types.SimpleNamespace:
    ns = _types.SimpleNamespace(**stubs)
    ns.__name__ = name
    return ns


_spaces = _build_namespaces()
system = _namespace("pld.system", _spaces.get("pld.system", {}))
tensor = _namespace("pld.tensor", _spaces.get("pld.tensor", {}))
tile = _namespace("pld.tile", _spaces.get("pld.tile", {}))
tensor.alloc_window_buffer = alloc_window_buffer
globals().update(_spaces.get("pld", {}))

# the short forms (`pld.window`, ...) come from the registry above; the test of the pld
# surface checks this list against it
__all__ = ["AtomicType", "CommCtx", "CommCtxType", "DistributedTensor", "NotifyOp", "ReduceOp",
           "WaitCmp", "WindowBuffer",
           "alloc_window_buffer", "get_comm_ctx", "nranks", "rank", "remote_load",
           "remote_store", "system", "tensor", "tile", "window", "world_size"]

"""The simulated device memory of one run: global buffers, views of them, fresh memory.

* Every tensor in global memory (an uploaded parameter, an `Out` buffer, a
  `pl.create_tensor` result, a value a task returns to orchestration) is one
  `GlobalBuffer` owning a C-contiguous numpy array in the declared dtype.
* Views (orchestration slices) are numpy views of that array; `locate` maps any view
  back to its buffer and the origin of the window, so accesses can be checked,
  recorded in the trace and blamed.
* Fresh memory is residue (or zeros under `SimConfig(uninit="zero")`), each allocation
  with its own seed. The fill of a fresh `pl.Out` buffer may be deferred (`pending`):
  a batched launch that overwrites it then fills only what it did not write
  (`pypto.sim.batch.fills`); anything else flushes it first.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.sim.device.fill import fill_residue, has_nan, residue
from pypto.sim.device.views import origin_of, root_of


class GlobalBuffer:
    """One allocation in simulated global memory."""

    __slots__ = ("array", "direction", "host", "kind", "name", "uid", "writer")

    def __init__(self, name: str, array: np.ndarray, direction: str | None,
                 host: np.ndarray | None, uid: int, kind: str):
        self.name = name
        self.array = array
        self.direction = direction  # "In" / "Out" / "InOut" for parameters, else None
        self.host = host  # the caller's array when the device holds a copy of it
        self.uid = uid
        self.kind = kind  # "param", "tensor" (create_tensor), "result" (returned by a task)
        # Per element: the id of the write event that wrote it last (0: none). Allocated on
        # the first traced write (np.zeros maps lazily-zeroed pages: cheap).
        self.writer: np.ndarray | None = None

    def track_writers(self) -> np.ndarray:
        if self.writer is None:
            self.writer = np.zeros(self.array.shape, dtype=np.int32)
        return self.writer

    def __repr__(self) -> str:
        return f"<GlobalBuffer {self.name} {list(self.array.shape)} {self.array.dtype}>"


class PendingFill:
    """A deferred fill of a fresh buffer: residue from `seed`, or zeros (seed None)."""

    __slots__ = ("array", "seed")

    def __init__(self, array: np.ndarray, seed: int | None):
        self.array = array
        self.seed = seed


class DeviceMemory:
    """The global buffers of one run and the fresh memory it allocates."""

    def __init__(self, seed: int, zero_fresh: bool):
        self.buffers: dict[int, GlobalBuffer] = {}  # id(root array) -> buffer
        self.buffer_list: list[GlobalBuffer] = []
        self.pending: list[PendingFill] = []
        self._located: dict[int, tuple] = {}  # id(view) -> (view, buffer, origin)
        self._seed = seed * 7919
        self._zero_fresh = zero_fresh

    # -- buffers -------------------------------------------------------------------------

    def register(self, name: str, array: np.ndarray, direction: str | None,
                 host: np.ndarray | None, kind: str) -> GlobalBuffer:
        buf = GlobalBuffer(name, array, direction, host, len(self.buffer_list), kind)
        self.buffers[id(root_of(array))] = buf
        self.buffer_list.append(buf)
        self._located.clear()  # (a view located before it was a buffer's is one now)
        return buf

    def locate(self, a: Any) -> tuple[GlobalBuffer | None, tuple | None]:
        """(buffer, origin) of an array that is (a window of) a global tensor, else
        (None, None); the origin is None for a view that is not a window (a reshape)."""
        c = self._located.get(id(a))
        if c is not None and c[0] is a:
            return c[1], c[2]
        if not isinstance(a, np.ndarray):
            return None, None
        buf = self.buffers.get(id(root_of(a)))
        origin = None
        if buf is not None:
            base = buf.array
            origin = (0,) * a.ndim if a is base or (a.shape == base.shape and
                                                    a.ctypes.data == base.ctypes.data) \
                else origin_of(a, base)
        self._located[id(a)] = (a, buf, origin)
        return buf, origin

    def forget_views(self) -> None:
        """Drop the views `locate` remembers (after a top-level task: they die with it)."""
        self._located.clear()

    def owns_root(self, a: np.ndarray) -> bool:
        return id(root_of(a)) in self.buffers

    # -- fresh memory ----------------------------------------------------------------------

    def _next_seed(self) -> int:
        self._seed += 1
        return self._seed

    def new_residue(self, shape: Any, dtype: Any) -> np.ndarray:
        return residue(shape, dtype, self._next_seed())

    def new_fresh(self, shape: Any, dtype: Any) -> np.ndarray:
        """Fresh device memory: residue, or zeros (`SimConfig.uninit`)."""
        if self._zero_fresh:
            return np.zeros(shape, dtype=dtype)
        return self.new_residue(shape, dtype)

    def fill_fresh(self, a: np.ndarray, defer: bool = False) -> None:
        """Fill a fresh pl.Out buffer used in place: residue, or zeros; `defer` keeps the
        fill pending (a batched launch mentions the buffer first)."""
        seed = None if self._zero_fresh else self._next_seed()
        if defer:
            self.pending.append(PendingFill(a, seed))
        elif seed is None:
            a.fill(0)
        else:
            fill_residue(a, seed)

    def flush_pending(self, arrays: list[np.ndarray] | None = None) -> None:
        """Do the deferred fills (of `arrays` only, when given)."""
        keep = []
        for item in self.pending:
            a = item.array
            if arrays is not None and not any(a is x for x in arrays):
                keep.append(item)
            elif item.seed is None:
                a.fill(0)
            else:
                fill_residue(a, item.seed)
        self.pending = keep

    def fill_unwritten(self, item: PendingFill, written: np.ndarray) -> None:
        """The deferred fill `item`, only where the boolean mask `written` is False."""
        a = item.array
        self.pending = [p for p in self.pending if p is not item]
        if item.seed is None:
            np.copyto(a, 0, where=~written)
        elif has_nan(a.dtype):
            np.copyto(a, np.nan, where=~written)
        else:
            np.copyto(a, residue(a.shape, a.dtype, item.seed), where=~written)


__all__ = ["DeviceMemory", "GlobalBuffer", "PendingFill"]

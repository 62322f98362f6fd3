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
* A buffer orchestration makes per iteration (a tile a task returns, a
  `pl.create_tensor` in a loop body) lives as long as its array: the memory holds such
  an array weakly and forgets the buffer, its last-writer table and the trace's index
  of it when orchestration drops the array. The first buffer of each name is kept to
  the end of the run (the trace's writer table and `SimResult.device` show that one).
"""
from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from pypto.sim.device.fill import fill_residue, has_nan, residue
from pypto.sim.device.views import origin_of, root_of
from pypto.sim.trace.writers import WriteLog


class GlobalBuffer:
    """One allocation in simulated global memory."""

    __slots__ = ("_array", "_ref", "direction", "host", "kind", "name", "uid", "writes")

    def __init__(self, name: str, array: np.ndarray, direction: str | None,
                 host: np.ndarray | None, uid: int, kind: str):
        self.name = name
        self._array: np.ndarray | None = array
        self._ref: weakref.ref | None = None  # instead of _array, for a weakly held one
        self.direction = direction  # "In" / "Out" / "InOut" for parameters, else None
        self.host = host  # the caller's array when the device holds a copy of it
        self.uid = uid
        self.kind = kind  # "param", "tensor" (create_tensor), "result" (returned by a task)
        # traced runs: its writes, made into its last-writer table when read (`writer`);
        # made at the first traced write
        self.writes: WriteLog | None = None

    @property
    def array(self) -> np.ndarray:
        a = self._array if self._ref is None else self._ref()
        assert a is not None, "a released buffer is not registered"
        return a

    @property
    def writer(self) -> np.ndarray | None:
        """Per element: the id of the write event that wrote it last (0: none); None when
        no traced write touched the buffer."""
        return self.writes.table() if self.writes is not None else None

    def __repr__(self) -> str:
        return f"<GlobalBuffer {self.name} {list(self.array.shape)} {self.array.dtype}>"


def _releaser(memory: weakref.ref, key: int, uid: int) -> Callable:
    """The callback of a weakly held array: forget its buffer (if the memory still lives)."""
    def release(_: Any) -> None:
        mem = memory()
        if mem is not None:
            mem._release(key, uid)
    return release


class PendingFill:
    """A deferred fill of a fresh buffer: residue from `seed`, or zeros (seed None)."""

    __slots__ = ("array", "seed")

    def __init__(self, array: np.ndarray, seed: int | None):
        self.array = array
        self.seed = seed


class DeviceMemory:
    """The global buffers of one run and the fresh memory it allocates."""

    # (slotted: one is made per call, and its attributes are read on every access)
    __slots__ = ("__weakref__", "_by_uid", "_located", "_names", "_seed", "_uids",
                 "_zero_fresh", "buffers", "on_release", "pending")

    def __init__(self, seed: int, zero_fresh: bool):
        self.buffers: dict[int, GlobalBuffer] = {}  # id(root array) -> live buffer
        self._by_uid: dict[int, GlobalBuffer] = {}  # uid -> live buffer, in registration order
        self._uids = 0
        self._names: set[str] = set()
        # called with a buffer whose array died (the trace drops its index)
        self.on_release: Callable[[GlobalBuffer], None] | None = None
        self.pending: list[PendingFill] = []
        self._located: dict[int, tuple] = {}  # id(view) -> (view, buffer, origin)
        self._seed = seed * 7919
        self._zero_fresh = zero_fresh

    # -- buffers -------------------------------------------------------------------------

    @property
    def buffer_list(self) -> list[GlobalBuffer]:
        """The live buffers, in registration order."""
        return list(self._by_uid.values())

    def buffers_in_order(self) -> Any:
        """The live buffers, in registration order, without a copy (not to be held
        while buffers are registered or released)."""
        return self._by_uid.values()

    def result_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """What `SimResult` shows: the array of the first live buffer of each name, and of
        each `Out` / `InOut` parameter, in registration order (one loop, no calls)."""
        device: dict[str, np.ndarray] = {}
        outputs: dict[str, np.ndarray] = {}
        for buf in self._by_uid.values():
            ref = buf._ref
            a = buf._array if ref is None else ref()
            assert a is not None, "a released buffer is not registered"
            if buf.name not in device:
                device[buf.name] = a
            d = buf.direction
            if d == "Out" or d == "InOut":
                outputs[buf.name] = a
        return device, outputs

    def by_uid(self, uid: int) -> GlobalBuffer | None:
        return self._by_uid.get(uid)

    def register(self, name: str, array: np.ndarray, direction: str | None,
                 host: np.ndarray | None, kind: str, root: np.ndarray | None = None
                 ) -> GlobalBuffer:
        """A new buffer of `array` (`root`: its root, when the caller has it)."""
        uid = self._uids
        self._uids += 1
        buf = GlobalBuffer(name, array, direction, host, uid, kind)
        if root is None:
            root = root_of(array)
        key = id(root)
        # A per-iteration value (not the first of its name) goes when its array does. Only a
        # whole array: a view of one would be released while its root is still reachable.
        if kind in ("result", "tensor") and name in self._names and array is root:
            buf._array = None
            buf._ref = weakref.ref(root, _releaser(weakref.ref(self), key, uid))
        self._names.add(name)
        self.buffers[key] = buf
        self._by_uid[uid] = buf
        self._located.clear()  # (a view located before it was a buffer's is one now)
        return buf

    def register_params(self, params: list[tuple]) -> None:
        """`register` of the parameters of a call, each (name, array, direction, host,
        root, fill), in order - fill 0: none, 1: `fill_fresh` now, 2: deferred (the quick
        binding's: one call for all of them)."""
        by_key, by_uid, names = self.buffers, self._by_uid, self._names
        uid = self._uids
        for name, array, direction, host, root, fill in params:
            if fill:  # (`fill_fresh`, written out)
                if self._zero_fresh:
                    seed = None
                else:
                    seed = self._seed = self._seed + 1
                if fill == 2:
                    self.pending.append(PendingFill(array, seed))
                elif seed is None:
                    array.fill(0)
                else:
                    fill_residue(array, seed)
            buf = GlobalBuffer(name, array, direction, host, uid, "param")
            names.add(name)
            by_key[id(root)] = buf
            by_uid[uid] = buf
            uid += 1
        self._uids = uid
        self._located.clear()

    def _release(self, key: int, uid: int) -> None:
        buf = self._by_uid.pop(uid, None)
        if buf is None:
            return
        if self.buffers.get(key) is buf:
            del self.buffers[key]
        if self.on_release is not None:
            self.on_release(buf)

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

    def fill_outside_box(self, item: PendingFill, lo: tuple, hi: tuple) -> None:
        """The deferred fill `item`, only outside the box `[lo, hi)` (as `fill_unwritten`
        with a mask of that box: one slab per side of it)."""
        a = item.array
        self.pending = [p for p in self.pending if p is not item]
        full = residue(a.shape, a.dtype, item.seed) \
            if item.seed is not None and not has_nan(a.dtype) else None
        value = 0 if item.seed is None else np.nan
        nd = a.ndim
        for ax in range(nd):
            for part in (slice(0, lo[ax]), slice(hi[ax], None)):
                idx = tuple(slice(lo[p], hi[p]) for p in range(ax)) + (part,) + \
                    (slice(None),) * (nd - ax - 1)
                a[idx] = value if full is None else full[idx]


__all__ = ["DeviceMemory", "GlobalBuffer", "PendingFill"]

"""Window buffers: one symmetric allocation per rank, zeroed when the host allocates it.

`pld.alloc_window_buffer` makes a `WindowBuffer` (the same number of bytes on every
rank); `pld.window(buf, shape, dtype)` in host code makes a `WindowView`, which the
dispatch on rank `r` turns into rank `r`'s array (`Windows.array`). Every array of a
window is a view of the rank's own bytes, so `Windows.locate` maps any view a kernel
holds (a window, a slice of it, the value a store returned) back to its buffer, its rank
and its byte offset, and `Windows.peer` lays the same view over another rank's bytes:
that is what a remote load or store reads or writes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.ir.span import Span
from pypto.sim.device.views import root_of


@dataclass
class WindowBuffer:
    """One symmetric allocation: `nbytes` on every rank, named after its variable."""

    name: str
    nbytes: int
    index: int  # allocation order in the run
    span: Span | None
    memory: list = field(default_factory=list)  # per rank: its bytes (uint8)
    # per rank, per (shape, dtype): the array views of it handed out, so a window is one
    # object however often it is dispatched (the rank's device memory knows it once)
    arrays: list = field(default_factory=list)
    # per rank: which rank wrote each byte last (-1: nobody; `Windows.writer_dtype`),
    # made on the first write
    writers: list = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<window {self.name!r} {self.nbytes} B x {len(self.memory)} ranks>"


@dataclass(frozen=True)
class WindowView:
    """`pld.window(buf, shape, dtype)` in host code: each rank's slice, seen the same way."""

    buffer: WindowBuffer
    shape: tuple
    dtype: Any  # a pl DType

    def __repr__(self) -> str:
        return f"<pld.window of {self.buffer.name!r} {list(self.shape)} {self.dtype!r}>"


@dataclass(frozen=True)
class Located:
    """Where an array lies in the windows: its buffer, the rank owning the bytes, its byte
    offset from the start of the buffer."""

    buffer: WindowBuffer
    rank: int
    offset: int


class WindowError(Exception):
    """A window used outside what it holds; the caller turns it into a located fault."""


class Windows:
    """The window buffers of one multi-card run."""

    def __init__(self, world_size: int):
        self.world_size = world_size
        # a writer id per byte: the narrowest signed type that holds every rank and -1
        self.writer_dtype = np.dtype(np.int8 if world_size <= 127 else
                                     np.int16 if world_size <= 32767 else np.int32)
        self.buffers: list[WindowBuffer] = []
        self._roots: dict[int, tuple[WindowBuffer, int]] = {}  # id(rank bytes) -> (buf, rank)

    def alloc(self, name: str, nbytes: int, span: Span | None) -> WindowBuffer:
        buf = WindowBuffer(name, nbytes, len(self.buffers), span)
        for r in range(self.world_size):
            raw = np.zeros(nbytes, dtype=np.uint8)  # zeroed at each dispatch of the host
            buf.memory.append(raw)
            buf.arrays.append({})
            buf.writers.append(None)
            self._roots[id(raw)] = (buf, r)
        self.buffers.append(buf)
        return buf

    def array(self, view: WindowView, rank: int) -> np.ndarray:
        """Rank `rank`'s array of the window `view` (one object per view and rank)."""
        buf = view.buffer
        np_dtype = np.dtype(view.dtype.np)
        key = (view.shape, np_dtype)
        got = buf.arrays[rank].get(key)
        if got is not None:
            return got
        n = math.prod(view.shape)
        need = n * np_dtype.itemsize
        if need > buf.nbytes:
            raise WindowError(f"pld.window views {list(view.shape)} {view.dtype!r} "
                              f"({need:,} bytes) of the window buffer '{buf.name}', which "
                              f"holds {buf.nbytes:,} bytes per rank")
        raw = buf.memory[rank]
        typed = raw[: (buf.nbytes // np_dtype.itemsize) * np_dtype.itemsize].view(np_dtype)
        arr = typed[:n].reshape(view.shape)
        buf.arrays[rank][key] = arr
        return arr

    def locate(self, a: Any) -> Located | None:
        """Where the array `a` lies in the windows, or None when it is no window's."""
        if not isinstance(a, np.ndarray):
            return None
        root = root_of(a)
        hit = self._roots.get(id(root))
        if hit is None or hit[0].memory[hit[1]] is not root:
            return None
        buf, rank = hit
        off = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return Located(buf, rank, off)

    def peer(self, a: np.ndarray, at: Located, peer: int) -> np.ndarray:
        """The array laid over rank `peer`'s bytes exactly as `a` lies over its own."""
        if not 0 <= peer < self.world_size:
            n = self.world_size
            ranks = "rank 0" if n == 1 else f"ranks 0..{n - 1}"
            raise WindowError(f"peer {peer} is not a rank of this run, which has {n} "
                              f"({ranks})")
        raw = at.buffer.memory[peer]
        return np.ndarray(a.shape, dtype=a.dtype, buffer=raw, offset=at.offset,
                          strides=a.strides)

    def mark_written(self, a: np.ndarray, at: Located, owner: int, lo: tuple, hi: tuple,
                     rank: int) -> None:
        """Rank `rank` wrote the box [lo, hi) of `a` (a window array lying at `at`) in
        rank `owner`'s copy: remember it per byte, for the workbench's window view."""
        buf = at.buffer
        wdt = self.writer_dtype
        if buf.writers[owner] is None:
            buf.writers[owner] = np.full(buf.nbytes, -1, dtype=wdt)
        w = wdt.itemsize  # (the writer ids lie at the window's bytes, w bytes each)
        per_byte = np.ndarray(a.shape + (a.itemsize,), dtype=wdt,
                              buffer=buf.writers[owner], offset=at.offset * w,
                              strides=tuple(x * w for x in a.strides) + (w,))
        per_byte[tuple(slice(b, e) for b, e in zip(lo, hi))] = rank

    def written_by(self, a: np.ndarray, at: Located, owner: int) -> np.ndarray:
        """Per element of `a` (a window array lying at `at`), the rank that last wrote it
        in rank `owner`'s copy (-1: nobody)."""
        wr = at.buffer.writers[owner]
        wdt = self.writer_dtype
        if wr is None:
            return np.full(a.shape, -1, dtype=wdt)
        w = wdt.itemsize
        return np.ndarray(a.shape, dtype=wdt, buffer=wr, offset=at.offset * w,
                          strides=tuple(x * w for x in a.strides)).copy()

    def describe(self, a: np.ndarray) -> str:
        at = self.locate(a)
        return f"window '{at.buffer.name}'" if at is not None else "a tensor"


def box(offsets: Any, shape: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(lo, hi) of the box at `offsets` of extent `shape`."""
    lo = tuple(int(o) for o in offsets)
    return lo, tuple(o + int(s) for o, s in zip(lo, shape))


def check_box(lo: tuple, hi: tuple, within: tuple) -> str | None:
    """Why the box [lo, hi) is not inside an array of shape `within`, or None."""
    for ax, (a, b, n) in enumerate(zip(lo, hi, within)):
        if a < 0 or b > n or b < a:
            return f"axis {ax}: [{a}, {b}) is outside [0, {n})"
    return None


__all__ = ["Located", "WindowBuffer", "WindowError", "WindowView", "Windows", "box",
           "check_box"]

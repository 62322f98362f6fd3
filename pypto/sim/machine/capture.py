"""The args dump's capture: each task's arguments at its boundaries, as the runtime's
AICPU scheduler dumps them (`SimConfig.dump_args`, the runtime's `enable_dump_args`).

The scheduler records a task's INPUT tensors before it dispatches the task, its OUTPUT
tensors after the task completes and an INOUT tensor at both; scalars once, before
dispatch. Levels: 1 dumps only the arguments tagged (`pl.dump_tag`, `dumps=`), 2 every
argument of every task, 3 every argument's metadata with a payload for the tagged ones.
A tensor's payload is its view in logical (row-major) order, whatever its strides.

The simulator runs a task's blocks one after another, so the state before its launch
is what a device task reads once its producers have finished, and the state after
its last block is what it leaves. `launch` calls `before` and `after` only when
capture is on (`Run.capture` is None otherwise: one attribute test per launch).
Everything here is linear in the tasks: one snapshot per dumped argument.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

ROLES = {"In": "input", "Out": "output", "InOut": "inout"}
BEFORE, AFTER = "before_dispatch", "after_completion"


@dataclass(slots=True)
class ArgSnapshot:
    """One dumped argument of one task at one of its boundaries."""

    task: int
    """The trace's task id."""
    arg_index: int
    """Its slot: tensor arguments first, in parameter order, then the scalars."""
    role: str
    """input, output or inout (its direction in the kernel's signature)."""
    stage: str
    """before_dispatch or after_completion."""
    kind: str
    """tensor or scalar."""
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    """Element strides of the view in its global buffer."""
    start_offset: int
    """Element offset of the view's origin in its global buffer."""
    data: np.ndarray | None = None
    """The payload (a row-major copy), or None when only the metadata is dumped."""
    value: Any = None
    """A scalar's value."""
    tagged: bool = False
    param: str = ""
    """The kernel parameter that receives it."""
    tensor: str = ""
    """The global tensor it is a view of (the buffer's name)."""


class ArgCapture:
    """The snapshots of one run (`Run.capture`), in the order the runtime would take
    them: a task's inputs when it is dispatched, its outputs when it completes."""

    def __init__(self, level: int):
        self.level = level
        self.snapshots: list[ArgSnapshot] = []

    def before(self, memory: Any, task: int, params: list, args: list,
               tagged: frozenset[int]) -> None:
        """Task `task` is about to run with `args` (its kernel's `params`); `tagged`:
        the indices of the parameters tagged for the dump."""
        if memory.pending:  # (deferred residue fills: what the task would read)
            memory.flush_pending()
        self._take(memory, task, params, args, tagged, BEFORE)

    def after(self, memory: Any, task: int, params: list, args: list,
              tagged: frozenset[int]) -> None:
        """Task `task` has finished."""
        self._take(memory, task, params, args, tagged, AFTER)

    def _take(self, memory: Any, task: int, params: list, args: list, tagged: frozenset[int],
              stage: str) -> None:
        level = self.level
        tensors = [(i, p, a) for i, (p, a) in enumerate(zip(params, args))
                   if isinstance(a, np.ndarray)]
        out = self.snapshots
        for slot, (i, p, a) in enumerate(tensors):
            role = ROLES.get(p[2], "input")
            if (role == "input" and stage == AFTER) or (role == "output" and stage == BEFORE):
                continue
            mark = i in tagged
            if level == 1 and not mark:
                continue
            payload = level == 2 or mark
            out.append(_tensor(memory, task, slot, p[0], role, stage, a, payload, mark))
        if stage != BEFORE:
            return
        scalars = [(i, p, a) for i, (p, a) in enumerate(zip(params, args))
                   if isinstance(a, (numbers.Number, np.generic)) and not isinstance(a, np.ndarray)]
        for k, (i, p, v) in enumerate(scalars):
            if level == 1 and i not in tagged:
                continue
            dtype = _scalar_dtype(p[1], v)
            out.append(ArgSnapshot(task, len(tensors) + k, "input", stage, "scalar", dtype, (),
                                   (), 0, None, v, i in tagged, param=p[0]))


def _tensor(memory: Any, task: int, slot: int, param: str, role: str, stage: str,
            a: np.ndarray, payload: bool, tagged: bool) -> ArgSnapshot:
    """The snapshot of tensor argument `a` (a view of a global buffer)."""
    size = a.itemsize
    buf, _ = memory.locate(a)
    strides = tuple(s // size for s in a.strides)
    offset = 0
    if buf is not None:
        offset = (a.__array_interface__["data"][0] -
                  buf.array.__array_interface__["data"][0]) // size
    data = np.array(a, order="C", copy=True) if payload else None
    return ArgSnapshot(task, slot, role, stage, "tensor", a.dtype, tuple(a.shape), strides,
                       int(offset), data, None, tagged, param,
                       buf.name if buf is not None else param)


def _scalar_dtype(t: Any, value: Any) -> np.dtype:
    """The dtype of a scalar argument: its parameter type's, else its value's."""
    dt = getattr(t, "dtype", None)
    if dt is not None and hasattr(dt, "np"):
        return np.dtype(dt.np)
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(bool)
    if isinstance(value, numbers.Integral):
        return np.dtype(np.int64)
    return np.asarray(value).dtype


__all__ = ["AFTER", "BEFORE", "ArgCapture", "ArgSnapshot"]

"""A failing pure `pl.Out` that a kernel accumulates into with an atomic add before
anything plainly wrote it: the sum starts from allocator residue.

The L2 guide's rule: a pure `pl.Out` buffer is neither uploaded nor zero-filled, so
`pl.store(..., atomic=pl.AtomicType.Add)` onto elements nothing wrote adds to whatever
the allocator left there (NaN / garbage on `a2a3sim`, often zero on `a2a3`). The
diagnosis reads the run's trace: the write accesses of the tensor in task order, each
plain or atomic; the elements whose first write is atomic accumulated onto residue.
The store that did it is the first atomic-add op in that task's function.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.ir.nodes import Attr, Call, Const, Program
from pypto.ir.transform import walk
from pypto.ops.registry import get


@dataclass
class AtomicOnResidue:
    """Elements of an output whose first write was an atomic accumulation."""

    count: int  # such elements
    bounds: list  # [(lo, hi)] per axis: their bounding box
    region: str  # the task that first accumulated there
    store: str  # file:line of its atomic-add op ("" when the program is not known)

    def hint(self, name: str) -> str:
        box = "[" + ", ".join(f"{lo}:{hi}" for lo, hi in self.bounds) + "]"
        where = f" at {self.store}" if self.store else ""
        return (f"'{name}' is a pure pl.Out, and task '{self.region}' accumulates into "
                f"{self.count} element(s) {box} of it with an atomic add{where} before "
                "anything plainly writes them: a pl.Out is neither uploaded nor zero-filled, "
                "so the sum starts from allocator residue (NaN / garbage on a2a3sim, often "
                "zero on a2a3). Fix: declare it pl.InOut[...] with a zero init_value (or "
                "zeros from the host), or zero-fill it in the kernel before accumulating, "
                "e.g. pl.assemble(out, pl.full(shape, dtype=..., value=0), offsets).")


def atomic_onto_residue(sim: Any, name: str, shape: tuple,
                        program: Program | None = None) -> AtomicOnResidue | None:
    """The elements of output `name` (a pure pl.Out) whose first write in the traced run
    `sim` was an atomic add, or None (no trace, or no such element)."""
    trace = getattr(sim, "trace", None)
    tasks = getattr(trace, "tasks", None)
    if not tasks:
        return None
    written = np.zeros(shape, dtype=bool)
    onto = np.zeros(shape, dtype=bool)
    first = None
    for rec in tasks:
        for acc in rec.accesses:
            if acc.mode != "W" or acc.tensor != name or len(acc.lo) != len(shape):
                continue
            box = tuple(slice(lo, hi) for lo, hi in zip(acc.lo, acc.hi))
            if acc.atomic:
                fresh = ~written[box]
                if fresh.any():
                    onto[box] |= fresh
                    first = first or rec
            written[box] = True
    if first is None:
        return None
    idx = np.nonzero(onto)
    bounds = [(int(i.min()), int(i.max()) + 1) for i in idx]
    return AtomicOnResidue(int(onto.sum()), bounds, first.name,
                           _first_atomic_store(program, first.function))


def _first_atomic_store(program: Program | None, function: str) -> str:
    """file:line of the first atomic-add op in `function` of `program`."""
    func = next((f for f in getattr(program, "functions", ()) if f.name == function), None)
    if func is None:
        return ""
    for n in walk(func.body):
        if not isinstance(n, Call):
            continue
        try:
            op = get(n.op)
        except KeyError:
            continue
        if "atomic" not in op.params:
            continue
        i = op.params.index("atomic")
        value = n.args[i] if i < len(n.args) else None
        value = value.value if isinstance(value, (Attr, Const)) else value
        if getattr(value, "name", None) == "Add" and n.span is not None:
            return f"{n.span.file}:{n.span.line}"
    return ""


__all__ = ["AtomicOnResidue", "atomic_onto_residue"]

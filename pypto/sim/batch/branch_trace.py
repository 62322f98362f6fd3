"""What a predicated branch of a traced batch records: only its blocks' accesses and
costs (issue 17, part 4).

Block by block, a block records the accesses and costs of the branch it takes and
nothing of the other. A batch runs both branches of a condition that differs per block
(`pypto.sim.batch.predicate`), each for all blocks under a mask, so while a branch runs
(`enter` ... `leave`) three things of the frame are redirected:

* the access log: the branch logs into a list of its own, which goes into the outer
  log as one `MaskedLog` item; the replay (`pypto.sim.batch.replay`) records its
  accesses for the blocks of the mask only, in program order between the accesses
  around it, so every block's trace holds exactly the accesses it makes block by block;
* the cycles per pipe (`TaskFrame.costs`): a `MaskedCosts` in front of the frame's
  dict turns every `costs[pipe] += c` into one value per block (`np.where(mask,
  old + c, old)`), so each block's cycles are the same float additions in the same
  order as block by block (an `add` of a branch total afterwards would round
  differently: the cycle costs are not all exact binary fractions);
* the integer counts (`TaskFrame.rec`: ops, bytes, FLOPs, units): the branch counts
  into a record of its own, added per block where the mask holds (integer sums and set
  unions do not depend on the order).

`block_costs` gives one block's record and cycles from all of that.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.sim.batch.state import BatchState
from pypto.sim.trace.trace import TaskRecord


class MaskedLog:
    """The accesses a predicated branch logged (`items`) and the blocks that took it
    (`pred`, a bool array over the batch axes)."""

    __slots__ = ("items", "pred")

    def __init__(self, pred: np.ndarray, items: list):
        self.pred = pred
        self.items = items


class MaskedCosts:
    """The cycles per pipe while a predicated branch runs: reads are the frame's, each
    write changes the blocks of the mask only (`root` the frame's own dict)."""

    __slots__ = ("pred", "root")

    def __init__(self, root: dict, pred: np.ndarray):
        self.root = root
        self.pred = pred

    def __getitem__(self, k: str) -> Any:
        # (a copy: `costs[k] += c` adds in place into an array, for every block)
        v = self.root[k]
        return v.copy() if type(v) is np.ndarray else v

    def get(self, k: str, default: Any = None) -> Any:
        return self[k] if k in self.root else default

    def __setitem__(self, k: str, v: Any) -> None:
        old = self.root.get(k, 0.0)
        self.root[k] = np.where(self.pred, v, old)


def enter(f: Any, st: BatchState, pred: np.ndarray) -> tuple | None:
    """Redirect the frame `f`'s log, cycles and counts to the branch about to run for the
    blocks of `pred` (traced runs; None otherwise). `leave` undoes it."""
    if st.log is None or f.rec is None:
        return None
    saved = (st.log, f.costs, f.rec)
    st.log = []
    root = f.costs.root if type(f.costs) is MaskedCosts else f.costs
    f.costs = MaskedCosts(root, pred)
    f.rec = TaskRecord(f.rec.id, "", "", "", 1)
    return saved


def leave(f: Any, st: BatchState, pred: np.ndarray, saved: tuple | None,
          done: bool = True) -> None:
    """The branch `enter` started is over (`done`: it ran to its end, so what it logged
    and counted is kept)."""
    if saved is None:
        return
    log, costs, rec = saved
    if done:
        items = st.log
        assert items is not None
        log.append(MaskedLog(pred, items))
        st.masked.append((pred, f.rec))
    st.log, f.costs, f.rec = log, costs, rec


def add_costs(rec: TaskRecord, proto: TaskRecord) -> None:
    """Add the counts of `proto` (a batched run's, per block) to the task record `rec`."""
    rec.units |= proto.units
    oc = rec.op_counts
    for k, v in proto.op_counts.items():
        oc[k] = oc.get(k, 0) + v
    by = rec.bytes
    for k, v in proto.bytes.items():
        by[k] = by.get(k, 0) + v
    rec.flops += proto.flops
    rec.vector_elements += proto.vector_elements


def block_costs(f: Any, rec: TaskRecord, idx: tuple) -> dict:
    """Add block `idx`'s counts of the batched frame `f` to `rec`; its cycles per pipe."""
    add_costs(rec, f.rec)
    for pred, part in f.batch.masked:
        if pred[idx]:
            add_costs(rec, part)
    return {k: float(v[idx]) if type(v) is np.ndarray else v for k, v in f.costs.items()}


__all__ = ["MaskedCosts", "MaskedLog", "add_costs", "block_costs", "enter", "leave"]

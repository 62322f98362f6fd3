"""The task frame of a batched run: its accesses go to a log (replayed into the trace
per task, or block, once the run succeeded) and its batched values are shaped by its
`BatchState`."""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.sim.batch.state import BatchState
from pypto.sim.device.memory import GlobalBuffer
from pypto.sim.machine.frame import TaskFrame
from pypto.sim.machine.run import Run
from pypto.sim.trace.trace import TaskRecord


class BatchFrame(TaskFrame):
    """A frame running all blocks of a batch at once (see the module docstring)."""

    __slots__ = ("batch",)

    batched = True

    def __init__(self, run: Run, batch: BatchState, rec: TaskRecord | None, region: str,
                 block_num: int, task_id: int, work_mult: int):
        super().__init__(run, rec, region, 0, block_num, task_id, True, work_mult)
        self.batch = batch
        if rec is not None:
            self.costs = dict.fromkeys(rec.cycles, 0.0)

    def record(self, a: np.ndarray, buf: GlobalBuffer, origin: tuple | None, lo: tuple,
               ext: tuple, write: bool, site: Any, atomic: bool = False) -> None:
        log = self.batch.log
        assert log is not None
        log.append((a, buf, origin, lo, ext, write, site, (atomic,)))


__all__ = ["BatchFrame"]

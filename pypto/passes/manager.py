"""Run passes in order, recording each one's input, output and time."""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from pypto.ir.nodes import Program
from pypto.passes.base import Pass, PassContext


@dataclass(frozen=True)
class PassRecord:
    """One pass of one compilation, for the pipeline view."""

    name: str
    summary: str
    before: Program
    after: Program
    seconds: float

    @property
    def changed(self) -> bool:
        return self.before != self.after


def run_pipeline(program: Program, passes: Sequence[Pass], ctx: PassContext
                 ) -> tuple[Program, list[PassRecord]]:
    records = []
    for p in passes:
        t0 = time.perf_counter()
        after = p.run(program, ctx)
        records.append(PassRecord(p.name, p.summary, program, after, time.perf_counter() - t0))
        program = after
    return program, records

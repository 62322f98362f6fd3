"""CheckRegionRules: language rules that need the unit analysis and the task graph.

* `pl.split(...)` on a region that is not mixed cube+vector is accepted, as the real
  compiler does (its own tests split pure-vector regions), with a `PyptoWarning` in the
  L2 guide's words: the split is there so the cube and vector units ping-pong on the
  two halves, and a pure-cube or pure-vector region has nothing to ping-pong (at the
  `pl.split`).
* `pl.cross_core_slot(...)` on a region with no cross-core traffic is ignored; a
  `PyptoWarning` says so (at the `pl.cross_core_slot`).
* A tensor parameter of the entry function that the kernel writes but declares as
  a plain `pl.Tensor` (In) is a warning: the runtime copies only `Out`/`InOut`
  tensors back, so the host reads zeros (at the parameter).

The optimizations are stored without their own spans; the caret is placed on the
`pl.split` / `pl.cross_core_slot` text found in the source lines of the region's
`with` statement, falling back to the statement itself.
"""
from __future__ import annotations

import linecache
import re

from pypto.ir.nodes import Direction, Program
from pypto.ir.span import Span
from pypto.ir.types import TensorType
from pypto.passes.base import Pass, PassContext
from pypto.passes.buffers import split_and_slots


def locate(span: Span, word: str) -> Span:
    """The span of the first `pl.<word>(` (or `<word>(`) in the lines of `span`."""
    if span is None or not span.known:
        return span
    lines = linecache.getlines(span.file)
    last = max(span.line, span.end_line or span.line)
    pattern = re.compile(r"(?:\bpl\.(?:optimizations\.)?)?\b" + re.escape(word) + r"\s*\(")
    for n in range(span.line, min(last, len(lines)) + 1):
        text = lines[n - 1]
        m = pattern.search(text)
        if m:
            end = text.find(")", m.end())
            end_col = end + 2 if end >= 0 else m.end() + 1
            return Span(span.file, n, m.start() + 1, n, end_col)
    return span


def _label(region) -> str:
    return region.name_hint or region.function


class CheckRegionRules(Pass):
    name = "check_region_rules"
    summary = "pl.split needs a mixed region; cross_core_slot needs a pipe; written inputs"

    def run(self, program: Program, ctx: PassContext) -> Program:
        for r in ctx.analyses.get("regions", []):
            launch = dict(r.launch)
            mode, slots, split_obj, slot_obj = split_and_slots(launch)
            if split_obj is not None and mode != "NONE" and r.classification != "mixed":
                what = {"cube": "pure-cube", "vector": "pure-vector",
                        "scalar": "scalar-only"}[r.classification]
                ctx.warn(f"pl.split(pl.SplitMode.{mode}) on region '{_label(r)}': a {what} "
                         "region has nothing to ping-pong (pl.split applies only to a mixed "
                         "cube + vector region, so the cube and vector units ping-pong on the "
                         "two halves)", locate(r.span, "split"),
                         hint="drop pl.split(...) from optimizations= unless the region also "
                              "runs matmuls")
            if slot_obj is not None and (r.pipe is None or not r.pipe.tiles):
                ctx.warn(f"pl.cross_core_slot(slot_num={slots}) is ignored: region "
                         f"'{_label(r)}' has no cross-core traffic (it is "
                         f"{r.classification}, no tile moves between cube and vector)",
                         locate(r.span, "cross_core_slot"),
                         hint="remove pl.cross_core_slot(...); the ring exists only between "
                              "the cube and vector halves of a mixed region")
        self._written_inputs(program, ctx)
        return program

    def _written_inputs(self, program: Program, ctx: PassContext) -> None:
        graph = ctx.analyses.get("task_graph")
        if graph is None:
            return
        entry = program.entry_function
        reads = {a.root for n in graph.nodes if n.caller == entry.name for a in n.args
                 if a.root is not None and a.reads}
        writers = {a.root for n in graph.nodes if n.caller == entry.name for a in n.args
                   if a.root is not None and a.writes and a.callee_direction != "In"}
        writers |= {root for root, _ in graph.orchestration_writes}
        for p in entry.params:
            if p.direction is not Direction.IN or not isinstance(p.var.type, TensorType):
                continue
            if p.var.name not in writers:
                continue
            form = "pl.InOut" if p.var.name in reads else "pl.Out"
            span = p.span if p.span is not None and p.span.known else p.var.span
            ctx.warn(f"entry tensor '{p.var.name}' is written by the kernel but declared as an "
                     f"input (pl.Tensor): the host will read zeros",
                     span,
                     hint=f"declare it {form}[pl.Tensor[...]] so the result is copied back")


__all__ = ["CheckRegionRules", "locate"]

"""The runtime's dependency rule, applied to a run's submits (`submits.runtime_submits`).

This is what simpler's `submit_task` does (`pto_dep_compute.h`: explicit deps, then
`compute_task_fanin`, then `register_task_outputs`), and what its dep_gen replay writes
to deps.json, edge by edge:

1. **explicit**: every `deps=` producer (flags wait + retain, argument -1);
2. **creator**: for every tensor argument that is not OUTPUT, the task that allocated
   its buffer (an alloc task, or the launch whose new result it is), if there is one
   (wait + retain);
3. **tensormap**: for INPUT and INOUT arguments not marked `manual_dep`, every entry of
   the tensor map on the same buffer whose window overlaps (wait); the overlap is
   `covered` when the argument's window contains the entry's, else `other`; an INOUT
   that covers an entry removes it;
4. then INOUT and OUTPUT_EXISTING arguments (not `manual_dep`) are inserted in the map.

A submit inside a manual scope does neither 2–4: only its explicit deps order it.
A producer met twice by one consumer is one dependency (flags or-ed), as the runtime's
fan-in builder keeps it; deps.json still lists each tensormap match, as the replay does.

Nothing here orders a writer after earlier **readers** (write-after-read): the runtime
registers producers only, so an INOUT or OUTPUT_EXISTING write of a buffer an
unfinished task still reads is unordered on the device (pypto-lib
`dependency-and-scheduling.md`).

The cost is one pass over the submits; a lookup scans the live entries of its buffer
only (covered entries leave the map), as the runtime's does.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.ir.nodes import Program
from pypto.sim.runtime.submits import Submit, SubmitArg, runtime_submits
from pypto.sim.trace.trace import Trace

WAIT_RETAIN = ("wait", "retain")
WAIT = ("wait",)


@dataclass(frozen=True)
class RuntimeEdge:
    """One dependency the runtime creates: `succ` waits for `pred` (submit positions)."""

    pred: int
    succ: int
    arg: int  # the consumer's argument slot; -1 for an explicit dep
    source: str  # "explicit", "creator" or "tensormap"
    flags: tuple
    consumer: SubmitArg | None = None  # creator / tensormap edges
    producer: SubmitArg | None = None  # tensormap edges: the window the producer registered
    overlap: str | None = None  # tensormap edges: "covered" or "other"

    @property
    def uid(self) -> int | None:
        return self.consumer.uid if self.consumer is not None else None


def _overlaps(a_lo: tuple, a_hi: tuple, b_lo: tuple, b_hi: tuple) -> bool:
    if len(a_lo) != len(b_lo):
        return True  # a view of another rank: the runtime's check says "other"
    return all(al < bh and bl < ah for al, ah, bl, bh in zip(a_lo, a_hi, b_lo, b_hi))


def _covers(a_lo: tuple, a_hi: tuple, b_lo: tuple, b_hi: tuple) -> bool:
    return len(a_lo) == len(b_lo) and all(
        al <= bl and bh <= ah for al, ah, bl, bh in zip(a_lo, a_hi, b_lo, b_hi))


def runtime_edges(submits: list[Submit]) -> list[RuntimeEdge]:
    """Every edge the runtime creates for `submits`, in the order it creates them."""
    owner: dict[int, int] = {}  # buffer uid -> the submit that allocated it
    by_trace = {s.trace_id: s.pos for s in submits if s.trace_id is not None}
    tmap: dict[int, list] = {}  # buffer uid -> [(producer pos, its SubmitArg)]
    edges: list[RuntimeEdge] = []
    for s in submits:
        seen: set = set()
        for d in s.explicit:
            p = by_trace.get(d)
            if p is not None and p < s.pos and p not in seen:
                seen.add(p)
                edges.append(RuntimeEdge(p, s.pos, -1, "explicit", WAIT_RETAIN))
        if not s.manual:
            for a in s.args:
                if a.type == "OUTPUT":
                    continue
                p = owner.get(a.uid)
                if p is not None and p not in seen:
                    seen.add(p)
                    edges.append(RuntimeEdge(p, s.pos, a.idx, "creator", WAIT_RETAIN, a))
                if a.type not in ("INPUT", "INOUT") or a.manual_dep:
                    continue
                entries = tmap.get(a.uid)
                if not entries:
                    continue
                kept = []
                for p, pa in entries:
                    if not _overlaps(a.lo, a.hi, pa.lo, pa.hi):
                        kept.append((p, pa))
                        continue
                    covered = _covers(a.lo, a.hi, pa.lo, pa.hi)
                    seen.add(p)
                    edges.append(RuntimeEdge(p, s.pos, a.idx, "tensormap", WAIT, a, pa,
                                             "covered" if covered else "other"))
                    if not (a.type == "INOUT" and covered):
                        kept.append((p, pa))
                tmap[a.uid] = kept
            for a in s.args:
                if a.type in ("INOUT", "OUTPUT_EXISTING") and not a.manual_dep:
                    tmap.setdefault(a.uid, []).append((s.pos, a))
        for uid in s.owns:
            owner[uid] = s.pos
    return edges


def runtime_view(trace: Trace, program: Program | None,
                 analyses: dict) -> tuple[list[Submit], list[RuntimeEdge]]:
    """The run's submits and the runtime's edges between them, made once per traced run
    (the race check, the dependencies, the rings and the artifacts all ask for them)."""
    key = id(program)
    got = trace.runtime_cache.get(key)
    if got is None or got[0] is not program:
        submits = runtime_submits(trace, program, analyses)
        got = trace.runtime_cache[key] = (program, submits, runtime_edges(submits))
    return got[1], got[2]


def _where(span: Any) -> str:
    if span is None or not getattr(span, "line", 0):
        return "?"
    return f"{Path(str(span.file)).name}:{span.line}"


def edge_reason(e: RuntimeEdge, submits: list[Submit]) -> str:
    """Why the runtime creates edge `e`, in words, with the source lines."""
    p, s = submits[e.pred], submits[e.succ]
    what = "alloc" if p.kind == "alloc" else f"task '{p.name}'"
    if e.source == "explicit":
        return f"deps= of '{s.name}' ({_where(s.span)}) names {what} ({_where(p.span)})"
    assert e.consumer is not None
    t = e.consumer.tensor
    if e.source == "creator":
        return (f"'{s.name}' takes '{t}' ({e.consumer.type}), which {what} "
                f"({_where(p.span)}) allocated: it waits for it and keeps it alive")
    assert e.producer is not None
    return (f"'{s.name}' takes '{t}' as {e.consumer.type}; the tensor map holds "
            f"'{p.name}''s {e.producer.type} write of it ({_where(p.span)}), which "
            f"{'its window covers' if e.overlap == 'covered' else 'overlaps its window'}")


@dataclass(frozen=True)
class TaskDependency:
    """One edge of the runtime's rule between two tasks of a trace (by trace task id)."""

    pred: int
    succ: int
    source: str  # "explicit", "creator" or "tensormap"
    tensor: str | None
    reason: str


def task_dependencies(trace: Trace, program: Program | None,
                      analyses: dict) -> list[TaskDependency]:
    """The runtime's edges between the tasks of a traced run (an alloc task's edges are
    left out: it is no task of the trace), one per (pred, succ, source, tensor)."""
    submits, edges = runtime_view(trace, program, analyses)
    out: list[TaskDependency] = []
    seen: set = set()
    for e in edges:
        a, b = submits[e.pred].trace_id, submits[e.succ].trace_id
        if a is None or b is None:
            continue
        tensor = e.consumer.tensor if e.consumer is not None else None
        key = (a, b, e.source, tensor)
        if key not in seen:
            seen.add(key)
            out.append(TaskDependency(a, b, e.source, tensor, edge_reason(e, submits)))
    return out


def predecessors(submits: list[Submit], edges: Iterable[RuntimeEdge]) -> list[set]:
    """Per submit position, the positions it waits for directly."""
    preds: list[set] = [set() for _ in submits]
    for e in edges:
        preds[e.succ].add(e.pred)
    return preds


__all__ = ["WAIT", "WAIT_RETAIN", "RuntimeEdge", "TaskDependency", "edge_reason",
           "predecessors", "runtime_edges", "runtime_view", "task_dependencies"]

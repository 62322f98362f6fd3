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

from pypto.sim.runtime.submits import Submit, SubmitArg

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


def predecessors(submits: list[Submit], edges: Iterable[RuntimeEdge]) -> list[set]:
    """Per submit position, the positions it waits for directly."""
    preds: list[set] = [set() for _ in submits]
    for e in edges:
        preds[e.succ].add(e.pred)
    return preds


__all__ = ["WAIT", "WAIT_RETAIN", "RuntimeEdge", "predecessors", "runtime_edges"]

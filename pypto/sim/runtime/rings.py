"""The runtime's four ring sets, replayed over a run's submits.

The device runtime (simpler `tensormap_and_ringbuffer`) keeps, per ring
(`ring = min(scope depth, 3)`), a **task window** (slots), a **heap** (the packed
buffers of the tasks' new tensors: every `pl.create_tensor` alloc task, every launch's
new result, each buffer padded to 1024 bytes) and a **dep pool** (fan-in entries), plus
one global **tensor map**. A task is reclaimed when it is CONSUMED - its consumers done
*and* the scope that submitted it closed - strictly in order per ring: the oldest live
task pins every slot and byte behind it.

This module replays the run's submits (`submits.runtime_submits`) through that model:

* the scope instances open and close as the submits' scope paths say (a `for` body is
  one scope per iteration); a scope that submitted nothing is not seen;
* **reclaim is the best case**: every task is done the moment it is submitted, so a
  ring holds exactly what its open scopes own - from the oldest task of the shallowest
  open scope on that ring to the head. A slower device holds more, never less, so a
  deadlock found here is one the device cannot escape (the runtime's own "provable
  head-of-line" case), and the occupancies are lower bounds;
* the heap is a ring buffer with the allocator's own placement (`try_bump_heap`: a block
  that does not fit before the end wraps to the start when it fits before the tail),
  so fragmentation counts;
* checks, in the allocator's order: a scope with `window - 1` tasks of its own is
  `SCOPE_DEADLOCK` (1); a full task window `FLOW_CONTROL_DEADLOCK` (3); a heap that
  cannot place the block `HEAP_RING_DEADLOCK` (2);
* the dep pool and the tensor map are counted as **upper bounds** (every fan-in edge
  and every registered write held until its task is reclaimed), and not enforced: the
  device reclaims them as producers finish, which a replay without time cannot know.

`replay(submits, capacities)` gives a `RingReport` (per-ring peaks with the scope site
that reached them, the scope_stats samples, the deadlock if any); it is cheap, so a
what-if on other capacities replays the same submits without simulating again.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pypto.diagnostics import site_label
from pypto.sim.runtime.dependencies import runtime_edges
from pypto.sim.runtime.submits import RINGS, ScopeNode, Submit

# compile defaults, per ring (simpler pto_runtime2_types.h)
TASK_WINDOW = 16384
HEAP = 256 * 1024 * 1024
DEP_POOL = 16384
TENSORMAP = 65536

#: orch_error_code values and names (simpler pto_runtime2_types.h / error_names.h)
SCOPE_DEADLOCK = (1, "SCOPE_DEADLOCK")
HEAP_RING_DEADLOCK = (2, "HEAP_RING_DEADLOCK")
FLOW_CONTROL_DEADLOCK = (3, "FLOW_CONTROL_DEADLOCK")

_ENV = {"task_window": "PTO2_RING_TASK_WINDOW", "heap": "PTO2_RING_HEAP",
        "dep_pool": "PTO2_RING_DEP_POOL"}
# (minimum, power of two?) per knob, as the runtime's host checks them
_LIMITS = {"task_window": (4, True), "heap": (1024, False), "dep_pool": (4, False)}


class RingConfigError(ValueError):
    """A ring capacity the runtime would refuse (it fails the run before it starts)."""


@dataclass(frozen=True)
class RingCapacities:
    """The effective capacities of the four rings (and the global tensor map)."""

    task_window: tuple = (TASK_WINDOW,) * RINGS
    heap: tuple = (HEAP,) * RINGS
    dep_pool: tuple = (DEP_POOL,) * RINGS
    tensormap: int = TENSORMAP

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None, *, ring_heap: Any = None,
                ring_task_window: Any = None, ring_dep_pool: Any = None) -> RingCapacities:
        """The runtime's precedence (`runtime_maker.cpp`): a run-config value (scalar or
        four per-ring values; 0 falls through) over the `PTO2_RING_*` environment variable
        (a scalar, or exactly four comma-separated values) over the compile default."""
        env = os.environ if env is None else env
        got = {}
        for knob, given in (("task_window", ring_task_window), ("heap", ring_heap),
                            ("dep_pool", ring_dep_pool)):
            default = {"task_window": TASK_WINDOW, "heap": HEAP, "dep_pool": DEP_POOL}[knob]
            values = [default] * RINGS
            text = env.get(_ENV[knob])
            if text:
                values = _parse_env(_ENV[knob], text, values)
            if given is not None:
                over = [given] * RINGS if isinstance(given, int) else list(given)
                if len(over) != RINGS:
                    raise RingConfigError(f"ring_{knob} takes one value or {RINGS} (one per "
                                          f"ring), not {len(over)}: {given!r}")
                values = [int(o) if int(o) != 0 else v for o, v in zip(over, values)]
            lo, pow2 = _LIMITS[knob]
            for r, v in enumerate(values):
                if v < lo or (pow2 and v & (v - 1)):
                    need = f"a power of 2 >= {lo}" if pow2 else f">= {lo}"
                    raise RingConfigError(f"ring_{knob}[{r}]={v} must be {need} (the runtime "
                                          "refuses to start with it)")
            got[knob] = tuple(values)
        return cls(got["task_window"], got["heap"], got["dep_pool"], TENSORMAP)


def _parse_env(name: str, text: str, default: list) -> list:
    # the runtime warns and ignores a malformed value; so do we, and say so
    parts = [p.strip() for p in text.split(",")]
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        raise RingConfigError(f"{name}={text!r} is not an integer or {RINGS} comma-separated "
                              "integers") from None
    if len(nums) == 1:
        return nums * RINGS
    if len(nums) != RINGS:
        raise RingConfigError(f"{name}={text!r} needs exactly {RINGS} comma-separated values")
    return nums


@dataclass(frozen=True)
class ScopeSample:
    """One scope_stats record: a ring's state at a scope's begin or end."""

    site: str
    phase: str  # "begin" or "end"
    depth: int
    ring: int
    task_window_start: int  # the ring's task tail (oldest live local id) ...
    task_window_end: int  # ... and head (next local id)
    heap_start: int  # cumulative bytes reclaimed ...
    heap_end: int  # ... and allocated on the ring (monotonic, as version 6 counts)
    dep_pool_start: int
    dep_pool_end: int
    tensormap: int


@dataclass(frozen=True)
class RingDeadlock:
    """The run cannot go on: the error the device would latch, and where."""

    code: int
    name: str
    ring: int
    site: str  # the innermost open scope's `file.py:line`
    submit: Submit  # the submit that could not be admitted
    needed: int  # bytes (heap) or slots (task window, scope)
    used: int  # what the ring holds
    capacity: int
    pinned: tuple  # the live submits holding the ring (oldest first, at most 8)

    @property
    def where(self) -> str:
        """The innermost open scope: its site, or the root scope's description."""
        if self.site and not self.site.startswith("?"):
            return site_label(self.site)  # (a notebook cell's site by its In[n])
        return "the root scope, open for the whole run"

    def message(self) -> str:
        what = self.submit.name if self.submit.kind == "task" else "alloc_tensors"
        if self.code == SCOPE_DEADLOCK[0]:
            body = (f"the scope at {self.where} submitted {self.used} tasks on ring {self.ring}, "
                    f"whose task window holds {self.capacity}: its slots free only when it "
                    "ends")
            fix = ("split the scope (pl.scope() per stage or loop body) or raise "
                   "PTO2_RING_TASK_WINDOW")
        elif self.code == HEAP_RING_DEADLOCK[0] and self.needed > self.capacity:
            body = (f"'{what}' needs {_mib(self.needed)} on ring {self.ring}, more than its "
                    f"whole heap ({_mib(self.capacity)}); scope {self.where}")
            fix = "shrink the tensor (a smaller tile of the stage) or raise PTO2_RING_HEAP"
        elif self.code == HEAP_RING_DEADLOCK[0]:
            body = (f"ring {self.ring}'s heap holds {_mib(self.used)} owned by open scopes and "
                    f"cannot place {_mib(self.needed)} for '{what}' (capacity "
                    f"{_mib(self.capacity)}); innermost open scope {self.where}")
            fix = ("close a scope sooner (pl.scope() around the stage that allocates), "
                   "shrink the intermediates, or raise PTO2_RING_HEAP")
        else:
            body = (f"ring {self.ring}'s task window is full ({self.used} live of "
                    f"{self.capacity}) at '{what}'; innermost open scope {self.where}")
            fix = "raise PTO2_RING_TASK_WINDOW or split the scope"
        return f"orch_error_code={self.code} ({self.name}): {body}; fix: {fix}"


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} B"


@dataclass(frozen=True)
class RingUse:
    """What one ring holds right after a submit is admitted (best case, as the peaks)."""

    pos: int  # the submit's position in the run (`Submit.pos`)
    ring: int
    heap: int  # bytes held by live tasks
    slots: int  # task-window slots held


@dataclass
class RingPeak:
    """A ring's highest use of one resource, and the scope site it happened in."""

    value: int = 0
    site: str = ""


@dataclass
class RingReport:
    """A replay of a run's submits through the ring model (see the module docstring)."""

    capacities: RingCapacities
    samples: list = field(default_factory=list)  # ScopeSample, in order
    heap_peak: list = field(default_factory=lambda: [RingPeak() for _ in range(RINGS)])
    window_peak: list = field(default_factory=lambda: [RingPeak() for _ in range(RINGS)])
    dep_pool_peak: list = field(default_factory=lambda: [RingPeak() for _ in range(RINGS)])
    tensormap_peak: int = 0
    uses: list = field(default_factory=list)  # RingUse per admitted submit, in order
    deadlock: RingDeadlock | None = None
    submits: list = field(default_factory=list, repr=False)

    def what_if(self, capacities: RingCapacities) -> RingReport:
        """The same submits under other capacities (no simulation)."""
        return replay(self.submits, capacities)

    def text(self) -> str:
        rows = ["ring  heap peak (capacity)            task slots peak    dep-pool peak*  "
                "peak site"]
        for r in range(RINGS):
            h, w, d = self.heap_peak[r], self.window_peak[r], self.dep_pool_peak[r]
            if not (h.value or w.value):
                continue
            rows.append(f"{r:>4}  {_mib(h.value):>10} ({_mib(self.capacities.heap[r]):>10})"
                        f"  {w.value:>6} / {self.capacities.task_window[r]:<7}"
                        f"  {d.value:>12}    {h.site or w.site}")
        rows.append(f"tensor map peak* {self.tensormap_peak} / {self.capacities.tensormap}; "
                    "* upper bounds (every producer still live); occupancy is the best case "
                    "(every task done when submitted), a lower bound of the device's")
        if self.deadlock is not None:
            rows.append(self.deadlock.message())
        return "\n".join(rows)


class _Ring:
    """One ring set's allocator state (simpler `PTO2TaskAllocator`)."""

    def __init__(self, window: int, heap: int):
        self.window, self.size = window, heap
        self.head = 0  # next local id
        self.tail = 0  # last_task_alive: the oldest live local id
        self.top = self.heap_tail = 0  # heap offsets
        self.top_wraps = self.tail_wraps = 0  # (to unroll them into cumulative bytes)
        self.anchor = -1  # the allocator's rebase anchor: the tail stays put until past it
        self.ends: list = []  # per local id: the end offset of its packed buffer
        self.wrapped_at: list = []  # per local id: top_wraps when it was placed
        self.owners: list = []  # per local id: its submit's position
        self.dep: list = []  # per local id: its fan-in entries
        self.tm: list = []  # per local id: its tensor-map inserts
        self.dep_live = self.tm_live = 0
        self.dep_total = 0  # fan-in entries ever taken (the dep pool's unrolled top)

    def reclaim_to(self, alive: int) -> None:
        """`update_heap_tail`: the tasks before local id `alive` are reclaimed."""
        if alive <= self.tail:
            return
        while self.tail < alive:
            self.dep_live -= self.dep[self.tail]
            self.tm_live -= self.tm[self.tail]
            self.tail += 1
        if self.anchor >= 0 and self.tail <= self.anchor:
            return
        self.anchor = -1
        self.heap_tail = self.ends[self.tail - 1]
        self.tail_wraps = self.wrapped_at[self.tail - 1]

    def bump(self, n: int) -> bool:
        """`try_bump_heap`: place `n` bytes; False when they do not fit."""
        if n == 0:
            return True
        top, tail = self.top, self.heap_tail
        if top >= tail:
            if self.size - top >= n:
                self.top = top + n
            elif tail > n:  # wrap to the start, in front of the tail
                self.top = n
                self.top_wraps += 1
            elif top == tail and n <= self.size:  # an empty heap starts over at 0
                self.top, self.heap_tail = n, 0
                self.top_wraps += 1
                self.tail_wraps = self.top_wraps
                self.anchor = self.head
            else:
                return False
            return True
        if tail - top > n:
            self.top = top + n
            return True
        return False

    def used(self) -> int:
        return (self.top + self.top_wraps * self.size) - \
            (self.heap_tail + self.tail_wraps * self.size)

    def cumulative(self) -> tuple[int, int]:
        return (self.heap_tail + self.tail_wraps * self.size,
                self.top + self.top_wraps * self.size)


def replay(submits: list[Submit], capacities: RingCapacities | None = None,
           edges: list | None = None) -> RingReport:
    """Run `submits` through the ring model under `capacities` (see the docstring)."""
    caps = capacities or RingCapacities()
    report = RingReport(caps, submits=submits)
    rings = [_Ring(caps.task_window[r], caps.heap[r]) for r in range(RINGS)]
    fanin = [0] * len(submits)
    for e in (runtime_edges(submits) if edges is None else edges):
        fanin[e.succ] += 1
    tm_inserts = [0 if s.manual else sum(1 for a in s.args if a.type in
                                         ("INOUT", "OUTPUT_EXISTING") and not a.manual_dep)
                  for s in submits]
    # the open scope instances: [(instance key, node, depth, ring, first local id on its
    # ring or None, own task count)], root first
    root = ScopeNode("root", None)
    stack: list = [[("root",), root, 0, 0, None, 0]]
    samples = report.samples

    def sample(phase: str, frame: list) -> None:
        ring = frame[3]
        g = rings[ring]
        start, end = g.cumulative()
        samples.append(ScopeSample(frame[1].site if frame[1].kind != "root" else "",
                                   phase, frame[2], ring, g.tail, g.head, start, end,
                                   g.dep_total - g.dep_live, g.dep_total,
                                   sum(x.tm_live for x in rings)))

    def alive_mark(ring: int) -> int:
        """The oldest local id on `ring` owned by an open scope (best-case reclaim)."""
        for f in stack:
            if f[3] == ring and f[4] is not None:
                return f[4]
        return rings[ring].head

    sample("begin", stack[0])
    for s in submits:
        path: tuple = (("root",),) + tuple((node, key) for node, key in s.scopes)
        common = 1
        while common < len(stack) and common < len(path) and stack[common][0] == path[common]:
            common += 1
        while len(stack) > common:
            sample("end", stack[-1])
            stack.pop()
        for depth in range(common, len(path)):
            node, key = path[depth][0], path[depth][1]
            frame = [(node, key), node, depth, min(depth, RINGS - 1), None, 0]
            stack.append(frame)
            sample("begin", frame)
        top = stack[-1]
        ring = s.ring
        g = rings[ring]
        g.reclaim_to(alive_mark(ring))
        site = top[1].site
        if top[5] >= caps.task_window[ring] - 1:
            report.deadlock = _deadlock(SCOPE_DEADLOCK, ring, site, s, 1, top[5],
                                        caps.task_window[ring], submits, g)
            break
        if g.head - g.tail + 1 >= caps.task_window[ring]:
            report.deadlock = _deadlock(FLOW_CONTROL_DEADLOCK, ring, site, s, 1,
                                        g.head - g.tail, caps.task_window[ring], submits, g)
            break
        if not g.bump(s.heap_bytes):
            report.deadlock = _deadlock(HEAP_RING_DEADLOCK, ring, site, s, s.heap_bytes,
                                        g.used(), caps.heap[ring], submits, g)
            break
        local = g.head
        g.head += 1
        g.ends.append(g.top)
        g.wrapped_at.append(g.top_wraps)
        g.dep.append(fanin[s.pos])
        g.tm.append(tm_inserts[s.pos])
        g.dep_live += fanin[s.pos]
        g.dep_total += fanin[s.pos]
        g.tm_live += tm_inserts[s.pos]
        g.owners.append(s.pos)
        top[5] += 1
        if top[4] is None:  # the scope's first task of its own pins its ring from here
            top[4] = local
        report.uses.append(RingUse(s.pos, ring, g.used(), g.head - g.tail))
        _peak(report.heap_peak[ring], g.used(), site)
        _peak(report.window_peak[ring], g.head - g.tail, site)
        _peak(report.dep_pool_peak[ring], g.dep_live, site)
        report.tensormap_peak = max(report.tensormap_peak, sum(x.tm_live for x in rings))
    if report.deadlock is None:
        while stack:
            sample("end", stack[-1])
            stack.pop()
    return report


def _peak(p: RingPeak, value: int, site: str) -> None:
    if value > p.value:
        p.value, p.site = value, site


def _deadlock(kind: tuple, ring: int, site: str, s: Submit, needed: int, used: int,
              capacity: int, submits: list, g: _Ring) -> RingDeadlock:
    live = [submits[g.owners[i]] for i in range(g.tail, min(g.head, g.tail + 8))]
    return RingDeadlock(kind[0], kind[1], ring, site, s, needed, used, capacity, tuple(live))


__all__ = ["FLOW_CONTROL_DEADLOCK", "HEAP_RING_DEADLOCK", "SCOPE_DEADLOCK", "RingCapacities",
           "RingConfigError", "RingDeadlock", "RingPeak", "RingReport", "RingUse", "ScopeSample",
           "replay"]

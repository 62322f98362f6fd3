"""What a simulated run leaves behind: tasks, their accesses, the task graph, costs.

A `Trace` holds one `TaskRecord` per launch (an SPMD launch of N blocks is one
record with N blocks), the dependency edges between tasks and, for every global
tensor, three int32 arrays saying which task, which block and which source site
last wrote each element (-1: never written by a task, i.e. uploaded data or
allocator residue; -2: written by orchestration code).

Cost model (see `COST_MODEL`): each op adds cycles to one pipe of the task
  * cube: per matmul `head + passes * ceil(m/16) * ceil(k/kt) * ceil(n/16)`
    (kt = 16 for 2-byte inputs, 8 for 4-byte), FLOPs = 2 m n k;
  * mte1: L1 -> L0A / L0B bytes over the reference bandwidths;
  * fix: each store of a cube result drains L0C: fixed + rows * max(floor, row_bytes / bw);
  * vector: `issue + bytes / vector_bpc` per instruction (bytes of its largest operand,
    computed in fp32 for narrow floats);
  * mte2 / mte3: GM -> on-chip / on-chip -> GM bytes over `gm_bpc`, each row
    rounded up to the platform's GM granule (512 B on A2/A3, 128 B on A5);
  * scalar: 1 cycle per scalar op.
A task's estimate is `max` over pipes (pipes overlap) per block; blocks of an SPMD
task run on `min(blocks, cores)` cores in waves. All of it is a model for
comparing kernels, not a wall-time prediction.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.ir.span import Span
from pypto.platform import Platform
from pypto.sim.device.memory import DeviceMemory, GlobalBuffer
from pypto.sim.trace.access import Access, RowAccess
from pypto.sim.trace.index import BoxIndex
from pypto.sim.trace.writers import LastWriter

COST_MODEL = __doc__.split("Cost model")[1].strip() if __doc__ else ""

PIPES = ("cube", "mte1", "fix", "vector", "mte2", "mte3", "scalar")

# Unmerged accesses (~250 bytes each) a trace holds at most: past it they are merged
# (what a task still running holds is bounded by `RAW_OPEN`)
RAW_HELD = 1 << 19
RAW_OPEN = 1 << 16


@dataclass
class TaskRecord:
    id: int
    name: str  # the region's name_hint (or the kernel name)
    function: str
    kind: str  # "at", "spmd", "dummy", "entry"
    blocks: int
    span: Span | None = None  # source span of the region / launch
    parent: int | None = None
    deps: list = field(default_factory=list)  # explicit deps= task ids
    units: set = field(default_factory=set)
    op_counts: dict = field(default_factory=dict)  # unit -> ops executed
    bytes: dict = field(default_factory=lambda: {"gm_read": 0, "gm_write": 0, "l1_to_l0": 0,
                                                 "l0c_drain": 0})
    flops: int = 0
    vector_elements: int = 0
    cycles: dict = field(default_factory=lambda: {p: 0.0 for p in PIPES})
    block_cycles: list = field(default_factory=list)  # per block: max over pipes
    args: list = field(default_factory=list)  # (param, tensor, direction, lo, hi, uid)
    seconds: float = 0.0  # host time spent simulating it
    # (variable, value) of the orchestration loops around its launch, outermost first:
    # which iteration launched it (the workbench names an element's writer by them)
    loops: tuple = ()
    # The accesses (`accesses`) merged so far. Most runs never read them (the golden
    # harness reads the costs), and merging each access as it happens was a third of
    # what tracing cost a block-by-block kernel; so they are merged when first read:
    # `_raw` holds the accesses since, as `add_access`'s arguments; a batched task's are
    # its run's log and its row in it (`_lazy`).
    _accesses: list = field(default_factory=list, repr=False, compare=False)
    _raw: list = field(default_factory=list, repr=False, compare=False)
    _lazy: Any = field(default=None, repr=False, compare=False)
    # the last access per (buffer, mode, block, atomic, phase), which the next one
    # extends when their union is a box -> (that access, its position); kept while the
    # task may still access (`_open`)
    _merge: dict | None = field(default=None, repr=False, compare=False)
    _open: bool = field(default=True, repr=False, compare=False)

    @property
    def accesses(self) -> list:
        """The task's accesses (`Access` / `RowAccess`), in the order it made them."""
        if self._lazy is not None:
            lazy, self._lazy = self._lazy, None
            lazy.expand(self)
        if self._raw:
            self.merge_raw()
        return self._accesses

    @accesses.setter
    def accesses(self, accesses: list) -> None:
        self._lazy = None
        self._accesses = list(accesses)

    def merge_raw(self) -> None:
        """Merge the accesses waiting in `_raw` (in the order they were made)."""
        raw, self._raw = self._raw, []
        add = self.add_access
        for a in raw:
            add(*a)
        if not self._open:
            self._merge = None

    def add_access(self, name: str, uid: int, write: bool, block: int, atomic: bool,
                   phase: int, lo: tuple, hi: tuple) -> None:
        """The task accessed the box [lo, hi) of buffer `uid`: it extends the task's last
        access of that buffer, mode, block, atomicity and phase when their union is a box
        (a second row of a gather makes the two a `RowAccess`), else it is a new one.
        (The race check keeps atomic-add writes and syncall phases apart, so merged
        boxes never mix them.)"""
        merge = self._merge
        if merge is None:
            merge = self._merge = {}
        key = (uid, write, block, atomic, phase)
        last = merge.get(key)
        if last is not None:
            prev = last[0]
            if (prev.lo == lo and prev.hi == hi) or prev.grow(lo, hi):
                return
            if type(prev) is Access:
                axis = prev.row_axis(lo, hi)
                if axis >= 0:
                    rows = RowAccess(prev, axis)
                    rows.grow(lo, hi)
                    self._accesses[last[1]] = rows
                    merge[key] = (rows, last[1])
                    return
        accs = self._accesses
        acc = Access(name, "W" if write else "R", block, lo, hi, uid, atomic, phase)
        merge[key] = (acc, len(accs))
        accs.append(acc)

    @property
    def source(self) -> str:
        return str(self.span) if self.span is not None else "<unknown>"

    @property
    def reads(self) -> list:
        return [a for a in self.accesses if a.mode == "R"]

    @property
    def writes(self) -> list:
        return [a for a in self.accesses if a.mode == "W"]

    def est_cycles(self, platform: Platform) -> float:
        if not self.block_cycles:
            return 0.0
        cores = platform.aic_cores if "cube" in self.units else platform.aiv_cores
        waves = math.ceil(len(self.block_cycles) / max(1, cores))
        return max(self.block_cycles) * waves

    def est_us(self, platform: Platform) -> float:
        return self.est_cycles(platform) / (platform.clock_ghz * 1e3)

    def to_dict(self, platform: Platform | None = None) -> dict:
        d = {"id": self.id, "name": self.name, "function": self.function, "kind": self.kind,
             "blocks": self.blocks, "source": self.source, "parent": self.parent,
             "deps": list(self.deps), "units": sorted(self.units),
             "op_counts": dict(self.op_counts), "bytes": dict(self.bytes), "flops": self.flops,
             "vector_elements": self.vector_elements,
             "cycles": {k: round(v, 1) for k, v in self.cycles.items()},
             "reads": [a.to_dict() for a in self.reads],
             "writes": [a.to_dict() for a in self.writes],
             "args": [{"param": p, "tensor": t, "direction": d, "ranges": list(zip(lo, hi))}
                      for p, t, d, lo, hi, _uid in self.args],
             "loops": {str(v): int(x) for v, x in self.loops}}
        if platform is not None:
            d["est_cycles"] = round(self.est_cycles(platform), 1)
            d["est_us"] = round(self.est_us(platform), 3)
        return d


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int
    kind: str  # "RAW", "WAR", "WAW" or "explicit"
    tensor: str | None = None

    def to_dict(self) -> dict:
        return {"src": self.src, "dst": self.dst, "kind": self.kind, "tensor": self.tensor}


def _edges_into(rec: TaskRecord, boxes: dict[int, BoxIndex], add_edge: Callable,
                shapes: dict[int, tuple | None], shadow: bool = True) -> None:
    """Add the data edges into `rec` from the boxes of earlier tasks, then file its own
    accesses (a write first shadowing what it contains when `shadow`)."""
    mine = [(a.uid, a) for a in rec.accesses]
    for uid, a in mine:
        idx = boxes.get(uid)
        if idx is None:
            continue
        if type(a) is RowAccess:
            tids, writes = idx.overlapping_rows(a.lo, a.hi, a.axis, a.ext, a.starts,
                                                a.mode == "R")
        else:
            tids, writes = idx.overlapping(a.lo, a.hi, a.mode == "R")
        if not len(tids):
            continue
        if a.mode == "R":
            for t in np.unique(tids[writes]).tolist():
                add_edge(t, rec.id, "RAW", a.tensor)
        else:
            for t in np.unique(tids[writes]).tolist():
                add_edge(t, rec.id, "WAW", a.tensor)
            for t in np.unique(tids[~writes]).tolist():
                add_edge(t, rec.id, "WAR", a.tensor)
    for uid, a in mine:
        idx = boxes.get(uid)
        if idx is None:
            idx = boxes[uid] = BoxIndex(len(a.lo), shapes.get(uid))
        elif shadow and a.mode == "W":
            idx.shadow(rec.id, a.lo, a.hi)
        if type(a) is RowAccess:
            idx.add_rows(rec.id, a.mode == "W", a.lo, a.hi, a.axis, a.ext, a.starts)
        else:
            idx.add(rec.id, a.mode == "W", a.lo, a.hi)


class Trace:
    """Everything recorded about one simulated run."""

    def __init__(self, platform: Platform, program_name: str = ""):
        self.platform = platform
        self.program = program_name
        self.tasks: list[TaskRecord] = []
        self._by_id: dict[int, TaskRecord] = {}
        self._edges: list[Edge] = []
        self._edge_set: set = set()
        # What the edges are derived from, in the order it happened and not yet turned
        # into edges: a finished task (its record) or a buffer that died (its uid). The
        # edges are derived when first read (`edges`): most runs (the golden harness's)
        # never read them, and deriving them is a box search per access - a third of a
        # traced prefill kernel's time. Derived later, in the same order, they are the
        # same edges.
        self._pending: list = []
        self.sites: list[tuple] = []  # (span, op name)
        self._site_ids: dict = {}
        # write event id -> (task, block, site); event 0 means "never written"
        self.write_events: list[tuple] = [(-1, -1, -1)]
        self._event_ids: dict = {(-1, -1, -1): 0}
        self.writers: dict[str, LastWriter] = {}
        self._boxes: dict[int, BoxIndex] = {}
        self._shapes: dict[int, tuple | None] = {}  # buffer uid -> its shape
        self.orchestration_accesses: list[Access] = []
        # what the runtime sees besides the launches: per buffer passed to a task, (name,
        # shape, dtype, kind) (`note_buffer`); the orchestration's `pl.create_tensor`s,
        # each (tasks launched before it, name, uid, span, loops) - the alloc tasks
        self.buffers: dict[int, tuple] = {}
        self.allocs: list[tuple] = []
        self.results: dict[int, int] = {}  # a launch's new result (uid) -> that task's id
        # the runtime's view of the finished run (`runtime.dependencies.runtime_view`)
        self.runtime_cache: dict = {}
        self.seconds = 0.0
        # finished tasks whose accesses wait unmerged (`TaskRecord._raw`), and how many
        self._raw_held: list[TaskRecord] = []
        self._raw_count = 0

    # -- building ------------------------------------------------------------------

    def site(self, span: Span | None, op: str) -> int:
        key = (span, op)
        i = self._site_ids.get(key)
        if i is None:
            i = len(self.sites)
            self.sites.append(key)
            self._site_ids[key] = i
        return i

    def write_event(self, task: int, block: int, site: int) -> int:
        key = (task, block, site)
        i = self._event_ids.get(key)
        if i is None:
            i = len(self.write_events)
            self.write_events.append(key)
            self._event_ids[key] = i
        return i

    def add_task(self, rec: TaskRecord) -> None:
        self.tasks.append(rec)
        self._by_id[rec.id] = rec

    def note_buffer(self, buf: GlobalBuffer) -> None:
        """`buf` is passed to a task: keep what the runtime's tensor descriptor says of it."""
        if buf.uid not in self.buffers:
            a = buf.array
            self.buffers[buf.uid] = (buf.name, tuple(a.shape), a.dtype, buf.kind)

    def note_alloc(self, name: str, uid: int, span: Span | None, loops: tuple = ()) -> None:
        """Orchestration allocated a tensor (`pl.create_tensor`) inside the loop
        iterations `loops` ((variable, value) pairs): the runtime's alloc task."""
        self.allocs.append((len(self.tasks), name, uid, span, loops))

    def task(self, tid: int) -> TaskRecord | None:
        return self._by_id.get(tid)

    def add_edge(self, src: int, dst: int, kind: str, tensor: str | None) -> None:
        if src == dst or src < 0:
            return
        key = (src, dst, kind, tensor)
        if key not in self._edge_set:
            self._edge_set.add(key)
            self._edges.append(Edge(src, dst, kind, tensor))

    def finish_task(self, rec: TaskRecord, memory: DeviceMemory) -> None:
        """`rec` is complete: its edges (from overlaps with the earlier accesses still in
        view; a box inside a later write is out of view, `BoxIndex.shadow`) are derived
        when the edges are first read. The shapes of the buffers it touched are taken
        now, while they are alive."""
        shapes = self._shapes
        rec._open = False
        # (a batched task's buffers: `note_shapes` at its run's end)
        uids = {a.uid for a in rec._accesses}
        raw = rec._raw
        if raw:
            uids.update([a[1] for a in raw])
            # unmerged accesses wait until read, up to a bound on what waits in all
            self._raw_held.append(rec)
            self._raw_count += len(raw)
            if self._raw_count > RAW_HELD:
                for r in self._raw_held:
                    r.merge_raw()
                self._raw_held = []
                self._raw_count = 0
        else:
            rec._merge = None  # (what its accesses merged into: the task is over)
        for uid in uids:
            if uid not in shapes:
                buf = memory.by_uid(uid)
                shapes[uid] = buf.array.shape if buf is not None else None
        self._pending.append(rec)

    def note_shapes(self, uids: Any, memory: DeviceMemory) -> None:
        """The shapes of the buffers `uids` (those a batched run's tasks accessed), taken
        while they are alive (`finish_task`)."""
        shapes = self._shapes
        for uid in uids:
            if uid not in shapes:
                buf = memory.by_uid(uid)
                shapes[uid] = buf.array.shape if buf is not None else None

    def forget(self, buf: GlobalBuffer) -> None:
        """A buffer is gone (its array died): nothing can touch it again, so no later task
        can depend through it; its index goes (once the tasks before its death have their
        edges)."""
        if self._pending:
            self._pending.append(buf.uid)
        else:
            self._boxes.pop(buf.uid, None)

    @property
    def edges(self) -> list[Edge]:
        """The dependency edges that order the tasks (see `dependencies` for the full
        relation), in the order the tasks finished."""
        if self._pending:
            pending, self._pending = self._pending, []
            boxes = self._boxes
            for item in pending:
                if type(item) is int:
                    boxes.pop(item, None)
                    continue
                for d in item.deps:
                    self.add_edge(int(d), item.id, "explicit", None)
                _edges_into(item, boxes, self.add_edge, self._shapes)
        return self._edges

    @edges.setter
    def edges(self, edges: list[Edge]) -> None:
        self._pending = []
        self._edges = list(edges)
        self._edge_set = {(e.src, e.dst, e.kind, e.tensor) for e in self._edges}

    def dependencies(self) -> list[Edge]:
        """The full dependency relation: an edge from every earlier task whose access
        conflicts with (overlaps, one of them a write) an access of a later task, plus the
        explicit deps. `edges` holds only what orders the tasks (each pair here is ordered
        by a path of `edges`); this recomputes the rest from the tasks' accesses."""
        out: dict = {}

        def add(src: int, dst: int, kind: str, tensor: str | None) -> None:
            if src != dst and src >= 0:
                out.setdefault((src, dst, kind, tensor), None)

        boxes: dict[int, BoxIndex] = {}
        for rec in self.tasks:
            for d in rec.deps:
                add(int(d), rec.id, "explicit", None)
            _edges_into(rec, boxes, add, self._shapes, shadow=False)
        return [Edge(*k) for k in out]

    # -- reading -------------------------------------------------------------------

    def predecessors(self, tid: int) -> list[Edge]:
        return [e for e in self.edges if e.dst == tid]

    def successors(self, tid: int) -> list[Edge]:
        return [e for e in self.edges if e.src == tid]

    def graph(self) -> dict:
        """Nodes and edges, e.g. for networkx: {'nodes': [...], 'edges': [...]}."""
        return {"nodes": [{"id": t.id, "name": t.name, "blocks": t.blocks, "kind": t.kind}
                          for t in self.tasks],
                "edges": [e.to_dict() for e in self.edges]}

    def totals(self) -> dict:
        cyc = {p: sum(t.cycles[p] for t in self.tasks) for p in PIPES}
        return {"tasks": len(self.tasks), "edges": len(self.edges),
                "flops": sum(t.flops for t in self.tasks),
                "gm_read": sum(t.bytes["gm_read"] for t in self.tasks),
                "gm_write": sum(t.bytes["gm_write"] for t in self.tasks),
                "cycles": cyc,
                "est_us_serial": self.est_us_serial()}

    def est_us_serial(self) -> float:
        """The cost model's estimate of the run with its tasks one after another (no
        edges needed: `totals` derives them)."""
        return sum(t.est_us(self.platform) for t in self.tasks)

    def to_dict(self) -> dict:
        return {"program": self.program, "platform": self.platform.name,
                "cost_model": COST_MODEL,
                "tasks": [t.to_dict(self.platform) for t in self.tasks],
                "edges": [e.to_dict() for e in self.edges],
                "sites": [{"source": str(s), "op": op} for s, op in self.sites],
                "totals": self.totals()}

    def summary(self) -> str:
        rows = [f"{'id':>4} {'name':<24} {'blocks':>6} {'units':<22} {'gm R/W bytes':>20} "
                f"{'est us':>9}  source"]
        for t in self.tasks:
            rw = f"{t.bytes['gm_read']}/{t.bytes['gm_write']}"
            rows.append(f"{t.id:>4} {t.name[:24]:<24} {t.blocks:>6} "
                        f"{','.join(sorted(t.units))[:22]:<22} {rw:>20} "
                        f"{t.est_us(self.platform):>9.3f}  {t.source}")
        rows.append(f"{len(self.edges)} edges: " + ", ".join(
            f"{e.src}->{e.dst} {e.kind}{'(' + e.tensor + ')' if e.tensor else ''}"
            for e in self.edges[:20]) + (" ..." if len(self.edges) > 20 else ""))
        return "\n".join(rows)

    def __repr__(self) -> str:
        return f"<Trace {self.program}: {len(self.tasks)} tasks, {len(self.edges)} edges>"

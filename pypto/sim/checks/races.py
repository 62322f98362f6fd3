"""The `race` check: conflicting accesses by tasks the runtime does not order.

On hardware, tasks run as soon as the runtime's dependency tracking lets them;
program order orders nothing (reference §0, §7 item 2). The simulator runs tasks
one after another in program order, so a missing dependency never shows up as a
wrong result here, only later on a device. This check finds them after the run,
from the trace:

1. **Happens-before, as the runtime derives it** (from what each launch *declares*,
   not from what the simulator saw it do): the edges of the runtime's dependency rule
   (`pypto.sim.runtime.dependencies`, simpler's `compute_task_fanin`), over the
   windows passed as launch arguments with the call-site direction the compiler gave
   each (`DeriveTaskGraph`, reference §4.2):

   * `Input` and `InOut` look up the overlapping earlier *writers* (RAW, WAW);
   * `InOut` and `OutputExisting` (a callee `pl.Out` the compiler did not promote to
     `InOut`) are then registered as writers; `OutputExisting` looks nothing up, so it
     waits for nothing;
   * a **reader is never registered**: nothing orders a later write after it
     (write-after-read is not tracked; pypto-lib `dependency-and-scheduling.md`), so a
     task that overwrites what an earlier task reads needs `deps=`;
   * reading a tensor waits for the task that allocated it (the creator edge);
   * `NoDep` arguments (`no_dep_args=`, `pl.no_dep`) and tensors created with
     `manual_dep=True` take no part in the lookups;
   * launches inside `pl.manual_scope` do neither lookups nor inserts: only their
     explicit `deps=` order them;
   * explicit `deps=` (and `pl.system.task_dummy` joins) add edges on top;
   * `allow_early_resolve=True` only lets consumers be *staged* early; they still
     start after the producer completes (reference §1.5), so it changes no order
     here;
   * a nested launch (a sub-kernel launched from inside a task) is attributed to
     its top-level task.

   The relation is the transitive closure of these edges.

2. **Conflicts, from what the tasks actually did**: the per-task, per-block read and
   write boxes of the trace (`TaskRecord.accesses`). Two accesses of the same buffer
   conflict when their boxes overlap and at least one writes, except two atomic-add
   writes (`atomic=pl.AtomicType.Add`), which commute. A conflict is a race when
   * the two tasks are not ordered either way, or
   * they are two blocks of one SPMD task (blocks run concurrently) in the same
     `pl.system.syncall` phase. Iterations of a `pl.parallel` loop are separate
     tasks with no edges between them, so the first rule covers them.
   Between tasks, an access meets only the accesses no later write has covered (the
   covering write stands for them), so the check is linear in the accesses when many
   tasks rewrite one region; every racy element is reported, and of several racing
   pairs on one element the report may name the later one.

Accesses by orchestration code (element reads/writes outside tasks) are not
checked. Everything found is collected into a `RaceReport` (all races, grouped per
task pair and tensor), which `SimResult.races` holds; a strict run raises
`RaceError` carrying it after the run completes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from pypto.errors import SimulationError
from pypto.ir.nodes import Program
from pypto.ir.span import Span
from pypto.passes.regions import LoopInfo
from pypto.sim.checks.live_accesses import LiveAccesses, conflict
from pypto.sim.runtime.dependencies import runtime_view
from pypto.sim.runtime.submits import CallDirections
from pypto.sim.trace.trace import TaskRecord, Trace


class _Result(Protocol):
    """The completed run a strict race check fails (`pypto.sim.result.SimResult`)."""

    races: RaceReport | None


class RaceError(SimulationError):
    """Tasks that the runtime does not order touch the same elements (`checks=("race",)`).

    `report` lists every race; `result` is the completed `SimResult` (its outputs are
    what the simulator's program order produced, which hardware does not guarantee)."""

    code = "S011"

    def __init__(self, report: RaceReport, result: _Result | None = None):
        first = report.races[0]
        more = len(report.races) - 1
        msg = (f"data race: {first.headline()}"
               + (f" (and {more} more race{'s' if more > 1 else ''}; see err.report)"
                  if more else ""))
        span = first.first.span if first.first.span is not None else first.second.span
        super().__init__(msg, span, first.hint, report.text(), tensor=first.tensor,
                         region=first.first.name, block=first.first.block,
                         indices=first.index_text)
        self.report = report
        self.result = result


@dataclass
class RaceSide:
    """One of the two tasks of a race."""

    task: int
    name: str  # the region's name_hint
    function: str
    block: int | None  # a block of it that made the access (None: unknown)
    mode: str  # "read", "write" or "atomic add"
    direction: str | None  # the call-site direction the runtime saw for this tensor
    source: str  # file:line:col of the launch
    span: Span | None = None

    @property
    def line(self) -> int:
        return getattr(self.span, "line", 0) or 0

    def label(self) -> str:
        blk = f" block {self.block}" if self.block is not None and self.block >= 0 else ""
        return f"task {self.task} '{self.name}'{blk} ({self.mode}, {self.source})"

    def to_dict(self) -> dict:
        return {"task": self.task, "name": self.name, "function": self.function,
                "block": self.block, "mode": self.mode, "direction": self.direction,
                "source": self.source}


@dataclass
class Race:
    """Two unordered accesses (or groups of them) of one tensor that conflict."""

    kind: str  # "write-write", "read-write" or "atomic-plain"
    tensor: str
    first: RaceSide  # the earlier task in program order (or the lower block)
    second: RaceSide
    ranges: list  # [(lo, hi)] per axis: bounding box of the overlapping elements
    same_task: bool = False
    pairs: int = 1  # conflicting (access, access) pairs folded into this race
    block_pairs: list = field(default_factory=list)  # first few (block, block)
    reason: str = ""
    hint: str = ""

    @property
    def index_text(self) -> str:
        return "[" + ", ".join(f"{lo}:{hi}" for lo, hi in self.ranges) + "]"

    @property
    def tasks(self) -> tuple:
        return self.first.task, self.second.task

    def headline(self) -> str:
        if self.same_task:
            return (f"blocks {self.first.block} and {self.second.block} of task "
                    f"{self.first.task} '{self.first.name}' ({self.first.source}) "
                    f"{self._verb()} '{self.tensor}'{self.index_text}")
        return (f"{self.first.label()} and {self.second.label()} {self._verb()} "
                f"'{self.tensor}'{self.index_text} with no dependency between them")

    def _verb(self) -> str:
        return {"write-write": "both write", "read-write": "read and write",
                "atomic-plain": "atomically add to and plainly access"}[self.kind]

    def __str__(self) -> str:
        return f"{self.headline()}: {self.reason}" if self.reason else self.headline()

    def to_dict(self) -> dict:
        return {"kind": self.kind, "tensor": self.tensor, "first": self.first.to_dict(),
                "second": self.second.to_dict(), "ranges": [list(r) for r in self.ranges],
                "same_task": self.same_task, "pairs": self.pairs,
                "block_pairs": [list(p) for p in self.block_pairs], "reason": self.reason,
                "hint": self.hint}


@dataclass
class RaceReport:
    """Every race of one run (empty: none found)."""

    races: list = field(default_factory=list)
    tasks: int = 0
    edges: int = 0  # happens-before edges derived (before the transitive closure)
    accesses: int = 0
    seconds: float = 0.0

    def __bool__(self) -> bool:
        return bool(self.races)

    def __len__(self) -> int:
        return len(self.races)

    def __iter__(self):
        return iter(self.races)

    def task_pairs(self) -> list:
        """(task, task) of every race between two tasks; (t, t) for blocks of one task."""
        return [r.tasks for r in self.races]

    def text(self, limit: int = 20) -> str:
        if not self.races:
            return f"no races among {self.tasks} task(s)"
        rows = [f"{len(self.races)} race(s) among {self.tasks} task(s):"]
        for r in self.races[:limit]:
            rows.append(f"  - {r}")
            if r.hint:
                rows.append(f"    fix: {r.hint}")
        if len(self.races) > limit:
            rows.append(f"  ... {len(self.races) - limit} more")
        return "\n".join(rows)

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict:
        return {"races": [r.to_dict() for r in self.races], "tasks": self.tasks,
                "edges": self.edges, "accesses": self.accesses}


# --- happens-before ----------------------------------------------------------------------


# the runtime's TensorArgType -> the compiler's direction name the reports use
_DIRECTION = {"INPUT": "Input", "INOUT": "InOut", "OUTPUT_EXISTING": "OutputExisting",
              "OUTPUT": "Output"}


@dataclass
class _TaskView:
    rec: TaskRecord
    pos: int
    root: int  # position of the top-level task
    dirs: dict  # tensor name -> direction (the strongest over its arguments)
    manual: bool
    nodes: list


class Order:
    """Happens-before between a run's top-level tasks (by position): the transitive
    closure of the runtime's edges, asked pair by pair (a backward search from the
    later task over tasks after the earlier one, remembered)."""

    def __init__(self, preds: list[set]):
        self.preds = preds
        self._known: dict = {}

    def before(self, a: int, b: int) -> bool:
        """Does position `a` happen before position `b` (a < b)?"""
        key = (a, b)
        got = self._known.get(key)
        if got is not None:
            return got
        preds = self.preds
        seen = {b}
        todo = [b]
        found = False
        while todo and not found:
            n = todo.pop()
            for p in preds[n]:
                if p == a:
                    found = True
                    break
                if p > a and p not in seen:
                    seen.add(p)
                    todo.append(p)
        self._known[key] = found
        return found


def happens_before(trace: Trace, program: Program | None, analyses: dict) -> tuple:
    """(task views by id, the `Order` of the top-level tasks by position, number of
    direct edges): the order the runtime derives for the tasks of `trace`
    (`pypto.sim.runtime.dependencies`), from what each launch declares."""
    submits, edges = runtime_view(trace, program, analyses)
    tasks = sorted(trace.tasks, key=lambda t: t.id)
    pos = {t.id: i for i, t in enumerate(tasks)}
    by_trace = {s.trace_id: s for s in submits if s.trace_id is not None}
    static = CallDirections(program, analyses)
    views: dict = {}
    for i, t in enumerate(tasks):
        root = i
        p = t.parent
        while p is not None and p in pos:
            root = pos[p]
            p = tasks[root].parent
        s = by_trace.get(t.id)
        dirs: dict = {}
        rank = {"NoDep": 0, "Input": 1, "OutputExisting": 2, "Output": 2, "InOut": 3}
        if s is not None:
            for a in s.args:
                d = "NoDep" if a.manual_dep else _DIRECTION.get(a.type, "InOut")
                old = dirs.get(a.tensor)
                if old is None or rank.get(d, 3) > rank.get(old, 3):
                    dirs[a.tensor] = d
        nodes = static.by_site.get((t.function, t.span), [])
        views[t.id] = _TaskView(t, i, root, dirs, bool(s is not None and s.manual), nodes)
    # the runtime's edges between tasks (allocs order nothing: they have no inputs)
    preds: list[set] = [set() for _ in tasks]
    n_edges = 0
    for e in edges:
        a, b = submits[e.pred].trace_id, submits[e.succ].trace_id
        if a is None or b is None:
            continue
        pa, pb = pos[a], pos[b]
        if pa not in preds[pb]:
            preds[pb].add(pa)
            n_edges += 1
    for i, t in enumerate(tasks):
        for d in t.deps:  # explicit deps of nested launches too
            if d in pos and pos[d] < i:
                preds[i].add(pos[d])
        if views[t.id].root != i:
            preds[i].add(views[t.id].root)  # a nested launch: after its top-level task
    return views, Order(preds), n_edges


# --- conflicts ------------------------------------------------------------------------------


def find_races(trace: Trace, program: Program | None, analyses: dict, *,
               max_races: int = 200) -> RaceReport:
    """Every race in a traced run of `program` (see the module docstring)."""
    t0 = time.perf_counter()
    views, order, n_edges = happens_before(trace, program, analyses)
    by_pos = {v.pos: v for v in views.values()}
    rows: dict = {}  # uid -> list of (pos, block, kind, phase, lo, hi, root)
    names: dict = {}
    n_acc = 0
    for v in sorted(views.values(), key=lambda v: v.pos):
        for a in v.rec.accesses:
            kind = 0 if a.mode == "R" else (2 if a.atomic else 1)
            mine = rows.setdefault(a.uid, [])
            for lo, hi in a.boxes():  # (a gather's rows one by one)
                mine.append((v.pos, a.block, kind, a.phase, tuple(lo), tuple(hi), v.root))
                n_acc += 1
            names[a.uid] = a.tensor
    found: dict = {}
    for uid, acc in rows.items():
        if not any(a[2] for a in acc):
            continue
        if len({len(a[4]) for a in acc}) != 1:
            continue  # one buffer is always addressed with its own rank
        _within_tasks(acc, by_pos, names[uid], found)
        _between_tasks(acc, order, by_pos, names[uid], found)
    races = sorted(found.values(), key=lambda r: (r.first.task, r.second.task, r.tensor,
                                                  r.first.block or 0, r.second.block or 0))
    for r in races:
        _explain(r, views)
    report = RaceReport(races[:max_races], len(views), n_edges, n_acc)
    report.seconds = time.perf_counter() - t0
    return report


def _within_tasks(acc: list, by_pos: dict, tensor: str, found: dict) -> None:
    """Blocks of one SPMD task in one syncall phase run concurrently: every pair of
    them that conflicts (per task: its blocks against each other)."""
    groups: dict = {}
    for a in acc:
        groups.setdefault(a[0], []).append(a)
    for group in groups.values():
        if len(group) < 2 or not any(a[2] for a in group) or \
                len({a[1] for a in group}) < 2:
            continue
        n = len(group)
        blk = np.fromiter((a[1] for a in group), np.int64, n)
        kind = np.fromiter((a[2] for a in group), np.int64, n)
        phase = np.fromiter((a[3] for a in group), np.int64, n)
        lo = np.array([a[4] for a in group], np.int64).reshape(n, -1)
        hi = np.array([a[5] for a in group], np.int64).reshape(n, -1)
        for i in np.nonzero(kind > 0)[0].tolist():
            m = np.all(lo < hi[i], axis=1) & np.all(hi > lo[i], axis=1)
            m &= (blk != blk[i]) & (phase == phase[i])
            m &= (kind == 0) | (np.arange(n) > i)  # write-write pairs once
            if kind[i] == 2:
                m &= kind != 2  # atomic adds commute
            for j in np.nonzero(m)[0].tolist():
                _add(found, group[i], group[j], tensor, by_pos)


def _between_tasks(acc: list, order: Order, by_pos: dict, tensor: str, found: dict) -> None:
    """Accesses of different tasks: each task's accesses meet the *live* accesses before
    it - the ones no later write has covered. A write that covers an earlier access
    stands for it from then on: whatever conflicts with the covered access conflicts
    with the write, so a race through it is reported with the write (the check finds
    every racy element; of several racing pairs on one element it may name the later).
    That keeps the work linear in the accesses when tasks keep rewriting one region, and
    a bucket look-up per access (`LiveAccesses`) when they write disjoint parts of it."""
    live = LiveAccesses(acc[0][5][0] - acc[0][4][0] if acc[0][4] else 1)
    i = 0
    n = len(acc)
    while i < n:
        pos = acc[i][0]
        j = i
        while j < n and acc[j][0] == pos:
            j += 1
        mine = acc[i:j]
        root = mine[0][6]
        ordered: dict = {}
        if live.count:
            for b in mine:
                for e in live.near(b):
                    a = e[0]
                    if a[6] == root or not conflict(a, b):
                        continue
                    o = ordered.get(a[6])
                    if o is None:
                        o = ordered[a[6]] = order.before(a[6], root)
                    if not o:
                        _add(found, a, b, tensor, by_pos)
            for w in mine:
                if w[2]:
                    live.cover(w)
        live.add(mine)
        i = j


def _add(found: dict, ai: tuple, aj: tuple, tensor: str, by_pos: dict) -> None:
    # order the pair: earlier task first (then lower block)
    if (aj[0], aj[1]) < (ai[0], ai[1]):
        ai, aj = aj, ai
    ki, kj = ai[2], aj[2]
    if 2 in (ki, kj):
        rk = "atomic-plain"
    elif ki and kj:
        rk = "write-write"
    else:
        rk = "read-write"
    same = ai[0] == aj[0]
    key = (ai[0], aj[0], tensor, rk) if not same else (ai[0], tensor, rk)
    ilo = [max(x, y) for x, y in zip(ai[4], aj[4])]
    ihi = [min(x, y) for x, y in zip(ai[5], aj[5])]
    r = found.get(key)
    if r is None:
        vi, vj = by_pos[ai[0]], by_pos[aj[0]]
        r = found[key] = Race(rk, tensor, _side(vi, ai, ki, tensor), _side(vj, aj, kj, tensor),
                              [(int(a), int(b)) for a, b in zip(ilo, ihi)], same_task=same,
                              pairs=0)
    else:
        r.ranges = [(min(a, int(c)), max(b, int(d))) for (a, b), c, d in
                    zip(r.ranges, ilo, ihi)]
    r.pairs += 1
    if len(r.block_pairs) < 8 and (ai[1], aj[1]) not in r.block_pairs:
        r.block_pairs.append((int(ai[1]), int(aj[1])))


def _side(v: _TaskView, a: tuple, k: int, tensor: str) -> RaceSide:
    t = v.rec
    mode = ("read", "write", "atomic add")[k]
    return RaceSide(t.id, t.name, t.function, int(a[1]) if a[1] >= 0 else None, mode,
                    v.dirs.get(tensor), t.source, t.span)


# --- why -------------------------------------------------------------------------------


def _explain(r: Race, views: dict) -> None:
    a, b = views[r.first.task], views[r.second.task]
    da, db = r.first.direction, r.second.direction
    if r.same_task:
        r.reason = (f"the {a.rec.blocks} blocks of one SPMD task run concurrently and "
                    "nothing orders them")
        r.hint = ("give each block its own part of the tensor (offsets from "
                  "pl.get_block_idx()), reduce with atomic=pl.AtomicType.Add, or separate "
                  "the phases with pl.system.syncall")
        return
    par = _shared_parallel_loop(a, b)
    if par is not None:
        r.reason = (f"both are iterations of the pl.parallel loop over '{par.var}': "
                    "pl.parallel asserts independent iterations, so they are separate tasks "
                    "with no edges between them")
        r.hint = ("make each iteration touch its own slice, or use pl.range if an iteration "
                  "needs the previous one's result")
        return
    manual = [v for v in (a, b) if v.manual]
    if manual:
        later = b if b.manual else a
        r.reason = (f"task {later.rec.id} '{later.rec.name}' is in a pl.manual_scope, where "
                    "only deps= orders tasks, and its deps= do not reach task "
                    f"{(a if later is b else b).rec.id}")
        r.hint = (f"add the TaskId of '{a.rec.name}' (with ... as tid) to deps= of "
                  f"'{b.rec.name}'")
        return
    for side, d, v in ((r.first, da, a), (r.second, db, b)):
        if d is None:
            r.reason = (f"task {v.rec.id} '{v.rec.name}' does not pass '{r.tensor}' as a launch "
                        "argument the runtime tracks")
            r.hint = "pass the tensor to the kernel as an argument"
            return
        if d == "NoDep":
            r.reason = (f"'{r.tensor}' is untracked for task {v.rec.id} '{v.rec.name}' "
                        "(no_dep_args= / pl.no_dep / manual_dep=True)")
            r.hint = "drop the no-dependency marker, or order the tasks with deps="
            return
        if side.mode != "read" and d == "Input":
            r.reason = (f"task {v.rec.id} '{v.rec.name}' writes '{r.tensor}' through a "
                        "parameter declared pl.In, so the runtime only sees a read")
            r.hint = "declare the parameter pl.InOut (or pl.Out if it does not read it)"
            return
    if r.kind == "read-write" and r.first.mode == "read" and db in ("InOut", "OutputExisting"):
        r.reason = (f"task {b.rec.id} '{b.rec.name}' overwrites '{r.tensor}' that task "
                    f"{a.rec.id} '{a.rec.name}' reads before it: the runtime orders a write "
                    "only after earlier writers (its tensor map holds producers), never after "
                    "earlier readers, so the write may land before the read")
        r.hint = (f"add deps= from '{a.rec.name}' to '{b.rec.name}' (`with pl.at(...) as tid` "
                  "on the reader, deps=[tid] on the writer), or write into a fresh tensor")
        return
    if db == "OutputExisting":
        r.reason = (f"task {b.rec.id} '{b.rec.name}' takes '{r.tensor}' as pl.Out "
                    "(OutputExisting): the runtime registers its write without waiting for "
                    f"earlier accesses, so task {a.rec.id} '{a.rec.name}' is not ordered "
                    "before it")
        r.hint = "declare the parameter pl.InOut so the runtime looks up earlier accesses"
        return
    if da == "OutputExisting" and r.second.mode != "read":
        r.reason = (f"task {a.rec.id} '{a.rec.name}' writes '{r.tensor}' as pl.Out "
                    f"(OutputExisting) and task {b.rec.id} '{b.rec.name}' does not look it up")
        r.hint = "declare the later task's parameter pl.InOut"
        return
    r.reason = "the declared directions and deps= give no dependency path between them"
    r.hint = "pass the tensor with the right direction, or add deps="


def _shared_parallel_loop(a: _TaskView, b: _TaskView) -> LoopInfo | None:
    """The innermost pl.parallel loop around one launch site that made both tasks."""
    same = [n for n in a.nodes if any(n is m for m in b.nodes)]
    for na in same:
        for nb in same:
            for la, lb in zip(reversed(na.loops), reversed(nb.loops)):
                if la != lb:
                    break
                if la.kind == "parallel":
                    return la
    return None


__all__ = ["Race", "RaceError", "RaceReport", "RaceSide", "find_races", "happens_before"]

"""The `race` check: conflicting accesses by tasks the runtime does not order.

On hardware, tasks run as soon as the runtime's dependency tracking lets them;
program order orders nothing (reference §0, §7 item 2). The simulator runs tasks
one after another in program order, so a missing dependency never shows up as a
wrong result here, only later on a device. This check finds them after the run,
from the trace:

1. **Happens-before, as the runtime derives it** (from what each launch *declares*,
   not from what the simulator saw it do). Per tensor buffer, over the windows
   passed as launch arguments, with the call-site direction the compiler gave each
   argument (`DeriveTaskGraph`, reference §4.2):

   * `Input` waits for the overlapping writers (RAW) and is recorded as a reader;
   * `InOut` waits for the overlapping writers and readers (WAW, WAR) and becomes
     the writer (entries it covers are dropped: they are ordered before it);
   * `OutputExisting` (a callee `pl.Out` the compiler did not promote to `InOut`)
     is registered as a writer **without a lookup**: it waits for nothing. The
     compiler promotes `Out` to `InOut` exactly when it sees an earlier access it
     must follow (inside a sequential loop, after an earlier writer of the same
     root, or under an enclosing `InOut`); an `Out` where the kernel needed `InOut`
     therefore silently removes an edge (reference §7 item 2);
   * `NoDep` arguments (`no_dep_args=`, `pl.no_dep`) and tensors created with
     `manual_dep=True` take no part;
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
from pypto.ir.nodes import Assign, Attr, Call, Const, Program
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ops.facts import Role
from pypto.ops.registry import get
from pypto.passes.regions import LoopInfo
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


_READS = {"Input", "InOut"}
_WRITES = {"InOut", "OutputExisting", "Output"}


def _fallback_direction(callee: str) -> str:
    # no static node for this launch: the callee's own direction, promoting Out to
    # InOut (the conservative choice: more edges, no invented races)
    return {"In": "Input", "Out": "InOut", "InOut": "InOut"}.get(callee, "InOut")


def _overlap(alo: tuple, ahi: tuple, blo: tuple, bhi: tuple) -> bool:
    if len(alo) != len(blo):
        return True  # different views of one name: assume they meet
    return all(a < d and c < b for a, b, c, d in zip(alo, ahi, blo, bhi))


def _covers(alo: tuple, ahi: tuple, blo: tuple, bhi: tuple) -> bool:
    return len(alo) == len(blo) and all(a <= c and d <= b
                                        for a, b, c, d in zip(alo, ahi, blo, bhi))


class _StaticInfo:
    """The compiler's view of each launch site: directions, manual scope, loops."""

    def __init__(self, program: Program | None, analyses: dict):
        graph = analyses.get("task_graph")
        self.by_site: dict = {}
        for n in (graph.nodes if graph is not None else ()):
            self.by_site.setdefault((n.function, n.span), []).append(n)
        self.manual_dep = _manual_dep_tensors(program)

    def node(self, rec: TaskRecord) -> tuple:
        """(directions by param, manual?, static nodes) of one task record."""
        nodes = self.by_site.get((rec.function, rec.span), [])
        if not nodes:
            return None, False, []
        dirs: dict = {}
        rank = {"NoDep": 0, "Scalar": 0, "Input": 1, "OutputExisting": 2, "InOut": 3}
        for n in nodes:
            for a in n.args:
                old = dirs.get(a.param)
                if old is None or rank.get(a.direction, 3) > rank.get(old, 3):
                    dirs[a.param] = a.direction
        return dirs, all(n.manual for n in nodes), nodes


def _manual_dep_tensors(program: Program | None) -> set:
    out: set = set()
    if program is None:
        return out
    for f in program.functions:
        for s in walk(f.body):
            if isinstance(s, Assign) and isinstance(s.value, Call) and \
                    get(s.value.op).role is Role.ALLOC_TENSOR and len(s.targets) == 1:
                args = dict(zip(get(s.value.op).params, s.value.args))
                md = args.get("manual_dep")
                if isinstance(md, (Const, Attr)) and md.value:
                    out.add(s.targets[0].name)
    return out


@dataclass
class _TaskView:
    rec: TaskRecord
    pos: int
    root: int  # position of the top-level task
    dirs: dict  # tensor name -> direction (the strongest over its arguments)
    manual: bool
    nodes: list


def happens_before(trace: Trace, program: Program | None, analyses: dict) -> tuple:
    """(task views by id, ancestor bitsets by position, number of direct edges): the
    order the runtime derives for the tasks of `trace`, from the compiler's task graph
    (`analyses["task_graph"]`) of `program`."""
    static = _StaticInfo(program, analyses)
    tasks = sorted(trace.tasks, key=lambda t: t.id)
    pos = {t.id: i for i, t in enumerate(tasks)}
    views: dict = {}
    for i, t in enumerate(tasks):
        root = i
        p = t.parent
        while p is not None and p in pos:
            root = pos[p]
            p = tasks[root].parent
        dirs, manual, nodes = static.node(t)
        by_tensor: dict = {}
        rank = {"NoDep": 0, "Input": 1, "OutputExisting": 2, "InOut": 3}
        for param, tensor, callee, _lo, _hi in t.args:
            d = dirs.get(param) if dirs is not None else None
            if d is None:
                d = _fallback_direction(callee)
            if tensor in static.manual_dep:
                d = "NoDep"
            old = by_tensor.get(tensor)
            if old is None or rank.get(d, 3) > rank.get(old, 3):
                by_tensor[tensor] = d
        views[t.id] = _TaskView(t, i, root, by_tensor, manual, nodes)

    writers: dict = {}  # tensor -> [(lo, hi, pos)]
    readers: dict = {}
    anc = [0] * len(tasks)
    n_edges = 0
    for i, t in enumerate(tasks):
        v = views[t.id]
        preds: set = set()
        for d in t.deps:
            if d in pos and pos[d] < i:
                preds.add(pos[d])
        if v.root != i:
            preds.add(v.root)  # a nested launch: after its top-level task started
        elif not v.manual:
            plan = []
            for _param, tensor, _callee, lo, hi in t.args:
                d = v.dirs.get(tensor)
                if d is None or d in ("NoDep", "Scalar"):
                    continue
                plan.append((tensor, tuple(lo), tuple(hi), d))
                ws = writers.setdefault(tensor, [])
                rs = readers.setdefault(tensor, [])
                if d in _READS:
                    preds.update(p for wlo, whi, p in ws if _overlap(wlo, whi, lo, hi))
                if d == "InOut":
                    preds.update(p for rlo, rhi, p in rs if _overlap(rlo, rhi, lo, hi))
            for tensor, lo, hi, d in plan:
                ws, rs = writers[tensor], readers[tensor]
                if d in _WRITES:
                    if d == "InOut":  # it waited for everything it covers
                        ws[:] = [w for w in ws if not _covers(lo, hi, w[0], w[1])]
                        rs[:] = [r for r in rs if not _covers(lo, hi, r[0], r[1])]
                    ws.append((lo, hi, i))
                elif d == "Input":
                    rs.append((lo, hi, i))
        preds.discard(i)
        n_edges += len(preds)
        a = 0
        for p in preds:
            a |= anc[p] | (1 << p)
        anc[i] = a
    return views, anc, n_edges


# --- conflicts ------------------------------------------------------------------------------


def find_races(trace: Trace, program: Program | None, analyses: dict, *,
               max_races: int = 200) -> RaceReport:
    """Every race in a traced run of `program` (see the module docstring)."""
    t0 = time.perf_counter()
    views, anc, n_edges = happens_before(trace, program, analyses)
    by_pos = {v.pos: v for v in views.values()}
    rows: dict = {}  # uid -> list of (pos, block, kind, phase, lo, hi)
    names: dict = {}
    n_acc = 0
    for v in views.values():
        for a in v.rec.accesses:
            kind = 0 if a.mode == "R" else (2 if a.atomic else 1)
            mine = rows.setdefault(a.uid, [])
            for lo, hi in a.boxes():  # (a gather's rows one by one)
                mine.append((v.pos, a.block, kind, a.phase, lo, hi))
                n_acc += 1
            names[a.uid] = a.tensor
    found: dict = {}
    for uid, acc in rows.items():
        if not any(k for _, _, k, _, _, _ in acc):
            continue
        _conflicts(acc, anc, by_pos, names[uid], found)
    races = sorted(found.values(), key=lambda r: (r.first.task, r.second.task, r.tensor,
                                                  r.first.block or 0, r.second.block or 0))
    for r in races:
        _explain(r, views)
    report = RaceReport(races[:max_races], len(views), n_edges, n_acc)
    report.seconds = time.perf_counter() - t0
    return report


def _conflicts(acc: list, anc: list, by_pos: dict, tensor: str, found: dict) -> None:
    ranks = {len(a[4]) for a in acc}
    if len(ranks) != 1:
        return  # one buffer is always addressed with its own rank
    n = len(acc)
    pos = np.fromiter((a[0] for a in acc), np.int64, n)
    blk = np.fromiter((a[1] for a in acc), np.int64, n)
    kind = np.fromiter((a[2] for a in acc), np.int64, n)
    phase = np.fromiter((a[3] for a in acc), np.int64, n)
    lo = np.array([a[4] for a in acc], np.int64).reshape(n, -1)
    hi = np.array([a[5] for a in acc], np.int64).reshape(n, -1)
    root = np.fromiter((by_pos[int(p)].root for p in pos), np.int64, n)
    ordered_cache: dict = {}
    for i in np.nonzero(kind > 0)[0].tolist():
        m = np.all(lo < hi[i], axis=1) & np.all(hi > lo[i], axis=1)
        m[i] = False
        # write-write pairs once (j > i); a read meets every write
        m &= (kind == 0) | (np.arange(n) > i)
        if kind[i] == 2:
            m &= kind != 2  # atomic adds commute
        same = pos == pos[i]
        m &= ~same | ((blk != blk[i]) & (phase == phase[i]))
        m &= same | (root != root[i])
        for j in np.nonzero(m)[0].tolist():
            a, b = int(pos[i]), int(pos[j])
            if a != b:
                lo_p, hi_p = (a, b) if a < b else (b, a)
                key = (lo_p, hi_p)
                o = ordered_cache.get(key)
                if o is None:
                    ra, rb = int(root[i]), int(root[j])
                    x, y = (ra, rb) if ra < rb else (rb, ra)
                    o = ordered_cache[key] = bool((anc[y] >> x) & 1)
                if o:
                    continue
            _add(found, acc, tensor, i, j, kind, lo, hi, by_pos)


def _add(found: dict, acc: list, tensor: str, i: int, j: int, kind: np.ndarray,
         lo: np.ndarray, hi: np.ndarray, by_pos: dict) -> None:
    ai, aj = acc[i], acc[j]
    # order the pair: earlier task first (then lower block)
    if (aj[0], aj[1]) < (ai[0], ai[1]):
        i, j, ai, aj = j, i, aj, ai
    ki, kj = int(kind[i]), int(kind[j])
    if 2 in (ki, kj):
        rk = "atomic-plain"
    elif ki and kj:
        rk = "write-write"
    else:
        rk = "read-write"
    same = ai[0] == aj[0]
    key = (ai[0], aj[0], tensor, rk) if not same else (ai[0], tensor, rk)
    ilo = np.maximum(lo[i], lo[j])
    ihi = np.minimum(hi[i], hi[j])
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

"""EstimateBuffers: static on-chip buffer use of every InCore function.

The model (a planning estimate, not an allocator):

* **Buffers.** Every tile-valued SSA value of the region that does not live in GM
  is an on-chip buffer, including the unnamed result of a nested op call. Values
  that are the same storage share one buffer: loop carries (`iter_args`, `inits`,
  yielded values, `results`), if results and their arm values, copies, an
  `assemble`/`store` result and its target, a view (`reshape`, `set_validshape`,
  `transpose_view`) and its source, `matmul_acc`'s result and its accumulator.
  A buffer holding a tensor parameter is GM and costs nothing on chip.
* **Size.** The static byte size of the largest value of the buffer, rounded up to
  32 bytes (the allocator's address alignment, reference §6). A dimension that is
  not a compile-time int makes the buffer "unknown": it is listed, not counted.
* **Space.** A tile's memory as the compiler infers it: Vec when a vector op writes it
  (even `pl.mul` of an Acc tile), Acc for a cube op's result, its source's memory for a
  tile slice or view, else its declared memory (`pl.Mem.*`); for tensor-level values the
  side that produces or consumes them (§2.1, see `units.py`): a matmul result is
  Acc (L0C), a load feeding the cube is Mat (L1), everything else Vec (UB). A load
  consumed by both sides is counted in Mat and in Vec. A compute op reading a GM tensor
  directly stages it (implicit load) in the consumer's space for that op, once however
  many of its operands it is (`pl.add(x, x)`: one tile of x); the op's result takes the
  place of a staged operand it fits in (the operand dies at the op). Tensor-level
  matmul operands are not counted in Left/Right: the compiler tiles them to fit L0
  (AutoTileMatmulL0); only explicit `pl.Mem.Left`/`Right` tiles count there.
* **AutoTileMatmulL0** (`autotile.py`). An accumulator whose output the compiler cuts
  into L0C-sized sub-tiles (an oversized matmul drained to GM or into a Mat scratch)
  counts one sub-tile; a rint downcast of it feeding a matmul is folded into the cube's
  Acc -> Mat drain (Mat, not Vec); a batched matmul whose GM operands overflow L1
  together stages them one batch at a time.
* **Liveness.** Statements are numbered in program order; a buffer is live from
  its first definition up to (not including) its last use, so the result of the op
  that last reads a buffer may take that buffer's place (in-place reuse of a dying
  operand); a buffer used inside a loop that it was defined before stays live to
  the end of that loop. The estimate for a space is the peak, over statements, of
  the sum of the live buffers of that space.
* **Pipelining.** A buffer defined inside a `pl.pipeline(stage=K)` loop of the
  region is counted K times (one copy per stage), K of the innermost such loop.
* **Split.** With `pl.split(UP_DOWN | LEFT_RIGHT)` each AIV lane holds half of every
  vector tile: Vec buffers count half (rounded up to 32 bytes).
* **Crossings.** A tile handed across the pipe also occupies a buffer on the
  consuming side (Vec for C→V, Mat for V→C) for as long as the producer's buffer.
* **Cross-core ring.** On a5 the ring of a mixed region lives in the consumer's
  SRAM: `slot_num` slots of the largest crossing tile in Vec (C→V) or Mat (V→C).
  On a2a3 it lives in GM and costs nothing on chip.

Budgets: the platform table's capacities (`pypto.platform`, reference §6): a2a3 Vec
188416 B (usable UB), Mat 512 KiB, Left/Right 64 KiB, Acc 128 KiB; a5 Vec 240 KiB, Mat
512 KiB, Left/Right 64 KiB, Acc 256 KiB.

Published as `ctx.analyses["buffers"]`: function name → `BufferReport`, for every function
that runs on a core (the simulator's on-chip budget check reads it).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.nodes import CallFunc, For, LoopKind, Program
from pypto.ir.options import CrossCoreSlot, Split
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ir.types import MemorySpace, ShapedType, TileType
from pypto.ops.registry import Unit, get
from pypto.passes.autotile import batch_staging, folded_casts, tiled_accumulators
from pypto.passes.base import Pass, PassContext
from pypto.passes.dataflow import Dataflow, Storage
from pypto.passes.units import CUBE, VECTOR, UnitReport, classify
from pypto.platform import lookup

ALIGN = 32
SPACES = ("Vec", "Mat", "Left", "Right", "Acc")


def budget_for(platform: str) -> dict[str, int]:
    """Usable bytes per on-chip space on `platform` (from the platform table)."""
    p = lookup(platform)
    return {s: p.capacity(s) for s in SPACES}


def align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class Buffer:
    name: str  # the buffer's first value
    space: str
    nbytes: int | None
    start: int
    end: int
    copies: int = 1
    values: tuple = ()
    staged: bool = False  # an implicit load of a GM operand, live at its op only


@dataclass
class BufferReport:
    function: str
    peak: dict = field(default_factory=dict)  # space -> bytes
    budget: dict = field(default_factory=dict)
    buffers: tuple = ()
    unknown: tuple = ()  # buffers whose size is not static
    ring: dict = field(default_factory=dict)  # space -> bytes of the cross-core ring
    at: dict = field(default_factory=dict)  # space -> [(buffer name, bytes)] live at its peak
    peak_span: dict = field(default_factory=dict)  # space -> Span of the statement at its peak

    @property
    def over(self) -> tuple:
        return tuple(s for s in SPACES if self.peak.get(s, 0) > self.budget.get(s, 1 << 62))


def _space_of_mem(m: MemorySpace) -> str:
    return m.value if m.value in SPACES else ("Vec" if m is MemorySpace.Vec else "Mat")


def estimate(f: Any, platform: str, split: str | None = None, slot_num: int = 2,
             units: UnitReport | None = None, flow: Dataflow | None = None) -> BufferReport:
    flow = flow or Dataflow(f)
    units = units or classify(f, flow)
    storage = Storage(flow)
    halve = split in ("UP_DOWN", "LEFT_RIGHT")
    folded = folded_casts(flow)
    tiled = tiled_accumulators(flow, storage, lookup(platform).capacity("Acc"), folded)

    loop_end = {id(span.node): span.end for span in flow.loops}
    pipeline_stage = {id(span.node): int(span.node.attr("stage", 1) or 1)
                      for span in flow.loops
                      if isinstance(span.node, For) and span.node.kind is LoopKind.PIPELINE}

    # buffers by storage class
    groups: dict[str, list[str]] = defaultdict(list)
    for v in flow.types:
        t = flow.types[v]
        if not isinstance(t, ShapedType) or storage.in_gm(v):
            continue
        groups[storage.root(v)].append(v)

    memo: dict[str, str] = {}

    def tile_space(v: str) -> str:
        """Where a tile lives, as the compiler's InferTileMemorySpace decides it: a
        vector op writes UB (the result of `pl.mul` on a matmul's Acc tile is Vec, the
        operand is moved there), a cube op writes Acc, a tile slice or view inherits its
        source's memory, anything else (loads, moves, allocations) its declared one."""
        if v in memo:
            return memo[v]
        memo[v] = _space_of_mem(flow.types[v].memory)
        node = flow.producer.get(v)
        if node is not None:
            d = get(node.op)
            if v in folded:
                memo[v] = "Mat"  # written by the cube's Acc -> Mat drain
            elif d.unit is Unit.VECTOR:
                memo[v] = "Vec"
            elif d.unit is Unit.CUBE:
                memo[v] = "Acc"
            elif d.view is not None or d.unit is Unit.META:
                src = next((o for _, o in node.operands
                            if o is not None and isinstance(flow.types.get(o), TileType)), None)
                if src is not None:
                    memo[v] = tile_space(src)
        return memo[v]

    def spaces_of(vs: list[str]) -> list[str]:
        for v in vs:  # a tile's memory wins
            if isinstance(flow.types[v], TileType):
                produced = [w for w in vs if w in flow.producer
                            and isinstance(flow.types[w], TileType)]
                return [tile_space(produced[0] if produced else v)]
        produced_by_cube = any(
            v in flow.producer and get(flow.producer[v].op).unit is Unit.CUBE for v in vs)
        if produced_by_cube:
            return ["Acc"]
        # A tensor created in L1 (`pl.create_l1`) stays there, whoever fills it.
        if any(v in flow.producer and get(flow.producer[v].op).affinity is Unit.CUBE
               for v in vs):
            return ["Mat"]
        sides: set = set()
        for v in vs:
            sides |= units.value_sides.get(v, frozenset())
        out = []
        if CUBE in sides:
            out.append("Mat")
        if VECTOR in sides or not out:
            out.append("Vec")
        return out

    readers: dict[str, list] = defaultdict(list)
    for op in flow.ops:
        for _, o in op.operands:
            if o is not None:
                readers[o].append(op)

    def live_range(vs: list[str]) -> tuple[int, int]:
        start = min(flow.defs.get(v, 0) for v in vs)
        end = start
        for v in vs:
            defined_in = set(flow.value_loops.get(v, ()))
            for use in flow.uses.get(v, ()):
                end = max(end, use)
            # used inside a loop it was defined outside of: live to the loop's end
            for op in readers.get(v, ()):
                for lid in op.loops:
                    if lid not in defined_in:
                        end = max(end, loop_end[lid])
        return start, end

    buffers: list[Buffer] = []
    unknown: list[str] = []
    for root, vs in groups.items():
        vs = sorted(vs, key=lambda v: (flow.defs.get(v, 0), v))
        sizes = [flow.types[v].nbytes() for v in vs]
        if any(s is None for s in sizes):
            unknown.append(vs[0])
            continue
        nbytes = align(max(sizes))
        if root in tiled:  # AutoTileMatmulL0 keeps one L0C sub-tile of it live
            nbytes = min(nbytes, align(tiled[root]))
        start, end = live_range(vs)
        # One copy per stage of the innermost enclosing pl.pipeline: the lowering
        # replicates that loop's body; an outer pipeline's replicas run one after the
        # other and reuse the inner buffers.
        copies = 1
        for lid in flow.value_loops.get(vs[0], ()):
            if lid in pipeline_stage:
                copies = pipeline_stage[lid]
        for space in spaces_of(vs):
            buffers.append(Buffer(vs[0], space, nbytes, start, end, copies, tuple(vs)))

    # a crossing tile is popped into the consumer's buffer (Vec for C->V, Mat for V->C)
    by_value = {v: b for b in buffers for v in b.values}
    for c in units.crossings:
        b = by_value.get(c.value)
        if b is not None and c.nbytes is not None:
            space = "Vec" if c.direction == "C->V" else "Mat"
            if any(x.space == space for x in buffers if x.values and c.value in x.values):
                continue  # already held on the consuming side
            # the popped copy lives as long as the crossing value itself, not the whole
            # buffer it may be a view of (`q[:, 0:64]` of a tile that lives on)
            start, end = live_range([c.value])
            buffers.append(Buffer(f"{c.value}@{space}", space, align(c.nbytes), start, end,
                                  b.copies))

    # transient staging: implicit GM loads of compute operands
    for op in flow.ops:
        d = get(op.op)
        if d.unit not in (Unit.CUBE, Unit.VECTOR):
            continue
        per_batch = batch_staging(op, flow, storage, lookup(platform).capacity("Mat")) \
            if d.unit is Unit.CUBE else {}
        staged: set[str] = set()
        for param, v in op.operands:
            if v is None or not storage.in_gm(v) or v in staged:
                continue  # (`pl.add(x, x)` loads x once: one tile per GM operand)
            staged.add(v)
            t = flow.types.get(v)
            if not isinstance(t, ShapedType) or (d.matmul is not None and param == d.matmul.acc):
                continue
            n = per_batch.get(v, t.nbytes())
            if n is None:
                unknown.append(v)
                continue
            space = "Mat" if d.unit is Unit.CUBE else "Vec"
            buffers.append(Buffer(f"{v}@{op.result}", space, align(n), op.pos, op.pos,
                                  staged=True))

    def cost(b: Buffer) -> int:
        n = (b.nbytes or 0) * b.copies
        if halve and b.space == "Vec":
            n = align((n + 1) // 2)
        return n

    peak: dict[str, int] = {s: 0 for s in SPACES}
    at: dict[str, list] = {}
    peak_span: dict[str, Span | None] = {}
    points = sorted({b.start for b in buffers} | {b.end for b in buffers})
    for p in points:
        live: dict[str, list] = defaultdict(list)
        for b in buffers:
            # A buffer whose last use is the op at `p` does not coexist with the
            # buffer that op produces: the vector unit writes its result over a dying
            # operand (in-place reuse, as the allocator's MemoryReuse does). Buffers
            # born and dead at the same op (staging) are live at that op.
            if b.start <= p < b.end or b.start == b.end == p:
                live[b.space].append(b)
        for s, bs in live.items():
            n = sum(cost(b) for b in bs)
            # The op at `p` reads its staged GM operands and dies with them: its result
            # takes a dying staged tile's place when it fits there, as the allocator's
            # MemoryReuse shares touching lifetimes ("inputs are consumed before
            # outputs are produced"; real ConvertTensorToTileOps loads each GM operand
            # into one tile, whose life ends at its last reader)
            dying = sorted((cost(b) for b in bs if b.staged and b.start == p), reverse=True)
            in_place = []
            for b in sorted((b for b in bs if b.start == p and not b.staged),
                            key=lambda b: -cost(b)):
                fit = next((i for i, size in enumerate(dying) if size >= cost(b)), None)
                if fit is not None:
                    n -= cost(b)
                    dying.pop(fit)
                    in_place.append(b)
            bs = [b for b in bs if not any(b is r for r in in_place)]
            if n > peak.get(s, 0):
                peak[s] = n
                at[s] = sorted(((b.name, cost(b)) for b in bs), key=lambda x: -x[1])
                peak_span[s] = flow.spans.get(p)

    ring: dict[str, int] = {}
    if lookup(platform).ring_on_chip and units.crossings:
        for c in units.crossings:
            space = "Vec" if c.direction == "C->V" else "Mat"
            n = align(c.nbytes or 0)
            if halve and space == "Vec":
                n = align((n + 1) // 2)
            ring[space] = max(ring.get(space, 0), n * slot_num)
        for s, n in ring.items():
            peak[s] = peak.get(s, 0) + n

    return BufferReport(f.name, peak, dict(budget_for(platform)),
                        tuple(sorted(buffers, key=lambda b: (b.start, b.space, b.name))),
                        tuple(unknown), ring, at, peak_span)


def launch_options(program: Program) -> dict[str, dict]:
    """Launch attributes of each InCore function, from the first call that launches it."""
    out: dict[str, dict] = {}
    for f in program.functions:
        for n in walk(f.body):
            if isinstance(n, CallFunc) and n.launch and n.func not in out:
                out[n.func] = dict(n.launch)
    return out


def split_and_slots(launch: dict) -> tuple[str | None, int, Any, Any]:
    """(split mode name, ring slots, the Split object, the CrossCoreSlot object)."""
    split_mode, slots, split_obj, slot_obj = None, 2, None, None
    for o in launch.get("optimizations", ()) or ():
        if isinstance(o, Split):
            split_obj = o
            split_mode = getattr(o.mode, "name", str(o.mode))
        elif isinstance(o, CrossCoreSlot):
            slot_obj = o
            slots = int(o.slot_num)
    return split_mode, slots, split_obj, slot_obj


class EstimateBuffers(Pass):
    name = "estimate_buffers"
    summary = "peak on-chip bytes (Vec/Mat/Left/Right/Acc) of each function run on a core"

    def run(self, program: Program, ctx: PassContext) -> Program:
        units = ctx.analyses.get("units", {})
        launches = launch_options(program)
        reports = {}
        for f in program.functions:
            if not f.kind.is_region:
                continue
            split, slots, _, _ = split_and_slots(launches.get(f.name, {}))
            reports[f.name] = estimate(f, ctx.platform, split, slots, units.get(f.name))
        ctx.analyses["buffers"] = reports
        return program


__all__ = [
    "Buffer",
    "BufferReport",
    "EstimateBuffers",
    "align",
    "budget_for",
    "estimate",
    "launch_options",
    "split_and_slots",
]

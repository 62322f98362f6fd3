"""On-chip budget estimate of an InCore function: peak bytes of live tiles per memory space.

Inside a region every shaped value the function computes is an on-chip tile:
matmul results live in Acc (L0C), matmul operands are staged in Mat (L1), tiles
with an explicit memory space live there, everything else lives in Vec (the
unified buffer, UB). Global tensors (the function's shaped parameters and what
`assemble`/`store` return) take no on-chip space.

Liveness is by name over the flattened body (a name used inside a loop it was
defined before stays live until the loop ends). An op whose operand dies at that
op may write its result into the operand's buffer when it fits (what the real
allocator's memory reuse does for elementwise chains), so `t = pl.exp(t)` needs
one buffer, not two.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.ir.nodes import (Assign, Call, CallFunc, Eval, For, Function, If, Scope, Var, While,
                            Yield, Return)
from pypto.ir.transform import walk
from pypto.ir.types import MemorySpace, ShapedType, TileType
from pypto.ops.facts import Role
from pypto.ops.registry import Unit, get


def _matmul_operands(c: Call) -> tuple | None:
    """Positions of the lhs / rhs operands (staged in L1) of a matmul-family call."""
    m = get(c.op).matmul
    if m is None:
        return None
    names = get(c.op).params
    return names.index(m.lhs), names.index(m.rhs)


@dataclass
class BudgetEstimate:
    function: str
    peak: dict = field(default_factory=dict)  # space -> bytes
    at: dict = field(default_factory=dict)  # space -> [(name, bytes)] live at the peak
    span: dict = field(default_factory=dict)  # space -> span of the statement at the peak
    dynamic: list = field(default_factory=list)  # names whose size is not static
    source: str = "estimate"  # or "passes" when taken from compiled.analyses

    def bytes(self, space: str = "Vec") -> int:
        return int(self.peak.get(space, 0))


def _nbytes(t: Any) -> int | None:
    if not isinstance(t, ShapedType):
        return None
    return t.nbytes()


def _space_of_value(value: Any, t: ShapedType) -> str:
    if isinstance(t, TileType) and t.memory is not MemorySpace.DDR:
        return t.memory.value
    if isinstance(value, Call) and _matmul_operands(value) is not None:
        return "Acc"
    return "Vec"


class _Lin:
    """Flatten a body into numbered points with defs/uses and loop extents."""

    def __init__(self) -> None:
        self.points: list[Any] = []  # statement per point
        self.defs: dict[str, list] = {}  # name -> [(point, bytes, space, value)]
        self.uses: dict[str, list] = {}  # name -> [points]
        self.loops: list[tuple[int, int]] = []
        self.temps: dict[int, list] = {}  # point -> [(bytes, space)]
        self.operands: dict[int, set] = {}  # point -> names read there
        self.mat_operands: set = set()

    def body(self, stmts: tuple) -> None:
        for s in stmts:
            self.stmt(s)

    def _use_expr(self, e: Any, p: int) -> None:
        for n in walk(e):
            if isinstance(n, Var):
                self.uses.setdefault(n.name, []).append(p)
                self.operands.setdefault(p, set()).add(n.name)
            if isinstance(n, Call) and _matmul_operands(n) is not None:
                for i in _matmul_operands(n):
                    a = n.args[i] if i < len(n.args) else None
                    if isinstance(a, Var):
                        self.mat_operands.add(a.name)

    def _temps(self, value: Any, p: int, operand: bool = False) -> None:
        if not isinstance(value, (Call, CallFunc)):
            return
        ops = (_matmul_operands(value) or ()) if isinstance(value, Call) else ()
        for i, a in enumerate(value.args):
            if isinstance(a, Call):
                b = _nbytes(a.type)
                if b:
                    space = _space_of_value(a, a.type)
                    if i in ops and space == "Vec":
                        space = "Mat"
                    self.temps.setdefault(p, []).append((b, space))
                self._temps(a, p)

    def stmt(self, s: Any) -> None:
        p = len(self.points)
        self.points.append(s)
        if isinstance(s, Assign):
            self._use_expr(s.value, p)
            self._temps(s.value, p)
            for t in s.targets:
                b = _nbytes(t.type)
                self.defs.setdefault(t.name, []).append((p, b, _space_of_value(s.value, t.type)
                                                         if isinstance(t.type, ShapedType)
                                                         else None, s.value))
        elif isinstance(s, (Eval,)):
            self._use_expr(s.expr, p)
            self._temps(s.expr, p)
        elif isinstance(s, (Yield, Return)):
            self._use_expr(s.values, p)
        elif isinstance(s, (For, While)):
            heads = (s.start, s.stop, s.step, s.inits) if isinstance(s, For) else \
                (s.cond, s.inits)
            self._use_expr(heads, p)
            for v, init in zip(s.iter_args, s.inits):
                self.defs.setdefault(v.name, []).append((p, _nbytes(v.type), "carry", init))
            self.body(s.body)
            self.loops.append((p, len(self.points) - 1))
            for v, init in zip(s.results, s.inits):
                self.defs.setdefault(v.name, []).append((len(self.points) - 1, None, "alias",
                                                         init))
        elif isinstance(s, If):
            self._use_expr(s.cond, p)
            self.body(s.then_body)
            self.body(s.else_body)
        elif isinstance(s, Scope):
            self.body(s.body)


def estimate(func: Function) -> BudgetEstimate:
    lin = _Lin()
    lin.body(func.body)
    params = {p.var.name for p in func.params if isinstance(p.var.type, ShapedType)}
    globals_ = set(params)
    # Results of in-place writers (assemble/store) into globals are the globals, and so
    # are the loop carries and loop results threading them (fixpoint over SSA names).
    changed = True
    while changed:
        changed = False
        for name, defs in lin.defs.items():
            if name in globals_:
                continue
            for _, _, kind, value in defs:
                src = None
                if kind in ("carry", "alias") or isinstance(value, Var):
                    src = value
                elif isinstance(value, Call):
                    try:
                        op = get(value.op)
                    except KeyError:
                        continue
                    if op.writes is not None and op.writes in op.params:
                        src = value.args[op.params.index(op.writes)]
                if isinstance(src, Var) and src.name in globals_:
                    globals_.add(name)
                    changed = True
                    break
    est = BudgetEstimate(func.name)
    intervals = []  # (start, end, bytes, space, name)
    for name, defs in lin.defs.items():
        if name in globals_:
            continue
        defs = [d for d in defs if d[2] != "alias"]
        if not defs:
            continue  # a loop result: it lives in the carried buffer
        first = min(d[0] for d in defs)
        size = max((d[1] or 0) for d in defs)
        if any(d[1] is None and d[2] is not None for d in defs):
            est.dynamic.append(name)
        if not size:
            continue
        space = defs[0][2] or "Vec"
        if space == "carry":
            init = defs[0][3]
            init_defs = lin.defs.get(init.name) if isinstance(init, Var) else None
            space = (init_defs[0][2] if init_defs and init_defs[0][2] not in ("carry", "alias")
                     else "Vec") or "Vec"
        if space == "Vec" and name in lin.mat_operands:
            space = "Mat"
        value = defs[0][3] if defs[0][2] != "carry" else None
        if isinstance(value, Call):
            try:
                op = get(value.op)
                if op.unit is Unit.META and op.role is not Role.ALLOC_TILE:
                    continue  # a view of another value
            except KeyError:
                pass
        uses = lin.uses.get(name, [])
        last = max(uses) if uses else first
        end = max(last, max(d[0] for d in defs))
        for lo, hi in lin.loops:
            if any(lo < u <= hi for u in uses) and first <= lo:
                end = max(end, hi)
            if any(lo < d[0] <= hi for d in defs) and any(lo < u <= hi for u in uses) \
                    and min(u for u in uses if lo < u <= hi) <= max(d[0] for d in defs
                                                                  if lo < d[0] <= hi):
                end = max(end, hi)  # carried through the loop
        intervals.append((first, end, size, space, name))
    n = len(lin.points)
    for p in range(n):
        per_space: dict[str, list] = {}
        born = [iv for iv in intervals if iv[0] == p]
        dying = [iv for iv in intervals if iv[1] == p and iv[0] < p]
        for iv in intervals:
            if iv[0] <= p <= iv[1]:
                per_space.setdefault(iv[3], []).append((iv[4], iv[2]))
        temps = list(lin.temps.get(p, []))
        # in-place reuse: a value born here may take the buffer of one that dies here
        hosts = sorted(((iv[2], iv[3]) for iv in dying), reverse=True)
        for b in sorted(born, key=lambda iv: -iv[2]):
            for i, (hb, hs) in enumerate(hosts):
                if hs == b[3] and hb >= b[2]:
                    per_space[b[3]] = [x for x in per_space[b[3]] if x[0] != b[4]]
                    hosts.pop(i)
                    break
        for tb, ts in temps:
            host = next((i for i, (hb, hs) in enumerate(hosts) if hs == ts and hb >= tb), None)
            if host is not None:
                hosts.pop(host)
                continue
            per_space.setdefault(ts, []).append(("<temporary>", tb))
        for space, items in per_space.items():
            total = sum(b for _, b in items)
            if total > est.peak.get(space, 0):
                est.peak[space] = total
                est.at[space] = sorted(items, key=lambda x: -x[1])
                est.span[space] = getattr(lin.points[p], "span", None)
    return est


def from_analyses(analyses: dict, func_name: str) -> BudgetEstimate | None:
    """The compiler's own estimate for `func_name`, if `analyses['regions']` carries one
    (`ub_bytes`, and `l1_bytes` / `l0a_bytes` / `l0b_bytes` / `l0c_bytes` when present)."""
    regions = analyses.get("regions") if isinstance(analyses, dict) else None
    if not regions:
        return None
    items = regions.values() if isinstance(regions, dict) else regions
    for r in items:
        get_ = (lambda k, r=r: r.get(k)) if isinstance(r, dict) else \
            (lambda k, r=r: getattr(r, k, None))
        names = {get_("function"), get_("func"), get_("name"), get_("kernel")}
        if func_name not in names:
            continue
        ub = get_("ub_bytes")
        if ub is None:
            return None
        est = BudgetEstimate(func_name, source="the compiler's buffer analysis")
        report = (analyses.get("buffers") or {}).get(func_name)
        for space, items in (getattr(report, "at", None) or {}).items():
            # the buffers live at the peak, as the compiler's estimate counted them
            est.at[space] = [("<temporary>" if n.startswith("%") else n, b) for n, b in items]
        est.peak["Vec"] = int(ub)
        for space, key in (("Mat", "l1_bytes"), ("Left", "l0a_bytes"), ("Right", "l0b_bytes"),
                           ("Acc", "l0c_bytes")):
            v = get_(key)
            if isinstance(v, int):
                est.peak[space] = v
        return est
    return None

"""Where the values of a region may be tagged tiles (`masks`), statically - and so which
chains of ops may be computed in the windows their write fills (`placement`).

A window write of a tagged source writes only its valid part and keeps what lies
outside it; an op computed in those windows would have overwritten that. So a chain
whose write may meet a tagged source is placed only under a run-time guard
(`guarded_places`): its first placed op (the innermost) is placed only when its
operands are plain arrays and the valid shape its type declares is whole in every
block, and each later op only when the op before it was placed (`placement.placed`'s
`own`). That is enough when nothing else can bring a tag into the chain once its first
op ran plain: every other operand of the later ops and of the write's source is
untagged whenever the chain's values are (`may_be_tagged` with them taken as plain),
and any valid shape their types declare is whole whenever the first op's is (the same
names, assigned once, over extents no larger; or constants). Then a batch whose blocks
are all whole (the whole tiles of a loop's short last tile, split off by the launch)
computes the chain in place, and a batch with a partial tile computes none of it
there: its ops carry tags as `masks` says, and the write keeps what it must.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.nodes import Assign, Call, Const, For, Function, If, Var, While, Yield
from pypto.ir.transform import walk
from pypto.ir.types import ShapedType, Type
from pypto.ops.facts import Role
from pypto.ops.registry import get
from pypto.sim.batch.masks import declares_valid
from pypto.sim.batch.rules.tag_only import drops_tag
from pypto.sim.engine.intrinsics.common import falsy_const

Whole = Callable[[Type], bool]  # is a declared valid shape known to be whole?


def tags(n: Call, whole: Whole | None = None) -> bool:
    """Does the call `n` make a tagged tile whatever its operands (a window read with a
    valid shape or clamp, `set_validshape`, an op whose type declares a valid shape -
    unless `whole` says that shape is whole)?"""
    try:
        op = get(n.op)
    except KeyError:
        return True
    t = getattr(n, "type", None)
    if op.role is Role.SET_VALID:
        return True
    if op.window_read is not None:
        if declares_valid(t):
            return True
        a = dict(zip(op.params, n.args))
        return not falsy_const(a.get("valid_shape")) or not falsy_const(a.get("clamp"))
    if declares_valid(t):
        return whole is None or not whole(t)  # type: ignore[arg-type]
    return False


def _untagged(name: str) -> bool:
    """Does op `name` always make an untagged result (`tag_only.drops_tag`)?"""
    try:
        return drops_tag(get(name))
    except KeyError:
        return False


def may_be_tagged(func: Function, plain: frozenset[int] = frozenset(),
                  whole: Whole | None = None) -> Callable[[Any], bool]:
    """`f(e)`: may the value of expression `e` in region `func` be a tagged tile? (A
    forward closure over the region's assignments, loop carries and branch results:
    what a tagging call makes, and what any op but transpose / fillpad makes of it.)
    The calls whose ids are in `plain` are taken to give untagged values, and declared
    valid shapes `whole` accepts to tag nothing of themselves."""
    names: set[str] = set()

    def may(e: Any) -> bool:
        if isinstance(e, Var):
            return e.name in names
        if isinstance(e, Call):
            if id(e) in plain:
                return False
            return tags(e, whole) or (not _untagged(e.op) and any(may(a) for a in e.args))
        return False

    def mark(targets: Any, v: bool) -> bool:
        new = [t.name for t in targets if v and t.name not in names]
        names.update(new)
        return bool(new)

    changed = True
    while changed:
        changed = False
        for n in walk(func.body):
            if isinstance(n, Assign):
                changed |= mark(n.targets, may(n.value))
            elif isinstance(n, (For, While, If)):
                ys = [s for body in (getattr(n, "body", ()), getattr(n, "then_body", ()),
                                     getattr(n, "else_body", ()))
                      for s in body if isinstance(s, Yield)]
                inits = list(getattr(n, "inits", ()))
                for i, res in enumerate(n.results):
                    v = any(i < len(y.values) and may(y.values[i]) for y in ys) or \
                        (i < len(inits) and may(inits[i]))
                    its = list(getattr(n, "iter_args", ()))[i:i + 1]
                    changed |= mark([res] + its, v)
    return may


def guarded_places(func: Function, places: dict) -> dict:
    """`places` (`placement.placements`) for the compiler: a chain whose write may meet
    a tagged source keeps its `own` indices (placed whole or not at all: the module
    docstring) when a guard at its first op catches every tag, and is dropped when not;
    the others are placed op by op (`own` None)."""
    if not places:
        return places
    free = {k: p[:3] + (None,) for k, p in places.items()}
    if not any(isinstance(n, Call) and tags(n) for n in walk(func.body)):
        return free
    may = may_be_tagged(func)
    calls = {id(n): n for n in walk(func.body) if isinstance(n, Call)}
    chains: dict[int, list[Call]] = {}  # id of a write's offsets -> its placed calls
    for k, p in places.items():
        chains.setdefault(id(p[1]), []).append(calls[k])
    counts = _assignments(func)
    bound = {s.targets[0].name: s.value for s in func.body
             if isinstance(s, Assign) and len(s.targets) == 1}
    out: dict = {}
    for n in calls.values():
        try:
            op = get(n.op)
        except KeyError:
            continue
        w = op.window_write
        if w is None:
            continue
        a = dict(zip(op.params, n.args))
        chain = chains.get(id(a.get(w.offset)))
        if chain is None:
            continue
        src = a.get(w.source)
        if not may(src):
            out.update((id(c), free[id(c)]) for c in chain)
        elif _caught(func, src, chain, places, counts, bound):
            out.update((id(c), places[id(c)]) for c in chain)
    return out


def _caught(func: Function, src: Any, chain: list[Call], places: dict,
            counts: dict[str, int], bound: dict[str, Any]) -> bool:
    """Does the guard at the first placed op of `chain` (the write of `src`) catch every
    tag that could reach the write? (The module docstring.)"""
    first = [c for c in chain if places[id(c)][3] is None]
    if len(first) != 1 or not isinstance(src, Call):
        return False
    ids = frozenset(id(c) for c in chain)
    floor = _floors(first[0].type, counts)

    def whole(t: Type) -> bool:
        return _whole_by(t, floor)

    may = may_be_tagged(func, ids, whole)

    def of_chain(a: Any) -> bool:  # (the chain's own values: plain once it is placed)
        if isinstance(a, Var):
            a = bound.get(a.name) if counts.get(a.name, 0) == 1 else None
        return id(a) in ids

    for o in [c for c in chain if c is not first[0]] + [src]:
        if declares_valid(o.type) and not whole(o.type):
            return False
        if any(may(a) for a in o.args if not of_chain(a)):
            return False
    return True


def _floors(t: Type | None, counts: dict[str, int]) -> dict[str, int]:
    """{name: the least value it has} when the valid shape the type `t` declares is
    whole: its entries that are names assigned at most once (then the same value
    wherever the region reads them), each at least its axis' extent."""
    if not declares_valid(t):
        return {}
    assert isinstance(t, ShapedType) and t.valid_shape is not None
    shape = t.static_shape()
    out: dict[str, int] = {}
    if shape is None:
        return out
    for v, s in zip(t.valid_shape, shape):
        if isinstance(v, Var) and counts.get(v.name, 0) <= 1:
            out[v.name] = max(out.get(v.name, 0), s)
    return out


def _whole_by(t: Type | None, floor: dict[str, int]) -> bool:
    """Is the valid shape type `t` declares whole whenever the names of `floor` are at
    least their floors (each entry a constant or such a name, at least its extent)?"""
    if not isinstance(t, ShapedType) or t.valid_shape is None:
        return False
    shape = t.static_shape()
    if shape is None:
        return False
    for v, s in zip(t.valid_shape, shape):
        if isinstance(v, Const) and type(v.value) is int:
            if v.value < s:
                return False
        elif isinstance(v, int):
            if v < s:
                return False
        elif not (isinstance(v, Var) and floor.get(v.name, -1) >= s):
            return False
    return True


def _assignments(func: Function) -> dict[str, int]:
    """How many times each name is bound in region `func` (assignments, loop variables,
    carries and results)."""
    out: dict[str, int] = {}

    def bind(vs: Any) -> None:
        for v in vs:
            if isinstance(v, Var):
                out[v.name] = out.get(v.name, 0) + 1

    for n in walk(func.body):
        if isinstance(n, Assign):
            bind(n.targets)
        elif isinstance(n, (For, While, If)):
            bind([getattr(n, "var", None)] + list(getattr(n, "iter_args", ())) +
                 list(n.results))
    return out


__all__ = ["guarded_places", "may_be_tagged", "tags"]

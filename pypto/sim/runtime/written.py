"""Which entry parameters can a program write? (decides whether an upload needs a copy)

A `pl.Tensor` (In) argument must look untouched to the host even when the kernel
writes its device copy, so the simulator uploads a copy of it — unless this
analysis proves that nothing in the program can write it, in which case the
kernel reads the host array through a read-only view (no copy; a write through it
would raise instead of corrupting the host array).

The analysis is conservative: a name is written when an op writes it in place
(`op.writes`: assemble, store, write, ...), when it is passed to a kernel whose
parameter is written, or when anything aliasing it is written. Aliases are views
(slices in orchestration, reshapes, valid-shape changes), plain renames, loop
carries and results, branch results, the value an in-place op returns, and the
outputs of a launch (they may be any of its tensor arguments).
"""
from __future__ import annotations

from collections.abc import Callable

from pypto.ir.nodes import Assign, Call, CallFunc, Eval, For, If, Program, Stmt, Var, While, Yield
from pypto.ir.transform import walk
from pypto.ir.types import ShapedType
from pypto.ops.facts import View
from pypto.ops.registry import get
from pypto.passes.dataflow import returned_param_sets


def written_entry_params(program: Program) -> set:
    """Names of entry parameters the program may write (directly or through aliases)."""
    funcs = {f.name: f for f in program.functions}
    written: dict[str, set] = {n: set() for n in funcs}
    parents: dict[str, dict] = {n: {} for n in funcs}  # name -> names it may alias

    def alias(fname: str, child: str, parent: str) -> None:
        parents[fname].setdefault(child, set()).add(parent)

    calls: list[tuple] = []  # (caller, callee, [(param name, caller arg name)])
    launches: list[tuple] = []  # (caller, targets, CallFunc)
    for fname, f in funcs.items():
        region = f.kind.is_region
        for n in walk(f.body):
            if isinstance(n, Assign):
                v = n.value
                if isinstance(v, Var):
                    for t in n.targets:
                        alias(fname, t.name, v.name)
                elif isinstance(v, Call):
                    try:
                        op = get(v.op)
                    except KeyError:
                        continue
                    if op.writes is not None and op.writes in op.params:
                        tgt = v.args[op.params.index(op.writes)]
                        if isinstance(tgt, Var):
                            for t in n.targets:
                                alias(fname, t.name, tgt.name)
                    # a window of a GM tensor inside a region is a load (a copy)
                    aliases = op.view is View.ALIAS or (op.view is View.WINDOW and not region)
                    if aliases and v.args and isinstance(v.args[0], Var):
                        for t in n.targets:
                            alias(fname, t.name, v.args[0].name)
                elif isinstance(v, CallFunc):
                    launches.append((fname, n.targets, v))
            if isinstance(n, (Assign, Eval)):
                v = n.value if isinstance(n, Assign) else n.expr
                for c in walk(v):
                    if isinstance(c, Call):
                        try:
                            op = get(c.op)
                        except KeyError:
                            continue
                        if op.writes is not None and op.writes in op.params:
                            tgt = c.args[op.params.index(op.writes)]
                            if isinstance(tgt, Var):
                                written[fname].add(tgt.name)
                    elif isinstance(c, CallFunc) and c.func in funcs:
                        params = [p.var.name for p in funcs[c.func].params]
                        pairs = [(p, a.name) for p, a in zip(params, c.args) if isinstance(a, Var)]
                        calls.append((fname, c.func, pairs))
            elif isinstance(n, (For, While)):
                for it, init in zip(n.iter_args, n.inits):
                    if isinstance(init, Var):
                        alias(fname, it.name, init.name)
                for res, it in zip(n.results, n.iter_args):
                    alias(fname, res.name, it.name)
                _yield_aliases(fname, n.body, n.iter_args, alias)
                _yield_aliases(fname, n.body, n.results, alias)
            elif isinstance(n, If):
                _yield_aliases(fname, n.then_body, n.results, alias)
                _yield_aliases(fname, n.else_body, n.results, alias)
    # A launch's outputs alias the arguments whose parameters the callee returns.
    for fname, targets, v in launches:
        callee = funcs.get(v.func)
        if callee is None:
            continue
        params = [p.var.name for p in callee.params]
        returned = returned_param_sets(callee)
        args = {p: a.name for p, a in zip(params, v.args) if isinstance(a, Var)}
        outs = targets[:-1] if dict(v.launch) else targets
        for i, t in enumerate(outs):
            srcs = returned[i] if i < len(returned) else set(params)
            for p in srcs:
                if p in args and isinstance(t.type, ShapedType):
                    alias(fname, t.name, args[p])
    changed = True
    while changed:
        changed = False
        for fname in funcs:
            ws = written[fname]
            stack = list(ws)
            while stack:
                name = stack.pop()
                for p in parents[fname].get(name, ()):
                    if p not in ws:
                        ws.add(p)
                        stack.append(p)
                        changed = True
        for caller, callee, pairs in calls:
            for p, a in pairs:
                if p in written[callee] and a not in written[caller]:
                    written[caller].add(a)
                    changed = True
    entry = program.entry
    return {p.var.name for p in funcs[entry].params} & written[entry]


def _yield_aliases(fname: str, body: tuple[Stmt, ...], targets: tuple[Var, ...],
                   alias: Callable[[str, str, str], None]) -> None:
    if not body or not targets:
        return
    last = body[-1]
    if isinstance(last, Yield):
        for t, v in zip(targets, last.values):
            if isinstance(v, Var):
                alias(fname, t.name, v.name)


__all__ = ["written_entry_params"]

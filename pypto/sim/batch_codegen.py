"""A batched region body as one generated Python function.

The closures `BatchCompiler` builds cost a few frames per statement (the assignment, the
guard, the op, one per operand). For the statements of the region body's top level this
module writes the equivalent Python source once per compiled region and `exec`s it:

    def body(env):
        env['t'] = k0(env['x'], [env['r'], c0])      # a batched window: its core
        env['mx'] = k1([env['t']])                   # a batched op: its core
        ...
        env['$ret'] = (env['y'],)
        return RETURN

The cores are the functions the closures call (`run.gen`, see `BatchCompiler._kept`), so
the generated body computes exactly what the closures compute; anything else (uniform
ops, nested loops, other statements) stays a compiled closure called from the body. No
guard is needed: every exception of a batched run abandons the batch and the region
runs block by block (`pypto.sim.batch._run`), which reports what it always reported.
"""
from __future__ import annotations

from typing import Any, Callable

from pypto.ir.nodes import Assign, Call, CallFunc, Eval, ListExpr, Return, Var
from pypto.ops.registry import Unit, get
from pypto.sim.values import RETURN, UNDEF


class _Writer:
    """The source of one generated body and the objects it refers to."""

    def __init__(self, bc: Any):
        self.bc = bc
        self.lines: list = ["def body(env):"]
        self.names: dict = {"RETURN": RETURN}

    def bind(self, obj: Any, prefix: str) -> str:
        name = f"{prefix}{len(self.names)}"
        self.names[name] = obj
        return name

    def expr(self, e: Any) -> str:
        """Source computing `e` from `env`."""
        bc = self.bc
        ok, v = bc.const(e)
        if ok:
            return self.bind(v, "c")
        if isinstance(e, Var):
            return f"env[{e.name!r}]"
        if isinstance(e, ListExpr):
            return "[" + ", ".join(self.expr(i) for i in e.items) + "]"
        if isinstance(e, Call):
            return self.call(e, None)
        return self.bind(bc.expr(e), "f") + "(env)"

    def call(self, e: Call, target: str | None) -> str:
        fn = self.bc.call(e, target)
        gen = getattr(fn, "gen", None)
        if gen is None:  # not batched here: its closure
            return self.bind(fn, "f") + "(env)"
        kind, core, ops = gen
        k = self.bind(core, "k")
        if kind == "args":
            return f"{k}([{', '.join(self.expr(a) for a in ops)}])"
        if kind == "window":
            return f"{k}({self.expr(ops[0])}, {self.expr(ops[1])})"
        target_e, offset, fused_ops, source = ops
        fargs = "[" + ", ".join(self.expr(a) for a in fused_ops) + "]"
        return (f"{k}({self.expr(target_e)}, {self.expr(offset)}, {fargs}, "
                f"lambda: {self.expr(source)})")

    def stmt(self, s: Any) -> bool:
        """Append `s`; False once the body has returned (the rest is unreachable)."""
        bc = self.bc
        if isinstance(s, Assign) and len(s.targets) == 1 and \
                not (isinstance(s.value, CallFunc) and dict(s.value.launch)):
            name = s.targets[0].name
            v = s.value
            if isinstance(v, Call):
                code = self.call(v, name)
                # the cube bookkeeping of StmtCompiler.s_Assign, in the same order
                try:
                    if get(v.op).unit is Unit.CUBE:
                        bc.cube_vars.add(name)
                    else:
                        bc.cube_vars.discard(name)
                except KeyError:
                    pass
            else:
                code = self.expr(v)
                if isinstance(v, Var) and v.name in bc.cube_vars:
                    bc.cube_vars.add(name)
            self.lines.append(f"    env[{name!r}] = {code}")
            return True
        if isinstance(s, Eval) and isinstance(s.expr, Call):
            self.lines.append(f"    {self.call(s.expr, None)}")
            return True
        if isinstance(s, Return):
            vals = "".join(self.expr(v) + ", " for v in s.values)
            self.lines.append(f"    env['$ret'] = ({vals})")
            self.lines.append("    return RETURN")
            return False
        f = self.bind(bc.stmt(s), "s")
        self.lines.append(f"    r = {f}(env)")
        self.lines.append("    if r is not None:")
        self.lines.append("        return r")
        return True


def generate(bc: Any, stmts: tuple) -> Callable:
    """The region body `stmts` compiled by `bc` (a BatchCompiler) as one function."""
    w = _Writer(bc)
    for s in stmts:
        if not w.stmt(s):
            break
    w.lines.append("    return None")
    scope: dict = dict(w.names)
    exec(compile("\n".join(w.lines), f"<batched region {bc.func.name}>", "exec"), scope)
    return scope["body"]


def generate_call(names: list, body: Callable) -> Callable:
    """`CompiledFunction.call` for a batched region of parameters `names`: the env
    built without a loop (UNDEF arguments stay unset, as there)."""
    params = ", ".join(f"a{i}" for i in range(len(names)))
    lines = [f"def call(args):",
             f"    {params}{',' if len(names) == 1 else ''} = args" if names else "    pass",
             "    env = {" + ", ".join(f"{n!r}: a{i}" for i, n in enumerate(names)) + "}"]
    for i, n in enumerate(names):
        lines.append(f"    if a{i} is UNDEF:")
        lines.append(f"        del env[{n!r}]")
    lines.append("    body(env)")
    lines.append("    return env.get('$ret', ())")
    scope = {"UNDEF": UNDEF, "body": body}
    exec(compile("\n".join(lines), "<batched region call>", "exec"), scope)
    return scope["call"]


__all__ = ["generate", "generate_call"]

"""A batched region body as one generated Python function.

The closures `BatchLowering` builds cost a few frames per statement (the assignment, the
guard, the op, one per operand). For the statements of the region body's top level this
module writes the equivalent Python source once per compiled region and `exec`s it:

    def body(env):
        f = env['$frame']
        env['t'] = k0(f, env['x'], [env['r'], c0])   # a batched window: its core
        env['mx'] = k1(f, [env['t']])                # a batched op: its core
        ...
        env['$ret'] = (env['y'],)
        return RETURN

The cores are the functions the closures call (`BatchLowering.core`: the rules'), so the generated
body computes exactly what the closures compute; anything else (uniform ops, nested
loops, other statements) stays a compiled closure called from the body. No guard is
needed: every exception of a batched run abandons the batch and the region runs block
by block (`pypto.sim.batch.run`), which reports what it always reported. The source is
compiled by the simulator's one source writer (`pypto.sim.engine.source`) as
`<pypto:batch-body:REGION#N>` and `<pypto:batch-call:REGION#N>`; under
`SimConfig(source="plain")` the lowering keeps its closures (`BatchLowering.lower_body`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pypto.ir.nodes import Assign, Call, CallFunc, Eval, Function, ListExpr, Return, Var
from pypto.ir.nodes import Stmt as IRStmt
from pypto.sim.config import Settings
from pypto.sim.engine.function import Call as CallFn
from pypto.sim.engine.source import keep_lines, run_source
from pypto.sim.engine.values import FRAME, RETURN, UNDEF, Expr, Stmt


@dataclass(frozen=True)
class Core:
    """A batched op call: `fn(frame, ...)` with, per `kind`, the evaluated `operands`:
    "args" `fn(f, [values])`; "window" `fn(f, tensor, offsets, env)`; "write"
    `fn(f, target, offsets, [fused operands], lambda: source)`."""

    kind: str
    fn: Callable[..., Any]
    operands: list


class BatchCompiling(Protocol):
    """What the generator needs from the compiler of the region (`BatchLowering`)."""

    func: Function
    cube_vars: set[str]
    settings: Settings

    def const(self, e: Any) -> tuple[bool, Any]:
        """(True, value) of a compile-time constant, else (False, None)."""

    def expr(self, e: Any, tolerant: bool = False) -> Expr:
        """The closure of expression `e`."""

    def core(self, e: Call) -> Core | None:
        """The batched core of the op call `e`, or None when it is uniform."""

    def call(self, e: Call, target: str | None = None) -> Expr:
        """The closure of the op call `e`."""

    def stmt(self, s: IRStmt) -> Stmt:
        """The closure of statement `s`."""

    def note_cube(self, name: str, v: Call) -> None:
        """`name` is assigned the result of `v` (a cube result stays in L0C)."""


class _Writer:
    """The source of one generated body and the objects it refers to."""

    def __init__(self, bc: BatchCompiling):
        self.bc = bc
        self.lines: list[str] = ["def body(env):", f"    f = env[{FRAME!r}]"]
        self.names: dict[str, Any] = {"RETURN": RETURN}

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
        c = self.bc.core(e)
        if c is None:  # not batched here: its closure
            return self.bind(self.bc.call(e, target), "f") + "(env)"
        k = self.bind(c.fn, "k")
        ops = c.operands
        if c.kind == "args":
            return f"{k}(f, [{', '.join(self.expr(a) for a in ops)}])"
        if c.kind == "window":
            return f"{k}(f, {self.expr(ops[0])}, {self.expr(ops[1])}, env)"
        target_e, offset, fused_ops, source = ops
        fargs = "[" + ", ".join(self.expr(a) for a in fused_ops) + "]"
        return (f"{k}(f, {self.expr(target_e)}, {self.expr(offset)}, {fargs}, "
                f"lambda: {self.expr(source)})")

    def stmt(self, s: IRStmt) -> bool:
        """Append `s`; False once the body has returned (the rest is unreachable)."""
        bc = self.bc
        if isinstance(s, Assign) and len(s.targets) == 1 and \
                not (isinstance(s.value, CallFunc) and s.value.launch):
            name = s.targets[0].name
            v = s.value
            if isinstance(v, Call):
                code = self.call(v, name)
                bc.note_cube(name, v)  # (what StmtCompiler.s_assign does, in the same order)
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
        fn = self.bind(bc.stmt(s), "s")
        self.lines.append(f"    r = {fn}(env)")
        self.lines.append("    if r is not None:")
        self.lines.append("        return r")
        return True


def generate(bc: BatchCompiling, stmts: tuple) -> Stmt:
    """The region body `stmts` compiled by `bc` as one function."""
    w = _Writer(bc)
    for s in stmts:
        if not w.stmt(s):
            break
    w.lines.append("    return None")
    scope: dict[str, Any] = dict(w.names)
    filename = run_source("batch-body", bc.func.name, "\n".join(w.lines) + "\n", scope,
                          bc.settings.source_dump)
    body: Stmt = scope["body"]
    keep_lines(body, filename)
    return body


def generate_call(region: str, names: list[str], body: Stmt, dump: str | None) -> CallFn:
    """`CompiledFunction.call` for the batched region `region` of parameters `names`:
    the env built without a loop (UNDEF arguments stay unset, as there); `dump`: the
    directory its source is written to."""
    params = ", ".join(f"a{i}" for i in range(len(names)))
    lines = ["def call(args, fr):",
             f"    {params}{',' if len(names) == 1 else ''} = args" if names else "    pass",
             "    env = {" + ", ".join([f"{FRAME!r}: fr"] +
                                        [f"{n!r}: a{i}" for i, n in enumerate(names)]) + "}"]
    for i, n in enumerate(names):
        lines.append(f"    if a{i} is UNDEF:")
        lines.append(f"        del env[{n!r}]")
    lines.append("    body(env)")
    lines.append("    return env.get('$ret', ())")
    scope: dict[str, Any] = {"UNDEF": UNDEF, "body": body}
    filename = run_source("batch-call", region, "\n".join(lines) + "\n", scope, dump)
    call: Callable[[list, Any], tuple] = scope["call"]
    keep_lines(call, filename)
    return call


__all__ = ["BatchCompiling", "Core", "generate", "generate_call"]

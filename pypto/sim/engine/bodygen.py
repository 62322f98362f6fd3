"""A statement list as one generated Python function.

Compiled statements are closures (`pypto.sim.engine.statements`): a sequence calls each
statement's closure and tests its signal, a loop calls its body's closure every
iteration, an `if` calls its condition's and a branch's. A block-by-block loop of
scalar arithmetic pays those frames on every iteration, as many as the op calls
themselves. This module writes the control flow out as Python instead, once per
compiled statement list:

    def body(env):
        k0(env)                      # a statement: its closure (assignments, evals)
        rng1 = k1(env)               # a loop: its trips, counted as its closure counts
        for i1 in rng1:
            env['c'] = i1
            if k2(env):              # an if: its condition's closure
                k3(env)
        return None

Loops and ifs are written out only where no `break`, `continue` or `return` inside them
could need a signal, and only where the compiler compiles them the plain way (a subclass
that compiles them its own way, as the batch compiler does, gets its closures called);
every other statement is its closure, called as a sequence calls it. Each closure is the
one the statement compiles to anyway, so the generated function computes exactly what
the closures compute, in the same order. The source is compiled by the simulator's one
source writer (`pypto.sim.engine.source`) as `<pypto:statements:FUNCTION#N>`;
`SimConfig(source="plain")` keeps the sequence of closures.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pypto.ir.nodes import (
    Assign,
    Break,
    Continue,
    Eval,
    For,
    Function,
    If,
    LoopKind,
    Return,
    Yield,
)
from pypto.ir.nodes import Stmt as IRStmt
from pypto.ir.transform import walk
from pypto.sim.config import Settings
from pypto.sim.engine.source import keep_lines, run_source
from pypto.sim.engine.values import Env, Expr, Stmt

# statements whose closures never return a signal
_PLAIN = (Assign, Eval, Yield)
# how deep loops and ifs are written out (CPython allows 20 nested `for` blocks)
_MAX_DEPTH = 12


class BodyCompiling(Protocol):
    """What the writer needs from the statement compiler (`StmtCompiler`)."""

    in_region: bool
    loop_vars: list[str]
    settings: Settings
    func: Function

    def stmt(self, s: IRStmt) -> Stmt: ...

    def expr(self, e: Any, tolerant: bool = False) -> Expr: ...

    def loop_bounds(self, s: For) -> tuple[Expr, Expr, Expr]: ...

    def loop_trips(self, s: For, bounds: tuple[Expr, Expr, Expr]) -> Callable[[Env], range]: ...

    lowering: Any  # (another compiler's way with ifs and loops: none written out here)

    def carry_cube(self, s: For) -> None: ...


def _signals(stmts: tuple) -> bool:
    """Could running `stmts` give a break / continue / return signal?"""
    return any(isinstance(n, (Break, Continue, Return)) for s in stmts for n in walk(s))


class _Writer:
    def __init__(self, fc: BodyCompiling):
        self.fc = fc
        self.values: list[Any] = []  # what the generated code calls, bound as k0, k1, ...
        self.lines: list[str] = []

    def bind(self, v: Any) -> str:
        self.values.append(v)
        return f"k{len(self.values) - 1}"

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * (depth + 2) + line)

    def block(self, stmts: tuple, depth: int, top: bool) -> None:
        """`stmts` at indentation `depth` (`top`: the function's own level, where a
        statement's signal is returned as a sequence returns it)."""
        n0 = len(self.lines)
        for i, s in enumerate(stmts):
            last = top and i == len(stmts) - 1
            if isinstance(s, For) and self.inline_for(s, depth):
                self.write_for(s, depth)
            elif isinstance(s, If) and self.fc.lowering is None and depth < _MAX_DEPTH and \
                    not _signals((s,)):
                self.write_if(s, depth)
            elif isinstance(s, _PLAIN) or not _signals((s,)):
                self.emit(depth, f"{self.bind(self.fc.stmt(s))}(env)")
            elif last:
                self.emit(depth, f"return {self.bind(self.fc.stmt(s))}(env)")
                return
            else:
                assert top, "a statement that may signal inside a written-out block"
                self.emit(depth, f"r = {self.bind(self.fc.stmt(s))}(env)")
                self.emit(depth, "if r is not None:")
                self.emit(depth, "    return r")
        if len(self.lines) == n0:
            self.emit(depth, "pass")

    def inline_for(self, s: For, depth: int) -> bool:
        fc = self.fc
        return fc.lowering is None and depth < _MAX_DEPTH and not _signals((s,)) and \
            (fc.in_region or s.kind is LoopKind.SPMD)

    def write_for(self, s: For, depth: int) -> None:
        # compiled in the order `StmtCompiler.s_for` compiles a loop
        fc = self.fc
        bounds = fc.loop_bounds(s)
        var = s.var.name
        fc.carry_cube(s)
        fc.loop_vars.append(var)
        body_at = len(self.lines)
        try:
            self.block(s.body, depth + 1, False)
        finally:
            fc.loop_vars.pop()
        body = self.lines[body_at:]
        del self.lines[body_at:]
        iters = [v.name for v in s.iter_args]
        inits = [fc.expr(i) for i in s.inits]
        results = [v.name for v in s.results]
        trips = self.bind(fc.loop_trips(s, bounds))
        d = depth
        self.emit(d, f"rng{d} = {trips}(env)")
        if iters:
            inits_k = self.bind(inits)
            iters_k, results_k = self.bind(tuple(iters)), self.bind(tuple(results))
            self.emit(d, f"c{d} = [f(env) for f in {inits_k}]")
            self.emit(d, f"for i{d} in rng{d}:")
            self.emit(d, f"    env[{var!r}] = i{d}")
            self.emit(d, f"    for k, x in zip({iters_k}, c{d}):")
            self.emit(d, "        env[k] = x")
            self.lines += body
            self.emit(d, "    y = env.pop('$y', None)")
            self.emit(d, "    if y is not None:")
            self.emit(d, f"        c{d} = y")
            self.emit(d, f"for k, x in zip({results_k}, c{d}):")
            self.emit(d, "    env[k] = x")
        else:
            self.emit(d, f"for i{d} in rng{d}:")
            self.emit(d, f"    env[{var!r}] = i{d}")
            self.lines += body

    def write_if(self, s: If, depth: int) -> None:
        # compiled in the order `StmtCompiler.s_if` compiles it
        cond = self.bind(self.fc.expr(s.cond))
        self.emit(depth, f"if {cond}(env):")
        self.block(s.then_body, depth + 1, False)
        self.emit(depth, "else:")
        self.block(s.else_body, depth + 1, False)
        results = [v.name for v in s.results]
        if results:
            res = self.bind(tuple(results))
            self.emit(depth, "y = env.pop('$y', None)")
            self.emit(depth, "if y is not None:")
            self.emit(depth, f"    for k, x in zip({res}, y):")
            self.emit(depth, "        env[k] = x")


def written_body(fc: BodyCompiling, stmts: tuple) -> Stmt | None:
    """The generated function running `stmts` (None: nothing to gain, the plain
    sequence of closures runs them, as under `SimConfig(source="plain")`)."""
    if fc.settings.source == "plain" or not any(isinstance(s, (For, If)) for s in stmts):
        return None
    w = _Writer(fc)
    w.block(stmts, 0, True)
    if not w.lines or not w.lines[-1].lstrip().startswith("return"):
        w.emit(0, "return None")
    names = [f"k{i}" for i in range(len(w.values))]
    src = "\n".join([f"def make({', '.join(names)}):", "    def body(env):", *w.lines,
                     "    return body"]) + "\n"
    ns: dict[str, Any] = {}
    filename = run_source("statements", fc.func.name, src, ns, fc.settings.source_dump)
    fn: Stmt = ns["make"](*w.values)
    keep_lines(fn, filename)
    return fn


__all__ = ["written_body"]

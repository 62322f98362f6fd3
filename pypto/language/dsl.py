"""Language constructs that only have meaning inside a kernel body.

Each is a `Construct`: the parser recognises it by identity and handles it;
calling one from ordinary Python raises, because kernel bodies are parsed, not run.
"""
from __future__ import annotations

import ast
import functools
import inspect
from typing import Any


class KernelOnlyError(RuntimeError):
    pass


class Construct:
    """A `pl.X` name whose meaning the parser supplies. `signature` is the real
    wrapper's parameter list (`inspect.signature` shows it; a call outside a kernel is
    checked against it before it raises)."""

    def __init__(self, name: str, doc: str, signature: str = "(*args, **kwargs)"):
        self.name = name
        self.__doc__ = doc
        self.__name__ = name.rsplit(".", 1)[-1]
        self._signature = signature

    @property
    def __signature__(self) -> inspect.Signature:
        return _signature(self._signature)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.__signature__.bind(*args, **kwargs)
        raise KernelOnlyError(
            f"{self.name}() can only be used inside a kernel body (@pl.jit, @pl.jit.inline, "
            f"@pl.jit.incore or a @pl.program function); kernel bodies are parsed, not executed")

    def __repr__(self) -> str:
        return f"<pl construct {self.name}>"


@functools.cache
def _signature(text: str) -> inspect.Signature:
    """The signature a parameter list written as text declares (defaults: literals)."""
    fn = ast.parse(f"def f{text}: pass").body[0]
    assert isinstance(fn, ast.FunctionDef)
    a, kinds = fn.args, inspect.Parameter
    params = []
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, arg in enumerate(positional):
        kind = kinds.POSITIONAL_ONLY if i < len(a.posonlyargs) else kinds.POSITIONAL_OR_KEYWORD
        params.append(kinds(arg.arg, kind, default=_literal(defaults[i])))
    if a.vararg is not None:
        params.append(kinds(a.vararg.arg, kinds.VAR_POSITIONAL))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(kinds(arg.arg, kinds.KEYWORD_ONLY, default=_literal(d)))
    if a.kwarg is not None:
        params.append(kinds(a.kwarg.arg, kinds.VAR_KEYWORD))
    return inspect.Signature(params)


def _literal(node: ast.expr | None) -> Any:
    return inspect.Parameter.empty if node is None else ast.literal_eval(node)


def _c(name: str, doc: str, signature: str = "(*args, **kwargs)") -> Construct:
    return Construct(name, doc, signature)


# each with the real wrapper's parameters (its Python signature; the parser reads
# the call's syntax itself, as the real parser does)
range = _c("pl.range", "Sequential loop: `for i in pl.range([start,] stop[, step], "
           "init_values=(...))`.", "(*args, init_values=None)")
parallel = _c("pl.parallel", "Loop whose iterations are asserted independent (orchestration).",
              "(*args, init_values=None)")
unroll = _c("pl.unroll", "Loop unrolled at compile time; bounds must be compile-time ints.",
            "(*args)")
pipeline = _c("pl.pipeline", "Software-pipelined loop `pl.pipeline(..., stage=K)`; "
              "semantically a sequential loop.", "(*args, stage, init_values=None)")
while_ = _c("pl.while_", "`for (a, ...) in pl.while_(init_values=(...)):` with pl.cond first.",
            "(*, init_values=None)")
cond = _c("pl.cond", "The condition of a pl.while_ loop; first statement of its body.",
          "(condition)")
yield_ = _c("pl.yield_", "Yield loop-carried values (or if/else results).", "(*values)")
const = _c("pl.const", "`pl.const(value, dtype)`: a typed literal.", "(value, dtype)")
static_print = _c("pl.static_print", "Print values' types at compile time.", "(*args)")
static_assert = _c("pl.static_assert", "`pl.static_assert(cond, 'msg')` at compile time.",
                   "(condition, msg='')")
at = _c("pl.at", "`with pl.at(level=pl.Level.CORE_GROUP, name_hint=...)`: an InCore region, "
        "outlined into one kernel and one task.",
        "(level, role=None, *, optimizations=None, deps=None, no_dep_args=None, dumps=None, "
        "allow_early_resolve=False, name_hint='', windowize=False)")
spmd = _c("pl.spmd", "`for i in pl.spmd(n)` or `with pl.spmd(n) as tid`: one task of n blocks.",
          "(core_num, *, sync_start=False, name_hint='', optimizations=None, deps=None, "
          "allow_early_resolve=False, predicate=None)")
spmd_submit = _c("pl.spmd_submit", "`outs..., tid = pl.spmd_submit(kernel, *args, core_num=N)`.")
submit = _c("pl.submit", "`outs..., tid = pl.submit(self.kernel, *args, deps=[...])`.")
scope = _c("pl.scope", "`with pl.scope():` a runtime dependency-tracking scope.")
manual_scope = _c("pl.manual_scope", "`with pl.manual_scope():` dependencies only from deps=.")
cluster = _c("pl.cluster", "`with pl.cluster():` co-schedule cube and vector kernels.",
             "(*, name_hint='')")
split_aiv = _c("pl.split_aiv", "`for lane in pl.split_aiv(2, mode=...)`: explicit AIV split.",
               "(n, *, mode)")
no_dep = _c("pl.no_dep", "Mark one call argument as not tracked for dependencies.", "(tensor)")
dump_tag = _c("pl.dump_tag", "Mark a tensor for the args dump (levels 1 and 3): every later task "
              "that receives it dumps it.", "(tensor)")
func_attr = _c("pl.func_attr", "`pl.func_attr({...})`: function attributes; first statement.",
               "(attrs)")

"""Language constructs that only have meaning inside a kernel body.

Each is a `Construct`: the parser recognises it by identity and handles it;
calling one from ordinary Python raises, because kernel bodies are parsed, not run.
"""
from __future__ import annotations

from typing import Any


class KernelOnlyError(RuntimeError):
    pass


class Construct:
    """A `pl.X` name whose meaning the parser supplies."""

    def __init__(self, name: str, doc: str):
        self.name = name
        self.__doc__ = doc
        self.__name__ = name.rsplit(".", 1)[-1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise KernelOnlyError(
            f"{self.name}() can only be used inside a kernel body (@pl.jit, @pl.jit.inline, "
            f"@pl.jit.incore or a @pl.program function); kernel bodies are parsed, not executed")

    def __repr__(self) -> str:
        return f"<pl construct {self.name}>"


def _c(name: str, doc: str) -> Construct:
    return Construct(name, doc)


range = _c("pl.range", "Sequential loop: `for i in pl.range([start,] stop[, step], "
           "init_values=(...))`.")
parallel = _c("pl.parallel", "Loop whose iterations are asserted independent (orchestration).")
unroll = _c("pl.unroll", "Loop unrolled at compile time; bounds must be compile-time ints.")
pipeline = _c("pl.pipeline", "Software-pipelined loop `pl.pipeline(..., stage=K)`; "
              "semantically a sequential loop.")
while_ = _c("pl.while_", "`for (a, ...) in pl.while_(init_values=(...)):` with pl.cond first.")
cond = _c("pl.cond", "The condition of a pl.while_ loop; first statement of its body.")
yield_ = _c("pl.yield_", "Yield loop-carried values (or if/else results).")
const = _c("pl.const", "`pl.const(value, dtype)`: a typed literal.")
static_print = _c("pl.static_print", "Print values' types at compile time.")
static_assert = _c("pl.static_assert", "`pl.static_assert(cond, 'msg')` at compile time.")
at = _c("pl.at", "`with pl.at(level=pl.Level.CORE_GROUP, name_hint=...)`: an InCore region, "
        "outlined into one kernel and one task.")
spmd = _c("pl.spmd", "`for i in pl.spmd(n)` or `with pl.spmd(n) as tid`: one task of n blocks.")
spmd_submit = _c("pl.spmd_submit", "`outs..., tid = pl.spmd_submit(kernel, *args, core_num=N)`.")
submit = _c("pl.submit", "`outs..., tid = pl.submit(self.kernel, *args, deps=[...])`.")
scope = _c("pl.scope", "`with pl.scope():` a runtime dependency-tracking scope.")
manual_scope = _c("pl.manual_scope", "`with pl.manual_scope():` dependencies only from deps=.")
cluster = _c("pl.cluster", "`with pl.cluster():` co-schedule cube and vector kernels.")
split_aiv = _c("pl.split_aiv", "`for lane in pl.split_aiv(2, mode=...)`: explicit AIV split.")
no_dep = _c("pl.no_dep", "Mark one call argument as not tracked for dependencies.")
dump_tag = _c("pl.dump_tag", "Mark a tensor for the args dump (levels 1 and 3): every later task "
             "that receives it dumps it.")
func_attr = _c("pl.func_attr", "`pl.func_attr({...})`: function attributes; first statement.")

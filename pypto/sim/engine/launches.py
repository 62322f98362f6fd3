"""Compiling launches: a region launched as a task (`pl.at`, an SPMD launch, a call with
a dispatch predicate), and a `chip(..., device=r)` dispatch in a host function.

`compiler.FnCompiler` asks `launch` for a launch's closure: it evaluates the launch's
arguments, core count and dependencies, then hand the task to the host
(`Host.launch`: the batched or block-by-block runtime), and bind the task's results and
id to the assignment's targets. A hand-written (extern) kernel is refused when
launched, with where it is declared.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pypto.errors import NotSimulatableError, SimulationError
from pypto.ir.nodes import Assign, Call, CallFunc, Function, Return, Var
from pypto.ir.span import Span
from pypto.ir.transform import walk
from pypto.ops.registry import get
from pypto.passes.dataflow import Dataflow, Storage, returned_param_sets
from pypto.sim.engine.function import Host, LaunchSite
from pypto.sim.engine.values import FRAME, Env, Expr, Stmt, flatten_deps


class Launching(Protocol):
    """What the launch closures ask of the function's compiler (`compiler.FnCompiler`)."""

    host: Host
    loop_vars: list[str]  # the loops being compiled, outermost first

    def expr(self, e: Any, tolerant: bool = False) -> Expr:
        """The closure of expression `e`."""


def launch(fc: Launching, e: CallFunc, targets: tuple[Var, ...] | None) -> Expr:
    """A launch of a region as a task; with `targets`, the closure assigns its outputs
    and task id (and returns None), else it returns the task id."""
    if e.launch_attr("kind") == "device":
        return device_dispatch(fc, e, targets)
    host = fc.host
    site = launch_site(e, tuple(fc.loop_vars))
    callee = host.function(e.func).func
    extern = callee.attr("extern")
    if extern is not None:  # refused at the call site, before its arguments are used
        return not_simulatable(callee, extern, e.span)
    info = dict(e.launch)
    argfns = [fc.expr(a, tolerant=True) for a in e.args]
    core = info.get("core_num")
    core_f = None if core is None else fc.expr(core)
    deps_f = [fc.expr(d, tolerant=True) for d in (info.get("deps") or ())]
    tnames = [t.name for t in targets] if targets else None
    predicate = info.get("predicate")
    pred_f = None if predicate is None else fc.expr(predicate)
    kept = _kept_outputs(callee) if predicate is not None else []
    # `attrs={"arg_directions": [...]}`: the runtime allocates an `output` argument's
    # buffer; the caller's tensor there only gives its shape
    fresh = [i for i, d in enumerate(dict(e.attrs).get("arg_directions") or ())
             if getattr(d, "name", "") == "Output"]
    names = [p.var.name for p in callee.params]

    def run(env: Env) -> Any:
        args = [f(env) for f in argfns]
        for i in fresh:
            args[i] = _runtime_output(env[FRAME], args[i], f"{site.hint}.{names[i]}")
        if pred_f is not None and not pred_f(env):
            rets, tid = _retire(env[FRAME], site, args, kept)
            return _bind_results(env, tnames, rets, tid)
        n = 1 if core_f is None else int(core_f(env))
        deps = flatten_deps([f(env) for f in deps_f])
        loops = tuple((v, env[v]) for v in site.loops if v in env)
        rets, tid = host.launch(env[FRAME], site, args, n, deps, loops)
        return _bind_results(env, tnames, rets, tid)

    return run

def device_dispatch(fc: Launching, e: CallFunc, targets: tuple[Var, ...] | None) -> Expr:
    """`chip(..., device=r)` in a host function: queued on rank r, which runs it with
    the others when the host function returns (`pypto.sim.cluster`). Its results are
    the host tensors it was given that `chip` returns (`out = chip(a, out, device=r)`);
    a tensor `chip` makes itself never reaches the host."""
    picks = _dispatch_results(fc.host, e, targets) if targets else ()
    argfns = [fc.expr(a, tolerant=True) for a in e.args]
    given = e.launch_attr("device")
    device = fc.expr(given) if given is not None else None
    name, span = e.func, e.span

    def run(env: Env) -> Any:
        fr = env[FRAME]
        comm = fr.run.comm
        if comm is None:
            raise fr.fault(f"{name}(..., device=...) dispatches on a rank, which only a "
                           "multi-card run has", span)
        fr.span = span
        args = [f(env) for f in argfns]
        rank = device(env) if device is not None else comm.commless_device()
        comm.dispatch(fr, rank, name, args)
        for t, i in picks:
            env[t] = args[i]
        return None

    return run

def _dispatch_results(host: Host, e: CallFunc, targets: tuple[Var, ...]) -> tuple:
    """(target, argument index) for each result of a dispatch on a rank."""
    callee = host.function(e.func).func
    picks = returned_args(callee, lambda name: host.function(name).func)
    if len(picks) != len(targets) or None in picks:
        raise SimulationError(f"the result of {e.func}(..., device=...) is used, but "
                              f"{e.func} returns a tensor it made, which stays on the rank",
                              e.span, hint="return the output parameter (e.g. out[r], "
                              "passed in) or pass the outputs as arguments")
    return tuple((t.name, i) for t, i in zip(targets, picks))


def not_simulatable(func: Function, extern: tuple, at: Span | None) -> Stmt:
    """The closure of launching the hand-written kernel `func` (at `at`, else inside it)."""
    core, *files = extern
    name = func.attr("source_name", func.name)
    decl = func.span

    def refuse(env: Env) -> Any:
        fr = env[FRAME]
        raise NotSimulatableError(
            f"{name} is a hand-written {core} kernel ({', '.join(dict.fromkeys(files))}): its "
            "body is C++ that the simulator cannot run", at or decl,
            hint="simulate the kernels around it with a pl stand-in for it, or run this "
                 "program on hardware",
            note=f"{name} is declared at {decl}", region=fr.region, block=fr.block)

    return refuse


def launch_site(e: CallFunc, loops: tuple[str, ...] = ()) -> LaunchSite:
    """The launch site of the launching call `e` (inside the loops over `loops`)."""
    info = dict(e.launch)
    return LaunchSite.of(e.func, info.get("name_hint") or e.func, info.get("kind") or "at",
                         e.span, loops, frozenset(info.get("dumps") or ()))


def returned_args(f: Function, lookup: Callable[[str], Function], depth: int = 0
                  ) -> list[int | None]:
    """For each value `f` returns, the index of the parameter whose buffer it is (None:
    a tensor `f` made), following `out = g(..., out)` through the functions it calls."""
    rets = [s for s in f.body if isinstance(s, Return)]
    root = Storage(Dataflow(f)).root  # `out = g(...)` then `res = out`: one buffer
    index = {root(p.var.name): i for i, p in enumerate(f.params)}  # the last one wins
    made_by = {root(t.name): (s.value, k) for s in walk(f.body) if isinstance(s, Assign)
               and isinstance(s.value, CallFunc) for k, t in enumerate(s.targets)}
    picks: list[int | None] = []
    for v in rets[-1].values if rets else ():
        if isinstance(v, Call) and get(v.op).writes in get(v.op).params:
            v = v.args[get(v.op).params.index(get(v.op).writes)]  # `return pl.store(.., out)`
        if not isinstance(v, Var):
            picks.append(None)
            continue
        pick = index.get(root(v.name))
        call, k = made_by.get(root(v.name), (None, 0))
        if pick is None and call is not None and depth < 8:
            inner = returned_args(lookup(call.func), lookup, depth + 1)
            at = inner[k] if k < len(inner) else None
            arg = call.args[at] if at is not None else None
            pick = index.get(root(arg.name)) if isinstance(arg, Var) else None
        picks.append(pick)
    return picks


def _kept_outputs(callee: Function) -> list[int | None]:
    """For each output of `callee`: the index of the parameter whose buffer it is (what a
    task retired by its predicate hands on unchanged), or None."""
    names = [p.var.name for p in callee.params]
    return [names.index(next(iter(s))) if len(s) == 1 else None
            for s in returned_param_sets(callee)]


def _retire(fr: Any, site: LaunchSite, args: list, kept: list) -> tuple[tuple, int]:
    """A task whose dispatch predicate is false: it takes a task id and releases its
    dependents, but no block runs; its outputs are its argument buffers, unwritten."""
    run = fr.run
    tid = run.next_tid
    run.next_tid = tid + 1
    rets = []
    for i, k in enumerate(kept):
        if k is None:
            raise fr.fault(f"{site.label} was retired by its dispatch predicate, but its output "
                           f"{i} is not one of its tensor arguments, so it has no value",
                           site.span, hint="return the pl.Out tensors the kernel writes")
        rets.append(args[k])
    return tuple(rets), tid


def _runtime_output(fr: Any, like: Any, name: str) -> Any:
    """A buffer the runtime allocates for a task's `pl.adir.output` argument: fresh
    device memory (residue) of the argument's shape and dtype."""
    memory = fr.run.memory
    arr = memory.new_fresh(list(like.shape), like.dtype)
    memory.register(name, arr, None, None, "tensor")
    if fr.run.uninit is not None:
        fr.run.uninit.fresh(arr, name, "pl.adir.output")
    return arr


def _bind_results(env: Env, tnames: Any, rets: Any, tid: Any) -> Any:
    """A launch's value: its task id alone, or (with assignment targets) its results and
    then the task id bound to those names."""
    if tnames is None:
        return tid
    for t, r in zip(tnames[:-1], rets):
        env[t] = r
    env[tnames[-1]] = tid
    return None


__all__ = ["Launching", "device_dispatch", "launch", "launch_site", "not_simulatable",
           "returned_args"]

"""Host-level code of a multi-card program that the real parser accepts and this
simulator cannot run: `with pl.at(level=pl.Level.HOST)` and host SubWorker callbacks
(`@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)`). Each compiles, says
itself in the text form, and a run is refused before anything runs, located at the
line marked `# ERR:<tag>` (passes/runnable.py)."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import assert_at, compile_error, refused_at_run

import pypto.language as pl
from pypto.errors import NotSimulatableError, PyptoSyntaxError, ScopeError
from pypto.ir.nodes import CallFunc, FunctionKind, Scope, ScopeKind
from pypto.ir.printer import print_program
from pypto.ir.transform import walk

HERE = __file__


@pl.program
class HostScope:
    @pl.function
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.at(level=pl.Level.HOST, name_hint="host_func"):  # ERR:host_scope
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
        return y


def test_host_level_scope_compiles_and_is_refused_when_run():
    compiled = HostScope.compile()
    (scope,) = [s for s in walk(compiled.program.function("main").body)
                if isinstance(s, Scope)]
    assert scope.kind is ScopeKind.HIERARCHY
    assert dict(scope.attrs) == {"level": "HOST", "name_hint": "host_func"}
    assert "with pl.at(level=pl.Level.HOST, name_hint='host_func'):" in \
        print_program(compiled.program)
    # host code is not core work left in orchestration code: no misplaced-op warning
    assert not compiled.analyses["misplaced_ops"]
    err = refused_at_run(HostScope, NotSimulatableError, "a pl.at(level=pl.Level.HOST) scope "
                         "runs at a level above CORE_GROUP", HERE, "host_scope",
                         "with", args=(np.ones(64, np.float32),))
    assert "CORE_GROUP" in err.hint


@pl.jit
def subworker_scope(x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]):
    with pl.at(level=pl.Level.HOST, role=pl.Role.SubWorker):  # ERR:sw_scope
        y = pl.add(x, x)
    return y


def test_inline_subworker_scope_is_a_syntax_error():
    err = compile_error(subworker_scope, PyptoSyntaxError, "Inline 'with pl.at(level>=HOST, "
                        "role=pl.Role.SubWorker)' is not supported.", HERE, "sw_scope",
                        "pl.Role.SubWorker")
    assert "@pl.function(level=..., role=pl.Role.SubWorker)" in err.hint


@pl.jit
def host_scope_split(x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]):
    with pl.at(level=pl.Level.HOST,
               optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):  # ERR:host_split
        y = pl.add(x, x)
    return y


def test_optimizations_need_a_core_group_scope():
    compile_error(host_scope_split, PyptoSyntaxError, "are only supported with "
                  "level=pl.Level.CORE_GROUP", HERE, "host_split", "[pl.split")


@pl.jit
def host_scope_in_region(x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):  # noqa: SIM117 - one scope per kernel `with`
        with pl.at(level=pl.Level.HOST):  # ERR:host_in_region
            y = pl.add(x, x)
    return y


def test_a_host_level_scope_cannot_open_inside_a_kernel():
    compile_error(host_scope_in_region, ScopeError, "pl.at(level=pl.Level.HOST) is not "
                  "supported here", HERE, "host_in_region", "pl.Level.HOST")


# --- SubWorkers ------------------------------------------------------------------------


@pl.program
class AbstractCallback:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def cb(x: pl.Tensor[[4], pl.FP16]) -> pl.Tensor[[4], pl.FP16]: ...  # ERR:abstract


def test_abstract_subworker_compiles_and_is_refused_when_run():
    func = AbstractCallback.compile().program.function("cb")
    assert func.kind is FunctionKind.HOST and func.body == ()
    assert func.attr("role") == "SubWorker" and func.attr("requires_runtime_binding") is True
    assert [p.var.name for p in func.params] == ["x"]  # no self: it is self-contained
    assert len(func.returns) == 1 and func.returns[0].shape == (4,)
    err = refused_at_run(AbstractCallback, NotSimulatableError, "cb is an abstract SubWorker "
                         "callback", HERE, "abstract", "def", args=(np.ones(4, np.float16),))
    assert "prepare(callbacks={...})" in err.message


@pl.program
class HostWithCallbacks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pl.Tensor[[16, 16], pl.FP32],
             f: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double"):
            f[:, :] = pl.add(a[:, :], a[:, :])
        return f

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def report(f: pl.Tensor[[16, 16], pl.FP32]):
        print(float(f[0, 0]))

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def inspect(f: pl.Tensor[[16, 16], pl.FP32]):  # ERR:inspect
        """Bound when the program is prepared."""
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[16, 16], pl.FP32],
             f: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.chip(a, f, device=0)
        self.inspect(out)
        self.report(out)
        return out


def test_host_orchestrator_calls_its_subworkers():
    program = HostWithCallbacks.compile().program
    assert program.entry == "host"  # the orchestrator, not a callback
    calls = [n.func for n in walk(program.function("host").body) if isinstance(n, CallFunc)]
    assert calls == ["chip", "inspect", "report"]
    report = program.function("report")
    assert report.attr("python_body") == "print(float(f[0, 0]))"
    assert report.attr("requires_runtime_binding") is None
    assert program.function("inspect").attr("requires_runtime_binding") is True
    a = np.ones((16, 16), np.float32)
    f = np.zeros_like(a)
    with pytest.raises(NotSimulatableError) as info:
        HostWithCallbacks(a, f)
    assert info.value.message.startswith("inspect is an abstract SubWorker callback")
    assert_at(info.value, HERE, "inspect", "def")
    assert not f.any()  # refused before anything ran
    refusals = HostWithCallbacks.compile().analyses["refusals"]
    assert [r.message.split(" is ")[0] for r in refusals] == ["inspect", "report"]
    assert "a host SubWorker: its body is Python" in refusals[1].message


@pl.program
class CallbackWithSelf:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def cb(self, x: pl.Tensor[[4], pl.FP16]): ...  # ERR:sw_self


def test_a_subworker_takes_no_self():
    err = compile_error(CallbackWithSelf, PyptoSyntaxError, "SubWorker function 'cb' must not "
                        "declare 'self'", HERE, "sw_self", "def")
    assert err.hint == "Remove the 'self' parameter from the SubWorker definition."

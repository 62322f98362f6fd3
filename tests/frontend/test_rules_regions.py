"""Rules of regions and scopes, the two kernel forms, inline helpers, error families.
Each test asserts the exception family, the message and the exact line:column of the
offending token (`# ERR:<tag>`)."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import N, T, assert_at, compile_error, refused_at_run

import pypto.language as pl
from pypto.errors import (
    DynamicShapeError,
    InvalidOperationError,
    NotSimulatableError,
    PyptoDeprecationWarning,
    PyptoError,
    PyptoSyntaxError,
    PyptoTypeError,
    PyptoWarning,
    ScopeError,
    UndefinedNameError,
    UnsupportedFeatureError,
)
from pypto.ir.nodes import Scope, ScopeKind
from pypto.ir.transform import walk
from pypto.language.enums import CrossCoreSlot, Split, SplitMode

HERE = __file__



# --- regions and scopes --------------------------------------------------------------------


@pl.jit
def spmd_in_at(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="outer"):
        for b in pl.spmd(4):  # ERR:spmd_in_at
            y[b:b + 1, :] = pl.exp(x[b:b + 1, :])
    return y


def test_spmd_inside_at():
    compile_error(spmd_in_at, ScopeError, "pl.spmd cannot be nested inside a pl.at", HERE,
                  "spmd_in_at", "pl.spmd")


@pl.jit
def at_in_spmd(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):  # ERR:at_in_spmd
            y[b:b + 1, :] = pl.exp(x[b:b + 1, :])
    return y


def test_at_inside_spmd():
    compile_error(at_in_spmd, ScopeError, "pl.at cannot be nested inside pl.spmd", HERE,
                  "at_in_spmd", "pl.at")


@pl.jit
def at_in_at(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="outer"):  # noqa: SIM117 - nesting is the test
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):
            y[0:T, :] = pl.exp(x[0:T, :])
    return y


def test_at_inside_at_is_a_named_sub_kernel():
    from pypto.ir.nodes import CallFunc
    from pypto.ir.transform import walk

    program = at_in_at.compile().program
    names = [f.name for f in program.functions]
    assert names == ["at_in_at", "at_in_at_inner", "at_in_at_outer"]
    outer = program.function("at_in_at_outer")
    launches = [n for n in walk(outer.body) if isinstance(n, CallFunc)]
    assert [c.func for c in launches] == ["at_in_at_inner"]
    assert launches[0].launch_attr("nested") is True
    assert launches[0].launch_attr("name_hint") == "inner"


@pl.jit.inline
def region_helper(x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="inner"):
        y[0:T, :] = pl.exp(x[0:T, :])
    return y


@pl.jit
def region_calls_region(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="outer"):
        y = region_helper(x, y)
    return y


def test_region_in_an_inline_called_inside_a_region_nests():
    program = region_calls_region.compile().program
    assert {f.name for f in program.functions} == {
        "region_calls_region", "region_calls_region_inner", "region_calls_region_outer"}


@pl.jit
def bad_level(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CHIP, name_hint="a"):  # ERR:level
        y[0:T, :] = pl.exp(x[0:T, :])
    return y


def test_level_other_than_core_group():
    # the real parser builds a hierarchy scope for any level but CORE_GROUP (its compiler
    # outlines it into a function of that level): compiles; refused when run
    x = np.ones((N, N), np.float32)
    err = refused_at_run(bad_level, NotSimulatableError, "a pl.at(level=pl.Level.CHIP) scope "
                         "runs at a level above CORE_GROUP", HERE, "level", "with",
                         args=(x, np.zeros_like(x)))
    assert "CORE_GROUP" in err.hint


@pl.jit
def split_slot(x: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
               y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm",
               optimizations=[pl.split(pl.SplitMode.UP_DOWN, slot_num=4)]):  # ERR:split_slot
        y[0:T, :] = pl.exp(pl.matmul(x[0:T, :], w))
    return y


def test_split_slot_num_is_deprecated_and_means_cross_core_slot():
    with pytest.warns(PyptoDeprecationWarning) as rec:
        compiled = split_slot.compile()
    w = next(r.message for r in rec if isinstance(r.message, PyptoDeprecationWarning))
    assert "pl.cross_core_slot(slot_num=N)" in w.message
    assert_at(w, HERE, "split_slot", "pl.split")
    parsed = compiled.records[0].before if compiled.records else compiled.program
    scopes = [n for f in parsed.functions for n in walk(f.body)
              if isinstance(n, Scope) and n.kind is ScopeKind.INCORE]
    opts = scopes[0].attr("optimizations")
    assert Split(SplitMode.UP_DOWN) in opts and CrossCoreSlot(4) in opts


# --- the two forms and inline helpers ---------------------------------------------------


@pl.jit.inline
def out_helper(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR:inl_out
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="h"):
        y[0:T, :] = pl.exp(x[0:T, :])
    return y


@pl.jit
def calls_out_helper(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = out_helper(x, y)
    return y


def test_out_on_an_inline_parameter_is_stripped_with_a_deprecation_warning():
    with pytest.warns(PyptoDeprecationWarning) as rec:
        calls_out_helper.compile()
    w = next(r.message for r in rec if isinstance(r.message, PyptoDeprecationWarning))
    assert "pl.Out on parameter 'y'" in w.message and "stripped" in w.message
    assert_at(w, HERE, "inl_out", "pl.Out[pl.Tensor[[N, N], pl.FP32]]")


@pl.jit.inline
def void_helper(x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):  # ERR:void
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="h"):
        y[0:T, :] = pl.exp(x[0:T, :])


@pl.jit
def uses_void(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = void_helper(x, y)
    return y


@pl.jit
def calls_void(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    void_helper(x, y)
    return y


def test_inline_that_returns_nothing():
    err = compile_error(uses_void, PyptoSyntaxError, "inline function 'void_helper' returns "
                        "nothing", HERE, "void", "void_helper")
    assert "return" in err.hint
    calls_void.compile()  # a statement call does not use the value


@pl.program
class MixesForms:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        y = rb_plain_helper(x, y)  # ERR:mix_prog
        return y


@pl.jit.inline
def rb_plain_helper(x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="h"):
        y[0:T, :] = pl.exp(x[0:T, :])
    return y


def _standalone(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="h"):
        y[0:T, :] = pl.exp(x[0:T, :])
    return y


program_function = pl.function(type=pl.FunctionType.Opaque)(_standalone)


@pl.jit
def jit_calls_program_function(x: pl.Tensor[[N, N], pl.FP32],
                               y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = program_function(x, y)  # ERR:mix_jit
    return y


def test_program_calling_a_jit_kernel_warns():
    with pytest.warns(PyptoWarning, match="mixing kernel forms") as rec:
        MixesForms.compile()
    w = next(r.message for r in rec if "mixing" in str(r.message))
    assert_at(w, HERE, "mix_prog", "rb_plain_helper(x, y)")


def test_jit_calling_a_program_function_warns():
    with pytest.warns(PyptoWarning, match="mixing kernel forms") as rec:
        jit_calls_program_function.compile()
    w = next(r.message for r in rec if "mixing" in str(r.message))
    assert_at(w, HERE, "mix_jit", "program_function(x, y)")


# --- families -------------------------------------------------------------------------------


def test_every_rule_error_is_a_user_error():
    for cls in (PyptoSyntaxError, PyptoTypeError, UndefinedNameError, InvalidOperationError,
                UnsupportedFeatureError, ScopeError, DynamicShapeError):
        assert issubclass(cls, PyptoError)

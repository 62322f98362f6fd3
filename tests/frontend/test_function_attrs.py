"""`@pl.function(attrs={...})`: deprecated (a warning when given), but what it holds
becomes the function's attributes, beside pl.func_attr's; values are checked as the
real decorator checks them, each error located at the `attrs=` value."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from frontend_helpers import assert_at

import pypto.language as pl
from pypto.errors import PyptoDeprecationWarning, PyptoSyntaxError
from pypto.ir.printer import print_program

HERE = __file__


def _program(attrs):
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore, attrs=attrs)  # ERR:attrs
        def kernel(self, x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]
                   ) -> pl.Tensor[[64], pl.FP32]:
            out[0:64] = x[0:64]
            return out

    return P


def _compile(attrs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PyptoDeprecationWarning)
        return _program(attrs).compile().program


def test_decorator_attrs_become_function_attributes_and_print_as_func_attr():
    attrs = {"marker": 7, "dtype": pl.FP16, "memory_space": pl.Mem.Vec,
             "pad": pl.PadValue.zero, "direction": pl.adir.input}
    program = _compile(attrs)
    kernel = next(f for f in program.functions if f.attr("source_name") == "kernel")
    assert {k: kernel.attr(k) for k in attrs} == attrs
    text = print_program(program)
    assert "'direction': pl.adir.input" in text and "'dtype': pl.FP16" in text
    back = pl.parse(text)
    again = next(f for f in back.functions if f.name == kernel.name)
    assert {k: again.attr(k) for k in attrs} == attrs


def test_the_deprecation_warning_says_why_and_only_for_given_attrs():
    with pytest.warns(PyptoDeprecationWarning, match="cannot reference parameters"):
        _program({"split": pl.SplitMode.UP_DOWN})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(PyptoSyntaxError):  # checked all the same
            _program([]).compile()


@pytest.mark.parametrize("attrs, match", [
    (5, "`@pl.function(attrs=...)` must be a dict, got int"),
    ([], "`@pl.function(attrs=...)` must be a dict, got list"),
    ({1: 2}, "`@pl.function(attrs=...)` keys must be strings, got 1"),
    ({"custom_list": [1, 2]}, "Unsupported list element type for key: custom_list"),
    ({"bad": pl.Tensor[[4], pl.FP16]}, "attr 'bad' is an annotation-only TensorAnnotation"),
    ({"obj": object()}, "Unsupported attr type for key: obj (object)"),
])
def test_bad_decorator_attrs_are_located_syntax_errors(attrs, match):
    with pytest.raises(PyptoSyntaxError) as info:
        _compile(attrs)
    assert match in info.value.message
    assert_at(info.value, HERE, "attrs", "attrs)")


def test_integer_lists_only_under_the_overrides_key():
    program = _compile({"arg_direction_overrides": [0, 2]})
    kernel = next(f for f in program.functions if f.attr("source_name") == "kernel")
    assert kernel.attr("arg_direction_overrides") == [0, 2]


@pl.program
class _Duplicate:
    @pl.function(type=pl.FunctionType.InCore, attrs={"split": pl.SplitMode.UP_DOWN})
    def kernel(self, x: pl.Tensor[[64], pl.FP32], out: pl.Out[pl.Tensor[[64], pl.FP32]]
               ) -> pl.Tensor[[64], pl.FP32]:
        pl.func_attr({"split": pl.SplitMode.LEFT_RIGHT})  # ERR:dup
        out[0:64] = x[0:64]
        return out


def test_a_key_given_by_the_decorator_and_the_body_is_a_duplicate():
    with pytest.raises(PyptoSyntaxError) as info:
        _Duplicate.compile()
    assert "duplicate function attribute 'split'" in info.value.message
    assert_at(info.value, HERE, "dup", '"split"')


def test_adir_names_are_the_direction_members():
    from pypto.language.arg_direction import NAME_TO_DIRECTION
    from pypto.language.enums import ArgDirection

    assert pl.adir.input is ArgDirection.Input and pl.adir.no_dep is ArgDirection.NoDep
    assert NAME_TO_DIRECTION["output_existing"] is pl.adir.output_existing
    assert len(NAME_TO_DIRECTION) == 6


# -- calls inside a program: external names, dynamic dims ----------------------------

M = pl.dynamic("M")


def test_an_external_function_may_not_take_a_method_name():
    @pl.function
    def conflicting(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result: pl.Tensor[[64], pl.FP32] = pl.add(x, 1.0)
        return result

    @pl.program
    class NameClash:
        @pl.function
        def conflicting(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
            return result

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            result: pl.Tensor[[64], pl.FP32] = conflicting(x)  # ERR:clash
            return result

    with pytest.raises(PyptoSyntaxError) as info:
        NameClash.compile(np.zeros(64, np.float32))
    assert "external function 'conflicting' conflicts with program function" in \
        info.value.message
    assert_at(info.value, HERE, "clash", "conflicting(x)")


def test_two_externals_of_one_name_conflict_in_a_method_the_entry_does_not_reach():
    # the real parser parses every method; here the entry (the last Opaque method)
    # never calls first(), but its call of the other `helper` is checked all the same
    def make(scale: float):
        @pl.function
        def helper(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            result: pl.Tensor[[64], pl.FP32] = pl.mul(x, scale)
            return result
        return helper

    helper_a, helper_b = make(2.0), make(3.0)

    @pl.program
    class TwoHelpers:
        @pl.function
        def first(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            result: pl.Tensor[[64], pl.FP32] = helper_a(x)
            return result

        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            result: pl.Tensor[[64], pl.FP32] = helper_b(x)  # ERR:two_helpers
            return result

    with pytest.raises(PyptoSyntaxError) as info:
        TwoHelpers.compile(np.zeros(64, np.float32))
    assert info.value.message == ("Conflicting external functions named 'helper': two "
                                  "different functions of that name are called from this "
                                  "program")
    assert info.value.hint == "give the external functions distinct names"
    assert_at(info.value, HERE, "two_helpers", "helper_b(x)")


@pl.program
class _DimClash:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, 64], pl.FP32],
               b: pl.Tensor[[M, 64], pl.FP32]) -> pl.Tensor[[M, 64], pl.FP32]:  # ERR:dim
        result: pl.Tensor[[M, 64], pl.FP32] = pl.add(a, b)
        return result

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, a: pl.Tensor[[128, 64], pl.FP32],
             b: pl.Tensor[[127, 64], pl.FP32]) -> pl.Tensor[[128, 64], pl.FP32]:
        c: pl.Tensor[[128, 64], pl.FP32] = self.kernel(a, b)
        return c


def test_one_call_binds_a_dynamic_dim_once():
    with pytest.raises(PyptoSyntaxError) as info:
        _DimClash.compile(np.zeros((128, 64), np.float32), np.zeros((127, 64), np.float32))
    assert "dynamic dim 'M' has conflicting bindings in this call: 128 from argument 'a' " \
        "and 127 from 'b'" in info.value.message
    assert_at(info.value, HERE, "dim", "b:")


def test_calling_a_missing_method_is_an_undefined_name():
    from pypto.errors import UndefinedNameError

    @pl.program
    class Missing:
        @pl.function
        def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            result: pl.Tensor[[64], pl.FP32] = self.nonexistent(x)  # ERR:missing
            return result

    with pytest.raises(UndefinedNameError) as info:
        Missing.compile(np.zeros(64, np.float32))
    assert "program Missing has no function 'nonexistent'" in info.value.message
    assert_at(info.value, HERE, "missing", "self.nonexistent")

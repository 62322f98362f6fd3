"""Rules: the pl alias, unknown names and attributes, op signatures, unsupported Python.
Each test asserts the exception family, the message and the exact line:column of the
offending token (`# ERR:<tag>`)."""
from __future__ import annotations

import warnings

import numpy as np
from frontend_helpers import (
    N,
    T,
    compile_error,
    helper,
    load_kernels,
    misplaced_at_run,
    where,
)

import pypto.language as pl
from pypto.errors import (
    InvalidOperationError,
    PyptoSyntaxError,
    PyptoTypeError,
    UndefinedNameError,
    UnsupportedFeatureError,
)

HERE = __file__



# --- pl is the only alias -------------------------------------------------------------


def test_alias_other_than_pl_is_rejected_at_the_name():
    k = load_kernels("alias_kernels")
    err = compile_error(k.aliased, PyptoSyntaxError, "imported as 'L'", k.__file__, "alias",
                        "L.exp")
    assert err.hint == "import pypto.language as pl"


def test_package_path_to_the_language_is_rejected():
    k = load_kernels("alias_kernels")
    err = compile_error(k.through_package, PyptoSyntaxError, "'pypto'", k.__file__, "package",
                        "pypto.language")
    assert err.hint == "import pypto.language as pl"


def test_alias_in_an_annotation_is_rejected():
    k = load_kernels("alias_kernels")
    compile_error(k.aliased_dtype, PyptoSyntaxError, "imported as 'L'", k.__file__, "ann",
                  "L.FP32")


def test_pl_alias_compiles():
    k = load_kernels("alias_kernels")
    assert k.plain.compile().program is not None


# --- unknown pl attributes, names, op signatures ----------------------------------------


@pl.jit
def unknown_attr(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        a = x[0:T, :]
        y[0:T, :] = pl.ad(a, a)  # ERR:pl_ad
    return y


def test_unknown_pl_attribute_did_you_mean():
    err = compile_error(unknown_attr, InvalidOperationError, "pl has no attribute 'ad'", HERE,
                        "pl_ad", "pl.ad")
    assert err.hint == "did you mean pl.add?"


@pl.jit
def unknown_sub_attr(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dimm(x, 0)  # ERR:dimm
    return y


def test_unknown_namespace_attribute_did_you_mean():
    err = compile_error(unknown_sub_attr, InvalidOperationError,
                        "pl.tensor has no attribute 'dimm'", HERE, "dimm", "pl.tensor.dimm")
    assert err.hint == "did you mean pl.tensor.dim?"


@pl.jit
def op_in_wrong_namespace(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    v = pl.view(x, [N, N], [0, 0])  # ERR:pl_dim
    return y


def test_op_in_wrong_namespace_points_to_the_right_one():
    err = compile_error(op_in_wrong_namespace, InvalidOperationError,
                        "pl has no attribute 'view'", HERE, "pl_dim", "pl.view")
    assert err.hint == "did you mean pl.tensor.view?"


@pl.jit
def undefined(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        tile_x = x[0:T, :]
        y[0:T, :] = pl.exp(tilex)  # ERR:undefined  # noqa: F821 - the typo under test
    return y


def test_undefined_name_did_you_mean():
    err = compile_error(undefined, UndefinedNameError, "name 'tilex' is not defined", HERE,
                        "undefined", "tilex")
    assert err.hint == "did you mean 'tile_x'?"


@pl.jit
def unknown_keyword(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        a = x[0:T, :]
        y[0:T, :] = pl.add(a, a, rhz=1)  # ERR:kw
    return y


def test_unknown_keyword_points_at_the_keyword():
    err = compile_error(unknown_keyword, InvalidOperationError,
                        "pl.add() got an unexpected keyword argument 'rhz'", HERE, "kw", "rhz=1")
    assert "rhs" in err.hint


@pl.jit
def missing_arg(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        a = x[0:T, :]
        y[0:T, :] = pl.add(a)  # ERR:arity_few
    return y


def test_missing_argument():
    err = compile_error(missing_arg, InvalidOperationError, "missing a required argument: 'rhs'",
                        HERE, "arity_few", "pl.add(a)")
    assert "signature: pl.add(lhs, rhs)" in err.hint


@pl.jit
def extra_arg(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        a = x[0:T, :]
        b = x[T:2 * T, :]
        y[0:T, :] = pl.add(a, b, a)  # ERR:arity_many
    return y


def test_too_many_arguments_points_at_the_first_extra():
    compile_error(extra_arg, InvalidOperationError, "pl.add() takes at most 2 positional",
                  HERE, "arity_many", ", a)", offset=2)


# --- unsupported Python ------------------------------------------------------------------


@pl.jit
def python_range(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in range(4):  # ERR:range
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
            y[i * T:i * T + T, :] = pl.exp(x[i * T:i * T + T, :])
    return y


def test_python_range_loop():
    err = compile_error(python_range, PyptoSyntaxError, "a kernel loop must use pl.range", HERE,
                        "range", "range(4)")
    assert "pl.range(4)" in err.hint


@pl.jit
def while_loop(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    while n > 0:
        n = n - 1
    return y


@pl.jit
def while_else(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    while n > 0:  # ERR:while
        n = n - 1
    else:
        n = 0
    return y


def test_while_loop():
    # a natural while loop is a kernel loop (the real parser builds one); while/else is not
    while_loop.compile()
    err = compile_error(while_else, UnsupportedFeatureError, "while/else is not supported",
                        HERE, "while", "while")
    assert "after the loop" in err.hint


@pl.jit
def try_except(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    try:  # ERR:try
        n = pl.tensor.dim(x, 0)
    except ValueError:
        n = 0
    return y


def test_try_except():
    compile_error(try_except, UnsupportedFeatureError, "'try:' is not supported", HERE, "try",
                  "try")


@pl.jit
def uses_lambda(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    f = lambda v: v  # ERR:lambda  # noqa: E731
    return y


def test_lambda():
    compile_error(uses_lambda, UnsupportedFeatureError, "lambda expressions are not supported",
                  HERE, "lambda", "lambda")


@pl.jit
def power(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    m = n ** 2  # ERR:pow
    return y


def test_power_on_runtime_scalars():
    compile_error(power, UnsupportedFeatureError, "operator '**' is not supported", HERE, "pow",
                  "n ** 2")


@pl.jit
def bit_and(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    m = n & 1  # ERR:and
    return y


def test_bitwise_and_on_runtime_scalars():
    compile_error(bit_and, UnsupportedFeatureError, "operator '&' is not supported", HERE, "and",
                  "n & 1")


def test_compile_time_power_folds():
    @pl.jit
    def folded(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
            y[0:2 ** 4, :] = pl.exp(x[0:T & 31, :])
        return y

    folded.compile()


@pl.jit
def tensor_plus(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        a = x[0:T, :]
        b = x[T:2 * T, :]
        y[0:T, :] = a + b  # ERR:tplus
    return y


def test_python_operator_on_tensors():
    err = compile_error(tensor_plus, UnsupportedFeatureError, "Python operator '+' does not apply",
                        HERE, "tplus", "a + b")
    assert "pl.add" in err.hint


@pl.jit
def chained(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    if 0 < n < 8:  # ERR:chain
        n = 1
    return y


def test_chained_comparison():
    compile_error(chained, PyptoSyntaxError, "chained comparisons are not supported", HERE,
                  "chain", "0 < n < 8")


@pl.jit
def element_assign(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        y[0, 1] = 2.0  # ERR:elem
    return y


def test_element_assignment():
    err = compile_error(element_assign, UnsupportedFeatureError, "element assignment", HERE,
                        "elem", "y[0, 1]")
    assert "pl.write" in err.hint


@pl.jit
def tile_into_tensor(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        t = pl.load(x, [0, 0], [T, T])
        y[0:T, 0:T] = t  # ERR:tile_store
    return y


def test_tile_into_tensor_subscript():
    err = compile_error(tile_into_tensor, PyptoTypeError, "cannot assign a tile into a tensor",
                        HERE, "tile_store", "y[0:T")
    assert "pl.store" in err.hint


@pl.jit
def python_fn_runtime(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    m = helper(n)  # ERR:pyfn
    return y


def test_python_function_with_runtime_values():
    compile_error(python_fn_runtime, UnsupportedFeatureError, "'helper' is a Python function",
                  HERE, "pyfn", "helper(n)")


@pl.jit
def break_in_parallel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.parallel(4):
        break  # ERR:break
    return y


def test_break_in_parallel():
    err = compile_error(break_in_parallel, InvalidOperationError,
                        "'break' is not supported in a parallel loop (pl.parallel)", HERE,
                        "break", "break")
    assert err.hint == "only pl.range and while loops take 'break'"


@pl.jit
def bare_yield(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        acc = x[0:T, :]
        for i, (c,) in pl.range(4, init_values=(acc,)):
            c2 = pl.exp(c)
            pl.yield_(c2)  # ERR:bare_yield
        y[0:T, :] = acc
    return y


def test_bare_yield():
    compile_error(bare_yield, PyptoSyntaxError, "pl.yield_(...) can only be used as", HERE,
                  "bare_yield", "pl.yield_")


@pl.jit
def yield_without_carry(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        acc = x[0:T, :]
        for i in pl.range(4):
            acc = pl.yield_(acc)  # ERR:yield_nocarry
        y[0:T, :] = acc
    return y


def test_yield_outside_a_carried_loop():
    compile_error(yield_without_carry, PyptoSyntaxError, "pl.yield_ outside a loop with "
                  "init_values", HERE, "yield_nocarry", "pl.yield_")


@pl.jit
def bad_annotation(x: pl.Tensor[[N, N], "fp32"],  # ERR:ann  # noqa: UP037, F821 - a str dtype
                   y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return y


def test_bad_annotation():
    compile_error(bad_annotation, PyptoTypeError, "parameter 'x': pl.Tensor's dtype must be a pl "
                  "dtype", HERE, "ann", 'pl.Tensor[[N, N], "fp32"]')


@pl.jit
def missing_annotation(x, y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR:noann
    return y


def test_missing_parameter_annotation():
    compile_error(missing_annotation, PyptoTypeError, "Parameter 'x' missing type annotation",
                  HERE, "noann", "x,")


@pl.jit
def compute_in_orchestration(x: pl.Tensor[[N, N], pl.FP32],
                             y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    z = pl.exp(x)  # ERR:orch_compute
    return y


def test_compute_op_outside_a_region():
    x = np.ones((N, N), np.float32)
    err = misplaced_at_run(compute_in_orchestration, "pl.exp is a compute op", HERE,
                           "orch_compute", "pl.exp(x)", args=(x, np.zeros_like(x)))
    assert "pl.at" in err.hint


def test_where_finds_markers():
    line, col = where(HERE, "pl_ad", "pl.ad")
    assert line > 0 and col > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(where(HERE, "pow"), tuple)


@pl.jit
def carried_subscript(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([T, N], pl.FP32, 0.0)
        for i, (a, y[0]) in pl.range(2, init_values=(acc, acc)):  # ERR:carried
            c, d = pl.yield_(a, a)
        y[0:T, :] = c
    return y


@pl.jit
def while_subscript(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for (n, y[0]) in pl.while_(init_values=(0, 1)):  # ERR:while_carried
            pl.cond(n < 3)
            n2, m2 = pl.yield_(n + 1, n)
    return y


def test_carried_values_must_be_plain_names():
    err = compile_error(carried_subscript, PyptoSyntaxError,
                        "the carried values of a loop must be plain names", __file__, "carried",
                        "y[0]")
    assert "bind to a name" in err.hint
    compile_error(while_subscript, PyptoSyntaxError,
                  "the carried values of a pl.while_ must be plain names", __file__,
                  "while_carried", "y[0]")

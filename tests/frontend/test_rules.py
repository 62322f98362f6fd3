"""Every L2-model rule the frontend enforces: the exception family, the message and the
exact line:column of the offending token (the line carries a `# ERR:<tag>` marker)."""
from __future__ import annotations

import warnings

import pytest

import pypto.language as pl
from frontend_helpers import assert_at, compile_error, load_kernels, where
from pypto.errors import (DynamicShapeError, InvalidOperationError, PyptoDeprecationWarning,
                          PyptoError, PyptoSyntaxError, PyptoTypeError, PyptoWarning,
                          ScopeError, UndefinedNameError, UnsupportedFeatureError)
from pypto.ir.nodes import Scope, ScopeKind
from pypto.ir.transform import walk
from pypto.language.enums import CrossCoreSlot, Split, SplitMode

HERE = __file__
N = 64
T = 16
D = 32
CHUNK = 4
B_DYN = pl.dynamic("B_DYN")
S_DYN = pl.dynamic("S_DYN")


def helper(v):
    return v


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
        y[0:T, :] = pl.exp(tilex)  # ERR:undefined
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
    while n > 0:  # ERR:while
        n = n - 1
    return y


def test_while_loop():
    err = compile_error(while_loop, UnsupportedFeatureError, "'while n > 0:' is not supported",
                        HERE, "while", "while")
    assert "pl.while_" in err.hint


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
    compile_error(break_in_parallel, PyptoSyntaxError, "'break' is only allowed in pl.range", HERE,
                  "break", "break")


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
def bad_annotation(x: pl.Tensor[[N, N], "fp32"], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):  # ERR:ann
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
    err = compile_error(compute_in_orchestration, ScopeError, "pl.exp is a compute op", HERE,
                        "orch_compute", "pl.exp(x)")
    assert "pl.at" in err.hint


# --- dynamic shapes -----------------------------------------------------------------------


@pl.jit
def dynvar_arith(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                 y: pl.Out[pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    x.bind_dynamic(1, S_DYN)
    y.bind_dynamic(0, B_DYN)
    y.bind_dynamic(1, S_DYN)
    flat = pl.reshape(x, [B_DYN * S_DYN, D])  # ERR:dyn_arith
    return y


def test_dynvar_arithmetic_in_a_body():
    err = compile_error(dynvar_arith, DynamicShapeError, "arithmetic on pl.dynamic symbols", HERE,
                        "dyn_arith", "B_DYN * S_DYN")
    assert "pl.tensor.dim" in err.hint


@pl.jit
def dim_locals(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
               y: pl.Out[pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    x.bind_dynamic(1, S_DYN)
    y.bind_dynamic(0, B_DYN)
    y.bind_dynamic(1, S_DYN)
    b = pl.tensor.dim(x, 0)
    s = pl.tensor.dim(x, 1)
    flat = pl.reshape(x, [b * s, D])
    flat2 = pl.reshape(x, [b * CHUNK // CHUNK * s, D])
    return y


def test_dim_locals_and_composite_reshape_are_fine():
    dim_locals.compile()


@pl.jit
def create_composite(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    s = pl.tensor.dim(x, 0)
    scratch = pl.create_tensor([CHUNK * s, D], dtype=pl.FP32)  # ERR:ct_comp
    return y


def test_composite_create_tensor_shape():
    err = compile_error(create_composite, DynamicShapeError, "computed into a named local", HERE,
                        "ct_comp", "CHUNK * s")
    assert "CHUNK * s" in err.hint


@pl.jit
def create_named(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    s = pl.tensor.dim(x, 0)
    chunk_s = CHUNK * s
    a = pl.create_tensor([chunk_s, D], dtype=pl.FP32)
    b = pl.create_tensor([T * 4, D], dtype=pl.FP32)
    c = pl.create_tensor([s * CHUNK, D], dtype=pl.FP32)
    return y


def test_named_and_constant_create_tensor_shapes_are_fine():
    # A named local, a folded compile-time product, and a product led by the run-time dim
    # (the form tier-2 kernels use, e.g. `pl.create_tensor([t_dim * H, 1], ...)`).
    create_named.compile()


@pl.jit
def unbound_use(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    for b in pl.range(B_DYN):  # ERR:unbound
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[b:b + 1, :] = pl.exp(x[b:b + 1, :])
    return y


def test_dynamic_dim_used_without_bind_dynamic():
    err = compile_error(unbound_use, DynamicShapeError, "dynamic dim B_DYN is used in the entry "
                        "body but not bound", HERE, "unbound", "B_DYN")
    assert "x.bind_dynamic(0, B_DYN)" in err.hint


@pl.jit
def bound_use(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    for b in pl.range(B_DYN):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[b:b + 1, :] = pl.exp(x[b:b + 1, :])
    return y


@pl.jit
def declared_only(x: pl.Tensor[[B_DYN, D], pl.FP32], cache: pl.InOut[pl.Tensor[[S_DYN, D], pl.FP32]],
                  y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    b = pl.tensor.dim(x, 0)
    for i in pl.range(b):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[i:i + 1, :] = pl.exp(x[i:i + 1, :])
    return y


def test_bound_or_unused_dynamic_dims_are_fine():
    bound_use.compile()
    # The cache's block count is declared dynamic but never read: real tier-2 entries
    # leave such dims unbound, so this is not an error.
    declared_only.compile()


@pl.jit
def dynamic_tile(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
        t = x[0:n, :]  # ERR:dyn_tile
        y[0:T, :] = pl.exp(t)
    return y


def test_dynamic_tile_size_in_a_region():
    err = compile_error(dynamic_tile, DynamicShapeError, "run-time extent", HERE, "dyn_tile",
                        "0:n")
    assert "valid_shape" in err.hint


@pl.jit
def dynamic_slice_shape(x: pl.Tensor[[B_DYN, D], pl.FP32],
                        y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
        t = pl.slice(x, [n, D], [0, 0])  # ERR:dyn_slice
        y[0:T, :] = pl.exp(t)
    return y


def test_dynamic_pl_slice_shape_in_a_region():
    compile_error(dynamic_slice_shape, DynamicShapeError, "pl.slice: this shape entry is a "
                  "run-time value", HERE, "dyn_slice", "n, D]")


@pl.jit
def dynamic_offsets(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    n = pl.tensor.dim(x, 0)
    for r in pl.parallel(0, n, T):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
            q = r // T
            a = x[r:r + T, :]
            b = x[q * T + r:(q + 1) * T + r, :]
            c = pl.slice(x, [T, D], [r, 0], valid_shape=[n - r, D])
            y[r:r + T, :] = pl.add(pl.exp(a), pl.add(b, c))
    return y


def test_dynamic_offsets_and_valid_shapes_are_fine():
    dynamic_offsets.compile()


@pl.jit
def dynamic_stage(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    k = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
        for i in pl.pipeline(0, N, T, stage=k):  # ERR:stage
            y[i:i + T, :] = pl.exp(x[i:i + T, :])
    return y


def test_dynamic_pipeline_stage():
    compile_error(dynamic_stage, DynamicShapeError, "stage is a tiling constant", HERE, "stage",
                  "k)")


@pl.jit
def dynamic_spmd_factor(x: pl.Tensor[[B_DYN, D], pl.FP32],
                        y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    t = pl.tensor.dim(x, 0)
    s = pl.tensor.dim(x, 0)
    for b in pl.spmd(t * s):  # ERR:spmd_factor
        y[b:b + 1, :] = pl.exp(x[b:b + 1, :])
    return y


def test_dynamic_spmd_block_factor():
    err = compile_error(dynamic_spmd_factor, DynamicShapeError, "block factor must be a "
                        "compile-time constant", HERE, "spmd_factor", "t * s")
    assert "BLOCKS_PER_TOKEN" in err.hint


@pl.jit
def folded_spmd(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    t_dim = pl.tensor.dim(x, 0)
    for blk in pl.spmd(t_dim * CHUNK, name_hint="folded"):
        t = blk // CHUNK
        y[t:t + 1, :] = pl.exp(x[t:t + 1, :])
    return y


def test_dynamic_spmd_core_num_times_constant_is_fine():
    folded_spmd.compile()


@pl.jit
def unroll_dynamic(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    n = pl.tensor.dim(x, 0)
    for i in pl.unroll(n):  # ERR:unroll
        pass
    return y


def test_unroll_with_a_dynamic_bound():
    compile_error(unroll_dynamic, DynamicShapeError, "pl.unroll needs compile-time bounds", HERE,
                  "unroll", "pl.unroll")


@pl.jit.inline
def rb_inner(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32], y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    b = pl.tensor.dim(x, 0)
    s = pl.tensor.dim(x, 1)
    bs = b * s
    x_flat = pl.reshape(x, [bs, D])
    y_flat = pl.reshape(y, [bs, D])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y_flat[0:T, :] = pl.exp(x_flat[0:T, :])
    return pl.reshape(y_flat, [b, s, D])  # ERR:reshape_back


@pl.jit.inline
def rb_inner_ok(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    b = pl.tensor.dim(x, 0)
    s = pl.tensor.dim(x, 1)
    bs = b * s
    x_flat = pl.reshape(x, [bs, D])
    y_flat = pl.reshape(y, [bs, D])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy"):
        y_flat[0:T, :] = pl.exp(x_flat[0:T, :])
    return y


@pl.jit.inline
def rb_outer(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32], y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    y = rb_inner(x, y)
    return y


@pl.jit.inline
def rb_outer_ok(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    y = rb_inner_ok(x, y)
    return y


def _rb_entry(body):
    @pl.jit
    def rb_entry(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                 y: pl.Out[pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]]):
        x.bind_dynamic(0, B_DYN)
        x.bind_dynamic(1, S_DYN)
        y.bind_dynamic(0, B_DYN)
        y.bind_dynamic(1, S_DYN)
        y = body(x, y)
        return y

    return rb_entry


def test_nested_inline_reshape_back_of_an_out_view():
    err = compile_error(_rb_entry(rb_outer), DynamicShapeError, "ends by reshaping a view of its "
                        "parameter 'y' back", HERE, "reshape_back", "return")
    assert "return 'y' itself" in err.hint


@pl.jit.inline
def rb_outer_discards(x: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32],
                      y: pl.Tensor[[B_DYN, S_DYN, D], pl.FP32]):
    rb_inner(x, y)
    return y


def test_reshape_back_is_fine_when_not_nested_or_when_returning_the_tensor():
    _rb_entry(rb_inner).compile()
    _rb_entry(rb_outer_ok).compile()
    # a statement call discards the reshaped-back value (real tier-3 kernels do this)
    _rb_entry(rb_outer_discards).compile()


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
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="outer"):
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
    err = compile_error(bad_level, ScopeError, "pl.at(level=pl.Level.CHIP) is not supported",
                        HERE, "level", "pl.Level.CHIP")
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
    w = [r.message for r in rec if isinstance(r.message, PyptoDeprecationWarning)][0]
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
    w = [r.message for r in rec if isinstance(r.message, PyptoDeprecationWarning)][0]
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
    w = [r.message for r in rec if "mixing" in str(r.message)][0]
    assert_at(w, HERE, "mix_prog", "rb_plain_helper(x, y)")


def test_jit_calling_a_program_function_warns():
    with pytest.warns(PyptoWarning, match="mixing kernel forms") as rec:
        jit_calls_program_function.compile()
    w = [r.message for r in rec if "mixing" in str(r.message)][0]
    assert_at(w, HERE, "mix_jit", "program_function(x, y)")


# --- families -------------------------------------------------------------------------------


def test_every_rule_error_is_a_user_error():
    for cls in (PyptoSyntaxError, PyptoTypeError, UndefinedNameError, InvalidOperationError,
                UnsupportedFeatureError, ScopeError, DynamicShapeError):
        assert issubclass(cls, PyptoError)


def test_where_finds_markers():
    line, col = where(HERE, "pl_ad", "pl.ad")
    assert line > 0 and col > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(where(HERE, "pow"), tuple)

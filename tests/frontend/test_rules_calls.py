"""Rules about calls between functions and writes to outputs, each located at the exact
token of the line marked `# ERR:<tag>`."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import assert_at, compile_error, misplaced_at_run, refused_at_run

import pypto.language as pl
from pypto.backend.pto_backend import OutRebindError, PartialCodegenError
from pypto.errors import (
    InvalidOperationError,
    PyptoSyntaxError,
    PyptoTypeError,
    PyptoWarning,
    ScopeError,
)

HERE = __file__
N = 64
T = 16


# --- writes to outputs --------------------------------------------------------------------------


@pl.jit
def rebinds_out(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        y = pl.exp(x)  # ERR:rebind
    return y


@pl.jit
def rebinds_out_twice(x: pl.Tensor[[N], pl.FP32], result: pl.Out[pl.Tensor[[N], pl.FP32]]):
    """The real `examples/utils/error_handling.py` (its `test_ssa_violation`), in our words:
    the second value discards the first, and neither reaches `result`."""
    with pl.at(level=pl.Level.CORE_GROUP):
        result = pl.mul(x, 2.0)  # ERR:first
        result = pl.add(x, 1.0)
    return result


@pl.jit
def rebinds_out_outside_a_region(x: pl.Tensor[[N, N], pl.FP32],
                                 y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = pl.create_tensor([N, N], dtype=pl.FP32)  # ERR:orch_rebind
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        y[:, :] = pl.exp(x)
    return y


@pl.jit
def rebinds_inout(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        y = pl.exp(x)  # ERR:inout_rebind
    return y


@pl.jit
def writes_out(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        y[0:T, :] = pl.exp(x[0:T, :])
        y = pl.assemble(y, pl.exp(x[T:2 * T, :]), [T, 0])
    return y


def test_rebinding_an_out_parameter_in_a_region_is_the_real_codegen_error():
    """The real parser accepts it (real tests/ut/language/parser/test_dump_dsl.py parses
    `d = pl.add(a, a)` in a region); its code generator fails: compiles, refused when run."""
    x = np.ones((N, N), np.float32)
    err = refused_at_run(rebinds_out, OutRebindError,
                         "assigning to pl.Out parameter 'y' inside a pl.at region rebinds the "
                         "name: the value never reaches the output buffer", HERE, "rebind", "y",
                         args=(x, np.zeros_like(x)))
    assert "y[...] = value" in err.hint
    assert err.code == "E201" and "PartialCodegenError" in err.note


def test_the_real_error_handling_example_catches_partial_codegen_error():
    x = np.ones(N, np.float32)
    with pytest.raises(PartialCodegenError) as info:  # what the real example catches
        rebinds_out_twice(x, np.zeros_like(x))
    assert isinstance(info.value, OutRebindError)
    assert_at(info.value, HERE, "first", "result")


def test_rebinding_outside_a_region_or_an_inout_warns():
    for kernel, name, kind, tag, token in (
            (rebinds_out_outside_a_region, "y", "Out", "orch_rebind", "y = pl.create_tensor"),
            (rebinds_inout, "y", "InOut", "inout_rebind", "y = pl.exp")):
        with pytest.warns(PyptoWarning, match="rebinds the name") as rec:
            kernel.compile()
        w = next(r.message for r in rec if "rebinds the name" in str(r.message))
        assert f"pl.{kind} parameter '{name}'" in w.message
        assert_at(w, HERE, tag, token)


def test_writing_an_out_parameter_does_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", PyptoWarning)
        writes_out.compile()


# --- kernels, inline helpers and dispatch ------------------------------------------------------


@pl.jit.incore
def one_block(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    b = pl.tile.get_block_idx()
    y[b * T:b * T + T, :] = pl.exp(x[b * T:b * T + T, :])
    return y


@pl.jit
def kernel_in_region(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        y = one_block(x, y)  # ERR:kernel_in_region
    return y


def test_incore_kernel_called_inside_a_region():
    # The real parser accepts it; its code generator has no code for a kernel calling a
    # kernel (passes/runnable.py): compiles, refused when run.
    x = np.ones((N, N), np.float32)
    err = refused_at_run(kernel_in_region, ScopeError, "the InCore kernel one_block is called "
                         "from inside a kernel (it stands in a pl.at region", HERE,
                         "kernel_in_region", "one_block(x, y)", args=(x, np.zeros_like(x)))
    assert "@pl.jit.inline" in err.hint


@pl.jit
def submit_in_region(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        y, tid = pl.spmd_submit(one_block, x, y, core_num=4)  # ERR:submit_in_region
    return y


def test_spmd_submit_inside_a_region():
    compile_error(submit_in_region, ScopeError, "pl.spmd_submit dispatches a task", HERE,
                  "submit_in_region", "pl.spmd_submit(")


@pl.jit
def spmd_two_calls(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.spmd(4):
        y = one_block(x, y)
        y = one_block(x, y)  # ERR:two_calls
    return y


def test_with_spmd_dispatches_one_kernel():
    compile_error(spmd_two_calls, PyptoSyntaxError, "dispatches a single kernel call", HERE,
                  "two_calls", "one_block(x, y)")


@pl.jit
def spmd_call_and_more(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.spmd(4):
        y = one_block(x, y)
        z = pl.exp(x)  # ERR:call_and_more
    return y


def test_with_spmd_dispatch_contains_only_the_call():
    compile_error(spmd_call_and_more, PyptoSyntaxError, "must contain only that call", HERE,
                  "call_and_more", "z = pl.exp")


@pl.jit
def spmd_call_and_block_idx(x: pl.Tensor[[N, N], pl.FP32],
                            y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.spmd(4):
        y = one_block(x, y)  # ERR:call_and_idx
        b = pl.tile.get_block_idx()
    return y


def test_with_spmd_body_reading_its_block_index_holds_a_kernel_call():
    # The real parser wraps the whole body, the call included, in one InCore carrier:
    # a kernel calling a kernel, which its code generator refuses. Compiles; refused
    # when run, at the call.
    x = np.ones((N, N), np.float32)
    y = np.zeros_like(x)
    err = refused_at_run(spmd_call_and_block_idx, ScopeError, "the InCore kernel one_block is "
                         "called from inside a kernel (the body of this `with pl.spmd` reads "
                         "its block index", HERE, "call_and_idx", "one_block(x, y)", args=(x, y))
    assert "`with pl.spmd(n):` holding only the call" in err.hint
    assert not y.any()  # refused before anything ran


@pl.jit
def spmd_dispatch(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.spmd(4, name_hint="blocks") as tid:
        y = one_block(x, y)
    return y


def test_with_spmd_dispatch_of_a_jit_incore_kernel():
    from pypto.ir.nodes import CallFunc
    from pypto.ir.transform import walk

    entry = spmd_dispatch.compile().program.function("spmd_dispatch")
    (call,) = [n for n in walk(entry.body) if isinstance(n, CallFunc) and n.launch]
    assert call.func == "one_block" and call.launch_attr("kind") == "spmd"


@pl.jit.inline
def recursive(x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
    y = recursive(x, y)  # ERR:recursive
    return y


@pl.jit
def calls_recursive(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = recursive(x, y)
    return y


def test_recursive_inline():
    compile_error(calls_recursive, InvalidOperationError, "recursive call of recursive", HERE,
                  "recursive", "recursive(x, y)")


@pl.jit.inline
def two_args(x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
    return y


@pl.jit
def inline_arity(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = two_args(x)  # ERR:inline_arity
    return y


def test_inline_called_with_missing_argument():
    compile_error(inline_arity, PyptoTypeError, "two_args() expects 2 argument(s) (x, y), got 1",
                  HERE, "inline_arity", "two_args(x)")


@pl.jit.inline
def wants_square(x: pl.Tensor[[N, N], pl.FP32]):  # ERR:param_shape
    return x


@pl.jit
def wrong_shape(x: pl.Tensor[[N, T], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    z = wants_square(x)
    return y


def test_inline_argument_shape_mismatch():
    compile_error(wrong_shape, PyptoTypeError, "parameter 'x' declared shape", HERE,
                  "param_shape", "x: pl.Tensor")


@pl.jit
def scalar_ops_in_orchestration(x: pl.Tensor[[N, N], pl.FP32],
                                y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    zero = pl.cast(0, pl.INT32)
    rows = pl.max(n, T)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a"):
        y[0:T, :] = pl.exp(x[0:T, :])
    return y


@pl.jit
def tensor_creation_in_orchestration(x: pl.Tensor[[N, N], pl.FP32],
                                     y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    z = pl.full([T, T], dtype=pl.FP32, value=0.0)  # ERR:full_orch
    return y


def test_scalar_arithmetic_is_orchestration_work():
    scalar_ops_in_orchestration.compile()
    x = np.ones((N, N), np.float32)
    err = misplaced_at_run(tensor_creation_in_orchestration, "pl.full is a compute op", HERE,
                           "full_orch", "pl.full", args=(x, np.zeros_like(x)))
    assert "pl.at" in err.hint


@pl.jit
def tile_matmul_with_b_trans(a: pl.Tensor[[T, N], pl.BF16], b: pl.Tensor[[N, N], pl.BF16],
                             c: pl.Out[pl.Tensor[[T, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        at = pl.load(a, [0, 0], [T, N], target_memory=pl.MemorySpace.Mat)
        bt = pl.load(b, [0, 0], [N, N], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(at, bt, b_trans=True)  # ERR:tile_b_trans
        c = pl.store(acc, [0, 0], c)
    return c


def test_a_tensor_only_matmul_flag_on_tiles_is_refused_not_dropped():
    # on tiles a transpose is the operand's type (a view), so the flag has no meaning
    # there; dropping it would compute A @ B silently (the real pl.matmul refuses too)
    err = compile_error(tile_matmul_with_b_trans, InvalidOperationError,
                        "pl.matmul: 'b_trans' is not supported for Tile operands", HERE,
                        "tile_b_trans", "True")
    assert "pl.tile.transpose_view" in err.message
    assert err.hint == "pass pl.tile.transpose_view(rhs, ...) as rhs"


NOT_A_NUMBER = "not_a_number"


@pl.jit
def string_operand(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[:, :] = pl.add(x[:, :], NOT_A_NUMBER)  # ERR:str_operand
    return y


def test_a_string_operand_is_a_type_error():
    # as in the real parser, which has no IR value for a str (a ParserTypeError there)
    err = compile_error(string_operand, PyptoTypeError, "pl.add: argument 'rhs' is the string "
                        "'not_a_number': a str has no value in a kernel", HERE, "str_operand",
                        "NOT_A_NUMBER")
    assert err.hint == "signature: pl.add(lhs, rhs)"

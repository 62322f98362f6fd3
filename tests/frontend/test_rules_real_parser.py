"""Rules the real parser's own suite pins (tests/ut/language/parser): task options on
pl.spmd_submit / pl.submit / pl.at / pl.spmd, name lists, comprehensions and call
arity; each error located at the token of the line marked `# ERR:<tag>`."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import compile_error

import pypto.language as pl
from pypto.errors import PyptoSyntaxError, PyptoTypeError, UnsupportedFeatureError

HERE = __file__
N, TM = 64, 16


@pl.jit.incore
def rows(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    b = pl.tile.get_block_idx()
    y[b * TM:b * TM + TM, :] = pl.exp(x[b * TM:b * TM + TM, :])
    return y


@pl.jit
def whole_tuple(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    res = pl.spmd_submit(rows, x, y, core_num=N // TM, sync_start=True, dumps=[x])
    y = res[0]
    return y


def test_spmd_submit_binds_the_whole_tuple_and_takes_sync_start_and_dumps():
    x = np.random.default_rng(0).standard_normal((N, N)).astype(np.float32)
    y = np.zeros((N, N), np.float32)
    whole_tuple(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


@pl.jit
def sync_start_int(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, t = pl.spmd_submit(rows, x, y, core_num=4, sync_start=1)  # ERR:sync_int
    return y


@pl.jit
def dumps_not_arg(x: pl.Tensor[[N, N], pl.FP32], z: pl.Tensor[[N, N], pl.FP32],
                  y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, t = pl.spmd_submit(rows, x, y, core_num=4, dumps=[z])  # ERR:dumps_arg
    return y


@pl.jit
def early_int(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, t = pl.spmd_submit(rows, x, y, core_num=4, allow_early_resolve=1)  # ERR:early_int
    return y


@pl.jit
def plain_call_deps(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = rows(x, y, deps=[])  # ERR:plain_deps
    return y


def test_spmd_submit_options():
    compile_error(sync_start_int, PyptoSyntaxError, "sync_start must be a boolean literal",
                  HERE, "sync_int", "1")
    compile_error(dumps_not_arg, PyptoTypeError, "dumps= entry 'z' is not an argument",
                  HERE, "dumps_arg", "z]")
    compile_error(early_int, PyptoSyntaxError, "allow_early_resolve must be a boolean literal",
                  HERE, "early_int", "1)")
    err = compile_error(plain_call_deps, PyptoTypeError,
                        "rows() does not accept keyword argument 'deps'", HERE, "plain_deps",
                        "rows(")
    assert "pl.submit / pl.spmd_submit" in (err.hint or "")


@pl.jit
def no_dep_twice(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[x, x]):  # ERR:twice
        y[0:TM, :] = pl.exp(x[0:TM, :])
    return y


@pl.jit
def no_dep_call(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[pl.exp(x)]):  # ERR:not_name
        y[0:TM, :] = pl.exp(x[0:TM, :])
    return y


@pl.jit
def no_dep_unknown(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[ghost]):  # ERR:ghost  # noqa: F821
        y[0:TM, :] = pl.exp(x[0:TM, :])
    return y


@pl.jit
def dumps_scalar(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, dumps=[n]):  # ERR:dump_scalar
        y[0:TM, :] = pl.exp(x[0:TM, :])
    return y


@pl.jit
def bad_name_hint(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="has space"):  # ERR:name
        y[0:TM, :] = pl.exp(x[0:TM, :])
    return y


def test_pl_at_name_lists_and_name_hint():
    compile_error(no_dep_twice, PyptoTypeError, "no_dep_args= lists 'x' more than once",
                  HERE, "twice", "x]")
    compile_error(no_dep_call, PyptoTypeError, "no_dep_args= entries must be bare tensor names",
                  HERE, "not_name", "pl.exp(x)")
    compile_error(no_dep_unknown, PyptoTypeError, "no_dep_args= names an unknown name 'ghost'",
                  HERE, "ghost", "ghost")
    compile_error(dumps_scalar, PyptoTypeError, "dumps= entry 'n' is not a tensor", HERE,
                  "dump_scalar", "n]")
    compile_error(bad_name_hint, PyptoSyntaxError, "must be a valid non-keyword identifier",
                  HERE, "name", '"has space"')


@pl.jit
def spmd_two_positional(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for b in pl.spmd(4, 2):  # ERR:two_pos
        y[b * TM:b * TM + TM, :] = pl.exp(x[b * TM:b * TM + TM, :])
    return y


def test_spmd_form_options():
    compile_error(spmd_two_positional, PyptoSyntaxError, "at most one positional argument",
                  HERE, "two_pos", "2)")


@pl.jit
def comp_filter(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r0") as t0:
        y[0:TM, :] = pl.exp(x[0:TM, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r1") as t1:
        y[TM:2 * TM, :] = pl.exp(x[TM:2 * TM, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r2") as t2:
        y[2 * TM:3 * TM, :] = pl.exp(x[2 * TM:3 * TM, :])
    with pl.at(level=pl.Level.CORE_GROUP, deps=[[t0, t1, t2][k] for k in range(3) if k != 1]):
        y[3 * TM:4 * TM, :] = pl.exp(x[3 * TM:4 * TM, :])
    return y


@pl.jit
def comp_runtime_filter(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a") as t:
        y[0:TM, :] = pl.exp(x[0:TM, :])
    with pl.at(level=pl.Level.CORE_GROUP, deps=[t for k in range(2) if k != n]):  # ERR:rt
        y[TM:2 * TM, :] = pl.exp(x[TM:2 * TM, :])
    return y


@pl.jit
def comp_dsl_loop(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a") as t:
        y[0:TM, :] = pl.exp(x[0:TM, :])
    with pl.at(level=pl.Level.CORE_GROUP, deps=[t for k in pl.range(2)]):  # ERR:dsl
        y[TM:2 * TM, :] = pl.exp(x[TM:2 * TM, :])
    return y


def test_comprehensions_fold_static_filters_and_reject_runtime_ones():
    x = np.random.default_rng(1).standard_normal((N, N)).astype(np.float32)
    y = np.zeros((N, N), np.float32)
    comp_filter(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    compile_error(comp_runtime_filter, PyptoTypeError, "filter reads a run-time IR variable",
                  HERE, "rt", "k != n")
    compile_error(comp_dsl_loop, PyptoTypeError, "not the DSL loop 'pl.range'", HERE, "dsl",
                  "pl.range(2)")


@pl.jit
def comp_bound_to_a_name(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a") as t:
        y[0:TM, :] = pl.exp(x[0:TM, :])
    both = [t for k in range(2)]  # ERR:named
    with pl.at(level=pl.Level.CORE_GROUP, deps=both):
        y[TM:2 * TM, :] = pl.exp(x[TM:2 * TM, :])
    return y


def test_a_comprehension_is_read_only_in_deps():
    # the real parser unrolls a comprehension in deps= and nowhere else: bound to a name
    # first, it is an unsupported expression where it stands
    err = compile_error(comp_bound_to_a_name, UnsupportedFeatureError,
                        "a list comprehension is supported only as (an entry of) a launch's "
                        "deps= list", HERE, "named", "[t for")
    assert err.hint.startswith("write it inline, deps=[... for ... in range(n)]")


@pl.program
class RebindsToAnotherShape:
    @pl.function
    def main(self, x: pl.Tensor[[N, N], pl.FP32],
             y: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            t = pl.exp(x[0:TM, :])
            t = pl.exp(t)  # the same type: a rebinding as usual
            y[0:TM, :] = t
            t = pl.exp(x[0:TM, 0:TM])  # ERR:retype
        return y


@pl.jit
def jit_rebinds_to_another_shape(x: pl.Tensor[[N, N], pl.FP32],
                                 y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.exp(x[0:TM, :])
        y[0:TM, :] = t
        t = pl.exp(x[0:TM, 0:TM])  # a new variable: the real @pl.jit renames it t_v1
        y[TM:2 * TM, 0:TM] = t
    return y


def test_a_name_keeps_its_shape_when_rebound_in_a_pl_function():
    err = compile_error(RebindsToAnotherShape, PyptoTypeError,
                        "Cannot reassign 't' with a different type: was pl.Tensor[[16, 64], "
                        "pl.FP32], got pl.Tensor[[16, 16], pl.FP32]", HERE, "retype",
                        "t = pl.exp(x[0:TM, 0:TM])")
    assert err.hint == "use another name for a value of another shape or dtype"
    line = RebindsToAnotherShape.functions["main"].fn.__code__.co_firstlineno + 5
    assert err.note == f"'t' was bound at {HERE}:{line}:13"  # its last binding
    x = np.random.default_rng(2).standard_normal((N, N)).astype(np.float32)
    y = np.zeros_like(x)
    jit_rebinds_to_another_shape(x, y)
    np.testing.assert_allclose(y[TM:2 * TM, 0:TM], np.exp(x[0:TM, 0:TM]), rtol=1e-6)


# --- @pl.jit: what the real specializer renames, and what its parser then checks --------


@pl.jit
def jit_carry_to_another_shape(x: pl.Tensor[[N, N], pl.FP32],
                               y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        t = pl.exp(x[0:TM, :])
        for i in pl.range(2):
            t = pl.exp(x[0:TM, 0:TM])  # ERR:jit_carry
        y[0:TM, :] = t
    return y


def test_a_jit_rebinding_in_a_nested_body_keeps_its_type():
    # deeper than its first binding: not renamed by the specializer, so one variable,
    # which the real parser's rule (#642) checks
    err = compile_error(jit_carry_to_another_shape, PyptoTypeError,
                        "Cannot reassign 't' with a different type: was pl.Tensor[[16, 64], "
                        "pl.FP32], got pl.Tensor[[16, 16], pl.FP32]", HERE, "jit_carry",
                        "t = pl.exp")
    assert err.hint == "use another name for a value of another shape or dtype"


@pl.jit
def jit_retype_in_a_branch(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    s = pl.create_tensor([TM, 1], dtype=pl.FP32)
    for i in pl.range(1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="w"):
            s = pl.reshape(s, [1, TM])  # ERR:jit_with
    return y


def test_a_jit_rebinding_two_levels_down_is_checked_against_the_outer_binding():
    compile_error(jit_retype_in_a_branch, PyptoTypeError, "Cannot reassign 's' with a "
                  "different type: was pl.Tensor[[16, 1], pl.FP32], got pl.Tensor[[1, 16], "
                  "pl.FP32]", HERE, "jit_with", "s = pl.reshape")


@pl.jit
def jit_renames_at_the_nested_depth(x: pl.Tensor[[N, N], pl.FP32],
                                    y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
            m = pl.row_sum(x[0:TM, 0:TM])  # [TM, 1], first bound in this body
            m = pl.reshape(m, [1, TM])  # the same depth: renamed (m_v1), any type
            y[0:1, 0:TM] = m
    for j in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="q"):
            m = pl.exp(x[0:TM, :])  # a sibling body at that depth: renamed again
            y[TM:2 * TM, :] = m
    return y


def test_a_jit_rebinding_at_the_depth_of_its_first_binding_is_a_new_variable():
    # pypto-lib relies on it inside nested bodies (`g_row_max = pl.reshape(g_row_max,
    # [1, 8])` in a pl.at body of 14 kernels; `sq_sum` in the three gate.py)
    x = np.random.default_rng(3).standard_normal((N, N)).astype(np.float32)
    y = np.zeros_like(x)
    jit_renames_at_the_nested_depth(x, y)
    np.testing.assert_allclose(y[0, 0:TM], x[0:TM, 0:TM].sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(y[TM:2 * TM, :], np.exp(x[0:TM, :]), rtol=1e-6)


if __name__ == "__main__":
    pytest.main([__file__])

"""Kernel calls written with the real wrappers' parameter names and orders bind through
the parser (`pypto.ops.spellings`) and compute the right values; calls the real
wrappers refuse are refused here, located at the argument."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
from frontend_helpers import compile_error

import pypto.language as pl
from pypto.errors import InvalidOperationError, PyptoTypeError
from pypto.ir.equal import assert_structural_equal
from pypto.ir.printer import print_program
from pypto.language.dsl import KernelOnlyError

HERE = __file__
R, C = 16, 32


@pl.jit
def keyword_calls(x: pl.Tensor[[R, C], pl.FP32], v: pl.Tensor[[R, 1], pl.FP32],
                  out: pl.Out[pl.Tensor[[R, C], pl.FP32]],
                  first: pl.Out[pl.Tensor[[1, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="kw"):
        t = pl.load(x, [0, 0], [R, C])
        col = pl.load(v, [0, 0], [R, 1])
        s = pl.tile.read(t, indices=[1, 2])
        added = pl.row_expand_add(lhs=t, rhs=col)
        padded = pl.fillpad(value=added)
        scaled = pl.tile.muls(padded, s)
        out = pl.store(tile=scaled, offsets=[0, 0], output_tensor=out)
        one = pl.tile.full([1, 1], pl.FP32, 0.0)
        one = pl.tile.adds(one, pl.tile.read(tile=t, indices=[0, 0]))
        first = pl.store(one, [0, 0], first)
    return out, first


def test_keyword_calls_bind_as_the_real_wrappers():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((R, C)).astype(np.float32)
    v = rng.standard_normal((R, 1)).astype(np.float32)
    out = np.zeros((R, C), np.float32)
    first = np.zeros((1, 1), np.float32)
    keyword_calls(x, v, out, first)
    np.testing.assert_allclose(out, (x + v) * x[1, 2], rtol=1e-6)
    assert first[0, 0] == x[0, 0]


@pl.jit
def scratch_tiles(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[C, R], pl.FP32]],
                  z: pl.Out[pl.Tensor[[R, C], pl.FP32]],
                  m: pl.Out[pl.Tensor[[R, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scratch"):
        t = pl.load(x, [0, 0], [R, C])
        tmp = pl.tile.create([R, C], pl.FP32)
        tt = pl.tile.transpose(t, 0, 1, tmp)  # the lowered form's scratch: no effect here
        y = pl.store(tt, [0, 0], y)
        r = pl.tile.rsqrt(pl.tile.abs(t), tmp)  # tmp: the high-precision scratch
        z = pl.store(r, [0, 0], z)
        m = pl.store(pl.tile.row_max(t, tmp), [0, 0], m)
    return y, z, m


def test_scratch_tiles_are_accepted_where_the_real_api_takes_them():
    x = np.random.default_rng(2).standard_normal((R, C)).astype(np.float32) + 0.5
    y = np.zeros((C, R), np.float32)
    z = np.zeros((R, C), np.float32)
    m = np.zeros((R, 1), np.float32)
    scratch_tiles(x, y, z, m)
    np.testing.assert_array_equal(y, x.T)
    np.testing.assert_allclose(z, 1.0 / np.sqrt(np.abs(x)), rtol=1e-6)
    np.testing.assert_array_equal(m, x.max(axis=1, keepdims=True))
    # pl.tile.rsqrt's second argument is the scratch tile, not high_precision
    prog = scratch_tiles.compile().program
    text = print_program(prog)
    assert "high_precision" not in text and "pl.rsqrt(" in text and ", tmp=" in text
    assert_structural_equal(pl.parse(text), prog)  # the printed form reads back


@pl.jit
def row_sum_without_tmp(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, 1], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rs"):
        t = pl.load(x, [0, 0], [R, C])
        y = pl.store(pl.tile.row_sum(t), [0, 0], y)  # ERR:tmp
    return y


@pl.jit
def tile_matmul_b_trans(a: pl.Tensor[[R, R], pl.FP32], y: pl.Out[pl.Tensor[[R, R], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        t = pl.load(a, [0, 0], [R, R], target_memory=pl.Mem.Mat)
        l0 = pl.move(t, target_memory=pl.Mem.Left)
        r0 = pl.move(t, target_memory=pl.Mem.Right)
        y = pl.store(pl.tile.matmul(l0, r0, b_trans=True), [0, 0], y)  # ERR:btrans
    return y


@pl.jit
def old_keyword(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="old"):
        t = pl.load(x, [0, 0], [R, C])
        y = pl.store(pl.tile.exp(t, x=t), [0, 0], y)  # ERR:oldkw
    return y


def test_calls_the_real_wrappers_refuse_are_refused_at_the_argument():
    compile_error(row_sum_without_tmp, InvalidOperationError,
                  "pl.tile.row_sum(): missing a required argument: 'tmp_tile'", HERE, "tmp",
                  "pl.tile.row_sum(t)")
    err = compile_error(tile_matmul_b_trans, InvalidOperationError,
                        "pl.tile.matmul() got an unexpected keyword argument 'b_trans'", HERE,
                        "btrans", "b_trans=True")
    assert err.hint == "signature: pl.tile.matmul(lhs, rhs)"
    err = compile_error(old_keyword, InvalidOperationError,
                        "pl.tile.exp() got an unexpected keyword argument 'x'", HERE, "oldkw",
                        "x=t")
    assert err.hint == "signature: pl.tile.exp(tile)"


@pl.jit
def dummy_positional(x: pl.Tensor[[R, C], pl.FP32]):
    with pl.manual_scope():
        b = pl.system.task_dummy([])  # ERR:dummy
    return x


def test_a_keyword_only_parameter_is_named_in_the_error():
    compile_error(dummy_positional, PyptoTypeError,
                  "pl.system.task_dummy() takes at most 0 positional arguments", HERE, "dummy",
                  "[]", args=(np.zeros((R, C), np.float32),))


def test_python_calls_check_the_signature_before_refusing_to_run():
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        pl.tile.exp(1, x=1)
    with pytest.raises(KernelOnlyError, match=r"pl.tile.read\(\) can only be used inside"):
        pl.tile.read(1, indices=[0])
    with pytest.raises(TypeError, match="missing a required argument: 'level'"):
        pl.at()
    with pytest.raises(KernelOnlyError):
        pl.at(pl.Level.CORE_GROUP, name_hint="x")


def test_signatures_show_the_real_parameters():
    assert str(inspect.signature(pl.tile.read)) == "(tile, indices)"
    assert str(inspect.signature(pl.tile.rsqrt)) == "(tile, tmp=None)"
    assert str(inspect.signature(pl.row_expand_add)) == "(lhs, rhs, tmp=None)"
    assert str(inspect.signature(pl.tile.transpose)) == "(tile, axis1, axis2, tmp_tile=None)"
    assert str(inspect.signature(pl.system.task_dummy)) == "(*, deps)"
    assert inspect.signature(pl.fillpad).parameters["pad_value"].default is pl.PadValue.zero
    assert str(inspect.signature(pl.static_assert)) == "(condition, msg='')"


@pl.jit
def with_span(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="span"):
        t = pl.load(x, [0, 0], [R, C])
        pl.system.bar_v(span=None)  # the real wrappers' IR location: accepted, no effect
        y = pl.store(t, [0, 0], y)
    return y


def test_a_span_argument_is_accepted_and_changes_nothing():
    x = np.arange(R * C, dtype=np.float32).reshape(R, C)
    y = np.zeros((R, C), np.float32)
    with_span(x, y)
    np.testing.assert_array_equal(y, x)
    assert "span=" not in print_program(with_span.compile().program)

"""Kernels the real compiler accepts (its CI runs them) that were refused here (issue 33,
item 2). Each is written in our own words after the real source named in its test."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import assert_at, compile_error

import pypto.language as pl
from pypto.errors import PyptoSyntaxError, SimulationError

HERE = __file__
N = 16


@pl.program
class FlagFromYield:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, x: pl.Tensor[[N, N], pl.FP32], acc: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             first: pl.Scalar[pl.BOOL]) -> pl.Tensor[[N, N], pl.FP32]:
        t = pl.load(x, [0, 0], [N, N])
        if first:
            t = pl.mul(t, 10.0)
        s = pl.add(pl.load(acc, [0, 0], [N, N]), t)
        return pl.store(s, [0, 0], acc)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], acc: pl.InOut[pl.Tensor[[N, N], pl.FP32]]
             ) -> pl.Tensor[[N, N], pl.FP32]:
        for i in pl.range(3):
            if i == 0:  # noqa: SIM108 - the real example's if/else with pl.yield_
                first = pl.yield_(1)
            else:
                first = pl.yield_(0)
            acc = self.bump(x, acc, first)
        return acc


def test_an_integer_passed_to_a_bool_scalar_parameter():
    """Real `examples/models/04_paged_attention.py`: `is_first = pl.yield_(1)` (an INDEX)
    passed to `is_first: pl.Scalar[pl.BOOL]`; a nonzero integer is true."""
    x = np.full((N, N), 2.0, np.float32)
    acc = np.ones((N, N), np.float32)
    FlagFromYield(x, acc)
    np.testing.assert_array_equal(acc, 1.0 + 20.0 + 2.0 + 2.0)


@pl.jit.inline
def grouped_matmul_bias(a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                        bias: pl.Tensor[[N, N], pl.FP32], c: pl.Tensor[[N, N], pl.FP32]):
    with pl.cluster():  # noqa: SIM117 - the real source nests them; so does the IR
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:, :] = pl.add(pl.matmul(a, b, out_dtype=pl.FP32), bias)
    return c


@pl.jit
def cluster_in_auto_scope(a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                          bias: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    c = grouped_matmul_bias(a, b, bias, c)
    return c


@pl.jit
def named_cluster(a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.cluster(name_hint="grp"):  # noqa: SIM117 - a scope around a region
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:, :] = pl.exp(a)
    return c


def test_a_cluster_in_an_auto_scoped_function():
    """Real `tests/ut/jit/test_dump_tag_outline.py` (`_cluster_mixed_writeback`, lowered
    with `.lower(...)`): `with pl.cluster():` in a default (auto_scope=True) function. The
    real parser reads pl.cluster() as a Cluster scope, not an AUTO runtime scope, so the
    rule that a hand-placed `pl.scope()` needs auto_scope=False does not apply to it."""
    rng = np.random.default_rng(3)
    a, b, bias = (rng.standard_normal((N, N)).astype(np.float32) for _ in range(3))
    c = np.zeros_like(a)
    assert cluster_in_auto_scope.lower(a, b, bias, c) is not None
    cluster_in_auto_scope(a, b, bias, c)
    np.testing.assert_allclose(c, a @ b + bias, rtol=1e-5, atol=1e-5)
    y = np.zeros_like(a)
    named_cluster(a, y)  # pl.cluster(name_hint=...) as the real parser takes it
    np.testing.assert_allclose(y, np.exp(a), rtol=1e-6)


R, C = 16, 32


@pl.program
class OrchTranspose:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[C, R], pl.FP32], b: pl.Tensor[[C, R], pl.FP32],
                   c: pl.Out[pl.Tensor[[C, R], pl.FP32]]) -> pl.Tensor[[C, R], pl.FP32]:
        s = pl.add(pl.load(a, [0, 0], [C, R]), pl.load(b, [0, 0], [C, R]))
        return pl.store(s, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32],
                     c: pl.Out[pl.Tensor[[C, R], pl.FP32]]) -> pl.Tensor[[C, R], pl.FP32]:
        a_t: pl.Tensor[[C, R], pl.FP32] = pl.transpose(a, axis1=0, axis2=1)
        b_t = pl.transpose(b, 0, 1)
        return self.add_kernel(a_t, b_t, c)


def test_a_transpose_in_orchestration_is_a_view_of_the_tensor():
    """Real `tests/st/runtime/control_flow/test_dyn_orch_shape.py`
    (`DynOrchTransposeAddTestCase`): `pl.transpose` on a tensor in an Orchestration
    function lowers to the runtime's `ChipTensor::transpose`, which swaps two axes' shapes
    and strides (simpler `task_interface/tensor.h`): the kernel reads the transposed
    elements. (The real test's constant inputs cannot tell a transpose from a reshape;
    random ones here can.)"""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((R, C)).astype(np.float32)
    b = rng.standard_normal((R, C)).astype(np.float32)
    c = np.zeros((C, R), np.float32)
    OrchTranspose(a, b, c)
    np.testing.assert_array_equal(c, (a + b).T)


@pl.program
class CapturedSpmdInCluster:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[512, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[512, 128], pl.FP32]]) -> pl.Tensor[[512, 128], pl.FP32]:
        with pl.cluster():  # noqa: SIM117 - the nesting is the point
            with pl.spmd(4) as tid:  # ERR:tid_in_cluster
                i = pl.tile.get_block_idx()
                out = pl.store(pl.load(a, [i * 128, 0], [128, 128]), [i * 128, 0], out)
        return out


def test_a_cluster_still_refuses_a_captured_spmd_task_id():
    """Real `tests/ut/language/parser/test_scope_parsing.py`
    (`test_as_tid_nested_in_cluster_rejected`): the real parser's ParserSyntaxError, which
    the auto-scope refusal of pl.cluster() used to stand in for."""
    compile_error(CapturedSpmdInCluster, PyptoSyntaxError,
                  "`with pl.spmd(...) as tid:` cannot capture a TaskId when nested inside "
                  "`pl.cluster()`", HERE, "tid_in_cluster", "tid")


ROWS, TILE, W = 56, 16, 32


@pl.program
class TailViews:
    """Row tiles of a 56-row tensor in 16-row views: the last view reaches 8 rows past
    the end, and the kernel reads only its valid rows."""

    @pl.function(type=pl.FunctionType.InCore)
    def exp_rows(self, x: pl.Tensor[[TILE, W], pl.FP32], rows: pl.Scalar[pl.INDEX],
                 y: pl.Out[pl.Tensor[[TILE, W], pl.FP32]]) -> pl.Tensor[[TILE, W], pl.FP32]:
        t = pl.load(x, [0, 0], [TILE, W], valid_shape=[rows, W])
        return pl.store(pl.exp(t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, W], pl.FP32],
             y: pl.Out[pl.Tensor[[64, W], pl.FP32]]) -> pl.Tensor[[64, W], pl.FP32]:
        for r in pl.range(0, 64, TILE):
            xs = pl.slice(x, [TILE, W], [r, 0])
            ys = pl.slice(y, [TILE, W], [r, 0])
            ys = self.exp_rows(xs, pl.min(ROWS - r, TILE), ys)
        return y


@pl.program
class TailViewsReadWhole:
    @pl.function(type=pl.FunctionType.InCore)
    def exp_rows(self, x: pl.Tensor[[TILE, W], pl.FP32],
                 y: pl.Out[pl.Tensor[[TILE, W], pl.FP32]]) -> pl.Tensor[[TILE, W], pl.FP32]:
        t = pl.load(x, [0, 0], [TILE, W])  # ERR:whole_tile
        return pl.store(pl.exp(t), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, W], pl.FP32],
             y: pl.Out[pl.Tensor[[64, W], pl.FP32]]) -> pl.Tensor[[64, W], pl.FP32]:
        for r in pl.range(0, 64, TILE):
            ys = self.exp_rows(pl.slice(x, [TILE, W], [r, 0]), pl.slice(y, [TILE, W], [r, 0]))
        return y


def test_an_orchestration_view_past_the_end_is_fine_until_a_kernel_reads_there():
    """An orchestration `pl.slice` is view metadata (simpler `task_interface/tensor.h`:
    ChipTensor view / slice are zero-copy metadata rewrites): a view reaching past the
    tensor's end reads nothing. Issue 33 found it refused at the slice (S000) while the
    kernel read only valid rows; the check now meets a read past the end at the kernel's
    own load, as it meets a region's read past the end."""
    x = np.random.default_rng(7).standard_normal((ROWS, W)).astype(np.float32)
    y = np.full((64, W), -1.0, np.float32)
    TailViews(x, y)
    np.testing.assert_allclose(y[:ROWS], np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(y[ROWS:], -1.0)  # never written: the caller's values
    with pytest.raises(SimulationError) as info:
        TailViewsReadWhole(x, np.zeros((64, W), np.float32))
    err = info.value
    assert err.message.startswith("out-of-bounds load: window [0:16, 0:32] of 'x' "
                                  "(shape [8, 32]) runs past axis 0 (extent 8)")
    assert_at(err, HERE, "whole_tile", "pl.load")

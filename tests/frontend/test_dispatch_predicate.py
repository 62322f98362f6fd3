"""Dispatch predicates (`pl.spmd_submit(..., predicate=(t[i, j] > 0))`, `pl.spmd(n,
predicate=...)`): a task whose comparison is false at its dispatch is retired without
running, and its outputs keep what they held; the rules the real parser applies to the
comparison and to the producer of its tensor, each error located."""
from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import compile_error

import pypto.language as pl
from pypto.errors import PyptoSyntaxError, PyptoTypeError, UnsupportedFeatureError
from pypto.ir.nodes import CallFunc
from pypto.ir.printer import print_program
from pypto.ir.transform import walk

HERE = __file__
N = 16


@pl.jit.incore
def copy(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y[:, :] = pl.add(x[:, :], 1.0)
    return y


@pl.jit.incore
def count(src: pl.Tensor[[N, N], pl.INT32], rc: pl.Out[pl.Tensor[[N, N], pl.INT32]]):
    rc[:, :] = pl.mul(src[:, :], 2)
    return rc


@pl.jit
def gated(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
          flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag[3, 4] >= 2))
    return y


def _run(kernel, flag_value: int, *extra):
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    y = np.full((N, N), -7.0, np.float32)
    flag = np.zeros((N, N), np.int32)
    flag[3, 4] = flag_value
    kernel(x, y, flag, *extra)
    return x, y


def test_a_true_predicate_dispatches_the_task():
    x, y = _run(gated, 2)
    np.testing.assert_array_equal(y, x + 1)


def test_a_false_predicate_retires_the_task_and_leaves_its_output():
    _, y = _run(gated, 1)
    np.testing.assert_array_equal(y, np.full((N, N), -7.0, np.float32))


@pl.jit
def produced(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             src: pl.Tensor[[N, N], pl.INT32], rc: pl.Out[pl.Tensor[[N, N], pl.INT32]]):
    rc, g = pl.spmd_submit(count, src, rc, core_num=1)
    y, t = pl.spmd_submit(copy, x, y, core_num=1, deps=[g], predicate=(0 < rc[3, 4]))  # noqa: SIM300
    return y


@pytest.mark.parametrize("value, runs", [(0, False), (1, True)])
def test_the_predicate_reads_what_its_producer_wrote(value, runs):
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    y = np.full((N, N), -7.0, np.float32)
    src = np.zeros((N, N), np.int32)
    src[3, 4] = value
    produced(x, y, src, np.zeros((N, N), np.int32))
    np.testing.assert_array_equal(y, x + 1 if runs else np.full((N, N), -7.0, np.float32))


def test_the_predicate_rides_on_the_launch_and_prints_as_written():
    program = produced.compile(*_args4()).program
    launches = [n for f in program.functions for n in walk(f.body)
                if isinstance(n, CallFunc) and n.launch_attr("predicate") is not None]
    assert len(launches) == 1 and launches[0].func.endswith("copy")
    assert "predicate=(0 < pl.read(rc" in print_program(program)


def _args4():
    z = np.zeros((N, N), np.float32)
    i = np.zeros((N, N), np.int32)
    return z, z.copy(), i, i.copy()


@pl.jit
def scope_form(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
               flag: pl.Tensor[[N, N], pl.INT32]):
    with pl.spmd(1, predicate=(flag[3, 4] == 5)):
        y = copy(x, y)
    return y


@pytest.mark.parametrize("value, runs", [(5, True), (4, False)])
def test_the_scope_form_gates_its_kernel(value, runs):
    x, y = _run(scope_form, value)
    np.testing.assert_array_equal(y, x + 1 if runs else np.full((N, N), -7.0, np.float32))


# -- the rules, each error located ---------------------------------------------------


@pl.jit
def not_a_comparison(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                     flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=flag[0, 0])  # ERR:not_cmp
    return y


@pl.jit
def chained(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
            flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(0 < flag[0, 0] < 8))  # ERR:chain
    return y


@pl.jit
def is_op(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
          flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag[0, 0] in (1, 2)))  # ERR:is_op
    return y


@pl.jit
def arithmetic(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
               flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag[0, 0] % 8 == 0))  # ERR:arith
    return y


@pl.jit
def whole_tensor(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                 flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag > 0))  # ERR:whole
    return y


@pl.jit
def float_operand(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                  flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(x[0, 0] > 0))  # ERR:fp
    return y


@pl.jit
def unsigned(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             flag: pl.Tensor[[N, N], pl.UINT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag[0, 0] > 0))  # ERR:unsigned
    return y


@pl.jit
def negative(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag[-1, 0] > 0))  # ERR:neg
    return y


@pl.jit
def too_few(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
            flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag[0] > 0))  # ERR:few
    return y


@pl.jit
def tensor_index(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                 flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag[x, 0] > 0))  # ERR:tidx
    return y


@pl.jit
def slice_index(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                flag: pl.Tensor[[N, N], pl.INT32]):
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(flag[0:2, 0] > 0))  # ERR:slice
    return y


@pl.jit
def missing_dep(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                src: pl.Tensor[[N, N], pl.INT32], rc: pl.Out[pl.Tensor[[N, N], pl.INT32]]):
    rc, g = pl.spmd_submit(count, src, rc, core_num=1)
    y, t = pl.spmd_submit(copy, x, y, core_num=1, predicate=(rc[0, 0] > 0))  # ERR:dep
    return y


@pl.jit
def rebound_dep(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                src: pl.Tensor[[N, N], pl.INT32], rc: pl.Out[pl.Tensor[[N, N], pl.INT32]],
                fb: pl.Out[pl.Tensor[[N, N], pl.INT32]]):
    rc, g = pl.spmd_submit(count, src, rc, core_num=1)
    fb, g = pl.spmd_submit(count, src, fb, core_num=1)
    y, t = pl.spmd_submit(copy, x, y, core_num=1, deps=[g],
                          predicate=(rc[0, 0] > 0))  # ERR:rebound
    return y


@pl.jit
def plain_scope_dep(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
                    src: pl.Tensor[[N, N], pl.INT32], rc: pl.Out[pl.Tensor[[N, N], pl.INT32]]):
    with pl.spmd(1) as g:
        rc = count(src, rc)
    with pl.spmd(1, predicate=(rc[0, 0] > 0)):  # ERR:plain
        y = copy(x, y)
    return y


@pl.jit(auto_scope=False)
def in_cluster(x: pl.Tensor[[N, N], pl.FP32], y: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
               flag: pl.Tensor[[N, N], pl.INT32]):
    with pl.cluster():  # noqa: SIM117 - one scope per `with` in a kernel
        with pl.spmd(1, predicate=(flag[0, 0] > 0)):  # ERR:cluster
            y = copy(x, y)
    return y


CASES = [
    (not_a_comparison, PyptoSyntaxError, "predicate must be a single comparison", "not_cmp",
     "flag[0, 0]"),
    (chained, PyptoSyntaxError, "must be one comparison, not a chain", "chain", "0 < flag"),
    (is_op, UnsupportedFeatureError, "uses the comparison 'in'", "is_op", "flag[0, 0] in"),
    (arithmetic, PyptoSyntaxError, "must compare one tensor element", "arith", "flag[0, 0] %"),
    (whole_tensor, PyptoSyntaxError, "compares a whole pl.Tensor", "whole", "flag >"),
    (float_operand, PyptoTypeError, "signed 8/16/32/64-bit integer tensor, got pl.FP32",
     "fp", "x[0, 0]"),
    (unsigned, PyptoTypeError, "got pl.UINT32", "unsigned", "flag[0, 0]"),
    (negative, PyptoTypeError, "must be non-negative, got -1", "neg", "-1"),
    (too_few, PyptoSyntaxError, "needs 2 index(es)", "few", "flag[0]"),
    (tensor_index, PyptoSyntaxError, "index 0 of a predicate must be a scalar", "tidx", "x, 0"),
    (slice_index, PyptoSyntaxError, "index 0 of a predicate is a slice", "slice", "0:2"),
    (missing_dep, PyptoSyntaxError, "produced by the task bound to 'g', but 'g' is not in "
     "deps=", "dep", "rc[0, 0] > 0"),
    (rebound_dep, PyptoSyntaxError, "but 'g' is not in deps=", "rebound", "rc[0, 0] > 0"),
    (plain_scope_dep, PyptoSyntaxError, "produced by the task bound to 'g'", "plain",
     "rc[0, 0] > 0"),
    (in_cluster, PyptoSyntaxError, "cannot be nested inside `pl.cluster()`", "cluster",
     "flag[0, 0] > 0"),
]


@pytest.mark.parametrize("kernel, exc, match, tag, token", CASES,
                         ids=[c[3] for c in CASES])
def test_predicate_rules(kernel, exc, match, tag, token):
    args = _args4()[:2] + (np.zeros((N, N), np.int32),)
    if kernel in (missing_dep, plain_scope_dep):
        args = _args4()
    elif kernel is rebound_dep:
        args = _args4() + (np.zeros((N, N), np.int32),)
    elif kernel is unsigned:
        args = args[:2] + (np.zeros((N, N), np.uint32),)
    err = compile_error(kernel, exc, match, HERE, tag, token, args=args)
    if kernel is plain_scope_dep:
        assert "does not accept deps=" in err.hint and "as tid" in err.hint
    if kernel is missing_dep:
        assert "deps=[g]" in err.hint


def test_the_text_form_reads_a_submitted_predicate():
    text = f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{N}, {N}], pl.FP32], y: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]]
          ) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        t = pl.load(x, [0, 0], [{N}, {N}])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def c(self, rc: pl.Out[pl.Tensor[[{N}, {N}], pl.INT8]]) -> pl.Tensor[[{N}, {N}], pl.INT8]:
        t = pl.load(rc, [0, 0], [{N}, {N}])
        rc = pl.store(t, [0, 0], rc)
        return rc

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{N}, {N}], pl.FP32], y: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]],
             rc: pl.Out[pl.Tensor[[{N}, {N}], pl.INT8]]) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        rc, g = pl.spmd_submit(self.c, rc, core_num=1)
        y, t = pl.spmd_submit(self.k, x, y, core_num=1, predicate=(rc[0, 1] != 3))
        return y
"""
    with pytest.raises(PyptoSyntaxError) as info:
        pl.parse(text)
    assert "'rc', which is produced by the task bound to 'g'" in info.value.message
    assert (info.value.span.line, info.value.span.col) == (21, 68)
    program = pl.parse(text.replace("core_num=1, predicate", "core_num=1, deps=[g], predicate"))
    assert "predicate=(pl.read(rc, [0, 1]) != 3)" in print_program(program)


R, C = 16, 16
SENTINEL, POISON = 42.0, 999.0


@pl.program
class ClobberUnlessGated:
    """Real `tests/st/runtime/scheduling/test_predicated_dispatch.py` in our words: each
    kernel returns `pl.store(t, [0, 0], x)` into its pl.Out parameter, and a predicated
    clobber between producer and consumer may be retired."""

    @pl.function(type=pl.FunctionType.InCore)
    def producer(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.tile.full([R, C], dtype=pl.FP32, value=SENTINEL), [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def clobber(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.tile.full([R, C], dtype=pl.FP32, value=POISON), [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def consumer(self, x: pl.Tensor[[R, C], pl.FP32],
                 out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [R, C]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Out[pl.Tensor[[R, C], pl.FP32]], gate: pl.Tensor[[R, C], pl.INT32],
             out: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        with pl.manual_scope():
            x, made = pl.spmd_submit(self.producer, x, core_num=1)
            x, clobbered = pl.spmd_submit(self.clobber, x, core_num=1, deps=[made],
                                          predicate=(gate[0, 0] > 0))
            out, _ = pl.spmd_submit(self.consumer, x, out, core_num=1, deps=[clobbered])
        return out


@pytest.mark.parametrize("gate,want", [(0, SENTINEL), (1, POISON)])
def test_a_retired_task_hands_on_the_out_buffer_its_store_returns(gate, want):
    """Retired, the clobber's output is the buffer its `return pl.store(.., x)` targets
    (was S000: "its output 0 is not one of its tensor arguments")."""
    x = np.full((R, C), -1.0, np.float32)
    out = np.full((R, C), -1.0, np.float32)
    ClobberUnlessGated(x, np.full((R, C), gate, np.int32), out)
    np.testing.assert_array_equal(out, want)

"""`self.<name>` inside a `@pl.jit` body reaches the functions of the program the decorator
assembles: the entry and the `@pl.jit.*` functions its bodies call by bare name (as the
real toolchain, which turns bare calls into `self.<name>(...)` of one program). pypto-lib's
DeepSeek-V4 pro MoE relies on it: `pl.spmd_submit(self.shared_routed, ...)` in an inline
body, with a never-run `if False: shared_routed(...)` call that puts the kernel in."""
from __future__ import annotations

import numpy as np
from frontend_helpers import compile_error

import pypto.language as pl
from pypto.errors import UndefinedNameError
from pypto.ir.nodes import CallFunc, FunctionKind
from pypto.ir.transform import walk

HERE = __file__
N, TM = 64, 16


@pl.jit.incore
def scale_rows(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    b = pl.tile.get_block_idx()
    t = pl.load(x, [b * TM, 0], [TM, N])
    pl.store(pl.mul(t, 3.0), [b * TM, 0], y)
    return y


@pl.jit.inline
def submit_through_self(x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
    if False:
        scale_rows(x, y)
    y, tid = pl.spmd_submit(self.scale_rows, x, y, core_num=N // TM)  # noqa: F821
    return y


@pl.jit
def entry_with_inline(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = submit_through_self(x, y)
    return y


def test_spmd_submit_of_self_kernel_runs_each_block():
    x = np.arange(N * N, dtype=np.float32).reshape(N, N) / 100
    y = np.zeros((N, N), np.float32)
    entry_with_inline(x, y)
    np.testing.assert_allclose(y, 3.0 * x, rtol=1e-6)


def test_self_kernel_is_the_same_function_as_the_bare_name():
    fs = {f.name: f for f in entry_with_inline.compile().program.functions}
    assert fs["scale_rows"].kind is FunctionKind.INCORE
    calls = [n.func for n in walk(fs["entry_with_inline"].body) if isinstance(n, CallFunc)]
    assert calls == ["scale_rows"]  # one kernel, not a second copy per spelling


@pl.jit
def plain_self_call(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    if False:
        scale_rows(x, y)
    with pl.spmd(N // TM):
        y = self.scale_rows(x, y)  # noqa: F821
    return y


def test_self_kernel_call_under_spmd_scope():
    x = np.linspace(-1, 1, N * N, dtype=np.float32).reshape(N, N)
    y = np.zeros((N, N), np.float32)
    plain_self_call(x, y)
    np.testing.assert_allclose(y, 3.0 * x, rtol=1e-6)


def python_helper(x):
    return x


@pl.jit
def self_names_python_function(x: pl.Tensor[[N, N], pl.FP32],
                               y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, tid = pl.spmd_submit(self.python_helper, x, y, core_num=4)  # noqa: F821  # ERR:py
    return y


def test_self_of_a_name_that_is_not_a_kernel_is_located():
    err = compile_error(self_names_python_function, UndefinedNameError,
                        "function 'python_helper' is not defined in program "
                        "self_names_python_function", HERE, "py", "self.python_helper")
    assert "self_names_python_function" in err.hint  # lists the program's functions


@pl.jit.incore
def never_called(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    return y


@pl.jit
def self_names_unlisted_kernel(x: pl.Tensor[[N, N], pl.FP32],
                               y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, tid = pl.spmd_submit(self.never_called, x, y, core_num=4)  # noqa: F821  # ERR:kernel
    return y


def test_self_of_a_kernel_no_body_calls_by_name_is_located():
    err = compile_error(self_names_unlisted_kernel, UndefinedNameError,
                        "function 'never_called' is not defined in program", HERE, "kernel",
                        "self.never_called")
    assert "no body of this program calls it by name" in err.hint
    assert "if False: never_called(...)" in err.hint


@pl.jit
def self_names_unknown(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = self.missing(x, y)  # noqa: F821  # ERR:missing
    return y


def test_self_of_an_unknown_name_is_located():
    compile_error(self_names_unknown, UndefinedNameError,
                  "function 'missing' is not defined in program self_names_unknown", HERE,
                  "missing", "self.missing")


"""An entry's arguments are run-time values, and its bare tensors are specialised
(issue 16, items 4-5): a `@pl.jit.opaque` scalar is a parameter of the compiled program,
not the first call's value baked in; a `@pl.program` with bare `pl.Tensor` parameters
is compiled per shape and dtype of its arguments, as `@pl.jit` is."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError


@pl.jit.opaque
def opaque_scale(x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.mul(x[:, :], s)
    return y


@pl.jit.opaque
def opaque_bare(x: pl.Tensor, n: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        y[:, :] = pl.mul(x[:, :], pl.cast(n, pl.FP32))
    return y


@pl.program
class BareProgram:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor, y: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="add"):
            y[:, :] = pl.add(x[:, :], 1.0)
        return y


def test_opaque_scalar_is_a_runtime_argument():
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    y = np.zeros_like(x)
    for s in (2.0, 3.0, -0.5):
        opaque_scale(x, s, y)
        np.testing.assert_array_equal(y, x * np.float32(s))
    params = [p.var.name for p in opaque_scale.compile().program.entry_function.params]
    assert params == ["x", "s", "y"]


def test_opaque_scalar_with_bare_tensors_is_not_baked_in():
    x = np.ones((8, 32), np.float32)
    y = np.zeros_like(x)
    for n in (2, 5):
        opaque_bare(x, n, y)
        np.testing.assert_array_equal(y, x * n)
    # one program serves both values
    assert opaque_bare.compile(x, 2, y) is opaque_bare.compile(x, 5, y)


@pytest.mark.parametrize("shape,dtype", [((16, 16), np.float32), ((8, 32), np.float32),
                                         ((16, 16), np.float16), ((4, 64), np.float32)])
def test_program_with_bare_tensors_is_specialised_per_shape_and_dtype(shape, dtype):
    x = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    y = np.zeros_like(x)
    BareProgram(x, y)
    np.testing.assert_array_equal(y, x + dtype(1))
    entry = BareProgram.compile(x, y).program.entry_function
    assert tuple(entry.params[0].var.type.shape) == shape
    assert entry.params[0].var.type.dtype.np == np.dtype(dtype)


def test_program_specialisations_are_cached():
    a, b = np.ones((16, 16), np.float32), np.ones((8, 32), np.float32)
    pa, pb = BareProgram.compile(a, a), BareProgram.compile(b, b)
    assert pa is not pb
    assert BareProgram.compile(a.copy(), a.copy()) is pa


def test_program_with_bare_tensors_needs_example_arrays():
    with pytest.raises(PyptoTypeError) as ei:
        BareProgram.compile()
    err = ei.value
    assert "parameter 'x' is a bare pl.Tensor: its shape comes from the argument, so " \
           "compile() needs example arrays" in err.message
    assert err.span.file == __file__
    with open(__file__) as f:
        assert "def main(self, x: pl.Tensor" in f.read().splitlines()[err.span.line - 1]

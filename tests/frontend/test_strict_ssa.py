"""`strict_ssa=True` (on `@pl.function` or `@pl.program`) asks for SSA form: a name is
assigned once per scope and subscript writes (which rebind their target) are rejected;
without it names rebind freely. `v: T = pl.yield_(x)` binds a yield's result with an
annotation that is checked."""
import numpy as np
import pytest
from frontend_helpers import assert_at

import pypto.language as pl
from pypto.errors import PyptoTypeError, SSAViolationError, UnsupportedFeatureError

HERE = __file__
N = 64


def make_double_assign(strict: bool):
    @pl.program(strict_ssa=strict)
    class Twice:
        @pl.function
        def main(self, x: pl.Tensor[[N], pl.FP32],
                 y: pl.Out[pl.Tensor[[N], pl.FP32]]) -> pl.Tensor[[N], pl.FP32]:
            r: pl.Tensor[[N], pl.FP32] = pl.mul(x, 2.0)
            r: pl.Tensor[[N], pl.FP32] = pl.add(r, 1.0)  # ERR:twice
            y = pl.assemble(y, r, [0])
            return y

    return Twice


@pl.program
class SubscriptWrite:
    @pl.function(strict_ssa=True)
    def main(self, out: pl.InOut[pl.Tensor[[N, N], pl.FP32]],
             src: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[N, N], pl.FP32]:
        out[0:16, 0:32] = src  # ERR:subscript
        return out


@pl.jit
def annotated_yield(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16])
        for i, (acc,) in pl.range(4, init_values=(t,)):
            if i > 1:
                v: pl.Tile[[16, 16], pl.FP32] = pl.yield_(pl.add(acc, 1.0))
            else:
                v: pl.Tile[[16, 16], pl.FP32] = pl.yield_(acc)
            r: pl.Tile[[16, 16], pl.FP32] = pl.yield_(v)
        pl.store(r, [0, 0], y)
    return y


@pl.jit
def annotated_yield_wrong(x: pl.Tensor[[16, 16], pl.FP32],
                          y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 16])
        for i, (acc,) in pl.range(4, init_values=(t,)):
            r: pl.Tile[[16, 16], pl.FP16] = pl.yield_(acc)  # ERR:ann
        pl.store(r, [0, 0], y)
    return y


def test_double_assignment_is_an_ssa_violation_only_when_strict():
    with pytest.raises(SSAViolationError) as info:
        make_double_assign(True).compile()
    err = info.value
    assert err.message == "Variable 'r' is already defined"
    assert_at(err, HERE, "twice", "r")
    x = np.arange(N, dtype=np.float32)
    y = np.zeros_like(x)
    make_double_assign(False)(x, y)
    np.testing.assert_array_equal(y, x * 2 + 1)


def test_subscript_write_is_rejected_under_strict_ssa():
    with pytest.raises(UnsupportedFeatureError, match="before SSA conversion") as info:
        SubscriptWrite.compile()
    assert_at(info.value, HERE, "subscript", "out[0:16, 0:32]")


def test_annotated_yield_binds_and_checks_its_type():
    x = np.zeros((16, 16), np.float32)
    y = np.ones_like(x)
    annotated_yield(x, y)
    assert (y == 2).all()
    with pytest.raises(PyptoTypeError, match="annotated dtype") as info:
        annotated_yield_wrong.compile()
    assert_at(info.value, HERE, "ann", "pl.Tile[[16, 16], pl.FP16]")

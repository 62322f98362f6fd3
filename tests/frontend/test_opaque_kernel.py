"""An Opaque `@pl.function` that opens no region is a self-contained compute kernel:
its body runs as one region (the real parser accepts tensor compute ops there), while
an Opaque function with regions of its own is orchestration around them."""
import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ScopeError


@pl.program
class Scaled:
    @pl.function
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        z = pl.add(x, 1.0)
        y = pl.assemble(y, pl.mul(z, 2.0), [0, 0])
        return y


@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        z = pl.exp(x)  # outside the region below: orchestration code
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.assemble(y, x, [0, 0])
        return y


def test_self_contained_opaque_function_runs_as_one_region():
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 64
    y = np.zeros_like(x)
    Scaled(x, y)
    np.testing.assert_allclose(y, (x + 1) * 2)
    compiled = Scaled.compile()
    assert [r.name_hint for r in compiled.regions] == ["main"]


def test_opaque_function_with_its_own_regions_is_orchestration_around_them():
    with pytest.raises(ScopeError, match=r"pl\.exp is a compute op and cannot run in "
                                         r"orchestration code"):
        Mixed.compile()

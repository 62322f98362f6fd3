"""The @pl.program form: an Opaque `@pl.function` that opens no region is a
self-contained compute kernel (its body runs as one region; the real parser accepts
tensor compute ops there), while an Opaque function with regions of its own is
orchestration around them; `@pl.inline` helpers are spliced into their callers."""
import warnings

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
    # As in the real compiler: the regions are outlined and the function becomes
    # Orchestration; pl.exp stays outside every region. It compiles (with a warning at
    # the op) and a run is refused, before anything runs, at the op.
    compiled = Mixed.compile()
    assert [f.kind.value for f in compiled.program.functions] == ["Orchestration", "InCore"]
    assert [w.message.split(":")[0] for w in compiled.warnings] == [
        "pl.exp is a compute op and cannot run in orchestration code"]
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    with pytest.raises(ScopeError, match=r"pl\.exp is a compute op and cannot run in "
                                         r"orchestration code") as info:
        Mixed(x, y)
    assert info.value.span.line == Mixed.functions["main"].fn.__code__.co_firstlineno + 3
    assert not y.any()  # refused before the region ran


@pl.inline
def double_it(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 2.0)
    return result


@pl.program
class UsesInline:
    @pl.function
    def main(self, x: pl.Tensor[[64], pl.FP32],
             y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        z: pl.Tensor[[64], pl.FP32] = double_it(x)
        y = pl.assemble(y, z, [0])
        return y


def test_pl_inline_helper_is_spliced_without_a_mixed_forms_warning():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        UsesInline(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    assert [f.name for f in UsesInline.compile().program.functions
            if f.name.startswith("double_it")] == []


@pl.function
def triple(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    result: pl.Tensor[[64], pl.FP32] = pl.mul(x, 3.0)
    return result


@pl.program
class CallsOut:
    @pl.function
    def plus_one(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        return pl.add(x, 1.0)

    @pl.function
    def main(self, x: pl.Tensor[[64], pl.FP32],
             y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        t: pl.Tensor[[64], pl.FP32] = triple(x)  # an external @pl.function
        u = self.plus_one(t)  # an Opaque sibling: spliced, so main stays one kernel
        y = pl.assemble(y, u, [0])
        return y


def test_external_functions_and_opaque_siblings_are_called_in_place():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    CallsOut(x, y)
    np.testing.assert_array_equal(y, 3 * x + 1)
    assert [r.name_hint for r in CallsOut.compile().regions] == ["main"]
